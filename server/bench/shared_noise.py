"""How much of a series' noise does the machine share with its other series of the same round?

If a host's slow hour slowed every program alike, a series divided by a
reference measured in the same job (the other series of the round) would be
quieter than the series itself, and the detector could watch that ratio.
This measures whether it would, on a recording of ``record_noise.py``:

- each point's **deviation** is log(point / its series' median), counted in
  the direction that is worse (a higher time, a lower throughput), so that a
  slow round moves every series the same way;
- a round's **reference** is the median deviation, in that round, of the
  reference series (``--reference all``: every other series; ``os``: the
  other series measured on the operating system alone, not through a library);
  the series' own deviation is never in its reference;
- a series' **noise** is the robust standard deviation (1.4826 x the median
  absolute deviation) of its deviations, before and after the round's
  reference is taken off.

Only series with a point in every round and a positive median take part
(``slow_runs.aligned``).  It is an analysis, not what the server does: a
change that moves many series at once (a libxac commit moves every LIBXAC
series of a suite) would move the reference too, and the ratio would hide it.

    ../.venv/bin/python bench/shared_noise.py [--data bench/data/quick-noise-watch.json]
        [--best-of] [--reference all|os] [--write OUT]

``--write OUT`` keeps the series divided by their rounds' reference, for
``changepoint_accuracy.py --data OUT`` (each point is then one value a round).
"""

import argparse
import json
import math
import statistics
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from changepoint_accuracy import MAD_TO_SD, best_of_runs  # noqa: E402
from slow_runs import aligned  # noqa: E402

from xaclab_server.services.reference_view import worse_sign  # noqa: E402

NOISY = 0.05  # the noise level above which issue K's F1 target no longer held
DATA = Path(__file__).resolve().parent / "data" / "quick-noise-watch.json"

REFERENCES: dict[str, Callable[[dict[str, Any]], bool]] = {
    "all": lambda entry: True,
    "os": lambda entry: entry["sut"] == "os",
}


@dataclass(frozen=True)
class SeriesNoise:
    name: str
    own: float  # robust sd of the worse-signed log deviations
    without_shared: float  # the same, with the round's reference taken off


def robust_sd(values: list[float]) -> float:
    middle = statistics.median(values)
    return MAD_TO_SD * statistics.median(abs(v - middle) for v in values)


def worse_deviations(entry: dict[str, Any]) -> list[float]:
    """log(point / median), positive where the point is worse than the series' median."""
    middle = statistics.median(entry["medians"])
    return [worse_sign(entry["better"]) * math.log(float(v) / middle) for v in entry["medians"]]


Referenced = tuple[dict[str, Any], list[float], list[float]]


def _with_references(
    data: dict[str, Any], in_reference: Callable[[dict[str, Any]], bool]
) -> Iterator[Referenced]:
    """Each aligned series, its deviations and its rounds' reference: per round, the median
    deviation of the reference series other than itself.  A series with no other reference
    series is left out."""
    entries = [e for group in aligned(data).values() for e in group]
    deviations = [worse_deviations(e) for e in entries]
    chosen = [i for i, e in enumerate(entries) if in_reference(e)]
    for i, entry in enumerate(entries):
        others = [deviations[j] for j in chosen if j != i]
        if others:
            reference = [statistics.median(column) for column in zip(*others, strict=True)]
            yield entry, deviations[i], reference


def shared_noise(
    data: dict[str, Any], in_reference: Callable[[dict[str, Any]], bool]
) -> list[SeriesNoise]:
    """Every aligned series' noise, on its own and with its rounds' reference taken off."""
    found = []
    for entry, deviations, reference in _with_references(data, in_reference):
        residual = [d - r for d, r in zip(deviations, reference, strict=True)]
        name = f"{entry['suite']}/{entry['benchmark']}/{entry['sut']}/{entry['metric']}"
        found.append(SeriesNoise(name, robust_sd(deviations), robust_sd(residual)))
    return found


def divided_by_reference(
    data: dict[str, Any], in_reference: Callable[[dict[str, Any]], bool]
) -> dict[str, Any]:
    """The aligned series, each point divided by its round's reference (the worse-signed
    deviation taken off): a recording of one point a round that ``changepoint_accuracy.py
    --data`` reads, to tell what detection would gain if the server judged each series
    against the other series of its round."""
    series = []
    for entry, _deviations, reference in _with_references(data, in_reference):
        sign = worse_sign(entry["better"])
        points = [
            float(v) / math.exp(sign * r) for v, r in zip(entry["medians"], reference, strict=True)
        ]
        kept = {k: v for k, v in entry.items() if k != "pass_medians"}
        series.append({**kept, "medians": points})
    return {**data, "series": series}


def summary(found: list[SeriesNoise]) -> str:
    own = [s.own for s in found]
    without = [s.without_shared for s in found]
    quieter = sum(s.without_shared < s.own for s in found)
    return (
        f"{len(found)} series: median noise {statistics.median(own):.1%} -> "
        f"{statistics.median(without):.1%} with the round's reference taken off; "
        f"at {NOISY:.0%} or more: {sum(n >= NOISY for n in own)} -> "
        f"{sum(n >= NOISY for n in without)}; quieter: {quieter}, louder: {len(found) - quieter}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--best-of", action="store_true", help="each point the best of its runs")
    parser.add_argument("--reference", choices=sorted(REFERENCES), default="all")
    parser.add_argument(
        "--write",
        type=Path,
        metavar="OUT",
        help="also write the series divided by their rounds' reference (for "
        "changepoint_accuracy.py --data OUT)",
    )
    args = parser.parse_args()
    data = json.loads(args.data.read_text())
    if args.best_of:
        try:
            data = best_of_runs(data)
        except ValueError as refused:
            parser.error(str(refused))
    found = shared_noise(data, REFERENCES[args.reference])
    if args.write is not None:
        args.write.write_text(json.dumps(divided_by_reference(data, REFERENCES[args.reference])))
    print(f"reference: {args.reference}; {summary(found)}")
    print("the noisiest series, own noise -> without the reference:")
    for s in sorted(found, key=lambda s: -s.own)[:15]:
        print(f"  {s.own:6.1%} -> {s.without_shared:6.1%}  {s.name}")


if __name__ == "__main__":
    main()
