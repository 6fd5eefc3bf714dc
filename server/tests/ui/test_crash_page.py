"""The crash-consistency page (/crash): the table of one run's crash points per system, mode
and kind, from results the real programs printed (libxac/bin, `make -C libxac`)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from tests.reproduction_helpers import register_machine, store_results

BIN_DIR = Path(__file__).resolve().parents[3] / "libxac" / "bin"


def crash_results(program: str, tmp_path: Path, *args: str) -> list[dict[str, Any]]:
    work = tmp_path / program
    work.mkdir()
    done = subprocess.run(
        [str(BIN_DIR / program), "crash", "--points", "6", "--dir", str(work), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return [json.loads(line) for line in done.stdout.splitlines()]


def row(page: str, system: str, kind: str, mode: str) -> str:
    for match in re.finditer(r'<tr data-system="[^"]*".*?</tr>', page, re.DOTALL):
        text = match.group(0)
        if f'data-system="{system}"' in text and kind in text and f"<td>{mode}</td>" in text:
            return text
    raise AssertionError((system, kind, mode))


def count(text: str, name: str) -> int:
    found = re.search(rf'data-count="{name}">(\d+)<', text)
    assert found, name
    return int(found.group(1))


def test_the_table_shows_every_system_mode_and_kind_of_the_run(
    client: TestClient, tmp_path: Path
) -> None:
    machine_id, agent = register_machine(client, "crash-page")
    records = crash_results("sqlite_insert", tmp_path) + crash_results(
        "lmdb_insert", tmp_path, "--durability", "nondurable", "--kind", "power"
    )
    run_id = store_results(client, machine_id, agent, "crash-consistency", records)

    page = client.get("/crash")  # the newest run with crash results
    assert page.status_code == 200
    assert f"run #{run_id}" in page.text
    durable = row(page.text, "sqlite", "power loss", "wal_full")
    assert "<td>SQLite</td>" in durable  # the title from the suite's declaration
    assert count(durable, "crash_points") == 6
    assert count(durable, "acked_lost") == 0
    assert 'data-finding="no"' in durable
    assert count(row(page.text, "sqlite", "process crash", "wal_full"), "crash_points") == 6
    # LMDB without syncs loses acknowledged commits to a power cut; a nondurable mode may,
    # so it is shown, not flagged.
    nosync = row(page.text, "lmdb", "power loss", "nosync")
    assert count(nosync, "acked_lost") > 0 and 'data-finding="no"' in nosync
    assert client.get(f"/crash?run={run_id}").text.count("<tr data-system=") == 3
    assert f'href="/crash?run={run_id}"' in client.get(f"/runs/{run_id}").text


def test_without_crash_results_the_page_says_so_and_unknown_runs_are_404(
    client: TestClient,
) -> None:
    page = client.get("/crash")
    assert page.status_code == 200 and "No crash-consistency results yet" in page.text
    for value in ("31337", "abc", "99999999999999999999"):
        assert client.get(f"/crash?run={value}").status_code == 404, value


def test_the_overview_lists_crash_counts_and_divides_none(
    client: TestClient, tmp_path: Path
) -> None:
    # The crash suite declares "system_ratios": false: LIBXAC's lost commits over Berkeley
    # DB's (0 / 0) is no number, so the overview shows each system's values instead.
    machine_id, agent = register_machine(client, "crash-overview")
    records = crash_results("tree_insert", tmp_path, "--tree", "btree") + crash_results(
        "bdb_insert", tmp_path
    )
    run_id = store_results(client, machine_id, agent, "crash-consistency", records)
    # Nor do the one-click links offer such a ratio, on the run page or the compare page.
    assert "LIBXAC against Berkeley DB" not in client.get(f"/runs/{run_id}").text
    assert "LIBXAC against Berkeley DB" not in client.get("/compare").text
    page = client.get(f"/machines/{machine_id}").text
    section = page[page.index("crash-consistency") :]
    assert "which a ratio would not make clearer" in section
    assert "LIBXAC against Berkeley DB" not in section
    assert 'data-testid="forest"' not in section
    assert "Berkeley DB" in section and "LIBXAC" in section  # both systems' values
