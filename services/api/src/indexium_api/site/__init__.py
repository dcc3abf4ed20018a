"""The web site: server-rendered HTML at ``/`` beside the JSON API, in the same process.

mount.py puts it on the API's app (its resources, its pages, its error pages); docs/web.md
describes the pages, the sessions and the settings. The sessions (core/sessions.py) and the
site's state (core/site.py) are core's: /api/v1's own routes read a session too.
"""
