"""API metrics (all prefixed indexium_api_). Labels are route templates and fixed codes only."""

from indexium_platform.metrics import Count, ServiceMetrics


class ApiMetrics:
    def __init__(self, base: ServiceMetrics):
        # result: hit | miss | stale | coalesced (a miss that awaited another request's query)
        self.cache_requests = base.plain_counter(
            "cache_requests_total", "Cached routes' lookups by route template and result.", ("route", "result"))
        self.cache_entries = base.gauge("cache_entries", "Responses held in this replica's cache.")
        self.cache_bytes = base.gauge("cache_bytes", "Bytes of response bodies held in the cache.")
        # reason: event | reconnect | replica_lag
        self.invalidations = base.counter(
            "cache_invalidations_total", "Cache invalidations by reason.", ("reason",))
        # type: the event's tag (version_indexed.v1, ...) or "undecodable"
        self.version_events = base.counter(
            "version_events_total", "indexium.version.* events received, by type.", ("type",))
        # reason: rate (the client's API budget) | site (its web-site budget) | auth (its /auth/*
        # budget) | in_flight (too many uncached requests of one client at once, inflight.py)
        self.rate_limited = base.counter("rate_limited_total", "Requests answered 429, by reason.", ("reason",))
        self.db_unavailable = base.counter(
            "db_unavailable_total", "Requests answered 503 because PostgreSQL was unavailable.", ("route",))
        self.db_up = base.gauge("db_up", "1 while the last read-database call succeeded.")
        self.db_pool_busy = base.counter(
            "db_pool_busy_total", "Read-database calls answered 503 after waiting the acquire timeout with every "
            "pooled connection in use (overload: the breaker stays shut).")
        self.nats_connected = base.gauge("nats_connected", "1 while the invalidation subscription is connected.")
        self.search_seconds = base.histogram(
            "search_query_duration_seconds", "Database time of one uncached search.")
        self.search_index_mods = base.gauge(
            "search_index_mods", "Listed mods in this replica's search index (0: not loaded, search on SQL).")
        # outcome: ok | bad_state | refused | github_down (callbacks) | too_many (a sign-in not started:
        # its client started too many, or too many are in progress; oauth.py)
        self.site_sign_ins = base.counter("site_sign_ins_total", "Web-site sign-ins by outcome.", ("outcome",))
        # directive: the violated CSP directive, from site/cspreport.py's fixed set ("other" beyond it)
        self.csp_violations = base.counter(
            "csp_violations_total", "Content-Security-Policy violations browsers reported, by directive.",
            ("directive",))
        # outcome: counted | malformed | too_large | limited (the route's rate bound)
        self.csp_reports = base.counter("csp_reports_total", "POST /csp-report requests by outcome.", ("outcome",))
        self._cache_children: dict[tuple[object, str], Count] = {}

    def cache_result(self, resource, result: str) -> Count:
        """The child for a matched route's resource (None: unmatched) and a result, labelled
        with the route template; found by the resource itself, as this is on every cache hit."""
        child = self._cache_children.get((resource, result))
        if child is None:
            route = resource.canonical if resource is not None else "unmatched"
            child = self._cache_children[(resource, result)] = self.cache_requests.labels(route, result)
        return child
