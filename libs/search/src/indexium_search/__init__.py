"""Catalogue search (docs/search.md): the in-memory index (searchindex, trigram, tsrank and
the optional C loops of _fastsearch.c), its snapshot file, and the planner that answers a search
from the index or from PostgreSQL (indexed)."""
