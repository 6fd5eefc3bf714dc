"""A comparison as the page shows it: a forest plot's rows and the parameters as what differs.

Pairs are grouped by benchmark and metric; each row names its systems and
only the params that differ between the pairs (what every pair shares is
said once above them), never the raw JSON.  Each row's verdict decides its
colour and shape: B better, B worse, no significant difference, or in doubt
(a side is flagged: docs/validity.md).
"""

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from xaclab_server.schemas.comparison import ComparisonOut, PairOut
from xaclab_server.services.label_keys import label_keys
from xaclab_server.services.systems import metric_words, params_words, title_of, unit_words

Outcome = Literal["better", "worse", "same", "doubt"]
OUTCOMES: dict[Outcome, tuple[str, str, str]] = {
    # outcome: (words, colour, marker) — Okabe–Ito, and a shape each for those who see no colour;
    # {b} is side B by name ("LIBXAC significantly better"), so no reader has to decode "B".
    "better": ("{b} significantly better", "#009E73", "triangle"),
    "worse": ("{b} significantly worse", "#D55E00", "square"),
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
    def colour(self) -> str:
        return OUTCOMES[self.outcome][1]

    @property
    def shape(self) -> str:
        return OUTCOMES[self.outcome][2]


@dataclass(frozen=True, slots=True)
class ForestView:
    common: str  # the params every pair shares, in words
    rows: list[ForestRow]
    a: str  # side A in words: "Berkeley DB", "run 12", "write cache off"
    b: str
    # ("LIBXAC pair of insert", the params all those pairs share beyond ``common``, in words)
    system_common: list[tuple[str, str]] = field(default_factory=list)

    @property
    def outcomes(self) -> list[tuple[str, str, str]]:
        """The legend: each outcome that occurs, side B named."""
        found = {r.outcome for r in self.rows}
        return [
            (words.format(b=self.b), colour, shape)
            for o, (words, colour, shape) in OUTCOMES.items()
            if o in found
        ]


def side_names(comparison: ComparisonOut) -> tuple[str, str]:
    """Sides A and B in words: a system by its name, a factor's value as params read
    ("write cache on"), else the comparison's own label ("run 12")."""
    if comparison.kind == "sut":
        return title_of(comparison.a), title_of(comparison.b)
    if comparison.kind == "factor":
        return _factor_value(comparison.a), _factor_value(comparison.b)
    return comparison.a, comparison.b


def _factor_value(side: str) -> str:
    factor, equals, value = side.partition("=")
    return params_words({factor: value}) if equals else side


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


def shared_params(all_params: list[dict[str, Any]]) -> dict[str, Any]:
    """The params every one of ``all_params`` has, with one value."""
    if not all_params:
        return {}
    first = all_params[0]
    return {
        k: v
        for k, v in sorted(first.items())
        if all(k in p and _text(p[k]) == _text(v) for p in all_params)
    }


def _shared(pairs: list[PairOut]) -> dict[str, Any]:
    return shared_params([p.params for p in pairs])


def forest(comparison: ComparisonOut) -> ForestView:
    pairs = comparison.pairs
    shared = _shared(pairs)
    # Two runs' pairs span benchmarks and systems with params of their own (LIBXAC's tree,
    # Berkeley DB's cache): what all of one system's pairs of a benchmark share is said once
    # for them, not on every row.
    groups: dict[tuple[str, str], list[PairOut]] = {}
    for pair in pairs:
        groups.setdefault((pair.benchmark, pair.sut), []).append(pair)
    own_shared = {
        key: {k: v for k, v in _shared(group).items() if k not in shared}
        for key, group in groups.items()
    }
    several = len({benchmark for benchmark, _sut in groups}) > 1
    system_common = [
        (
            " against ".join(title_of(s) for s in reversed(sut.split("/")))
            + (f" pair of {benchmark}" if several else " pair"),
            params_words(own),
        )
        for (benchmark, sut), own in sorted(own_shared.items())
        if own
    ]
    named = {
        key: _named(group, own_shared[key].keys() | shared.keys()) for key, group in groups.items()
    }
    rows = []
    for pair in pairs:
        said = shared.keys() | own_shared[(pair.benchmark, pair.sut)].keys()
        differs = {
            k: v
            for k, v in pair.params.items()
            if k not in said and k in named[(pair.benchmark, pair.sut)]
        }
        label = _label(pair.sut, differs)
        measure = f"{metric_words(pair.metric)} ({unit_words(pair.unit)}, {pair.better} is better)"
        group = f"{pair.benchmark}: {measure}"
        rows.append(ForestRow(group=group, label=label, pair=pair, outcome=outcome(pair)))
    rows.sort(key=lambda r: r.group)
    a, b = side_names(comparison)
    return ForestView(
        common=_system_params_words(shared), rows=rows, a=a, b=b, system_common=system_common
    )


def _named(group: list[PairOut], said: set[str]) -> set[str]:
    """The params the labels of one system's pairs of a benchmark name (label_keys.py)."""
    rows = {_text({k: v for k, v in p.params.items() if k not in said}): p for p in group}
    distinct = [json.loads(text) for text in rows]
    return label_keys(distinct, sorted({k for r in distinct for k in r}))


def _system_params_words(params: dict[str, Any]) -> str:
    """Params in words, a systems comparison's ``<system>.<param>`` by the system's name:
    ``bdb.cache_mib`` reads "Berkeley DB cache mib"."""
    named = {}
    for key, value in params.items():
        system, dot, rest = key.partition(".")
        named[f"{title_of(system)} {rest}" if dot else key] = value
    return params_words(named)
