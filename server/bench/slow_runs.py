"""Runs in which a whole program was slow: the host's slow states in a noise recording.

On a shared host a program's run sometimes lands in a slow state that lasts
seconds: every result of that run is worse together, by 15-60 %, and the next
run is back (docs/change-points.md, "How accurate", item 7).  A series then has
two modes, and a rank test loses power on it although its median absolute
deviation reads a fraction of a per cent.

A program is a (suite, benchmark) pair of a recording of ``record_noise.py``.
In each round, each of its results deviates from its own series' median; the
deviation is counted in the direction that is worse (a higher time, a lower
throughput).  The round is a slow run of the program when the median of those
deviations is worse than ``limit``.  Only series with a point in every round
take part, so that rounds line up.

``changepoint_accuracy.py --drop-slow-runs`` builds its corpus without them:
what detection could gain if the lab could tell such runs apart.  It is a
bound, not a method the server uses.  Dropping the first run after a real
change that moved all of a program's results would hide the change, and only
later runs could tell the two apart.
"""

import statistics
from collections import defaultdict
from typing import Any

Program = tuple[str, str]


def aligned(data: dict[str, Any]) -> dict[Program, list[dict[str, Any]]]:
    """The series with a point in every round and a positive median, by program."""
    programs: dict[Program, list[dict[str, Any]]] = defaultdict(list)
    for entry in data["series"]:
        medians = entry["medians"]
        if len(medians) == data["rounds"] and statistics.median(medians) > 0:
            programs[(entry["suite"], entry["benchmark"])].append(entry)
    return programs


def _worse_by(entry: dict[str, Any]) -> list[float]:
    """How much worse than its series' median each round's point is (+0.1: 10 %)."""
    middle = statistics.median(entry["medians"])
    sign = 1.0 if entry["better"] == "lower" else -1.0
    return [sign * (float(value) / middle - 1.0) for value in entry["medians"]]


def slow_runs(data: dict[str, Any], limit: float) -> dict[Program, list[bool]]:
    """Per program, per round: was the program's median result worse than ``limit``?"""
    flags = {}
    for program, entries in aligned(data).items():
        # One row per series, one column per round: the round's median is over a column.
        deviations = [_worse_by(entry) for entry in entries]
        flags[program] = [
            statistics.median(column) > limit for column in zip(*deviations, strict=True)
        ]
    return flags


def without_slow_runs(data: dict[str, Any], limit: float) -> dict[str, Any]:
    """A copy of the recording with each program's slow runs left out of its aligned series."""
    flags = slow_runs(data, limit)
    series = []
    for entry in data["series"]:
        program_flags = flags.get((entry["suite"], entry["benchmark"]))
        if program_flags is not None and len(entry["medians"]) == len(program_flags):
            kept = [v for v, slow in zip(entry["medians"], program_flags, strict=True) if not slow]
            entry = {**entry, "medians": kept}
        series.append(entry)
    return {**data, "series": series}


def describe(flags: dict[Program, list[bool]], limit: float) -> str:
    """One line: how many rounds were slow runs, for the programs that had any."""
    counted = sorted(
        ((sum(f), f"{suite}/{benchmark}") for (suite, benchmark), f in flags.items() if any(f)),
        key=lambda item: (-item[0], item[1]),
    )
    rounds = max((len(f) for f in flags.values()), default=0)
    listed = ", ".join(f"{name} {count}" for count, name in counted) or "none"
    return (
        f"slow runs (a program's results together more than {limit:.0%} worse than their "
        f"series' medians), of {rounds} rounds: {listed}"
    )
