"""Every metric the alerts and the dashboard name exists: ours are exported by the code, the
others are named as their exporters name them.

"Ours" is what each deployed process's /metrics can show: the registry its app factory fills
when built with the deployment's environment, plus metrics it creates later (deploy_facts).
A dashboard panel may use a metric the code does not export yet only if it is listed in
deploy/pending-metrics.yaml and the panel says PENDING; an alert never may.
"""

from __future__ import annotations

import json
import re
import warnings

import promql_parser
import pytest
import yaml

from deploy_facts import DEPLOY, K8S, REPO, exported_metrics, iter_exprs, routes_of, series_names

RULES = K8S / "base" / "monitoring" / "prometheusrule.yaml"
DASHBOARD = K8S / "base" / "monitoring" / "indexium-pipeline.json"
PENDING = DEPLOY / "pending-metrics.yaml"

# Metrics of the exporters the manifests deploy, named as they name them.
EXPORTERS = {
    # prometheus-nats-exporter as the NATS Helm chart runs it (-prefix=nats -jsz=all): jsz.go.
    "nats": {
        "nats_server_jetstream_disabled", "nats_server_total_streams", "nats_server_total_consumers",
        "nats_server_total_messages", "nats_server_total_message_bytes", "nats_server_max_memory",
        "nats_server_max_storage", "nats_stream_total_messages", "nats_stream_total_bytes",
        "nats_stream_first_seq", "nats_stream_last_seq", "nats_stream_consumer_count",
        "nats_consumer_delivered_consumer_seq", "nats_consumer_delivered_stream_seq",
        "nats_consumer_num_ack_pending", "nats_consumer_num_redelivered", "nats_consumer_num_waiting",
        "nats_consumer_num_pending", "nats_consumer_ack_floor_stream_seq", "nats_consumer_ack_floor_consumer_seq",
    },
    # CloudNativePG's instance exporter (built-in collector and default queries) and the
    # barman-cloud plugin; our own custom queries are added from the rendered ConfigMap.
    "cnpg": {
        "cnpg_collector_up", "cnpg_collector_pg_wal_archive_status", "cnpg_pg_replication_lag",
        "cnpg_pg_stat_archiver_seconds_since_last_archival", "cnpg_pg_stat_archiver_failed_count",
        "cnpg_backends_total", "barman_cloud_cloudnative_pg_io_last_available_backup_timestamp",
    },
    "kube-state-metrics": {"kube_statefulset_status_replicas_ready", "kube_statefulset_replicas"},
    "prometheus": {"up"},
}


@pytest.fixture(scope="module")
def ours(rendered) -> set[str]:
    names: set[str] = set()
    for overlay in rendered.values():
        for w in overlay.workloads:
            if w.app is not None:
                names |= exported_metrics(w.process, w.app)
    return names


@pytest.fixture(scope="module")
def pending() -> dict[str, dict]:
    """Series name -> its entry in deploy/pending-metrics.yaml (a histogram's _bucket too)."""
    entries = yaml.safe_load(PENDING.read_text()) or {}
    return {series: {**entry, "family": name} for name, entry in entries.items()
            for series in series_names(name, entry["type"])}


@pytest.fixture(scope="module")
def custom_query_metrics(rendered) -> set[str]:
    names = set()
    for cm in rendered["prod"].of_kind("ConfigMap"):
        for query_name, query in _custom_queries(cm).items():
            for column in query["metrics"]:
                ((col, spec),) = column.items()
                if spec["usage"] in ("GAUGE", "COUNTER"):
                    names.add(f"cnpg_{query_name}_{col}")
    return names


def _custom_queries(cm: dict) -> dict:
    if "cnpg.io/reload" not in cm["metadata"].get("labels", {}):
        return {}
    return yaml.safe_load(cm["data"]["queries.yaml"])


def _selectors(expr: str) -> list[tuple[str | None, str | None]]:
    """(metric name, __name__ regex) of every vector selector, Grafana variables filled in."""
    expr = expr.replace("$__rate_interval", "5m").replace("$__interval", "1m")
    expr = re.sub(r"\$\{?\w+\}?", "x", expr)
    found = []

    def visit(node):
        if isinstance(node, promql_parser.VectorSelector):
            regex = next((m.value for m in node.matchers.matchers
                          if m.name == "__name__" and str(m.op).endswith("Re")), None)
            found.append((node.name, regex))

    promql_parser.walk(promql_parser.parse(expr), visit)
    return found


def _check(expr: str, known: set[str], where: str) -> set[str]:
    """The names an expression uses; fails on one that neither we nor an exporter export."""
    used = set()
    for name, regex in _selectors(expr):
        if name:
            assert name in known, (f"{where}: {name} is not exported"
                                   + (" by the code" if name.startswith("indexium_") else " by any exporter deployed"))
            used.add(name)
        else:
            matched = {n for n in known if re.fullmatch(regex, n)}
            assert matched, f"{where}: {{__name__=~{regex!r}}} matches no exported metric"
            used |= matched
    return used


def test_every_alert_uses_exported_metrics(ours, custom_query_metrics):
    known = ours | custom_query_metrics | set().union(*EXPORTERS.values())
    rule = yaml.safe_load(RULES.read_text())
    for group in rule["spec"]["groups"]:
        for alert in group["rules"]:
            _check(alert["expr"], known, f"alert {alert['alert']}")


def test_every_dashboard_panel_uses_exported_or_pending_metrics(ours, pending, custom_query_metrics):
    known = ours | set(pending) | custom_query_metrics | set().union(*EXPORTERS.values())
    dashboard = json.loads(DASHBOARD.read_text())
    used = set()
    for panel in dashboard["panels"]:
        for expr in iter_exprs(panel.get("targets", [])):
            names = _check(expr, known, f"panel {panel['title']!r}")
            waiting = {n for n in names if n in pending and n not in ours}
            assert not waiting or "PENDING" in panel.get("description", ""), \
                f"panel {panel['title']!r} uses {waiting}, not exported yet: say PENDING in its description"
            used |= names
    families = {entry["family"] for entry in pending.values()}
    unused = families - {pending[n]["family"] for n in used if n in pending}
    assert not unused, f"deploy/pending-metrics.yaml lists {unused}, which nothing uses"
    exported_now = {pending[n]["family"] for n in set(pending) & ours}
    if exported_now:
        warnings.warn(f"now exported, remove from deploy/pending-metrics.yaml: {sorted(exported_now)}")


def test_pending_metrics_name_their_service(processes, pending):
    for entry in pending.values():
        name = entry["family"]
        assert entry["service"] in processes and name.startswith(f"indexium_{entry['service']}_"), name
        assert entry["type"] in ("counter", "gauge", "histogram") and entry["for"]


def test_the_dashboard_is_valid_and_installed(objects):
    dashboard = json.loads(DASHBOARD.read_text())
    assert dashboard["uid"] and dashboard["title"] and dashboard["panels"]
    ids = [p["id"] for p in dashboard["panels"]]
    assert len(ids) == len(set(ids)), "panel ids must be unique"
    assert {v["name"] for v in dashboard["templating"]["list"]} >= {"datasource", "namespace"}
    for panel in dashboard["panels"]:
        if panel["type"] != "row":
            assert panel["datasource"]["uid"] == "${datasource}" and panel["targets"], panel["title"]
    installed = [cm for cm in objects.of_kind("ConfigMap") if "indexium-pipeline.json" in cm.get("data", {})]
    assert len(installed) == 1 and installed[0]["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert json.loads(installed[0]["data"]["indexium-pipeline.json"]) == dashboard


def test_every_deployment_is_scraped(objects):
    monitors = objects.of_kind("ServiceMonitor")
    for w in objects.workloads:
        if w.obj["kind"] != "Deployment":
            continue
        labels = w.template["metadata"]["labels"]
        (service,) = [s for s in objects.of_kind("Service") if s["spec"]["selector"].items() <= labels.items()]
        scraping = [m for m in monitors
                    if m["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()]
        assert len(scraping) == 1, f"{w.name}: one ServiceMonitor for its Service"
        assert scraping[0]["spec"]["endpoints"] == [{"port": "http", "path": "/metrics", "interval": "30s"}]
        assert ("GET", "/metrics") in routes_of(w.app)


def test_custom_queries_read_columns_that_exist(rendered):
    """The SQL of CloudNativePG's custom queries names tables and columns of our migrations."""
    migrations = "\n".join(p.read_text() for p in sorted(REPO.glob("libs/db/src/indexium_db/migrations/*.sql")))
    keywords = {"select", "count", "as", "from", "where", "group", "by", "is", "null", "not", "and", "or", "in"}
    queries = [q for cm in rendered["prod"].of_kind("ConfigMap") for q in _custom_queries(cm).values()]
    assert queries
    for query in queries:
        sql = re.sub(r"'[^']*'", "", query["query"])
        (table,) = re.findall(r"\bFROM\s+(\w+)", sql, re.I)
        block = re.search(rf"CREATE TABLE {table} \((.*?)\n\);", migrations, re.S)
        assert block, f"custom query reads {table}, which no migration creates"
        columns = set(re.findall(r"^\s+(\w+)\s", block.group(1), re.M))
        columns |= set(re.findall(rf"ALTER TABLE {table} ADD COLUMN (?:IF NOT EXISTS )?(\w+)", migrations))
        aliases = set(re.findall(r"\bAS\s+(\w+)", sql, re.I))
        words = {w for w in re.findall(r"\b[a-z_]+\b", sql) if w.lower() not in keywords} - aliases - {table}
        assert words <= columns, f"custom query on {table} names {words - columns}, not columns of it"
        assert query["primary"] is True, "one series per cluster: run custom queries on the primary only"
