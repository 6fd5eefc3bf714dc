"""User API: comparisons with bootstrap intervals and Mann–Whitney U tests; CSV and JSON."""

import csv
import io
import json
import math
from typing import Annotated, Literal

from fastapi import APIRouter, HTTPException, Query
from fastapi.responses import Response

from xaclab_server.api.deps import SessionDep
from xaclab_server.schemas.comparison import ComparisonOut, PairOut
from xaclab_server.services import comparisons, significance
from xaclab_server.services.comparisons import Comparison, ComparisonError

router = APIRouter(prefix="/api/v1", tags=["user"])

CSV_FIELDS = (
    "suite",
    "benchmark",
    "sut",
    "metric",
    "unit",
    "better",
    "params",
    "n_a",
    "n_b",
    "stat_a",
    "stat_b",
    "ratio",
    "ci_low",
    "ci_high",
    "p_value",
    "test",
    "significant",
    "verdict",
    "binned",
)
BINNED_NOTE = (
    "{binned} of the {pairs} pairs (binned: true in the JSON and CSV) compare results that "
    "carry histograms (more than 100,000 samples): their medians, bootstrap and Mann–Whitney "
    "test use the log2-128 bucket midpoints (within 0.39% of every value in the bucket; values "
    "in one bucket count as ties), raw samples on the other side put into the same buckets; "
    "means are exact."
)


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def comparison_out(comparison: Comparison) -> ComparisonOut:
    pairs = [
        PairOut(
            suite=p.suite,
            benchmark=p.benchmark,
            sut=p.sut,
            metric=p.metric,
            unit=p.unit,
            better=p.better,
            params=p.params,
            n_a=p.n_a,
            n_b=p.n_b,
            stat_a=p.stat_a,
            stat_b=p.stat_b,
            ratio=_finite(p.ratio),
            ci_low=_finite(p.ci_low),
            ci_high=_finite(p.ci_high),
            p_value=p.p_value,
            test=p.test,
            significant=p.significant,
            verdict=p.verdict,
            binned=p.binned,
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
        note=note,
        only_a=comparison.only_a,
        only_b=comparison.only_b,
        significant=sum(p.significant for p in pairs),
        pairs=pairs,
    )


def run_comparison(
    session: SessionDep,
    *,
    kind: str,
    a: str,
    b: str,
    suite: str | None,
    run: int | None,
    matrix: int | None,
    factor: str | None,
    statistic: Literal["median", "mean"],
) -> Comparison:
    """The comparison a query asks for; ComparisonError with a sentence if it cannot be made."""
    if kind in ("runs", "machines"):
        try:
            ids = int(a), int(b)
        except ValueError:
            raise ComparisonError(f"Comparing {kind} takes two ids as a and b.") from None
        if kind == "runs":
            return comparisons.compare_runs(
                session=session, a=ids[0], b=ids[1], statistic=statistic
            )
        if not suite:
            raise ComparisonError("Comparing machines needs a suite.")
        return comparisons.compare_machines(
            session=session, a=ids[0], b=ids[1], suite=suite, statistic=statistic
        )
    if kind == "sut":
        return comparisons.compare_suts(
            session=session, a=a, b=b, run_id=run, matrix_id=matrix, statistic=statistic
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
    )


@router.get(
    "/compare",
    responses={200: {"content": {"text/csv": {}}, "description": "JSON, or CSV with format=csv"}},
)
def compare(
    session: SessionDep,
    kind: Literal["runs", "machines", "sut", "factor"],
    a: Annotated[str, Query(max_length=100)],
    b: Annotated[str, Query(max_length=100)],
    suite: Annotated[str | None, Query(max_length=100)] = None,
    run: int | None = None,
    matrix: int | None = None,
    factor: Annotated[str | None, Query(max_length=100)] = None,
    statistic: Literal["median", "mean"] = "median",
    format: Literal["json", "csv"] = "json",
) -> Response:
    """B against A, pair by pair: ratio stat(B)/stat(A), 95% bootstrap interval, U-test p."""
    try:
        comparison = run_comparison(
            session,
            kind=kind,
            a=a,
            b=b,
            suite=suite,
            run=run,
            matrix=matrix,
            factor=factor,
            statistic=statistic,
        )
    except ComparisonError as exc:
        raise HTTPException(422, str(exc)) from exc
    out = comparison_out(comparison)
    if format == "json":
        return Response(out.model_dump_json(), media_type="application/json")
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(CSV_FIELDS)
    for pair in out.pairs:
        row = pair.model_dump()
        row["params"] = json.dumps(row["params"], sort_keys=True)
        writer.writerow(["" if row[f] is None else row[f] for f in CSV_FIELDS])
    filename = f"xaclab-compare-{kind}.csv"
    return Response(
        buffer.getvalue(),
        media_type="text/csv",
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )
