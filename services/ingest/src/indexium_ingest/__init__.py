"""Ingest service: GitHub webhooks to JetStream"""
