"""Why two sides of a comparison have no pair: the sentence pages show instead of an empty one.

Two systems pair where they ran the same benchmark on the same workload, two
runs where they also ran the same system variants (docs/validity.md).  When
they never did, a page that only said "0 matched pairs" would leave the reader
to find out why; :func:`why_unpaired` (systems) and :func:`why_apart` (any two
sides: runs) name it in words: the benchmarks where those differ ("different
benchmarks: LIBXAC page_touch, the operating system mprotect"), else the params
on which the two share no value ("durability: LIBXAC nondurable, Berkeley DB
durable"; "procs: 1 in run 3, 2 in run 4").
"""

import json
from collections.abc import Callable, Sequence
from typing import Any

from xaclab_server.services.pairs import Row
from xaclab_server.services.systems import value_words

# (suite, param) -> the param's role, as xaclab_contracts.roles.ParamRoles.role gives it.
RoleOf = Callable[[str, str], str | None]


def why_unpaired(
    rows: Sequence[Row], a: str, b: str, *, title: Callable[[str], str], role: RoleOf
) -> str:
    """What keeps systems ``a`` and ``b`` apart in ``rows`` (their results and others'),
    in words, ``a`` named first; "" when nothing in the rows tells them apart."""
    return why_apart(
        (title(a), [r for r in rows if r.result.sut == a]),
        (title(b), [r for r in rows if r.result.sut == b]),
        role=role,
        roles=("workload",),
        say=lambda name, values: f"{name} {values}",
    )


def why_apart(
    side_a: tuple[str, Sequence[Row]],
    side_b: tuple[str, Sequence[Row]],
    *,
    role: RoleOf,
    roles: tuple[str, ...],
    say: Callable[[str, str], str] = lambda name, values: f"{values} in {name}",
) -> str:
    """What keeps two sides' rows from pairing, each side named by its words: the benchmarks
    where they ran none in common, else the params of ``roles`` on which the two share no
    value; "" when nothing tells them apart.  ``say`` puts a side's name and values together
    ("1 in run 3"; systems: "LIBXAC nondurable")."""
    (name_a, rows_a), (name_b, rows_b) = side_a, side_b
    benchmarks_a = {r.result.benchmark for r in rows_a}
    benchmarks_b = {r.result.benchmark for r in rows_b}
    common = benchmarks_a & benchmarks_b
    if not common:
        return (
            f"different benchmarks: {say(name_a, ' or '.join(sorted(benchmarks_a)))}, "
            f"{say(name_b, ' or '.join(sorted(benchmarks_b)))}"
        )
    seen_a, seen_b = _values(rows_a, common, role, roles), _values(rows_b, common, role, roles)
    return "; ".join(
        f"{key.replace('_', ' ')}: {say(name_a, _words(seen_a[key]))}, "
        f"{say(name_b, _words(seen_b[key]))}"
        for key in sorted(seen_a.keys() & seen_b.keys())
        if not seen_a[key] & seen_b[key]
    )


def _values(
    rows: Sequence[Row], benchmarks: set[str], role: RoleOf, roles: tuple[str, ...]
) -> dict[str, set[str]]:
    """Each param of ``roles`` -> the values (as JSON) the rows of ``benchmarks`` carry."""
    seen: dict[str, set[str]] = {}
    for row in rows:
        if row.result.benchmark not in benchmarks:
            continue
        for key, value in row.params.items():
            if role(row.result.suite, key) in roles:
                seen.setdefault(key, set()).add(json.dumps(value, sort_keys=True))
    return seen


def _words(values: set[str]) -> str:
    """A param's values in words: "4 to 64" for many numbers, else "durable or nondurable"."""
    loaded: list[Any] = [json.loads(v) for v in values]
    numbers = sorted(v for v in loaded if isinstance(v, int | float) and not isinstance(v, bool))
    if len(numbers) == len(loaded) and len(numbers) > 3:
        return f"{value_words(numbers[0])} to {value_words(numbers[-1])}"
    return " or ".join(sorted(value_words(v) for v in loaded))
