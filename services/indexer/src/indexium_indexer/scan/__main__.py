"""Scan stage: stream every jar once, hash it, verify it, scan its bytecode (port 8084)."""
from .app import main

main()
