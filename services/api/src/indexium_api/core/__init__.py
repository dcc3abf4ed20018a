"""What every surface of the API shares: the cache and the one way to answer from it (respond),
the read database, invalidation over NATS, rate limits and the edge, request parameters and
bodies, settings, metrics and the app state. Imports no surface (v1, v2, feeds, site, openapi)."""
