"""Jar reader: pure zip and manifest parsing plus an async HTTP range reader"""
