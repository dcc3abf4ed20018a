"""The NetworkPolicies and Ingresses allow exactly the paths the code needs.

A small evaluator applies the rendered NetworkPolicies (ingress and egress sides, pod and
namespace selectors, named ports, IP blocks) to the pods an overlay runs plus the ones around
them: NATS and PostgreSQL pods as their charts/operators label them, and the platform's
components in their namespaces. What must be reachable is derived from the code: a process
that opens PostgreSQL connections, one that makes outbound HTTP requests, the routes each
app serves.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field

import pytest

from deploy_facts import routes_of

OPS_ROUTES = {"/healthz", "/readyz", "/metrics"}


@dataclass
class Pod:
    name: str
    namespace: str
    labels: dict[str, str]
    ports: dict[str, int] = field(default_factory=dict)
    ip: str = "10.1.0.1"


def _world(objects) -> dict[str, Pod]:
    ns = objects.namespace
    (cluster,) = objects.of_kind("Cluster")
    pods = {w.name: Pod(w.name, ns, w.template["metadata"]["labels"],
                        {p["name"]: p["containerPort"] for p in w.container.get("ports", [])})
            for w in objects.workloads}
    pods.update({
        # the NATS Helm chart's server and nats-box pods (release "nats")
        "nats": Pod("nats", ns, {"app.kubernetes.io/name": "nats", "app.kubernetes.io/instance": "nats",
                                 "app.kubernetes.io/component": "nats"},
                    {"nats": 4222, "cluster": 6222, "monitor": 8222, "prom-metrics": 7777}),
        "nats-box": Pod("nats-box", ns, {"app.kubernetes.io/name": "nats", "app.kubernetes.io/component": "nats-box"}),
        # a CloudNativePG instance
        "postgres": Pod("postgres", ns, {"cnpg.io/cluster": cluster["metadata"]["name"], "cnpg.io/podRole": "instance"},
                        {"postgresql": 5432, "status": 8000, "metrics": 9187}),
        "ingress-controller": Pod("ingress-controller", "ingress-nginx", {"app.kubernetes.io/name": "ingress-nginx"}),
        "prometheus": Pod("prometheus", "monitoring", {"app.kubernetes.io/name": "prometheus"}),
        "keda": Pod("keda", "keda", {"app": "keda-operator"}),
        "cnpg-operator": Pod("cnpg-operator", "cnpg-system", {"app.kubernetes.io/name": "cloudnative-pg"}),
        "dns": Pod("dns", "kube-system", {"k8s-app": "kube-dns"}, {"dns": 53}),
        "stranger": Pod("stranger", ns, {"app": "something-else"}),
        "other-namespace": Pod("other-namespace", "default", {"app.kubernetes.io/name": "indexium"}),
        "github": Pod("github", "", {}, ip="140.82.112.3"),  # a public address
        "cloud-metadata": Pod("cloud-metadata", "", {}, ip="169.254.169.254"),
    })
    return pods


def _selects(selector: dict | None, labels: dict[str, str]) -> bool:
    if selector is None:
        return True
    for key, value in selector.get("matchLabels", {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions", []):
        present, value = expr["key"] in labels, labels.get(expr["key"])
        ok = {"In": present and value in expr.get("values", []), "NotIn": value not in expr.get("values", []),
              "Exists": present, "DoesNotExist": not present}[expr["operator"]]
        if not ok:
            return False
    return True


def _peer_matches(peer: dict, policy_ns: str, pod: Pod) -> bool:
    if "ipBlock" in peer:
        address = ipaddress.ip_address(pod.ip)
        block = peer["ipBlock"]
        return (address in ipaddress.ip_network(block["cidr"])
                and not any(address in ipaddress.ip_network(e) for e in block.get("except", [])))
    if not pod.namespace:
        return False  # outside the cluster: only an ipBlock names it
    if "namespaceSelector" in peer:
        if not _selects(peer["namespaceSelector"], {"kubernetes.io/metadata.name": pod.namespace}):
            return False
    elif pod.namespace != policy_ns:
        return False
    return _selects(peer.get("podSelector"), pod.labels)


def _port_matches(ports: list | None, dst: Pod, port: int) -> bool:
    if not ports:
        return True
    return any(p["port"] == port or dst.ports.get(p["port"]) == port for p in ports)


def _side_allows(policies, subject: Pod, other: Pod, dst: Pod, port: int, kind: str) -> bool:
    """Whether the policies selecting `subject` allow this connection on their `kind` side."""
    key, peers_key = ("ingress", "from") if kind == "Ingress" else ("egress", "to")
    selecting = [p for p in policies if p["metadata"]["namespace"] == subject.namespace
                 and kind in p["spec"]["policyTypes"] and _selects(p["spec"]["podSelector"], subject.labels)]
    if not selecting:
        return True
    for policy in selecting:
        for rule in policy["spec"].get(key, []):
            peers = rule.get(peers_key)
            if (not peers or any(_peer_matches(peer, policy["metadata"]["namespace"], other) for peer in peers)) \
                    and _port_matches(rule.get("ports"), dst, port):
                return True
    return False


def _allowed(objects, src: Pod, dst: Pod, port: int) -> bool:
    policies = objects.of_kind("NetworkPolicy")
    ingress_ok = not dst.namespace or _side_allows(policies, dst, src, dst, port, "Ingress")
    egress_ok = not src.namespace or _side_allows(policies, src, dst, dst, port, "Egress")
    return ingress_ok and egress_ok


@pytest.fixture
def world(objects):
    return _world(objects)


def _ingress_backends(objects) -> set[str]:
    services = {s["metadata"]["name"]: s for s in objects.of_kind("Service")}
    backends = set()
    for ingress in objects.of_kind("Ingress"):
        for rule in ingress["spec"]["rules"]:
            for path in rule["http"]["paths"]:
                service = services[path["backend"]["service"]["name"]]
                backends |= {w.name for w in objects.workloads
                             if service["spec"]["selector"].items() <= w.template["metadata"]["labels"].items()}
    return backends


def test_only_the_ingress_backends_are_reachable_from_the_ingress_controller(objects, world):
    controller = world["ingress-controller"]
    reachable = {w.name for w in objects.workloads if w.obj["kind"] == "Deployment"
                 and _allowed(objects, controller, world[w.name], world[w.name].ports["http"])}
    assert reachable == _ingress_backends(objects)
    for w in objects.workloads:
        public = w.template["metadata"]["labels"].get("indexium.dev/public") == "true"
        assert public == (w.name in reachable), f"{w.name}: indexium.dev/public only on Ingress backends"
    assert not _allowed(objects, controller, world["nats"], 4222)
    assert not _allowed(objects, controller, world["postgres"], 5432)


def test_only_our_pods_reach_nats(objects, world):
    for name, pod in world.items():
        ours = name in {w.name for w in objects.workloads} or name == "nats-box"
        assert _allowed(objects, pod, world["nats"], 4222) == ours, f"{name} -> NATS"
    assert _allowed(objects, world["nats"], world["nats"], 6222), "cluster routes between NATS servers"
    assert _allowed(objects, world["keda"], world["nats"], 8222), "KEDA reads consumer lag"
    assert _allowed(objects, world["prometheus"], world["nats"], 7777), "the NATS exporter is scraped"


def test_only_processes_that_use_postgres_reach_it(objects, world):
    for w in objects.workloads:
        reachable = _allowed(objects, world[w.name], world["postgres"], 5432)
        assert reachable == w.process.uses_postgres, \
            f"{w.name}: PostgreSQL reachable={reachable}, but its code uses it={w.process.uses_postgres}"
    for name in ("ingress-controller", "stranger", "other-namespace", "nats", "prometheus"):
        assert not _allowed(objects, world[name], world["postgres"], 5432), f"{name} -> PostgreSQL"
    assert _allowed(objects, world["postgres"], world["postgres"], 5432), "replication"
    assert _allowed(objects, world["cnpg-operator"], world["postgres"], 8000), "the operator's status checks"
    assert _allowed(objects, world["prometheus"], world["postgres"], 9187), "the PostgreSQL exporter is scraped"


def test_only_processes_that_call_out_reach_github(objects, world):
    for w in objects.workloads:
        reachable = _allowed(objects, world[w.name], world["github"], 443)
        assert reachable == w.process.calls_out, \
            f"{w.name}: GitHub reachable={reachable}, but its code calls out={w.process.calls_out}"
        assert not _allowed(objects, world[w.name], world["cloud-metadata"], 80), f"{w.name} -> metadata"
        assert not _allowed(objects, world[w.name], world["cloud-metadata"], 443), f"{w.name} -> metadata"
        assert _allowed(objects, world[w.name], world["dns"], 53), f"{w.name} -> DNS"


def test_prometheus_scrapes_every_process(objects, world):
    for w in objects.workloads:
        if w.obj["kind"] == "Deployment":
            assert _allowed(objects, world["prometheus"], world[w.name], world[w.name].ports["http"]), w.name
            assert not _allowed(objects, world["stranger"], world[w.name], world[w.name].ports["http"]), w.name


# ---- Ingress -------------------------------------------------------------------------------

def _resolve(objects, path: str) -> str | None:
    """The Service nginx sends a request path to: an Exact match, else the longest Prefix."""
    exact, prefixes = {}, {}
    for ingress in objects.of_kind("Ingress"):
        for rule in ingress["spec"]["rules"]:
            for p in rule["http"]["paths"]:
                table = exact if p["pathType"] == "Exact" else prefixes
                table[p["path"]] = p["backend"]["service"]["name"]
    if path in exact:
        return exact[path]
    matches = [p for p in prefixes if path == p or path.startswith(p.rstrip("/") + "/")]
    return prefixes[max(matches, key=len)] if matches else None


def _service_of(objects, w) -> str:
    (service,) = [s["metadata"]["name"] for s in objects.of_kind("Service")
                  if s["spec"]["selector"].items() <= w.template["metadata"]["labels"].items()]
    return service


def _concrete(template: str) -> str:
    return re.sub(r"\{[^}]+\}", "x", template)


def test_every_public_route_reaches_the_process_that_serves_it(objects):
    for w in objects.workloads:
        if w.obj["kind"] != "Deployment":
            continue
        service = _service_of(objects, w)
        public = w.template["metadata"]["labels"].get("indexium.dev/public") == "true"
        for _, route in routes_of(w.app):
            if route in OPS_ROUTES:
                continue
            target = _resolve(objects, _concrete(route))
            if public:
                assert target == service, f"{w.name} serves {route}, but the Ingress sends it to {target}"
            else:
                assert target != service, f"{w.name} is internal but the Ingress routes {route} to it"


def test_every_ingress_path_is_served(objects):
    services = {s["metadata"]["name"]: s for s in objects.of_kind("Service")}
    for ingress in objects.of_kind("Ingress"):
        assert ingress["spec"]["ingressClassName"]
        for rule in ingress["spec"]["rules"]:
            for p in rule["http"]["paths"]:
                service = services[p["backend"]["service"]["name"]]
                assert p["backend"]["service"]["port"]["name"] in {x["name"] for x in service["spec"]["ports"]}
                (w,) = [w for w in objects.workloads
                        if service["spec"]["selector"].items() <= w.template["metadata"]["labels"].items()]
                routes = {_concrete(path) for _, path in routes_of(w.app)}
                served = (p["path"] in routes if p["pathType"] == "Exact"
                          else any(r == p["path"] or r.startswith(p["path"] + "/") for r in routes))
                assert served, f"Ingress {ingress['metadata']['name']}: {w.name} serves nothing at {p['path']}"


def test_health_and_metrics_are_never_public(objects):
    for path in OPS_ROUTES:
        assert _resolve(objects, path) is None


def _bytes(size: str) -> int:
    number, unit = re.fullmatch(r"(\d+)([kmg]?)", size.lower()).groups()
    return int(number) * {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}[unit]


def test_ingress_body_limits_admit_what_the_services_accept(objects):
    """An Ingress limit below the service's own would refuse bodies the service accepts."""
    services = {s["metadata"]["name"]: s for s in objects.of_kind("Service")}
    for ingress in objects.of_kind("Ingress"):
        limit = _bytes(ingress["metadata"].get("annotations", {}).get(
            "nginx.ingress.kubernetes.io/proxy-body-size", "1m"))
        for rule in ingress["spec"]["rules"]:
            for p in rule["http"]["paths"]:
                service = services[p["backend"]["service"]["name"]]
                for w in objects.workloads:
                    if service["spec"]["selector"].items() <= w.template["metadata"]["labels"].items():
                        for name, f in w.process.fields.items():
                            if re.search(r"_MAX_(BODY_)?BYTES$", name):
                                value = int(w.env[name].value) if name in w.env else f.default
                                assert limit >= value, f"{ingress['metadata']['name']}: body limit {limit} < {name}={value}"


def test_telemetry_leaves_no_client_address_in_the_ingress_log(objects):
    """The telemetry privacy promise (docs/telemetry.md): no IP in storage, logs or metrics anywhere on the telemetry path."""
    for ingress in objects.of_kind("Ingress"):
        backends = {p["backend"]["service"]["name"] for r in ingress["spec"]["rules"] for p in r["http"]["paths"]}
        if any("telemetry" in b for b in backends):
            assert ingress["metadata"]["annotations"]["nginx.ingress.kubernetes.io/enable-access-log"] == "false"
