"""deploy/ parses, every kustomization builds, and every object is valid for its kind.

Built-in kinds are validated against the Kubernetes OpenAPI schemas shipped in
kubernetes-validate (strict: unknown fields are errors). CRDs (KEDA, CloudNativePG and its
barman-cloud plugin, Prometheus Operator) have no offline schema: their required fields and
references are checked here.
"""

from __future__ import annotations

import functools
import json
import re

import jsonschema
import pytest
import yaml
from kubernetes_validate import utils as k8s_schema
from referencing import Registry, Resource

from deploy_facts import DEPLOY, K8S, REPO, kustomize, markdown_anchors

# Oldest Kubernetes the manifests support (native preStop sleep, matchLabelKeys), and newest.
KUBERNETES_VERSIONS = ("1.33", k8s_schema.latest_version())
CUSTOM_KINDS = {"ScaledObject", "Cluster", "ObjectStore", "ScheduledBackup", "ServiceMonitor",
                "PodMonitor", "PrometheusRule"}


def test_every_yaml_and_json_file_under_deploy_parses():
    files = [*DEPLOY.rglob("*.yaml"), *DEPLOY.rglob("*.yml")]
    assert files
    for path in files:
        with path.open() as f:
            list(yaml.safe_load_all(f))
    for path in DEPLOY.rglob("*.json"):
        json.loads(path.read_text())


def test_every_file_a_kustomization_names_exists(kustomization):
    spec = yaml.safe_load((kustomization / "kustomization.yaml").read_text())
    named = list(spec.get("resources", []))
    for generator in spec.get("configMapGenerator", []) + spec.get("secretGenerator", []):
        named += generator.get("envs", []) + [f.split("=", 1)[-1] for f in generator.get("files", [])]
    named += [p["path"] for p in spec.get("patches", []) if "path" in p]
    for name in named:
        assert (kustomization / name).exists(), f"{kustomization.relative_to(REPO)}: {name} does not exist"


def test_every_kustomization_builds(kustomization):
    assert kustomize(kustomization)


def test_every_manifest_file_is_used():
    """A YAML file under deploy/k8s that no kustomization names is dead or forgotten."""
    used = set()
    for directory in (p.parent for p in K8S.rglob("kustomization.yaml")):
        spec = yaml.safe_load((directory / "kustomization.yaml").read_text())
        used |= {(directory / r).resolve() for r in spec.get("resources", [])}
        used |= {(directory / p["path"]).resolve() for p in spec.get("patches", []) if "path" in p}
        used.add((directory / "kustomization.yaml").resolve())
    unused = [p.relative_to(REPO) for p in K8S.rglob("*.yaml") if p.resolve() not in used
              and not any(parent in used for parent in p.resolve().parents)]
    assert not unused, f"not named by any kustomization: {unused}"


@functools.cache
def _validator(version: str, kind: str, api_version: str) -> jsonschema.protocols.Validator:
    """kubernetes-validate's strict schema for a kind, loaded once (its validate() reloads the
    whole definitions file on every call)."""
    schema_version = [v for v in k8s_schema.all_versions()
                      if k8s_schema.major_minor(v) == k8s_schema.major_minor(version)][-1]
    folder = f"kubernetes-json-schema/v{schema_version}-local-strict"
    group = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    try:
        schema = k8s_schema.schema_contents(f"{folder}/{kind.lower()}-{group}.json", version)
    except FileNotFoundError:
        pytest.fail(f"{api_version} {kind} has no schema: a custom kind without checks?")
    definitions = _definitions(folder, version)
    registry = Resource.from_contents(schema) @ (definitions @ Registry())
    return jsonschema.Draft202012Validator(schema, registry=registry)


@functools.cache
def _definitions(folder: str, version: str) -> Resource:
    return Resource.from_contents(k8s_schema.schema_contents(f"{folder}/_definitions.json", version))


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
def test_built_in_objects_match_the_kubernetes_schemas(objects, version):
    checked = 0
    for obj in objects.objects:
        if obj["kind"] in CUSTOM_KINDS:
            continue
        error = jsonschema.exceptions.best_match(
            _validator(version, obj["kind"], obj["apiVersion"]).iter_errors(obj))
        assert error is None, (f"{obj['kind']}/{obj['metadata']['name']} (Kubernetes {version}): "
                               f"{error.message} at {'/'.join(map(str, error.absolute_path))}")
        checked += 1
    assert checked > 20


def test_only_kinds_with_checks_are_rendered(objects):
    kinds = {o["kind"] for o in objects.objects}
    unknown = {k for k in kinds if k in CUSTOM_KINDS} - set(CUSTOM_CHECKS)
    assert not unknown


def test_every_object_has_a_namespace_and_a_dns_name(objects):
    for obj in objects.objects:
        meta = obj["metadata"]
        assert meta.get("namespace"), f"{obj['kind']}/{meta['name']} has no namespace"
        assert re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", meta["name"]) and len(meta["name"]) <= 63


def test_no_two_objects_share_kind_and_name(objects):
    keys = [(o["kind"], o["metadata"]["name"]) for o in objects.objects]
    assert len(keys) == len(set(keys))


# ---- custom resources ----------------------------------------------------------------------

def _scaled_object(obj, objects):
    spec = obj["spec"]
    assert objects.get("Deployment", spec["scaleTargetRef"]["name"]), "scaleTargetRef names no Deployment"
    assert 0 <= spec.get("minReplicaCount", 0) <= spec["maxReplicaCount"]
    assert spec["triggers"], "a ScaledObject needs at least one trigger"
    for trigger in spec["triggers"]:
        assert trigger["type"] == "nats-jetstream", "consumers scale on JetStream consumer lag"
        meta = trigger["metadata"]
        for key in ("natsServerMonitoringEndpoint", "stream", "consumer", "lagThreshold"):
            assert meta.get(key), f"nats-jetstream trigger needs {key}"
        assert all(isinstance(v, str) for v in meta.values()), "trigger metadata values are strings"
        assert int(meta["lagThreshold"]) > 0
    if "fallback" in spec:
        assert spec["fallback"]["failureThreshold"] > 0 and spec["fallback"]["replicas"] > 0


def _cnpg_cluster(obj, objects):
    spec = obj["spec"]
    assert spec["instances"] >= 1 and spec["storage"]["size"]
    assert re.search(r":\d+(\.\d+)+$|@sha256:", spec["imageName"]), "pin the PostgreSQL image"
    assert spec["bootstrap"]["initdb"]["database"] and spec["bootstrap"]["initdb"]["owner"]
    sync = spec.get("postgresql", {}).get("synchronous")
    if sync:
        assert sync["method"] in ("any", "first")
        assert 1 <= sync["number"] < spec["instances"], "synchronous replicas must exist"
    for ref in spec.get("monitoring", {}).get("customQueriesConfigMap", []):
        cm = objects.get("ConfigMap", ref["name"])
        assert cm is not None and ref["key"] in cm["data"], f"custom queries {ref} not rendered"
    for plugin in spec.get("plugins", []) or []:
        if plugin["name"] == "barman-cloud.cloudnative-pg.io":
            store = plugin["parameters"]["barmanObjectName"]
            assert objects.get("ObjectStore", store), f"plugin names ObjectStore {store}, not rendered"


def _object_store(obj, objects):
    spec = obj["spec"]
    assert spec["configuration"]["destinationPath"].startswith(("s3://", "gs://", "https://"))
    creds = spec["configuration"].get("s3Credentials", {})
    for key in ("accessKeyId", "secretAccessKey"):
        assert creds[key]["name"] and creds[key]["key"]
    assert re.fullmatch(r"[1-9][0-9]*[dwm]", spec["retentionPolicy"])


def _scheduled_backup(obj, objects):
    spec = obj["spec"]
    assert len(spec["schedule"].split()) == 6, "CloudNativePG schedules have a seconds field"
    cluster = objects.get("Cluster", spec["cluster"]["name"])
    assert cluster is not None, "ScheduledBackup names no rendered Cluster"
    if spec.get("method") == "plugin":
        plugins = {p["name"] for p in cluster["spec"].get("plugins") or []}
        assert spec["pluginConfiguration"]["name"] in plugins


def _service_monitor(obj, objects):
    selector = obj["spec"]["selector"]["matchLabels"]
    services = [s for s in objects.of_kind("Service")
                if selector.items() <= s["metadata"].get("labels", {}).items()]
    assert services, f"ServiceMonitor {obj['metadata']['name']} selects no Service"
    for endpoint in obj["spec"]["endpoints"]:
        for service in services:
            assert endpoint["port"] in {p["name"] for p in service["spec"]["ports"]}


def _pod_monitor(obj, objects):
    assert obj["spec"]["selector"]["matchLabels"]
    assert all(e["port"] for e in obj["spec"]["podMetricsEndpoints"])


def _prometheus_rule(obj, objects):
    import promql_parser

    anchors = markdown_anchors((REPO / "docs" / "operations.md").read_text())
    for group in obj["spec"]["groups"]:
        assert group["name"] and group["rules"]
        for rule in group["rules"]:
            assert rule.get("alert") and rule["expr"]
            promql_parser.parse(rule["expr"])
            if "for" in rule:
                assert re.fullmatch(r"\d+[smhd]", rule["for"])
            assert rule["labels"]["severity"] in ("critical", "warning", "info")
            assert rule["annotations"]["summary"]
            page, _, anchor = rule["annotations"]["runbook"].partition("#")
            assert page == "docs/operations.md" and anchor in anchors, \
                f"{rule['alert']}: runbook {rule['annotations']['runbook']} has no such section"


CUSTOM_CHECKS = {
    "ScaledObject": _scaled_object,
    "Cluster": _cnpg_cluster,
    "ObjectStore": _object_store,
    "ScheduledBackup": _scheduled_backup,
    "ServiceMonitor": _service_monitor,
    "PodMonitor": _pod_monitor,
    "PrometheusRule": _prometheus_rule,
}


def test_custom_resources_have_their_required_fields_and_references(objects):
    checked = set()
    for obj in objects.objects:
        check = CUSTOM_CHECKS.get(obj["kind"])
        if check:
            check(obj, objects)
            checked.add(obj["kind"])
    assert {"ScaledObject", "Cluster", "ServiceMonitor", "PrometheusRule"} <= checked
