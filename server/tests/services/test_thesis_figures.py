"""contracts/thesis-figures.json as the report reads it (services/thesis_figures.py)."""

import copy
import json
import math
from typing import Any

import pytest

from xaclab_server.services.reproduction import (
    REPORT_TABLES,
    THESIS_FIGURES,
    _plan,
    load_report_figures,
    row_unit,
)
from xaclab_server.services.thesis_figures import (
    Formula,
    Mapping,
    ThesisFiguresError,
    parse_thesis_figures,
)
from xaclab_server.services.units import cycles_to_time, is_cycles

DOCS = THESIS_FIGURES.resolve()


def document() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(DOCS.read_text(encoding="utf-8"))
    return loaded


def test_the_report_reads_contracts_thesis_figures() -> None:
    assert DOCS.is_file()
    assert DOCS.parts[-2:] == ("contracts", "thesis-figures.json")


def test_every_report_table_loads_with_rows_and_mappings() -> None:
    figures = load_report_figures()
    assert tuple(figures.tables) == REPORT_TABLES
    for table in figures.tables.values():
        specs = _plan(table)
        assert specs, f"table {table.table} has nothing to compare"
        for spec in specs:
            assert any(isinstance(v, int | float) for v in spec.thesis.values()), (
                f"table {table.table} {spec.column}: no thesis value"
            )


def test_cycle_conversions_agree_with_the_files_normalized_values() -> None:
    """The report converts cycles itself; the transcription's normalized values agree."""
    figures = load_report_figures()
    checked = 0
    for raw in document()["tables"]:
        if raw["table"] not in figures.tables:
            continue
        for row in raw["rows"]:
            for column, normal in (row.get("normalized") or {}).items():
                unit = raw["units"][column]
                if not is_cycles(unit):
                    continue
                clock = figures.machines[row["machine"]].clock_ghz
                mine = cycles_to_time(row[column], unit, clock_ghz=clock, to_unit=normal["unit"])
                assert math.isclose(mine, normal["value"], rel_tol=1e-4), (raw["table"], column)
                checked += 1
    assert checked > 50


def test_mappings_name_what_the_programs_emit() -> None:
    """Benchmarks and metrics as libxac/bench prints them (checked live in
    tests/system/test_reproduction_live.py); never the old proposals."""
    emitted = {
        ("page-touch", "page_touch", "libxac", "time_per_page"),
        ("page-touch", "fit", "libxac", "a"),
        ("page-touch", "fit", "libxac", "b"),
        ("storage", "sigsegv_roundtrip", "os", "segv_enter_time"),
        ("storage", "sigsegv_roundtrip", "os", "segv_exit_time"),
        ("storage", "sigsegv_roundtrip", "os", "mmap_time"),
        ("storage", "first_touch", "os", "first_touch_time"),
        ("storage", "memcpy_page", "os", "memcpy_time"),
        ("storage", "msync_fsync", "os", "fsync_time"),
        ("storage", "page_checksum", "os", "checksum_time"),
        ("concurrency", "concurrency_test", "libxac", "time_per_txn"),
        ("concurrency", "concurrency_test", "libxac", "speedup"),
        ("search-tree", "insert", "libxac", "throughput"),
        ("search-tree", "insert", "bdb", "throughput"),
    }
    figures = load_report_figures()
    for table in figures.tables.values():
        mappings = [s.cell for s in _plan(table) if isinstance(s.cell, Mapping)]
        mappings += list(table.refs.values())
        for m in mappings:
            assert (m.suite, m.benchmark, m.sut, m.metric) in emitted, (table.table, m)
            if m.suite == "search-tree" and m.sut == "libxac":
                assert m.params_dict["tree"] in ("btree", "cobtree"), (table.table, m)
                # tree_blocks' serial sweep prints the same trees: only the LIBXAC ones count.
                assert m.params_dict["version"] == "transactional", (table.table, m)
            if m.suite == "search-tree":
                # durability is durable|nondurable in every program; mode names the setting.
                assert m.params_dict["durability"] in ("durable", "nondurable"), (table.table, m)
            if m.suite == "search-tree" and m.params_dict["durability"] == "nondurable":
                assert m.sut == "libxac" or m.params_dict["mode"] in ("not_durable", "nosync")


def test_durable_tables_ask_for_the_write_cache_the_thesis_had() -> None:
    figures = load_report_figures()
    for name, state in (("4.7", "off"), ("4.8", "off"), ("4.10", "off"), ("C.12", "on")):
        for spec in _plan(figures.tables[name]):
            if isinstance(spec.cell, Mapping):
                assert spec.cell.params_dict.get("write_cache") == state, (name, spec.column)


def test_every_row_unit_is_the_thesis_unit_or_a_time_for_cycles() -> None:
    figures = load_report_figures()
    units = {
        (t.table, s.column): row_unit(s.thesis_unit, s.cell)
        for t in figures.tables.values()
        for s in _plan(t)
    }
    assert units[("4.2", "t_read_normal")] == "us"  # kcycles
    assert units[("4.3", "segv_enter_cycles")] == "ns"  # cycles
    assert units[("4.3", "mmap_us")] == "us"
    assert units[("4.8", "mean")] == "ms"
    assert units[("5.5", "time_1proc")] == "ms"  # from ops/s
    assert units[("C.10", "time_1proc")] == "us"
    assert units[("4.9", "speedup")] == "ratio"
    assert units[("5.6", "bplus_vs_bdb_1proc")] == "%"


def test_table_4_6_estimates_follow_equations_4_1_and_4_2() -> None:
    table = load_report_figures().tables["4.6"]
    formulas = {
        (dict(s.identity)["advisory"], s.column): s.cell.formula.text
        for s in _plan(table)
        if not isinstance(s.cell, Mapping)
    }
    assert formulas[(False, "read_est")] == "segv_enter + segv_exit + 2 * mmap + page_fault"
    assert formulas[(True, "read_est")] == "2 * mmap + page_fault"
    assert formulas[(True, "write_est")] == "2 * mmap + page_fault + memcpy"
    models = {
        (dict(s.identity)["advisory"], s.column): s.cell
        for s in _plan(table)
        if s.column in ("a", "b") and isinstance(s.cell, Mapping)
    }
    assert models[(True, "a")].params_dict == {
        "access": "read",
        "advisory": True,
        "durability": "nondurable",
    }
    assert models[(False, "b")].params_dict["access"] == "write"


def test_formulas_are_arithmetic_only() -> None:
    formula = Formula("100 * (a - b) / a")
    assert formula.names == {"a", "b"}
    assert formula.evaluate({"a": 4.0, "b": 1.0}) == 75.0
    assert formula.evaluate({"a": 0.0, "b": 1.0}) is None
    assert Formula("-a + 2").evaluate({"a": 1.0}) == 1.0
    for text in ("__import__('os')", "a.b", "a ** 2", "[a]", "a if b else c", "'x'", "a +"):
        with pytest.raises(ThesisFiguresError):
            Formula(text)


def broken(change: Any) -> dict[str, Any]:
    doc = copy.deepcopy(document())
    change({t["table"]: t for t in doc["tables"]})
    return doc


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda t: t["4.2"].update(table="9.9"), "table 4.2 is missing"),
        (lambda t: t["4.3"]["units"].update(mmap_us="furlongs"), "unit 'furlongs'"),
        (
            lambda t: t["4.2"]["rows"][0]["maps_to"]["read_speedup_pct"].update(formula="x + 1"),
            "neither a column nor a ref",
        ),
        (
            lambda t: t["4.5"]["rows"][0]["maps_to"]["first"].update(statistic="mode"),
            "statistic 'mode'",
        ),
        (
            lambda t: t["4.5"]["rows"][0]["maps_to"]["first"].pop("metric"),
            "metric: a non-empty string is missing",
        ),
    ],
)
def test_a_broken_file_is_refused_with_the_place_named(change: Any, message: str) -> None:
    with pytest.raises(ThesisFiguresError, match=message):
        parse_thesis_figures(broken(change), REPORT_TABLES)


def test_the_wrong_format_is_refused() -> None:
    with pytest.raises(ThesisFiguresError, match="not xaclab-thesis-figures"):
        parse_thesis_figures({**document(), "format_version": 2}, REPORT_TABLES)
