"""Which params a row's label names: what sets the row apart, not every setting of it.

Rows of one system (a run page's series, a comparison's pairs) are told apart by
the params that vary among them.  Some of those are carried by only some rows:
LIBXAC's knobs (``writers``, ``escalate_after`` ...) are recorded by its
transactional trees and not by ``tree_blocks``' serial trees beside them, so
they "vary" between a value and nothing, and a label naming them all ran to ten
settings and was cut off.  :func:`label_keys` keeps the params every row
carries, and of the others only those still needed to tell two rows apart.
"""

import json
from collections.abc import Iterable
from typing import Any


def label_keys(
    rows: list[dict[str, Any]], keys: Iterable[str], always: Iterable[str] = ()
) -> set[str]:
    """Of ``keys`` (in the order to try them), those the labels of ``rows`` (each row's
    params, distinct rows) name: ``always``, every key each row carries, and the others only
    where adding one tells more rows apart."""
    keys = list(keys)
    named = set(always) | {k for k in keys if all(r.get(k) is not None for r in rows)}

    def told_apart(chosen: set[str]) -> int:
        return len({json.dumps([r.get(k) for k in sorted(chosen)], sort_keys=True) for r in rows})

    for key in keys:
        if told_apart(named) == len(rows):
            break
        if key not in named and told_apart(named | {key}) > told_apart(named):
            named.add(key)
    return named
