"""A comparison's verdicts: Benjamini–Hochberg across its pairs, then each pair's doubts.

Each pair was tested alone (:mod:`.pairs`); with 60 pairs at α = 0.05, three
would be called different by chance alone.  So the pairs' p-values are
adjusted together (:func:`.significance.benjamini_hochberg`) and a pair is
called different only when its **q** < 0.05 and its interval excludes 1.

A pair with a flagged side (:mod:`xaclab_contracts.validity`, or results not
judged yet) is never called plainly different: its verdict says what the
numbers suggest and why they are in doubt, and ``significant`` stays false.
A cross-machine pair says which identity fields differ.
"""

import math
from dataclasses import replace

from xaclab_contracts.validity import FLAG_LABELS

from xaclab_server.services import significance
from xaclab_server.services.pairs import NOT_JUDGED_FLAG, Pair
from xaclab_server.services.significance import RatioInterval


def finish(pairs: list[Pair]) -> list[Pair]:
    """The pairs with their q-values, verdicts and doubts set."""
    q_values = significance.benjamini_hochberg([p.p_value for p in pairs])
    return [_decided(pair, q) for pair, q in zip(pairs, q_values, strict=True)]


def doubts(pair: Pair) -> str:
    """Why a pair is in doubt, naming the side of each flag; '' when neither side is flagged."""
    parts = []
    for side, flags in (("A", pair.flags_a), ("B", pair.flags_b)):
        if flags:
            parts.append(f"{side}: " + ", ".join(_label(name) for name in flags))
    return "; ".join(parts)


def _label(flag: str) -> str:
    if flag == NOT_JUDGED_FLAG:
        return "not judged"
    return FLAG_LABELS.get(flag, flag.replace("_", " "))


def _decided(pair: Pair, q: float) -> Pair:
    interval = RatioInterval(pair.ratio, pair.ci_low, pair.ci_high)
    called, sentence = significance.verdict(q=q, interval=interval, better=pair.better)
    why = doubts(pair)
    if why:
        found = f"{sentence}, q = {q:.2g}" if called else sentence
        sentence = f"in doubt ({found}): {why}"
        called = False
    if pair.fingerprint_differences:
        fields = ", ".join(d.split(" (")[0] for d in pair.fingerprint_differences)
        sentence += f"; across machines: {fields} differ"
    return replace(
        pair,
        q_value=q if math.isfinite(q) else 1.0,
        significant=called,
        verdict=sentence,
        in_doubt=bool(why),
    )
