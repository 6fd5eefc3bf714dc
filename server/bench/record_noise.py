"""Record the lab's own noise: repeated quick runs of every suite on this machine.

Each round runs every suite's ``quick`` profile once through ``xaclab-agent
bench`` (the agent's own job path, no server), the suites one after another
so that whatever disturbs the machine disturbs them all alike, as it would in
a lab.  Every result (suite, benchmark, sut, metric, params) is one series;
its point per round is the result's median, as the server's series take it
(docs/change-points.md).  The series are written as JSON for
``changepoint_accuracy.py``, which builds its labelled corpus from them.

    ../.venv/bin/python bench/record_noise.py --rounds 60 --out bench/data/quick-noise.json

A series that is missing from some round (a program that failed once) is
kept with the rounds it has; one with fewer than ``--min-points`` is dropped.
With ``--rounds-log FILE`` each round's medians are appended to FILE as one
JSON line as soon as the round ends, so a long recording can be watched (is
this hour quiet?) while it runs.

Single runs against the best of several (docs/change-points.md, "Best of
several runs"), on one recording: with ``--passes K`` (K > 1) a round runs
every suite K times, all suites once before any again (A B C D A B C D
...); with ``--profile watch`` the agent itself runs each suite's programs
three times, as the profile's rule says (back to back, or ``gap_s`` apart), and
reports every run's median (``env.best_of``).  Either way
each series keeps its round's first run as ``medians``, the series of
single runs, and every run as ``pass_medians`` (one list per round), from
which ``changepoint_accuracy.py --best-of`` takes each round's best.
"""

import argparse
import datetime
import json
import platform
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
AGENT = REPO / ".venv" / "bin" / "xaclab-agent"
SUITES = ("page-touch", "storage", "search-tree", "concurrency")


def series_key(result: dict[str, Any]) -> str:
    """The result's series; ``best_of`` left out, so that a profile's runs and their best
    are one series of the recording."""
    fields = [result[k] for k in ("suite", "benchmark", "sut", "metric", "unit", "better")]
    params = {k: v for k, v in result["params"].items() if k != "best_of"}
    return json.dumps([*fields, params], sort_keys=True)


def one_round(
    suites: tuple[str, ...], passes: int = 1, profile: str = "quick"
) -> dict[str, list[float]]:
    """Each result's median from every run of the round, in the order they ran."""
    medians: dict[str, list[float]] = {}
    for _ in range(passes):
        for key, runs in one_pass(suites, profile).items():
            medians.setdefault(key, []).extend(runs)
    return medians


def run_medians(result: dict[str, Any]) -> list[float]:
    """Every run's median of the result: those ``env.best_of`` lists, else its own."""
    listed = result.get("env", {}).get("best_of", {}).get("run_medians")
    if listed:
        return [float(m) for m in listed if m is not None]
    samples = result.get("samples")
    return [float(statistics.median(samples))] if samples else []


def one_pass(suites: tuple[str, ...], profile: str) -> dict[str, list[float]]:
    medians: dict[str, list[float]] = {}
    for suite in suites:
        done = subprocess.run(
            [str(AGENT), "bench", "--suite", suite, "--profile", profile],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            print(f"{suite}: exit {done.returncode}: {done.stderr[-300:]}", file=sys.stderr)
        for line in done.stdout.splitlines():
            result = json.loads(line)
            runs = run_medians(result)
            if runs:
                medians[series_key(result)] = runs
    return medians


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--min-points", type=int, default=50)
    parser.add_argument("--suites", default=",".join(SUITES))
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--rounds-log", type=Path, default=None)
    parser.add_argument("--passes", type=int, default=1, help="runs of every suite per round")
    parser.add_argument("--profile", default="quick", help="the suites' profile (quick, watch)")
    args = parser.parse_args()
    if args.passes < 1:
        parser.error("--passes must be at least 1")
    suites = tuple(s for s in args.suites.split(",") if s)
    rounds: list[dict[str, list[float]]] = []
    for index in range(args.rounds):
        rounds.append(one_round(suites, args.passes, args.profile))
        print(f"round {index + 1}/{args.rounds}: {len(rounds[-1])} results", file=sys.stderr)
        if args.rounds_log is not None:
            with args.rounds_log.open("a") as log:
                log.write(json.dumps(rounds[-1], sort_keys=True) + "\n")
    document = corpus(rounds, suites, args.rounds, args.min_points, args.profile)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(document, indent=None, separators=(",", ":")) + "\n")
    print(
        f"{len(document['series'])} series of up to {args.rounds} points in {args.out}",
        file=sys.stderr,
    )


def corpus(
    rounds: list[dict[str, list[float]]],
    suites: tuple[str, ...],
    planned: int,
    min_points: int,
    profile: str = "quick",
) -> dict[str, Any]:
    """The recording as changepoint_accuracy.py reads it: one series per result key."""
    keys = sorted({k for r in rounds for k in r})
    series = []
    for key in keys:
        points = [[float(f"{p:.6g}") for p in r[key]] for r in rounds if key in r]
        if len(points) < min_points:
            continue
        suite, benchmark, sut, metric, unit, better, params = json.loads(key)
        entry: dict[str, Any] = {
            "suite": suite,
            "benchmark": benchmark,
            "sut": sut,
            "metric": metric,
            "unit": unit,
            "better": better,
            "params": params,
            "medians": [p[0] for p in points],
        }
        if any(len(p) > 1 for p in points):
            entry["pass_medians"] = points
        series.append(entry)
    return {
        "recorded_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": {
            "kernel": platform.release(),
            "processor": platform.processor() or platform.machine(),
        },
        "rounds": planned,
        "suites": list(suites),
        "profile": profile,
        "series": series,
    }


if __name__ == "__main__":
    main()
