"""Telemetry benchmark (see run.py); not part of make test."""
