"""Cross-check the server's E-Divisive means against apache-otava itself.

apache-otava pins NumPy 2.2 and SciPy < 1.17 and pulls BigQuery and Slack
clients, so it lives in a throw-away virtual environment, never the
project's:

    python3 -m venv /tmp/otava-venv && /tmp/otava-venv/bin/pip install apache-otava
    ../.venv/bin/python bench/otava_crosscheck.py --otava-python /tmp/otava-venv/bin/python \\
        [--write-reference tests/services/data/otava_reference.json]

It draws seeded series (10 to 120 points, 3 % normal noise, 0 to 3 steps of
2 to 20 % up or down, plus the issue's probe: 24 runs, 15 % slower from run
13, and 24 flat runs), has Otava's ``compute_change_points`` (window 50,
p 0.001, no minimum magnitude: its defaults) find their change points, and
compares them with :func:`xaclab_server.services.edivisive.detect` twice:
``otava_compatible`` (expected: identical on every series) and as the
server ships it (two documented differences, so a few series differ).
``--write-reference`` stores the series and Otava's answers for the test
that keeps the compatible mode identical without Otava installed.
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from xaclab_server.services import edivisive  # noqa: E402

OTAVA_SCRIPT = """
import json, sys
from importlib.metadata import version
from otava.analysis import compute_change_points
series = json.load(sys.stdin)
answers = []
for values in series:
    found, _weak = compute_change_points(
        list(values), window_len=50, max_pvalue=0.001, min_magnitude=0.0
    )
    answers.append([int(c.index) for c in found])
json.dump({"version": version("apache-otava"), "answers": answers}, sys.stdout)
"""


def draw_series(count: int, seed: int) -> list[list[float]]:
    rng = np.random.default_rng(seed)
    probe = [100.0] * 12 + [115.0] * 12
    drawn: list[list[float]] = [probe, [100.0] * 24]
    noisy_probe = 100 * (1 + 0.02 * rng.standard_normal(24))
    noisy_probe[12:] *= 1.15
    drawn.append([round(float(v), 6) for v in noisy_probe])
    while len(drawn) < count:
        n = int(rng.integers(10, 121))
        values = 100 * (1 + 0.03 * rng.standard_normal(n))
        for _ in range(int(rng.integers(0, 4))):
            at = int(rng.integers(1, n))
            values[at:] *= 1 + rng.choice([-1, 1]) * rng.uniform(0.02, 0.2)
        drawn.append([round(float(v), 6) for v in values])
    return drawn


def otava_answers(python: str, series: list[list[float]]) -> dict[str, Any]:
    done = subprocess.run(
        [python, "-c", OTAVA_SCRIPT],
        input=json.dumps(series),
        capture_output=True,
        text=True,
        check=True,
    )
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def ours(series: list[list[float]], *, compatible: bool) -> list[list[int]]:
    options = edivisive.Options(otava_compatible=compatible)
    return [[s.index for s in edivisive.detect(values, options)] for values in series]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--otava-python", required=True)
    parser.add_argument("--series", type=int, default=300)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--write-reference", type=Path)
    args = parser.parse_args()
    series = draw_series(args.series, args.seed)
    otava = otava_answers(args.otava_python, series)
    theirs = otava["answers"]
    for compatible in (True, False):
        mine = ours(series, compatible=compatible)
        same = sum(a == b for a, b in zip(mine, theirs, strict=True))
        label = "otava_compatible" if compatible else "as shipped"
        print(f"{label}: {same}/{len(series)} series with identical change points")
        if not compatible:
            for values, a, b in zip(series, mine, theirs, strict=True):
                if a != b:
                    print(f"  {len(values)} points: ours {a}, otava {b}")
    print(f"apache-otava {otava['version']}; probe A: {theirs[0]}, probe B: {theirs[1]}")
    if args.write_reference:
        reference = {
            "otava_version": otava["version"],
            "options": {"window_len": 50, "max_pvalue": 0.001, "min_magnitude": 0.0},
            "series": [{"values": v, "otava": a} for v, a in zip(series, theirs, strict=True)],
        }
        args.write_reference.parent.mkdir(parents=True, exist_ok=True)
        args.write_reference.write_text(json.dumps(reference, separators=(",", ":")) + "\n")
        print(f"reference written to {args.write_reference}")


if __name__ == "__main__":
    main()
