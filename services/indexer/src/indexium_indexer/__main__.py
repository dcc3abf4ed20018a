# `python -m indexium_indexer` runs the release role, as it did before the roles were peers.
from .release.app import main

main()
