"""User API: comparisons with bootstrap intervals, Mann–Whitney U tests and Benjamini–Hochberg
q-values, each pair with its sides' validity flags; CSV and JSON."""

import csv
import io
import json
from typing import Annotated, Literal

from fastapi import APIRouter, HTTPException, Query
from fastapi.responses import Response

from xaclab_server.api.deps import ParamRolesDep, SessionDep
from xaclab_server.schemas.comparison import ComparisonOut
from xaclab_server.services.comparability import ComparisonError, NotComparable
from xaclab_server.services.compare_runs import comparison_out, run_comparison

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
    "q_value",
    "test",
    "significant",
    "in_doubt",
    "verdict",
    "binned",
    "flags_a",
    "flags_b",
    "median_ci_a",
    "median_ci_b",
    "detectable",
    "where_a",
    "where_b",
    "fingerprint_differences",
)
JSON_CELLS = ("params", "flags_a", "flags_b", "fingerprint_differences")


@router.get(
    "/compare",
    response_model=ComparisonOut,
    responses={
        200: {"content": {"text/csv": {}}, "description": "JSON, or CSV with format=csv"},
        409: {"description": "Runs or machines of different identity fingerprints or epochs"},
    },
)
def compare(
    session: SessionDep,
    roles: ParamRolesDep,
    kind: Literal["runs", "machines", "sut", "factor"],
    a: Annotated[str, Query(max_length=100)],
    b: Annotated[str, Query(max_length=100)],
    suite: Annotated[str | None, Query(max_length=100)] = None,
    run: int | None = None,
    matrix: int | None = None,
    factor: Annotated[str | None, Query(max_length=100)] = None,
    statistic: Literal["median", "mean"] = "median",
    format: Literal["json", "csv"] = "json",
    cross_machine: bool = False,
) -> Response:
    """B against A, pair by pair: ratio stat(B)/stat(A), 95% bootstrap interval, U-test p and
    its Benjamini–Hochberg q, each side's validity flags.  Runs or machines of different
    identity fingerprints or epochs answer 409 naming the fields, unless ``cross_machine``."""
    try:
        comparison = run_comparison(
            session=session,
            kind=kind,
            a=a,
            b=b,
            suite=suite,
            run=run,
            matrix=matrix,
            factor=factor,
            statistic=statistic,
            roles=roles,
            cross_machine=cross_machine,
        )
    except NotComparable as exc:
        raise HTTPException(409, str(exc)) from exc
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
        for name in JSON_CELLS:
            row[name] = json.dumps(row[name], sort_keys=True)
        writer.writerow(["" if row[f] is None else row[f] for f in CSV_FIELDS])
    filename = f"xaclab-compare-{kind}.csv"
    return Response(
        buffer.getvalue(),
        media_type="text/csv",
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )
