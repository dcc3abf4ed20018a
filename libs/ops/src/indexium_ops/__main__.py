"""Operator commands: ``python -m indexium_ops --help`` lists them, ``<command> --help`` says
what each does (the README's "Operator commands" lists the same; a test keeps them equal).

    python -m indexium_ops setup                                # migrations + streams (one deploy step)
    python -m indexium_ops dead-letters list | replay ID ... | purge [--all]
    python -m indexium_ops quarantine list [--all] | show ID | approve ID --by NAME | reject ID --by NAME
    python -m indexium_ops github status | repos
    python -m indexium_ops skipped [--repo OWNER/NAME] [--all]
    python -m indexium_ops minecraft-versions refresh --file PATH | --url URL

Reads NATS_URL and DATABASE_URL like the services (and INDEXIUM_STREAM_REPLICAS for setup);
without DATABASE_URL, beside ``make run``, the local stack's (``.run/state.json``).
"""

from .cli import main

main()
