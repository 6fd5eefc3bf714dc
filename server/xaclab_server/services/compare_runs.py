"""The comparison a query asks for, as ``GET /api/v1/compare`` and the comparison page show it.

:func:`run_comparison` picks the kind of comparison of
:mod:`.comparisons`; :func:`comparison_out` is its reply body, pairs with
no finite ratio or interval given as null.  Kinds ``runs`` and ``machines``
take ``cross_machine``: without it, sides of different identity fingerprints or
epochs are refused (:class:`.comparability.NotComparable`, HTTP 409).
"""

import math
from dataclasses import asdict
from typing import Literal

from sqlalchemy.orm import Session
from xaclab_contracts.roles import ParamRoles

from xaclab_server.schemas.comparison import ComparisonOut, PairOut
from xaclab_server.services import comparisons, significance
from xaclab_server.services.comparability import ComparisonError
from xaclab_server.services.comparisons import Comparison

CORRECTION = (
    "Benjamini–Hochberg across this comparison's pairs: a pair is called different when "
    "q < alpha and its interval excludes 1; p is each pair's own test."
)

BINNED_NOTE = (
    "{binned} of the {pairs} pairs (binned: true in the JSON and CSV) compare results that "
    "carry histograms (more than 100,000 samples): their medians, bootstrap and Mann–Whitney "
    "test use the log2-128 bucket midpoints (within 0.39% of every value in the bucket; values "
    "in one bucket count as ties), raw samples on the other side put into the same buckets; "
    "means are exact."
)


def run_comparison(
    *,
    session: Session,
    kind: str,
    a: str,
    b: str,
    suite: str | None,
    run: int | None,
    matrix: int | None,
    factor: str | None,
    statistic: Literal["median", "mean"],
    roles: ParamRoles,
    cross_machine: bool = False,
) -> Comparison:
    """The comparison a query asks for; ComparisonError with a sentence if it cannot be made.

    ``roles``: the parameter roles of the suites this server serves, which decide
    what the pairs are matched on."""
    if kind in ("runs", "machines"):
        try:
            ids = int(a), int(b)
        except ValueError:
            raise ComparisonError(f"Comparing {kind} takes two ids as a and b.") from None
        if kind == "runs":
            return comparisons.compare_runs(
                session=session,
                a=ids[0],
                b=ids[1],
                statistic=statistic,
                roles=roles,
                cross_machine=cross_machine,
            )
        if not suite:
            raise ComparisonError("Comparing machines needs a suite.")
        return comparisons.compare_machines(
            session=session,
            a=ids[0],
            b=ids[1],
            suite=suite,
            statistic=statistic,
            roles=roles,
            cross_machine=cross_machine,
        )
    if kind == "sut":
        return comparisons.compare_suts(
            session=session,
            a=a,
            b=b,
            run_id=run,
            matrix_id=matrix,
            statistic=statistic,
            roles=roles,
        )
    if not factor:
        raise ComparisonError("Comparing a factor's values needs the factor's name.")
    return comparisons.compare_factor(
        session=session,
        factor=factor,
        a=a,
        b=b,
        run_id=run,
        matrix_id=matrix,
        statistic=statistic,
        roles=roles,
    )


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _maybe(value: float | None) -> float | None:
    return None if value is None else _finite(value)


def comparison_out(comparison: Comparison) -> ComparisonOut:
    pairs = [
        PairOut(
            **{
                **asdict(p),
                "ratio": _finite(p.ratio),
                "ci_low": _finite(p.ci_low),
                "ci_high": _finite(p.ci_high),
                "median_ci_a": _maybe(p.median_ci_a),
                "median_ci_b": _maybe(p.median_ci_b),
                "detectable": _maybe(p.detectable),
            }
        )
        for p in comparison.pairs
    ]
    note = comparison.note
    binned = sum(p.binned for p in pairs)
    if binned:
        note = f"{note} {BINNED_NOTE.format(binned=binned, pairs=len(pairs))}".strip()
    return ComparisonOut(
        kind=comparison.kind,
        a=comparison.a_label,
        b=comparison.b_label,
        statistic=comparison.statistic,
        resamples=significance.RESAMPLES,
        seed=significance.SEED,
        alpha=significance.ALPHA,
        correction=CORRECTION,
        cross_machine=comparison.cross_machine,
        fingerprint_differences=comparison.fingerprint_differences,
        note=note,
        only_a=comparison.only_a,
        only_b=comparison.only_b,
        significant=sum(p.significant for p in pairs),
        in_doubt=sum(p.in_doubt for p in pairs),
        pairs=pairs,
    )
