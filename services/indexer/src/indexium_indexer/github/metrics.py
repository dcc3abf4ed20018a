"""GitHub role metrics (all prefixed indexium_github_); the API client's are in indexium_github.metrics."""

from indexium_platform.metrics import ServiceMetrics


class GithubMetrics:
    def __init__(self, base: ServiceMetrics):
        # event: installation|installation_repositories|push|repository; action: GitHub's (bounded set)
        # outcome: applied|ignored|stale|unavailable|retry|rate_limited|outage|dead_lettered
        self.events = base.counter("events_total", "App events handled, by event, action and outcome.",
                                   ("event", "action", "outcome"))
        # outcome: registered|skipped
        self.evaluations = base.counter("repositories_evaluated_total",
                                        "Repositories evaluated as mods, by outcome.", ("outcome",))
        self.cards = base.counter("cards_refreshed_total", "Mod cards refreshed from the repository.")
        # source: backfill|reconcile|reread
        self.releases_sent = base.counter("releases_sent_total",
                                          "Releases sent to the indexer by the GitHub role.", ("source",))
        # outcome: scheduled|complete|immutable|not_published|own|no_installation|hidden|too_old|off|
        #          exists|full|failed|outage
        self.release_watch = base.counter(
            "release_watch_total", "Published releases looked at for jars still to come, by outcome.", ("outcome",))
        # result: not_modified|unchanged|sent|gone|draft|hidden|rate_limited|error
        self.release_rereads = base.counter(
            "release_rereads_total", "Re-reads of releases published before their jars, by result.", ("result",))
        # outcome: done|deferred|failed
        self.backfills = base.counter("backfills_total", "Backfills finished, by outcome.", ("outcome",))
        # status: ok|partial|failed
        self.reconcile_runs = base.counter("reconcile_runs_total", "Reconciliation passes by status.",
                                           ("status",))
        self.versions_hidden = base.counter("versions_hidden_total",
                                            "Versions hidden by reconciliation (release gone).")
        self.download_counts = base.counter("download_counts_updated_total",
                                            "Files whose download count reconciliation changed.")
        self.last_reconcile = base.gauge("reconcile_last_success_timestamp_seconds",
                                         "When the last reconciliation pass finished without errors.")
