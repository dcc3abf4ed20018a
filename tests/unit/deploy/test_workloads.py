"""Each Deployment and Job runs a real Indexium process with everything that process reads.

The process is found from the container's command; its settings, port, routes and drain
time come from the code, its environment from the rendered ConfigMaps and Secrets, and its
app is built by the process's own factory with that environment.
"""

from __future__ import annotations

import re

import pytest

from deploy_facts import NOT_IN_DEV, SENSITIVE, declarations, load, routes_of
from indexium_platform.settings import SettingsError

OPS_ROUTES = {"/healthz", "/readyz", "/metrics"}


def test_every_process_is_deployed(objects, processes):
    deployed = {w.process.name for w in objects.workloads}
    expected = set(processes) - (set(NOT_IN_DEV) if objects.name == "dev" else set())
    assert deployed == expected, (f"not deployed: {sorted(expected - deployed)} — add a Deployment "
                                  f"under deploy/k8s/base/services (copy a similar one)")


def test_each_workload_gets_its_process_settings(objects):
    for w in objects.workloads:
        for var in declarations(w.process).values():
            if not var.commented:
                assert var.name in w.env, f"{w.name}: {var.name} from {w.process.name}.env is not provided"


def test_required_and_connection_settings_are_provided(objects):
    for w in objects.workloads:
        for var in declarations(w.process).values():
            field = w.process.fields.get(var.name)  # a stray one is reported by test_settings
            needed = field is not None and (field.required or var.name in ("NATS_URL", "DATABASE_URL"))
            assert not needed or var.name in w.env, f"{w.name} ({w.process.name}) needs {var.name}"


def test_no_variable_is_set_that_the_process_does_not_read(objects):
    """A misspelt or stale variable is silently ignored by the process: catch it here."""
    for w in objects.workloads:
        helpers = {ref for var in w.env.values() for ref in var.refs}  # feed $(VAR) only
        stray = set(w.env) - set(w.process.fields) - helpers
        assert not stray, f"{w.name} sets {sorted(stray)}, which {w.process.name} does not read"


def test_the_process_starts_with_this_environment(objects):
    """Its settings decode (every check the code makes at start-up) and its app builds."""
    for w in objects.workloads:
        try:
            load(w.process.settings, w.values)
        except SettingsError as exc:
            pytest.fail(f"{w.name} ({w.process.name}) would not start: {exc}")
        assert w.process.create_app is None or w.app is not None


def test_secret_values_come_from_secrets(objects):
    for w in objects.workloads:
        for name, var in w.env.items():
            if SENSITIVE.search(name) and ".invalid/" not in var.value:
                assert var.source == "secret", f"{w.name}: {name} must come from a Secret, not a {var.source}"


def test_network_labels_state_what_the_code_does(objects):
    """indexium.dev/postgres and indexium.dev/github open network paths (networkpolicies.yaml):
    exactly the processes that open PostgreSQL connections / make outbound HTTP requests."""
    for w in objects.workloads:
        labels = w.template["metadata"]["labels"]
        assert (labels.get("indexium.dev/postgres") == "true") == w.process.uses_postgres, w.name
        assert (labels.get("indexium.dev/github") == "true") == w.process.calls_out, w.name
        db_credentials = any(v.secret_ref and v.secret_ref[0].endswith("-db-app") for v in w.env.values())
        assert db_credentials == w.process.uses_postgres, f"{w.name}: database credentials only where used"


def test_the_api_reads_from_the_replicas(objects):
    (cluster,) = objects.of_kind("Cluster")
    for w in objects.workloads:
        if "DATABASE_READ_URL" in w.process.fields:
            assert f"@{cluster['metadata']['name']}-ro:" in w.env["DATABASE_READ_URL"].value


def test_ports_and_probes_match_the_code(objects):
    for w in objects.workloads:
        if w.obj["kind"] in ("Job", "CronJob"):
            assert "ports" not in w.container
            continue
        (port,) = [p for p in w.container["ports"] if p["name"] == "http"]
        assert port["containerPort"] == int(w.env["PORT"].value) == w.process.default_port, \
            f"{w.name}: containerPort, PORT and the code's default port differ"
        get_routes = {path for method, path in routes_of(w.app) if method == "GET"}
        for probe, path in (("startupProbe", "/healthz"), ("livenessProbe", "/healthz"),
                            ("readinessProbe", "/readyz")):
            http = w.container[probe]["httpGet"]
            assert http["path"] == path and http["port"] == "http", f"{w.name} {probe}"
            assert path in get_routes, f"{w.process.name} serves no GET {path}"


def test_grace_period_covers_the_drain(objects):
    """preStop sleep + the process's drain time (INDEXIUM_SHUTDOWN_GRACE_SECONDS) + 5 s to close."""
    for w in objects.workloads:
        if w.obj["kind"] in ("Job", "CronJob"):
            continue
        pre_stop = w.container["lifecycle"]["preStop"]["sleep"]["seconds"]
        drain = float(w.env["INDEXIUM_SHUTDOWN_GRACE_SECONDS"].value)
        assert w.template["spec"]["terminationGracePeriodSeconds"] >= pre_stop + drain + 5, w.name


def test_pods_are_locked_down(objects):
    for w in objects.workloads:
        pod, ctx = w.template["spec"], w.container["securityContext"]
        assert pod["securityContext"]["runAsNonRoot"] and pod["securityContext"]["runAsUser"] != 0, w.name
        assert pod["securityContext"]["seccompProfile"]["type"] == "RuntimeDefault", w.name
        assert ctx["readOnlyRootFilesystem"] and ctx["allowPrivilegeEscalation"] is False, w.name
        assert ctx["capabilities"]["drop"] == ["ALL"] and "add" not in ctx["capabilities"], w.name
        assert pod["automountServiceAccountToken"] is False and pod["enableServiceLinks"] is False, w.name
        assert {"mountPath": "/tmp", "name": "tmp"} in w.container["volumeMounts"], f"{w.name}: writable /tmp"
        resources = w.container["resources"]
        assert {"cpu", "memory"} <= set(resources["requests"]) and "memory" in resources["limits"], w.name


def test_one_image_for_every_process_and_prod_pins_it(objects):
    images = {w.container["image"] for w in objects.workloads}
    assert len(images) == 1, f"one image runs every process: {images}"
    if objects.name == "prod":
        (image,) = images
        assert re.search(r":\d+\.\d+\.\d+(@sha256:[0-9a-f]{64})?$|@sha256:[0-9a-f]{64}$", image), \
            f"prod must run a release tag or digest, not {image}"


def test_setup_runs_once_as_a_job_and_never_in_a_replica(objects):
    setups = [(w.obj["kind"], w.name) for w in objects.workloads if w.process.name == "setup"]
    assert setups == [("Job", "indexium-setup")]
    job = objects.get("Job", "indexium-setup")
    assert job["spec"]["template"]["spec"]["restartPolicy"] == "Never"
    assert job["spec"].get("parallelism", 1) == 1 and job["spec"].get("completions", 1) == 1
    assert job["metadata"]["annotations"]["argocd.argoproj.io/hook"] == "PreSync"
    assert job["metadata"]["labels"]["app.kubernetes.io/component"] == "setup"
    for source in job["spec"]["template"]["spec"]["containers"][0]["envFrom"]:
        labels = objects.get("ConfigMap", source["configMapRef"]["name"])["metadata"]["labels"]
        assert labels["app.kubernetes.io/component"] == "config", \
            "the setup Job's ConfigMaps must be selectable with it (docs/operations.md, Every release)"


def test_every_deployment_has_its_autoscaler_budget_and_service(objects):
    for w in objects.workloads:
        if w.obj["kind"] != "Deployment":
            continue
        spec, pod_labels = w.obj["spec"], w.template["metadata"]["labels"]
        assert spec["selector"]["matchLabels"].items() <= pod_labels.items()
        hpa = objects.get("HorizontalPodAutoscaler", w.name)
        keda = [s for s in objects.of_kind("ScaledObject") if s["spec"]["scaleTargetRef"]["name"] == w.name]
        public = {path for _, path in routes_of(w.app)} - OPS_ROUTES
        if public:
            assert hpa and hpa["spec"]["scaleTargetRef"]["name"] == w.name and not keda, \
                f"{w.name} serves requests: it scales on CPU with an HPA"
        elif keda:
            assert hpa is None, f"{w.name}: one autoscaler"
        else:
            assert hpa is None and spec.get("replicas") == 1, \
                f"{w.name} serves no requests and consumes no stream: a fixed single replica"
        if hpa or keda:
            assert "replicas" not in spec, f"{w.name}: the autoscaler owns replicas"
        budgets = [p for p in objects.of_kind("PodDisruptionBudget")
                   if p["spec"]["selector"]["matchLabels"].items() <= pod_labels.items()]
        assert len(budgets) == 1, f"{w.name}: one PodDisruptionBudget"
        services = [s for s in objects.of_kind("Service") if s["spec"]["selector"].items() <= pod_labels.items()]
        assert len(services) == 1, f"{w.name}: one Service (its metrics are scraped through it)"
        assert [p["targetPort"] for p in services[0]["spec"]["ports"]] == ["http"]
    for hpa in objects.of_kind("HorizontalPodAutoscaler"):
        (metric,) = hpa["spec"]["metrics"]
        assert metric["resource"]["name"] == "cpu"
        assert hpa["spec"]["minReplicas"] >= (2 if objects.name == "prod" else 1)
