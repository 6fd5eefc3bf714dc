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
    fields = [result[k] for k in ("suite", "benchmark", "sut", "metric", "unit", "better")]
    return json.dumps([*fields, result["params"]], sort_keys=True)


def one_round(suites: tuple[str, ...]) -> dict[str, float]:
    medians: dict[str, float] = {}
    for suite in suites:
        done = subprocess.run(
            [str(AGENT), "bench", "--suite", suite, "--profile", "quick"],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            print(f"{suite}: exit {done.returncode}: {done.stderr[-300:]}", file=sys.stderr)
        for line in done.stdout.splitlines():
            result = json.loads(line)
            samples = result.get("samples")
            if samples:
                medians[series_key(result)] = statistics.median(samples)
    return medians


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--min-points", type=int, default=50)
    parser.add_argument("--suites", default=",".join(SUITES))
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--rounds-log", type=Path, default=None)
    args = parser.parse_args()
    suites = tuple(s for s in args.suites.split(",") if s)
    rounds: list[dict[str, float]] = []
    for index in range(args.rounds):
        rounds.append(one_round(suites))
        print(f"round {index + 1}/{args.rounds}: {len(rounds[-1])} results", file=sys.stderr)
        if args.rounds_log is not None:
            with args.rounds_log.open("a") as log:
                log.write(json.dumps(rounds[-1], sort_keys=True) + "\n")
    document = corpus(rounds, suites, args.rounds, args.min_points)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(document, indent=None, separators=(",", ":")) + "\n")
    print(
        f"{len(document['series'])} series of up to {args.rounds} points in {args.out}",
        file=sys.stderr,
    )


def corpus(
    rounds: list[dict[str, float]], suites: tuple[str, ...], planned: int, min_points: int
) -> dict[str, Any]:
    """The recording as changepoint_accuracy.py reads it: one series per result key."""
    keys = sorted({k for r in rounds for k in r})
    series = []
    for key in keys:
        points = [r[key] for r in rounds if key in r]
        if len(points) < min_points:
            continue
        suite, benchmark, sut, metric, unit, better, params = json.loads(key)
        series.append(
            {
                "suite": suite,
                "benchmark": benchmark,
                "sut": sut,
                "metric": metric,
                "unit": unit,
                "better": better,
                "params": params,
                "medians": [float(f"{p:.6g}") for p in points],
            }
        )
    return {
        "recorded_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": {
            "kernel": platform.release(),
            "processor": platform.processor() or platform.machine(),
        },
        "rounds": planned,
        "suites": list(suites),
        "profile": "quick",
        "series": series,
    }


if __name__ == "__main__":
    main()
