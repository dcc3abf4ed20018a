# `python -m indexium_indexer` runs the release role, the default one; the other roles are
# `python -m indexium_indexer.scan`, `.github` and `.notify` (docs/architecture.md, Processes).
from .release.app import main

main()
