"""The web site: server-rendered HTML at ``/`` beside the JSON API, in the same process.

mount.py puts it on the API's app (its resources, its pages, its error pages); docs/web.md
describes the pages, the sessions and the settings. Nothing is imported here, so that /api/v1's
own routes can read a session (sessions.py) without importing every page of the site.
"""
