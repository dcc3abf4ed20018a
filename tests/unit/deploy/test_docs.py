"""docs/operations.md covers what operators need, and the commands it gives exist."""

from __future__ import annotations

import re

import pytest
import yaml

from deploy_facts import K8S, REPO, markdown_anchors


def test_the_operations_guide_has_every_section(operations_doc):
    anchors = markdown_anchors(operations_doc)
    for section in ("images", "deploy", "every-release", "configuration", "scaling", "nats-jetstream",
                    "postgresql", "rotate-the-webhook-secret", "dead-letters", "quarantine",
                    "backup-and-restore", "upgrades-and-migrations", "alerts-and-what-to-do", "capacity"):
        assert section in anchors, f"docs/operations.md has no section #{section}"


def test_every_deployment_is_in_the_scaling_table(operations_doc, rendered):
    scaling = operations_doc.split("## Scaling", 1)[1].split("\n## ", 1)[0]
    for w in rendered["prod"].workloads:
        component = w.template["metadata"]["labels"]["app.kubernetes.io/component"]
        assert re.search(rf"^\| {re.escape(component)}\b", scaling, re.M), f"Scaling says nothing of {component}"


def test_every_alert_is_explained(operations_doc):
    rule = yaml.safe_load((K8S / "base" / "monitoring" / "prometheusrule.yaml").read_text())
    for group in rule["spec"]["groups"]:
        for alert in group["rules"]:
            assert f"`{alert['alert']}`" in operations_doc, f"docs/operations.md never names {alert['alert']}"


def test_capacity_figures_name_the_benchmark_that_measured_them(operations_doc):
    capacity = operations_doc.split("## Capacity", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in capacity.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert rows and "to be measured" not in capacity
    for row in rows:
        source = row.rstrip(" |").rsplit("|", 1)[1].strip()
        assert source == "—" or source.startswith("bench/"), row
        for bench in re.findall(r"bench/([a-z]+)", source):
            assert (REPO / "bench" / bench / "run.py").exists(), row


def test_the_operator_commands_it_gives_exist(operations_doc, capsys):
    from indexium_ops.cli import main

    commands = set(re.findall(r"python -m indexium_ops ([a-z-]+) ([a-z-]+)", operations_doc))
    commands |= {("dead-letters", action) for action in ("list", "replay", "purge")}
    for command, action in sorted(commands):
        with pytest.raises(SystemExit) as done:
            main([command, action, "--help"])
        assert done.value.code == 0, f"`python -m indexium_ops {command} {action}` does not exist"
    capsys.readouterr()


def test_the_schema_doc_names_every_migration():
    """docs/schema.md's "State as of" list is kept by hand: a migration it forgets fails here."""
    schema = (REPO / "docs" / "schema.md").read_text("utf-8")
    state = schema.split("State as of:", 1)[1].split("\n\n", 1)[0]
    for sql in sorted((REPO / "libs/db/src/indexium_db/migrations").glob("*.sql")):
        assert f"`{sql.stem}`" in state, f"docs/schema.md's \"State as of\" list misses {sql.stem}"
