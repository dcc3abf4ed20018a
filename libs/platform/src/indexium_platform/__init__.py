"""Shared service plumbing: settings, logging, metrics, NATS helpers, app factory"""
