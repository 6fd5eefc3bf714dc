"""p50/p95 of the comparison endpoints and the Grafana panels' SQL over a loaded database.

    cd server && ../.venv/bin/python bench/query_load.py [--results 100000] [--samples 100]

Seeds a fresh PostgreSQL cluster with 4 machines (same hardware fingerprint),
1,000 runs over four suites and ``--results`` results of ``--samples`` samples
each (10 million by default) through COPY, then times, ``--times`` times each:
the comparison endpoints (``/api/v1/compare`` of kind runs, machines and sut, and
the ``/compare`` page) in process through a TestClient, and every panel query
of dashboards/json/**/*.json expanded with dashboards/grafana_sql.py.  Prints
p50 and p95 per query.  Target: p95 < 150 ms.
"""

import argparse
import json
import random
import sys
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import psycopg
from common import SERVER_DIR, percentile

sys.path.insert(0, str(SERVER_DIR.parent))
from dashboards.grafana_sql import TimeRange, Variable, expand  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402

from tests.live import PgCluster, libpq_url  # noqa: E402
from xaclab_server.app import create_app  # noqa: E402
from xaclab_server.core.config import Settings  # noqa: E402

DASHBOARDS = SERVER_DIR.parent / "dashboards" / "json"
MACHINES = 4
RUNS = 1000
SUITES = ["page-touch", "search-tree", "concurrency", "storage"]
HARDWARE = {
    "arch": "x86_64",
    "cpu": {"model": "bench", "cores": 4, "logical_cpus": 8},
    "memory": {"total_gib": 16},
    "storage": {"disk_models": ["bench"], "rotational": False, "fstype": "ext4"},
}


def result_fields(suite: str, j: int) -> tuple[str, str, str, str, dict[str, Any]]:
    """benchmark, sut, metric, unit, params of result j of a run of ``suite``."""
    if suite == "page-touch":
        if j >= 96:
            return "sigsegv_roundtrip", "os", "time_per_call", "us", {}
        params = {
            "n": 2 ** (j % 12),
            "access": ("read", "write")[j // 12 % 2],
            "advisory": bool(j // 24 % 2),
            "durability": ("nondurable", "durable")[j // 48 % 2],
        }
        return "page_touch", "libxac", "time_per_page", "us", params
    if suite == "search-tree":
        metric, unit = (("throughput", "ops/s"), ("insert_latency", "us"))[j % 2]
        params = {"procs": 1 + j // 2 % 4, "tree": "btree", "durability": ("on", "off")[j // 8 % 2]}
        return "insert", ("libxac", "bdb", "lmdb")[j // 16 % 3], metric, unit, params
    if suite == "concurrency":
        metric, unit = (("throughput", "ops/s"), ("speedup", "ratio"))[j % 2]
        params = {"test": "ABC"[j // 2 % 3], "procs": 1 + j // 6 % 8, "durability": "nondurable"}
        return "concurrency_test", "libxac", metric, unit, params
    params = {"mode": ("fsync", "msync", "odirect")[j % 3], "chunk_bytes": 16384, "rep": j // 3}
    return "journal", "os", "write_throughput", "ops/s", params


def seed(url: str, results: int, samples: int, days: float) -> dict[str, int]:
    """Rows through COPY; returns ids the timed queries use."""
    rng = np.random.default_rng(1)
    blobs = [rng.lognormal(1, 0.2, samples) for _ in range(64)]
    packed = [b.astype("<f8").tobytes() for b in blobs]
    stats = [
        (len(b), float(b.mean()), float(np.median(b)), float(b.min()), float(b.max()),
         float(b.std(ddof=1)), float(np.sort(b)[int(np.ceil(0.99 * len(b))) - 1]))
        for b in blobs
    ]  # fmt: skip
    now = datetime.now(UTC)
    per_run = results // RUNS
    with psycopg.connect(libpq_url(url)) as conn:
        with conn.cursor().copy(
            "COPY machines (id, name, fingerprint, fingerprint_hash, token_hash, approved, "
            "created_at, last_seen_at) FROM STDIN"
        ) as copy:
            for m in range(1, MACHINES + 1):
                fingerprint = json.dumps({**HARDWARE, "hostname": f"lab-{m}", "kernel": "6.1"})
                copy.write_row((m, f"lab-{m}", fingerprint, f"f{m}", f"t{m}", True, now, now))
        run_times = [now - timedelta(days=days) * (1 - i / RUNS) for i in range(RUNS)]
        with conn.cursor().copy(
            "COPY runs (id, machine_id, suite, profile, params, status, created_at, finished_at) "
            "FROM STDIN"
        ) as copy:
            for i in range(RUNS):
                copy.write_row(
                    (i + 1, i % MACHINES + 1, SUITES[i // MACHINES % 4], "quick", "{}",
                     "succeeded", run_times[i], run_times[i])
                )  # fmt: skip
        with conn.cursor().copy(
            "COPY jobs (id, run_id, machine_id, suite, profile, params, status, progress, "
            "message, created_at, attempt, cancel_requested) FROM STDIN"
        ) as copy:
            for i in range(RUNS):
                copy.write_row(
                    (i + 1, i + 1, i % MACHINES + 1, SUITES[i // MACHINES % 4], "quick", "{}",
                     "succeeded", 1.0, "", run_times[i], 1, False)
                )  # fmt: skip
        with conn.cursor().copy(
            "COPY uploads (id, upload_id, job_id, received_at) FROM STDIN"
        ) as copy:
            for i in range(RUNS):
                copy.write_row((i + 1, f"00000000-0000-0000-0000-{i:012d}", i + 1, run_times[i]))
        columns = (
            "upload_pk, job_id, run_id, machine_id, suite, benchmark, sut, metric, unit, better, "
            "params, n, mean, median, min, max, stddev, p99, samples, library_version, "
            "git_revision, env, created_at"
        )
        env = json.dumps({"write_cache": {"state": "on"}, "storage": {"fstype": "ext4"}})
        with conn.cursor().copy(f"COPY results ({columns}) FROM STDIN") as copy:
            for i in range(RUNS):
                suite = SUITES[i // MACHINES % 4]
                for j in range(per_run):
                    benchmark, sut, metric, unit, params = result_fields(suite, j)
                    k = random.randrange(64)
                    copy.write_row(
                        (i + 1, i + 1, i + 1, i % MACHINES + 1, suite, benchmark, sut, metric,
                         unit, "lower", json.dumps(params), *stats[k], packed[k], "0.1.0",
                         "3f2a9c1", env, run_times[i])
                    )  # fmt: skip
        for table in ("machines", "runs", "jobs", "uploads"):
            conn.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                f"(SELECT max(id) FROM {table}))"
            )
        conn.commit()
        conn.autocommit = True
        conn.execute("VACUUM ANALYZE")
    # Runs of one suite on machines 1 and 2 (runs i and i+1), and a search-tree run.
    return {"run_a": RUNS - 8 + 1, "run_b": RUNS - 8 + 2, "tree_run": RUNS - 4 + 1}


def timed(label: str, times: int, call: Any) -> None:
    call()  # warm up
    durations = []
    for _ in range(times):
        started = time.perf_counter()
        call()
        durations.append((time.perf_counter() - started) * 1000)
    p95 = percentile(durations, 95)
    flag = "" if p95 < 150 else "  <-- over 150 ms"
    print(f"{percentile(durations, 50):8.1f} {p95:8.1f}  {label}{flag}")


def panel_queries() -> list[tuple[str, dict[str, Any], str]]:
    found = []
    for path in sorted(DASHBOARDS.rglob("*.json")):
        board = json.loads(path.read_text())
        panels = list(board.get("panels", []))
        for panel in board.get("panels", []):
            panels.extend(panel.get("panels", []))
        for panel in panels:
            for target in panel.get("targets", []):
                if target.get("rawSql"):
                    found.append(
                        (f"{path.stem}: {panel.get('title', '?')}", board, target["rawSql"])
                    )
        for annotation in board.get("annotations", {}).get("list", []):
            sql = annotation.get("rawQuery") or annotation.get("target", {}).get("rawSql")
            if sql:
                found.append((f"{path.stem}: annotation {annotation.get('name')}", board, sql))
    return found


def board_variables(
    conn: psycopg.Connection[Any], board: dict[str, Any], tr: TimeRange
) -> dict[str, Variable]:
    variables: dict[str, Variable] = {}
    for var in board.get("templating", {}).get("list", []):
        sql = expand(var["query"], tr, variables=variables, interval=timedelta(hours=1))
        cursor = conn.execute(sql)
        rows = cursor.fetchall()
        columns = [c.name for c in cursor.description or []]
        index = columns.index("__value") if "__value" in columns else 0
        values = [str(r[index]) for r in rows] or ["0"]
        multi = bool(var.get("multi") or var.get("includeAll"))
        variables[var["name"]] = Variable(
            values if multi else values[-1],
            multi=bool(var.get("multi")),
            include_all=bool(var.get("includeAll")),
        )
    return variables


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=int, default=100_000)
    parser.add_argument("--samples", type=int, default=100)
    parser.add_argument("--times", type=int, default=50)
    parser.add_argument(
        "--days",
        type=float,
        default=30,
        help="spread the runs over this many days up to now (default 30: all of them inside "
        "the dashboards' default time range, the worst case)",
    )
    parser.add_argument(
        "--explain", help="print EXPLAIN ANALYZE of the panels whose title has this"
    )
    parser.add_argument("--no-http", action="store_true", help="time the panel queries only")
    args = parser.parse_args()
    random.seed(1)
    with PgCluster() as cluster:
        url = cluster.create_database("xaclab_load")
        started = time.perf_counter()
        ids = seed(url, args.results, args.samples, args.days)
        print(
            f"seeded {args.results:,} results, {args.results * args.samples:,} samples "
            f"over {args.days:g} days in {time.perf_counter() - started:.1f} s"
        )
        print(f"{'p50 ms':>8} {'p95 ms':>8}  query ({args.times} times each)")
        settings = Settings.model_validate(
            {"registration_token": "bench-registration-token-0123", "env": "test",
             "database_url": url, "scheduler_seconds": 0}
        )  # fmt: skip
        with TestClient(create_app(settings)) as client:
            if args.no_http:
                endpoints = {}
            else:
                endpoints = {
                    "GET /api/v1/compare kind=runs": (
                        f"/api/v1/compare?kind=runs&a={ids['run_a']}&b={ids['run_b']}"
                    ),
                    "GET /api/v1/compare kind=runs format=csv": (
                        f"/api/v1/compare?kind=runs&a={ids['run_a']}&b={ids['run_b']}&format=csv"
                    ),
                    "GET /api/v1/compare kind=machines": (
                        "/api/v1/compare?kind=machines&a=1&b=2&suite=page-touch"
                    ),
                    "GET /api/v1/compare kind=sut": (
                        f"/api/v1/compare?kind=sut&a=bdb&b=libxac&run={ids['tree_run']}"
                    ),
                    "GET /compare (page) kind=runs": (
                        f"/compare?kind=runs&a={ids['run_a']}&b={ids['run_b']}"
                    ),
                }
            for label, path in endpoints.items():

                def get(path: str = path) -> None:
                    reply = client.get(path)
                    assert reply.status_code == 200, reply.text[:500]

                timed(label, args.times, get)
        now = datetime.now(UTC)
        tr = TimeRange(now - timedelta(days=30), now)
        with psycopg.connect(libpq_url(url), autocommit=True) as conn:
            for label, board, raw in panel_queries():
                sql = expand(
                    raw, tr, variables=board_variables(conn, board, tr), interval=timedelta(hours=1)
                )
                if args.explain and any(part in label for part in args.explain.split(",")):
                    plan = conn.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql).fetchall()
                    print("\n".join(row[0] for row in plan))
                timed(label, args.times, lambda sql=sql: conn.execute(sql).fetchall())


if __name__ == "__main__":
    main()
