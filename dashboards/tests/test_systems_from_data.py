"""No dashboard names a system under test: the systems come from the data.

Issue L's rule for systems as plug-ins: a system is its driver and its
declaration in contracts/suites/*.json, and nothing else names it.  A
dashboard that compared ``sut`` with a quoted name would need an edit for
every new system (or would hide it), so every SQL string a dashboard holds
(panel targets, variable queries, annotations) is searched for each declared
system's name as a SQL literal.  The page-touch dashboard, for one, picks the
system it measures and the floors beside it by the benchmarks they report.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parents[1]
SUITES = HERE.parent / "contracts" / "suites"
BOARDS = sorted((HERE / "json").rglob("*.json"))


def _declared_systems() -> set[str]:
    names: set[str] = set()
    for path in SUITES.glob("*.json"):
        names |= set(json.loads(path.read_text()).get("systems", {}))
    return names


def _sql_strings(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("rawSql", "query", "definition") and isinstance(value, str):
                yield value
            else:
                yield from _sql_strings(value)
    elif isinstance(node, list):
        for item in node:
            yield from _sql_strings(item)


def test_the_suites_declare_the_systems_this_test_looks_for() -> None:
    # Without declarations the check below would pass vacuously.
    assert {"libxac", "os", "bdb", "lmdb"} <= _declared_systems()


@pytest.mark.parametrize("path", BOARDS, ids=[str(p.relative_to(HERE / "json")) for p in BOARDS])
def test_no_sql_names_a_system(path: Path) -> None:
    board = json.loads(path.read_text())
    named = sorted(
        {
            f"{name!r} in: {sql.strip().splitlines()[0][:80]}"
            for sql in _sql_strings(board)
            for name in _declared_systems()
            if f"'{name}'" in sql
        }
    )
    assert not named, "\n".join(named)
