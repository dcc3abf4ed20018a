"""The /api/v1 surface: routes.py (mods, versions, tags), files.py (lookups by file hash),
build.py (rows -> the answers of shapes.py), players' tools, analytics, a user's own routes."""
