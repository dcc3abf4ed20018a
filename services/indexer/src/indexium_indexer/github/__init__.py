"""The indexer's GitHub role (``python -m indexium_indexer.github``): the GitHub App side.

Entry point ``app.py``; one message end to end: ``worker.py`` (JetStream handler) →
``onboarding.py`` (installation / repository / push events) → ``probe.py`` (is it a
mod?) → PostgreSQL (``indexium_db.queries.github``). Releases of newly registered
repositories are sent through the normal release path by ``backfill.py`` (via
``sync.py``); ``reconcile.py`` runs the periodic pass; ``card.py`` refreshes mod cards.
Releases published before their jars were uploaded: ``watch.py`` (the consumer of release
events) schedules re-reads, ``reread.py`` does them and sends new jars through ``sync.py``.
"""
