"""deploy/k8s/base/env/<process>.env lists every variable the process reads, and only those.

These files are the one place a deployment's settings live: kustomize turns them into
ConfigMaps and compose reads them as env_file. A variable is either set for every deployment
(``VAR=value``), left to the code's default and shown (``# VAR=value``, checked to be the
default), or provided per target (``# VAR: where from``).
"""

from __future__ import annotations

import msgspec
import pytest

from deploy_facts import ENV_FILES, declarations, env_file, load, stand_in_private_key


def _minimal_env(proc) -> dict[str, str]:
    """Values for the variables the process cannot start without (stand-ins)."""
    env = {}
    for name, field in proc.fields.items():
        if field.required:
            env[name] = "12345" if name.endswith("_ID") else "stand-in-" + "x" * 32  # (keys: 32+ bytes)
    if "INDEXIUM_GITHUB_APP_ID" in env:
        env["INDEXIUM_GITHUB_APP_PRIVATE_KEY"] = stand_in_private_key()
    return env


def _default(field: msgspec.structs.FieldInfo):
    return field.default_factory() if field.default is msgspec.NODEFAULT else field.default


def test_every_process_has_an_env_file(processes):
    for name in processes:
        assert (ENV_FILES / f"{name}.env").exists(), f"deploy/k8s/base/env/{name}.env is missing"
    stray = {p.stem for p in ENV_FILES.glob("*.env")} - set(processes) - {"common"}
    assert not stray, f"env files for no process: {stray}"


def test_common_env_holds_exactly_the_shared_settings(processes):
    from indexium_platform.settings import Common

    common = {f.encode_name for f in msgspec.structs.fields(Common)}
    assert set(env_file("common")) == common


def test_every_variable_a_process_reads_is_listed(processes):
    for proc in processes.values():
        missing = set(proc.fields) - set(declarations(proc))
        assert not missing, (f"{proc.name} reads {sorted(missing)}: list each in "
                             f"deploy/k8s/base/env/{proc.name}.env as VAR=value (set), "
                             f"# VAR=<default> (code default) or # VAR: <where it comes from>")


def test_no_variable_is_listed_that_the_process_does_not_read(processes):
    for proc in processes.values():
        stray = set(env_file(proc.name)) - set(proc.fields)
        assert not stray, f"{proc.name}.env lists {sorted(stray)}, which {proc.name} does not read"


def test_shown_defaults_are_the_code_defaults(processes):
    for proc in processes.values():
        for var in declarations(proc).values():
            if not var.commented or var.value is None:
                continue
            field = proc.fields[var.name]
            settings = load(proc.settings, {**_minimal_env(proc), var.name: var.value})
            assert getattr(settings, field.name) == _default(field), \
                f"{proc.name}.env shows # {var.name}={var.value}, but the code's default is {_default(field)!r}"


def test_required_and_local_only_settings_are_not_left_to_defaults(processes):
    """No default points at localhost in a container, and required ones must be provided."""
    for proc in processes.values():
        for name, var in declarations(proc).items():
            field = proc.fields.get(name)
            if field is None or not var.commented or var.value is None:
                continue
            local = isinstance(_default(field), str) and ("127.0.0.1" in _default(field)
                                                         or "localhost" in _default(field))
            assert not field.required and not local, f"{proc.name}: {name} must be set, not defaulted"


@pytest.mark.parametrize("secret_word", ["SECRET", "PASSWORD", "PRIVATE_KEY"])
def test_no_secret_is_written_into_an_env_file(processes, secret_word):
    for path in ENV_FILES.glob("*.env"):
        for var in env_file(path.stem).values():
            if secret_word in var.name and not var.name.endswith("_PATH"):
                assert var.value is None, f"{path.name}: {var.name} belongs in a Secret"
