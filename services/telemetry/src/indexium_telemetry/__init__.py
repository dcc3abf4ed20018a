"""Telemetry service: active-server counts"""
