"""Notify role: new public versions to webhook subscribers (port 8086)."""
from .app import main

main()
