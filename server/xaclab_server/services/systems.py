"""Systems under test as people read them: a name and a colour each, the same on every page.

Which systems exist is the suites' to say (``sut`` in contracts/suites/*.json)
and the results' (a result names its ``sut``): a system a new suite declares
gets the next colour of the palette and the title its declaration gives
("bdb" is "Berkeley DB") without a change here; an identifier no suite declares
is shown as it is.

Colours are the Okabe–Ito palette (Okabe and Ito, "Color Universal Design",
2002), readable with every common colour-vision deficiency.  ``os``, the
operating system's own cost (the floor LIBXAC is judged against), is always
black; the others take the palette's colours in the order the suites declare
them (suites by name, systems in declaration order), so LIBXAC, Berkeley DB and
LMDB keep their colours when a suite is added after them.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from xaclab_contracts.suites import load_suites

from xaclab_server.services.suites import Suite

FLOOR = "os"
FLOOR_COLOUR = "#000000"
# Okabe–Ito without black (the floor's) and with yellow last: it is faint on white.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442")
# Within one system, variants (a tree, a Berkeley DB mode) differ by marker, line dash and
# shade of the system's colour (darker, lighter), never by hue.
MARKERS = ("circle", "square", "triangle", "diamond", "cross", "star")
DASHES = ("", "7 3", "2 3", "9 3 2 3", "4 4", "1 2")
SHADES = (0.0, -0.4, 0.4, 0.65, -0.2, 0.2)
# How each system is written out: the titles its suites declare (docs/suites.md, "Systems"),
# so a new system needs no line here; one no suite declares keeps its identifier.  The app
# declares the suites it runs with (its suites directory); a caller outside an app gets the
# shipped suites', read at the first title it asks for.
_TITLES: dict[str, str] = {}
UNITS = {"us": "µs", "ops/s": "operations/s", "1": "no unit", "count": "count"}


@dataclass(frozen=True, slots=True)
class SystemStyle:
    name: str  # the identifier results carry
    title: str  # how pages write it
    colour: str


class Systems:
    """Every system's title and colour; unknown identifiers get the next free colour."""

    def __init__(self, declared: Iterable[str]) -> None:
        self._order: list[str] = []
        for name in declared:
            self._add(name)

    def _add(self, name: str) -> None:
        if name not in self._order:
            self._order.append(name)

    def style(self, name: str) -> SystemStyle:
        self._add(name)
        return SystemStyle(name, title_of(name), self._colour(name))

    def _colour(self, name: str) -> str:
        if name == FLOOR:
            return FLOOR_COLOUR
        others = [n for n in self._order if n != FLOOR]
        return PALETTE[others.index(name) % len(PALETTE)]

    def order(self, names: Iterable[str]) -> list[str]:
        """``names`` in the declared order (LIBXAC first, the floor last)."""
        names = list(names)
        for name in names:
            self._add(name)
        wanted = set(names)
        listed = [n for n in self._order if n in wanted and n != FLOOR]
        return listed + ([FLOOR] if FLOOR in wanted else [])

    @property
    def declared(self) -> list[str]:
        return list(self._order)


def systems_of(suites: Mapping[str, Suite]) -> Systems:
    """The systems the suites declare, suites by name, each in its declaration order."""
    return Systems(s for name in sorted(suites) for s in suites[name].all_systems)


def variant_style(colour: str, index: int) -> tuple[str, str, str]:
    """The ``index``-th variant of a system: (colour, marker, dash)."""
    return (
        shade(colour, SHADES[index % len(SHADES)]),
        MARKERS[index % len(MARKERS)],
        DASHES[index % len(DASHES)],
    )


def shade(colour: str, amount: float) -> str:
    """``colour`` mixed with black (amount < 0) or white (amount > 0)."""
    channels = [int(colour[i : i + 2], 16) for i in (1, 3, 5)]
    target = 255 if amount > 0 else 0
    mixed = [round(c + (target - c) * abs(amount)) for c in channels]
    return "#" + "".join(f"{c:02X}" for c in mixed)


def declare_titles(suites: Mapping[str, Suite]) -> None:
    """Write each system as the suites declare it (the app calls this with its suites)."""
    _TITLES.update(
        (name, declaration.title)
        for suite in suites.values()
        for name, declaration in suite.system_decls.items()
    )


def title_of(name: str) -> str:
    if not _TITLES:
        declare_titles(load_suites())
    return _TITLES.get(name, name)


def unit_words(unit: str) -> str:
    return UNITS.get(unit, unit)


def metric_words(metric: str) -> str:
    """``insert_latency`` -> ``insert latency``: a metric's name as an axis title."""
    return metric.replace("_", " ")


def value_words(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def params_words(params: Mapping[str, Any]) -> str:
    """``{"tree": "btree", "advisory": True}`` -> ``tree btree · advisory yes``."""
    return " · ".join(f"{k.replace('_', ' ')} {value_words(v)}" for k, v in sorted(params.items()))
