"""Consumers, NATS and PostgreSQL as deployed agree with the contracts and the code.

Every durable consumer in libs/contracts is scaled by KEDA on its own lag, within what
JetStream will hand out at once; the NATS values keep streams R3 on file storage with
fsync on every write; PostgreSQL is one primary and two replicas with backups.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import yaml

from deploy_facts import DEPLOY, NOT_IN_DEV, load
from indexium_contracts import registry

NATS_VALUES = DEPLOY / "nats" / "values.yaml"
NATS_DEV_VALUES = DEPLOY / "nats" / "values-dev.yaml"


def _triggers(objects):
    for scaled in objects.of_kind("ScaledObject"):
        for trigger in scaled["spec"]["triggers"]:
            yield scaled, trigger["metadata"]


def _consumed_by(spec, processes) -> set[str]:
    """The processes whose code binds this consumer spec (``CONSUMER = ingest.INDEXER``)."""
    (attr,) = {a for m in (getattr(registry, n) for n in dir(registry)) for a in dir(m)
               if a.isupper() and getattr(m, a) is spec}
    return {p.name for p in processes.values() if re.search(rf"\.{attr}\b", p.code)}


def test_every_durable_consumer_scales_on_its_lag(objects, processes):
    consumers = {(c.stream, c.durable): c for c in registry.CONSUMERS}
    scaled = {(m["stream"], m["consumer"]) for _, m in _triggers(objects)}
    assert scaled <= set(consumers), f"ScaledObjects for consumers the contracts do not define: {scaled - set(consumers)}"
    missing = {key for key in set(consumers) - scaled
               # a role a dev cluster leaves out takes its consumer with it
               if not (objects.name == "dev" and _consumed_by(consumers[key], processes) <= set(NOT_IN_DEV))}
    assert not missing, (f"no KEDA ScaledObject for consumers {sorted(missing)}: give the Deployment that "
                         f"runs each one a nats-jetstream trigger (like deploy/k8s/base/services/indexer.yaml)")


def test_each_scaled_deployment_runs_its_consumer_within_max_ack_pending(objects, processes):
    consumers = {(c.stream, c.durable): c for c in registry.CONSUMERS}
    for scaled, meta in _triggers(objects):
        spec = consumers[(meta["stream"], meta["consumer"])]
        w = objects.workload(scaled["spec"]["scaleTargetRef"]["name"])
        assert w.process.name in _consumed_by(spec, processes), \
            f"{w.name} runs {w.process.name}, whose code does not consume {meta['stream']}/{meta['consumer']}"
        in_flight = [f.name for n, f in w.process.fields.items() if re.search(r"_(CONCURRENCY|BATCH)$", n)]
        assert len(in_flight) == 1, f"{w.name}: which setting bounds its messages in flight? {in_flight}"
        per_replica = getattr(load(w.process.settings, w.values), in_flight[0])
        assert scaled["spec"]["maxReplicaCount"] * per_replica <= spec.max_ack_pending, \
            (f"{scaled['metadata']['name']}: {scaled['spec']['maxReplicaCount']} replicas x {per_replica} "
             f"> max_ack_pending {spec.max_ack_pending}: the extra replicas would get no work")


def test_keda_reads_lag_from_this_namespace_nats(objects):
    values = yaml.safe_load(NATS_VALUES.read_text())
    for scaled, meta in _triggers(objects):
        host, port = meta["natsServerMonitoringEndpoint"].rsplit(":", 1)
        assert host == f"nats-headless.{objects.namespace}.svc.cluster.local", scaled["metadata"]["name"]
        assert int(port) == values["config"]["monitor"]["port"]
        assert meta.get("account", "$G") == "$G"


def test_services_reach_nats_of_the_helm_release():
    common = yaml.safe_load((DEPLOY / "k8s" / "base" / "kustomization.yaml").read_text())
    (generator,) = [g for g in common["configMapGenerator"] if g["name"] == "indexium-common"]
    (url,) = [lit.split("=", 1)[1] for lit in generator["literals"] if lit.startswith("NATS_URL=")]
    assert urlsplit(url).hostname == "nats" and urlsplit(url).port == 4222  # release "nats", same namespace


def test_nats_streams_are_durable_and_replicated(rendered):
    values = yaml.safe_load(NATS_VALUES.read_text())
    jetstream = values["config"]["jetstream"]
    assert values["config"]["cluster"]["enabled"] and values["config"]["cluster"]["replicas"] >= 3
    assert jetstream["enabled"] and jetstream["fileStore"]["enabled"] and jetstream["fileStore"]["pvc"]["enabled"]
    assert jetstream["merge"]["sync_interval"] == "always", "fsync before every PubAck (docs/operations.md)"
    assert not jetstream.get("memoryStore", {}).get("enabled", False)
    largest = max(s.max_msg_size for s in registry.STREAMS)
    assert values["config"]["merge"]["max_payload"] >= largest, "nats-server would refuse the largest message"
    assert re.fullmatch(r"\d+\.\d+\.\d+(-alpine)?", values["container"]["image"]["tag"]), "pin nats-server"
    assert values["promExporter"]["enabled"] and values["podDisruptionBudget"]["enabled"]
    # Every *_REPLICAS setting (streams, key-value buckets) in prod uses the whole cluster.
    for w in rendered["prod"].workloads:
        for name, var in w.env.items():
            if re.fullmatch(r"INDEXIUM_\w*_REPLICAS", name):
                assert int(var.value) == values["config"]["cluster"]["replicas"], f"{w.name}: {name}"


def test_dev_nats_fits_one_server(rendered):
    dev = yaml.safe_load(NATS_DEV_VALUES.read_text())
    servers = dev["config"]["cluster"]["replicas"] if dev["config"]["cluster"]["enabled"] else 1
    for w in rendered["dev"].workloads:
        for name, var in w.env.items():
            if re.fullmatch(r"INDEXIUM_\w*_REPLICAS", name):
                assert int(var.value) <= servers, f"dev {w.name}: {name}={var.value} on {servers} server(s)"


def test_compose_nats_fsyncs_every_write():
    conf = (DEPLOY / "compose" / "nats.conf").read_text()
    assert re.search(r"^\s*sync_interval:\s*always\s*$", conf, re.M)


def test_prod_postgres_is_replicated_and_backed_up(rendered):
    objects = rendered["prod"]
    (cluster,) = objects.of_kind("Cluster")
    spec = cluster["spec"]
    assert spec["instances"] == 3, "one primary and two replicas"
    assert spec["postgresql"]["synchronous"]["number"] >= 1
    (archiver,) = [p for p in spec["plugins"] if p.get("isWALArchiver")]
    assert objects.get("ObjectStore", archiver["parameters"]["barmanObjectName"])
    (backup,) = objects.of_kind("ScheduledBackup")
    assert backup["spec"]["cluster"]["name"] == cluster["metadata"]["name"]
    assert spec["affinity"]["enablePodAntiAffinity"]


def test_postgres_credentials_come_from_the_cluster(objects):
    (cluster,) = objects.of_kind("Cluster")
    for w in objects.workloads:
        for var in w.env.values():
            if var.secret_ref and var.secret_ref[0].endswith("-db-app"):
                assert var.secret_ref[0] == f"{cluster['metadata']['name']}-app"
