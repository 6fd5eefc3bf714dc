"""Every PromQL expression of every dashboard runs against a real Prometheus.

A real prometheus-node-exporter and a real Prometheus (Debian packages) are
started on loopback, Prometheus scraping the exporter every second with the
label the playbooks' prometheus role gives a lab machine's node target
(job ``node``, ``machine`` = the agent name).  Once it holds enough samples
for a rate over ``$__rate_interval``, each expression, with Grafana's
variables substituted the way the Prometheus datasource does, goes through
``promtool query instant``; a failure or an empty result fails the test.
The generated configuration passes ``promtool check config`` first.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from xaclab_testsupport import free_port, stop_process, wait_until_answers

DASHBOARDS = Path(__file__).resolve().parents[1] / "json"
PROM_UID = "xaclab-prom"
MACHINE = "dash-lab-01"
# Grafana's built-ins, at the values a 1 s scrape interval allows: a rate
# needs two samples inside its window.
BUILTINS = {"__rate_interval": "15s", "__interval": "5s", "__range": "1m"}
# What the dashboards' $machine variable holds with "All" selected: the real
# machine plus one whose name needs regex escaping.
MACHINE_VALUES = [MACHINE, "bench.lab-02"]


def _panels(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for panel in items:
        out.append(panel)
        out.extend(_panels(panel.get("panels", [])))
    return out


def _prom_targets() -> list[tuple[str, str]]:
    found = []
    for path in sorted(DASHBOARDS.rglob("*.json")):
        board = json.loads(path.read_text())
        for panel in _panels(board.get("panels", [])):
            for target in panel.get("targets", []):
                if target.get("datasource", {}).get("uid") == PROM_UID:
                    ident = f"{path.relative_to(DASHBOARDS)}#{panel['id']}:{target['refId']}"
                    found.append((ident, target["expr"]))
    return found


TARGETS = _prom_targets()


def _regex_escape(value: str) -> str:
    """The Prometheus datasource's escaping of one value of a multi-value variable."""
    value = value.replace("\\", "\\\\\\\\")
    return re.sub(r"[$^*{}\[\]'+?.()|]", lambda m: "\\\\" + m.group(0), value)


def interpolate(expr: str, variables: dict[str, list[str]]) -> str:
    """Grafana's substitution for PromQL: built-ins, then multi-value variables as ``(a|b)``."""

    def replace(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        if name in BUILTINS:
            return BUILTINS[name]
        if name in variables:
            return "(" + "|".join(_regex_escape(v) for v in variables[name]) + ")"
        return match.group(0)

    return re.sub(r"\$\{(\w+)\}|\$(\w+)", replace, expr)


def test_interpolation_follows_grafana() -> None:
    got = interpolate('rate(x{machine=~"$machine"}[$__rate_interval])', {"machine": ["a.b", "c"]})
    assert got == 'rate(x{machine=~"(a\\\\.b|c)"}[15s])'


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of a Prometheus that has scraped a real node_exporter for a while."""
    work = tmp_path_factory.mktemp("dash-prom")
    exporter_port, prom_port = free_port(), free_port()
    config = work / "prometheus.yml"
    config.write_text(
        "global:\n"
        "  scrape_interval: 1s\n"
        "  evaluation_interval: 1s\n"
        "scrape_configs:\n"
        "  - job_name: node\n"
        "    static_configs:\n"
        f"      - targets: ['127.0.0.1:{exporter_port}']\n"
        "        labels:\n"
        f"          machine: {MACHINE}\n"
    )
    checked = subprocess.run(["promtool", "check", "config", str(config)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr

    exporter_log, prom_log = work / "node_exporter.log", work / "prometheus.log"
    exporter = subprocess.Popen(
        ["prometheus-node-exporter", f"--web.listen-address=127.0.0.1:{exporter_port}"],
        stdout=subprocess.DEVNULL,
        stderr=exporter_log.open("wb"),
    )
    try:
        metrics = f"http://127.0.0.1:{exporter_port}/metrics"
        wait_until_answers(exporter, metrics, what="node_exporter", log=exporter_log, timeout=30)
        server = subprocess.Popen(
            [
                "prometheus",
                f"--config.file={config}",
                f"--storage.tsdb.path={work / 'data'}",
                f"--web.listen-address=127.0.0.1:{prom_port}",
            ],
            stdout=subprocess.DEVNULL,
            stderr=prom_log.open("wb"),
        )
        try:
            url = f"http://127.0.0.1:{prom_port}"
            wait_until_answers(server, f"{url}/-/ready", what="prometheus", log=prom_log, timeout=30)
            deadline = time.monotonic() + 60
            while True:
                reply = httpx.get(
                    f"{url}/api/v1/query",
                    params={"query": f'count_over_time(up{{job="node"}}[{BUILTINS["__rate_interval"]}])'},
                    timeout=5,
                ).json()
                samples = reply["data"]["result"]
                if samples and float(samples[0]["value"][1]) >= 3:
                    break
                assert time.monotonic() < deadline, f"fewer than 3 scrapes in 60 s: {reply}"
                time.sleep(0.5)
            yield url
        finally:
            stop_process(server)
    finally:
        stop_process(exporter)


def test_there_are_promql_targets() -> None:
    assert TARGETS, f"no Prometheus targets under {DASHBOARDS}"


@pytest.mark.parametrize(("ident", "expr"), TARGETS, ids=[t[0] for t in TARGETS])
def test_promql_returns_series(prometheus: str, ident: str, expr: str) -> None:
    query = interpolate(expr, {"machine": MACHINE_VALUES})
    assert "$" not in query, f"{ident}: a variable is left in {query}"
    done = subprocess.run(
        ["promtool", "query", "instant", "-o", "json", prometheus, query],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, f"{ident}: {done.stderr}\n--- PromQL sent ---\n{query}"
    result = json.loads(done.stdout)
    assert result, f"{ident}: empty result\n--- PromQL sent ---\n{query}"
