"""The indexer's release role (``python -m indexium_indexer``, or ``indexium_indexer.release``).

``ingest.release`` events from ``INGEST/indexer``: ``worker.py`` (JetStream handler) →
``job.py`` (read every mod jar's manifests with ``indexium_jar.metadata``, write one
transaction) → "version indexed" for the scan stage. ``skips.py`` names every asset left
out; ``release_checks.py`` finds what of a release cannot be stored before anything is.
"""
