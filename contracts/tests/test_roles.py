"""Each result param's role comes from the suite files (xaclab_contracts.roles)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from xaclab_contracts.roles import param_roles, shipped_roles
from xaclab_contracts.suites import Suite, load_suites, parse_suite

# What services/comparisons.py hard-coded before the suites declared roles: the
# shipped declarations must give the comparisons the same answers.
FORMER_SYSTEM_SPECIFIC = {
    "cache_mib",
    "map_mib",
    "keep_pages",
    "write_protect",
    "access_control",
    "working_mib",
    "tree",
    "block_bytes",
    "advisory",
    "version",
    "mode",
}
FORMER_OBSERVED = {"write_protect", "access_control"}
# Declared since, "system" in the suite files, no line in the server:
# LIBXAC's admission limit and turn and escalation threshold (issue I), and the
# knobs of the systems added since (SQLite, PMDK, RocksDB:
# docs/benchmarks-systems.md).
ADDED_SYSTEM_SPECIFIC = {
    "writers",
    "turn_us",
    "escalate_after",
    "lock_spin_us",
    "handoff_us",
    "mmap_mib",
    "synchronous",
    "pool_mib",
    "wal_sync",
    "memtable_mib",
}


def suite(name: str, params: dict[str, str], recorded: dict[str, str]) -> Suite:
    raw: dict[str, Any] = {
        "name": name,
        "programs": ["p"],
        "profiles": {"quick": []},
        "params": {k: {"type": "integer", "flag": f"--{k}", "role": r} for k, r in params.items()},
        "recorded": {k: {"role": r} for k, r in recorded.items()},
    }
    return parse_suite(raw, source=Path(f"{name}.json"))


def test_the_shipped_roles_are_the_former_lists() -> None:
    roles = shipped_roles()
    declared: dict[str, set[str]] = {}
    for found in load_suites().values():
        for name in [*found.params, *found.recorded]:
            declared.setdefault(str(found.role(name)), set()).add(name)
    assert declared["observed"] == FORMER_OBSERVED
    assert (
        declared["system"] | declared["observed"] == FORMER_SYSTEM_SPECIFIC | ADDED_SYSTEM_SPECIFIC
    )
    for name in (FORMER_SYSTEM_SPECIFIC | ADDED_SYSTEM_SPECIFIC) - FORMER_OBSERVED:
        assert roles.lab_wide[name] == "system", name
    for name in ("n", "count", "procs", "durability", "repetitions", "write_cache"):
        assert roles.role("search-tree", name) == "workload", name


def test_a_suites_own_declaration_wins() -> None:
    roles = param_roles(
        {
            "a": suite("a", {"knob": "system"}, {"kernel": "observed"}),
            "b": suite("b", {"knob": "workload"}, {}),
        }
    )
    assert roles.role("a", "knob") == "system" and roles.role("b", "knob") == "workload"
    assert roles.role("b", "kernel") == "observed", "b does not declare it; a does"
    assert roles.role("c", "knob") == "workload", "the suites disagree: the default"
    assert roles.role("a", "never_declared") == "workload"
