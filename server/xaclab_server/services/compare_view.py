"""A comparison as the page shows it: a forest plot's rows and the parameters as what differs.

Pairs are grouped by benchmark and metric; each row names its systems and
only the params that differ between the pairs (what every pair shares is
said once above them), never the raw JSON.  Each row's verdict decides its
colour and shape: B better, B worse, no significant difference, or in doubt
(a side is flagged: docs/validity.md).
"""

import json
from dataclasses import dataclass
from typing import Any, Literal

from xaclab_server.schemas.comparison import ComparisonOut, PairOut
from xaclab_server.services.systems import metric_words, params_words, title_of, unit_words

Outcome = Literal["better", "worse", "same", "doubt"]
OUTCOMES: dict[Outcome, tuple[str, str, str]] = {
    # outcome: (words, colour, marker) — Okabe–Ito, and a shape each for those who see no colour
    "better": ("B significantly better", "#009E73", "triangle"),
    "worse": ("B significantly worse", "#D55E00", "square"),
    "same": ("no significant difference", "#5F6B73", "circle"),
    "doubt": ("in doubt: a side is flagged", "#E69F00", "diamond"),
}


@dataclass(frozen=True, slots=True)
class ForestRow:
    group: str  # benchmark and metric
    label: str  # the systems and what differs
    pair: PairOut
    outcome: Outcome

    @property
    def words(self) -> str:
        return OUTCOMES[self.outcome][0]

    @property
    def colour(self) -> str:
        return OUTCOMES[self.outcome][1]

    @property
    def shape(self) -> str:
        return OUTCOMES[self.outcome][2]


@dataclass(frozen=True, slots=True)
class ForestView:
    common: str  # the params every pair shares, in words
    rows: list[ForestRow]

    @property
    def outcomes(self) -> list[tuple[str, str, str]]:
        """The legend: each outcome that occurs."""
        found = {r.outcome for r in self.rows}
        return [OUTCOMES[o] for o in OUTCOMES if o in found]


def outcome(pair: PairOut) -> Outcome:
    if pair.in_doubt:
        return "doubt"
    if not pair.significant or pair.ratio is None:
        return "same"
    larger = pair.ratio > 1
    return "better" if larger == (pair.better == "higher") else "worse"


def _text(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _label(sut: str, differs: dict[str, Any]) -> str:
    """The systems of a pair and what differs.  A systems comparison's pair is ``a/b`` and
    names each side's variant params ``<system>.<param>``: "LIBXAC tree cobtree against
    Berkeley DB mode nosync", B first."""
    systems = sut.split("/")
    if len(systems) == 1:
        return " · ".join(p for p in (title_of(sut), params_words(differs)) if p)
    sides = []
    for system in reversed(systems):
        own = {
            k.removeprefix(f"{system}."): v
            for k, v in differs.items()
            if k.startswith(f"{system}.")
        }
        sides.append(" ".join(p for p in (title_of(system), params_words(own)) if p))
    rest = {k: v for k, v in differs.items() if not any(k.startswith(f"{s}.") for s in systems)}
    return " · ".join(p for p in (" against ".join(sides), params_words(rest)) if p)


def forest(comparison: ComparisonOut) -> ForestView:
    pairs = comparison.pairs
    keys = sorted({k for p in pairs for k in p.params})
    shared = {
        k: pairs[0].params[k]
        for k in keys
        if pairs
        and all(k in p.params and _text(p.params[k]) == _text(pairs[0].params[k]) for p in pairs)
    }
    rows = []
    for pair in pairs:
        differs = {k: v for k, v in pair.params.items() if k not in shared}
        label = _label(pair.sut, differs)
        measure = f"{metric_words(pair.metric)} ({unit_words(pair.unit)}, {pair.better} is better)"
        group = f"{pair.benchmark}: {measure}"
        rows.append(ForestRow(group=group, label=label, pair=pair, outcome=outcome(pair)))
    rows.sort(key=lambda r: r.group)
    return ForestView(common=params_words(shared), rows=rows)
