"""The comparison as the pages show it (services/compare_view.py): rows that name their systems
and only what differs, what is shared said once, and sides A and B by name."""

from typing import Any

from xaclab_server.schemas.comparison import ComparisonOut, PairOut
from xaclab_server.services.compare_view import forest

WORKLOAD = {"count": 2000, "durability": "nondurable"}


def pair(sut: str, ratio: float, **params: Any) -> PairOut:
    return PairOut(
        suite="search-tree",
        benchmark="insert",
        sut=sut,
        metric="throughput",
        unit="ops/s",
        better="higher",
        params={**WORKLOAD, **params},
        n_a=6,
        n_b=6,
        stat_a=100.0,
        stat_b=100.0 * ratio,
        ratio=ratio,
        ci_low=ratio * 0.98,
        ci_high=ratio * 1.02,
        p_value=0.001,
        q_value=0.002,
        test="mann-whitney",
        significant=ratio != 1.0,
        in_doubt=False,
        verdict="",
        binned=False,
        flags_a={},
        flags_b={},
        median_ci_a=1.0,
        median_ci_b=1.0,
        detectable=2.0,
        where_a="lab epoch 1",
        where_b="lab epoch 1",
        fingerprint_differences=[],
    )


def comparison(kind: str, a: str, b: str, pairs: list[PairOut]) -> ComparisonOut:
    return ComparisonOut(
        kind=kind,
        a=a,
        b=b,
        statistic="median",
        resamples=2000,
        seed=1,
        alpha=0.05,
        correction="benjamini-hochberg",
        cross_machine=False,
        fingerprint_differences=[],
        note="",
        only_a=0,
        only_b=0,
        significant=len(pairs),
        in_doubt=0,
        pairs=pairs,
    )


def test_two_runs_say_once_what_each_systems_pairs_share() -> None:
    libxac = {"access_control": "pte", "keep_pages": True}
    pairs = [
        pair("libxac", 1.2, tree="btree", **libxac),
        pair("libxac", 0.8, tree="cobtree", **libxac),
        pair("bdb", 1.0, cache_mib=2, mode="nosync"),
        pair("bdb", 1.1, cache_mib=2, mode="not_durable"),
        pair("lmdb", 1.3, map_mib=4096),
    ]
    view = forest(comparison("runs", "run 2", "run 6", pairs))
    assert view.common == "count 2000 · durability nondurable"
    assert dict(view.system_common) == {
        "LIBXAC pair": "access control pte · keep pages yes",
        "Berkeley DB pair": "cache mib 2",
        "LMDB pair": "map mib 4096",
    }
    # Each row: its system and what tells it apart from the system's other pairs, no more.
    assert sorted(r.label for r in view.rows) == [
        "Berkeley DB · mode nosync",
        "Berkeley DB · mode not_durable",
        "LIBXAC · tree btree",
        "LIBXAC · tree cobtree",
        "LMDB",
    ]
    words = [w for w, _colour, _shape in view.outcomes]
    assert words == [
        "run 6 significantly better",
        "run 6 significantly worse",
        "no significant difference",
    ]


def test_a_systems_shared_params_are_said_per_benchmark() -> None:
    insert = pair("libxac", 1.2, tree="btree", access_control="pte")
    search = pair("libxac", 0.9, tree="btree", block_bytes=4096, version="serial")
    search_cob = pair("libxac", 1.1, tree="cobtree", block_bytes=0, version="serial")
    search.benchmark = search_cob.benchmark = "search"
    view = forest(comparison("runs", "run 1", "run 2", [insert, search, search_cob]))
    assert dict(view.system_common) == {
        "LIBXAC pair of insert": "access control pte · tree btree",
        "LIBXAC pair of search": "version serial",
    }
    assert sorted(r.label for r in view.rows) == [
        "LIBXAC",
        "LIBXAC · block bytes 0 · tree cobtree",
        "LIBXAC · block bytes 4096 · tree btree",
    ]


def test_systems_and_factor_values_are_named_in_words() -> None:
    sides = {"bdb.cache_mib": 2, "libxac.tree": "btree"}
    sut = forest(comparison("sut", "bdb", "libxac", [pair("bdb/libxac", 0.5, **sides)]))
    assert (sut.a, sut.b) == ("Berkeley DB", "LIBXAC")
    # A side's own params by the system's name, not its identifier ("bdb.cache_mib").
    assert sut.common == (
        "Berkeley DB cache mib 2 · LIBXAC tree btree · count 2000 · durability nondurable"
    )
    assert [w for w, _c, _s in sut.outcomes] == ["LIBXAC significantly worse"]
    factor = forest(
        comparison(
            "factor", "write_cache=off", "write_cache=on", [pair("libxac", 1.0, tree="btree")]
        )
    )
    assert (factor.a, factor.b) == ("write cache off", "write cache on")
    assert [w for w, _c, _s in factor.outcomes] == ["no significant difference"]


def test_a_row_names_what_sets_it_apart_not_knobs_only_some_rows_carry() -> None:
    """The serial trees of tree_blocks beside the transactional B+-tree, whose knobs only it
    records: its row is told apart by version, so the knobs stay out of its label."""
    knobs = {"writers": 4, "escalate_after": 8, "keep_pages": True}
    pairs = [
        pair("libxac", 1.1, block_bytes=4096, version="serial"),
        pair("libxac", 0.9, block_bytes=8192, version="serial"),
        pair("libxac", 1.0, block_bytes=4096, version="transactional", **knobs),
    ]
    view = forest(comparison("runs", "run 2", "run 3", pairs))
    assert sorted(r.label for r in view.rows) == [
        "LIBXAC · block bytes 4096 · version serial",
        "LIBXAC · block bytes 4096 · version transactional",
        "LIBXAC · block bytes 8192 · version serial",
    ]
