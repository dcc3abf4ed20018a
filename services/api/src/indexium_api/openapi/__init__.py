"""GET /openapi.json: document.py (the document, /api/v1's paths), v2.py (/v2's paths)."""
