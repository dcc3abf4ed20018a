"""Indexer service: three roles, each a subpackage with app, settings, worker, metrics, __main__.

* ``release`` (``python -m indexium_indexer``): release webhooks → versions;
* ``scan`` (``python -m indexium_indexer.scan``): versions → scanned, public or quarantined;
* ``github`` (``python -m indexium_indexer.github``): the GitHub App's events, backfill, reconcile.
"""
