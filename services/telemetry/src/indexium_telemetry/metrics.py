"""Telemetry metrics (all prefixed indexium_telemetry_). Labels are small fixed sets:
never a slug, a server hash, an address or anything a client chooses."""

from indexium_platform.metrics import ServiceMetrics

PING_OUTCOMES = ("accepted", "ignored", "rate_limited", "invalid", "bad_gzip", "too_large",
                 "unsupported_encoding", "timed_out", "unavailable", "new_server_capped")


class TelemetryMetrics:
    def __init__(self, base: ServiceMetrics):
        # outcome: one of PING_OUTCOMES
        self.pings = base.counter("pings_total", "Ping submissions by outcome.", ("outcome",))
        self.unknown_mods = base.counter(
            "unknown_mods_total", "Mod entries in pings naming no known mod (dropped, not stored).")
        self.counted_mods = base.counter(
            "counted_mods_total", "Mod entries in accepted pings (known mods, de-duplicated).")
        self.catalogue_mods = base.gauge("catalogue_mods", "Mods a ping may name.")
        # outcome: mod (a mod read again), unreadable (whole re-read), overflow (whole re-read)
        events = base.counter("catalogue_events_total",
                              "Catalogue events (indexium.version.>) heard by the http role.", ("outcome",))
        self.catalogue_events = {o: events.labels(o) for o in ("mod", "unreadable", "overflow")}
        self.salt_errors = base.counter(
            "salt_errors_total", "Failures to read or create the day's salt (answered 503).")
        # outcome: written|duplicate|dead_lettered|retried
        self.writer_pings = base.counter(
            "writer_pings_total", "Pings handled by the writer, by outcome.", ("outcome",))
        self.writer_batch_seconds = base.histogram(
            "writer_batch_seconds", "Time to insert and commit one batch.")
        # outcome: done|locked_elsewhere|failed
        self.aggregation_runs = base.counter(
            "aggregation_runs_total", "Aggregator runs by outcome.", ("outcome",))
        self.aggregation_seconds = base.histogram(
            "aggregation_day_seconds", "Time to aggregate one UTC day.",
            buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300))
        self.aggregated_days = base.counter("aggregated_days_total", "UTC days (re)aggregated.")
        self.partitions_created = base.counter(
            "partitions_created_total", "Daily ping partitions created ahead.")
        self.partitions_dropped = base.counter(
            "partitions_dropped_total", "Daily ping partitions dropped by retention.")
        # Each outcome's child, looked up once (labels() per ping costs a lock and a dict lookup);
        # made here, so dashboards and alerts see every series from zero.
        self.ping_outcome = {outcome: self.pings.labels(outcome) for outcome in PING_OUTCOMES}
