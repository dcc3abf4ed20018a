"""Operator commands.

    python -m indexium_ops setup                 # migrations + streams (one deploy step)
    python -m indexium_ops dead-letters list
    python -m indexium_ops dead-letters replay ID [ID ...]
    python -m indexium_ops dead-letters purge [--all]

Reads NATS_URL and DATABASE_URL like the services (and INDEXIUM_STREAM_REPLICAS for setup).
"""

from .cli import main

main()
