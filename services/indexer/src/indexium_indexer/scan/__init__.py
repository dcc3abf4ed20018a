"""The scan stage: a second role of the indexer with its own durable consumer and entry point.

``python -m indexium_indexer.scan`` consumes "version indexed" events (``VERSIONS/scan``),
streams every jar of the version once from the CDN (never to disk), computes
sha1/sha256/sha512, checks GitHub's digest and a ``.sha256`` sidecar, scans every
class file (nested jars too) and makes the version public, or quarantines it.

Pure core: ``classfile`` -> ``bytecode`` -> ``rules`` (one class), ``zipstream`` ->
``archive`` (one jar), ``verdict`` (one file). I/O: ``download``, ``pipeline``;
orchestration: ``job`` (one version, one transaction), ``worker`` (ack/nak/dead
letter), ``app`` (the process).
"""
