"""Why two systems of one run have no pair: the sentence pages show instead of an empty ratio.

Two systems pair where they ran the same benchmark on the same workload
(docs/validity.md).  When they never did, a page that only said "0 matched
pairs" would leave the reader to find out why; :func:`why_unpaired` names it
in words: the benchmarks where those differ ("different benchmarks: LIBXAC
page_touch, the operating system mprotect"), else the workload params on
which the two share no value ("durability: LIBXAC nondurable, Berkeley DB
durable").
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
    in words; "" when nothing in the rows tells them apart."""
    benchmarks: dict[str, set[str]] = {a: set(), b: set()}
    for row in rows:
        if row.result.sut in benchmarks:
            benchmarks[row.result.sut].add(row.result.benchmark)
    common = benchmarks[a] & benchmarks[b]
    if not common:
        return (
            f"different benchmarks: {title(a)} {' or '.join(sorted(benchmarks[a]))}, "
            f"{title(b)} {' or '.join(sorted(benchmarks[b]))}"
        )
    seen: dict[str, dict[str, set[str]]] = {a: {}, b: {}}
    for row in rows:
        result = row.result
        if result.sut not in seen or result.benchmark not in common:
            continue
        for key, value in row.params.items():
            if role(result.suite, key) == "workload":
                seen[result.sut].setdefault(key, set()).add(json.dumps(value, sort_keys=True))
    ours, theirs = seen[a], seen[b]
    return "; ".join(
        f"{key.replace('_', ' ')}: {title(a)} {_words(ours[key])}, {title(b)} {_words(theirs[key])}"
        for key in sorted(ours.keys() & theirs.keys())
        if not ours[key] & theirs[key]
    )


def _words(values: set[str]) -> str:
    """A param's values in words: "4 to 64" for many numbers, else "durable or nondurable"."""
    loaded: list[Any] = [json.loads(v) for v in values]
    numbers = sorted(v for v in loaded if isinstance(v, int | float) and not isinstance(v, bool))
    if len(numbers) == len(loaded) and len(numbers) > 3:
        return f"{value_words(numbers[0])} to {value_words(numbers[-1])}"
    return " or ".join(sorted(value_words(v) for v in loaded))
