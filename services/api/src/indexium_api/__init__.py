"""Public API for launchers and the web UI"""
