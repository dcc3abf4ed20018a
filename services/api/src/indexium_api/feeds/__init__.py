"""Atom feeds of new versions: routes.py (the handlers and their entries), atom.py (the writer)."""
