"""Results shaped like the lab's programs print them, for the tests of figures and pages.

The params are the ones the real programs put into their results (seen in a
``make demo`` run): search_tree's LIBXAC trees with ``tree``, ``advisory`` and
``block_bytes``, Berkeley DB with its ``mode`` and ``cache_mib``, LMDB with
``map_mib``; page_touch's time per page against ``n`` with the OS floors in the
same metric and its least-squares ``fit``; the storage suite's single values.
Samples are drawn from a seeded generator around a given centre; every
result carries the env an agent on validity_helpers.FINGERPRINT's machine sends
(register the machine with that fingerprint for unflagged results).
"""

import random
from typing import Any

from tests.helpers import result_record as plain_record
from tests.validity_helpers import env


def result_record(**fields: Any) -> dict[str, Any]:
    return plain_record(env=env(), **fields)


WORKLOAD = {
    "count": 2000,
    "procs": 1,
    "order": "random",
    "seed": 20050520,
    "key_bytes": 8,
    "value_bytes": 512,
}
TREES = (
    {"tree": "btree", "block_bytes": 4096, "advisory": False},
    {"tree": "btree", "block_bytes": 4096, "advisory": True},
    {"tree": "cobtree", "block_bytes": 0, "advisory": False},
)
BDB_MODES = ("not_durable", "nosync")


def spread(rng: random.Random, centre: float, n: int, width: float = 0.04) -> list[float]:
    return [round(centre * rng.uniform(1 - width, 1 + width), 6) for _ in range(n)]


def latencies(rng: random.Random, centre: float, n: int) -> list[float]:
    """A latency distribution: most near ``centre``, a long tail (one in 50 ten times slower)."""
    return [
        round(centre * rng.uniform(0.8, 1.3) * (10 if rng.random() < 0.02 else 1), 4)
        for _ in range(n)
    ]


def _record(
    sut: str, metric: str, unit: str, better: str, samples: list[float], **params: Any
) -> dict[str, Any]:
    return result_record(
        suite="search-tree",
        benchmark="insert",
        sut=sut,
        metric=metric,
        unit=unit,
        better=better,
        samples=samples,
        params={**WORKLOAD, **params},
    )


def search_tree_records(
    *, seed: int = 1, durability: str = "nondurable", libxac_speed: float = 1.0
) -> list[dict[str, Any]]:
    """One search-tree run: the three LIBXAC trees, Berkeley DB's modes and LMDB; throughput
    (6 repetitions), insert latency (400 samples) and, for LIBXAC, its 100 most expensive."""
    rng = random.Random(seed)
    records = []
    for index, tree in enumerate(TREES):
        speed = (40_000 + 10_000 * index) * libxac_speed
        common = {"durability": durability, "mode": durability, **tree}
        records.append(
            _record("libxac", "throughput", "ops/s", "higher", spread(rng, speed, 6), **common)
        )
        records.append(
            _record(
                "libxac",
                "insert_latency",
                "us",
                "lower",
                latencies(rng, 1e6 / speed, 400),
                **common,
            )
        )
        top = sorted(latencies(rng, 1e6 / speed, 400), reverse=True)[:100]
        records.append(_record("libxac", "insert_latency_top", "us", "lower", top, **common))
        if durability == "durable":
            records.append(
                _record("libxac", "log_syncs_per_insert", "ratio", "lower", [0.5], **common)
            )
    for mode in BDB_MODES:
        common = {"durability": durability, "mode": mode, "cache_mib": 2}
        records.append(
            _record("bdb", "throughput", "ops/s", "higher", spread(rng, 60_000, 6), **common)
        )
        records.append(
            _record("bdb", "insert_latency", "us", "lower", latencies(rng, 16.0, 400), **common)
        )
    common = {"durability": durability, "mode": "nosync", "map_mib": 4096}
    records.append(
        _record("lmdb", "throughput", "ops/s", "higher", spread(rng, 90_000, 6), **common)
    )
    records.append(
        _record("lmdb", "insert_latency", "us", "lower", latencies(rng, 11.0, 400), **common)
    )
    return records


FLOORS = {"sigsegv_roundtrip": 1.9, "sigsegv_mprotect": 3.5, "mprotect": 0.9}
FIT = {"read": (3.0, 2.0), "write": (4.0, 2.5)}  # access: (slope, c) of time per page


def page_touch_records(*, seed: int = 1, max_pages: int = 64) -> list[dict[str, Any]]:
    """page_touch's time per page for n = 1 … max_pages, the OS floors in the same metric at
    n = 1024, and the fitted model (c, a or b, r2) of each series."""
    rng = random.Random(seed)
    records = []
    common = {"durability": "nondurable", "access_control": "pte"}
    n = 1
    while n <= max_pages:
        for access, (slope, c) in FIT.items():
            for advisory in (False, True):
                centre = (slope + c / n) * (0.5 if advisory else 1.0)
                records.append(
                    result_record(
                        suite="page-touch",
                        params={"n": n, "access": access, "advisory": advisory, **common},
                        samples=spread(rng, centre, 8),
                    )
                )
        n *= 2
    for benchmark, centre in FLOORS.items():
        records.append(
            result_record(
                suite="page-touch",
                benchmark=benchmark,
                sut="os",
                params={"n": 1024, "memory": "memfd_shared"},
                samples=spread(rng, centre, 8),
            )
        )
    for access, (slope, c) in FIT.items():
        for advisory in (False, True):
            scale = 0.5 if advisory else 1.0
            params = {"access": access, "advisory": advisory, **common}
            slope_name = "a" if access == "read" else "b"
            for metric, value, unit in (
                ("c", c * scale, "us"),
                (slope_name, slope * scale, "us"),
                ("r2", 0.99, "1"),
            ):
                records.append(
                    result_record(
                        suite="page-touch",
                        benchmark="fit",
                        metric=metric,
                        unit=unit,
                        better="higher" if metric == "r2" else "lower",
                        params=params,
                        samples=[value],
                    )
                )
    return records


def storage_records(*, seed: int = 1) -> list[dict[str, Any]]:
    """Single values of the storage suite (one result per benchmark and metric)."""
    rng = random.Random(seed)
    return [
        result_record(
            suite="storage",
            benchmark="sigsegv_roundtrip",
            sut="os",
            metric="segv_enter_time",
            unit="ns",
            params={},
            samples=spread(rng, 900.0, 30),
        ),
        result_record(
            suite="storage",
            benchmark="msync_fsync",
            sut="os",
            metric="fsync_time",
            unit="us",
            params={"pages": 1000, "page_bytes": 4096},
            samples=spread(rng, 350.0, 30),
        ),
    ]
