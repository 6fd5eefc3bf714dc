"""The comparison page: pick two runs, machines, systems or factor values; see B against A."""

from fastapi import Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy import exists, select
from sqlalchemy.orm import Session
from xaclab_contracts.validity import FLAG_LABELS

from xaclab_server.api.deps import ParamRolesDep, SessionDep, SuitesDep
from xaclab_server.models import Result, Run
from xaclab_server.schemas.comparison import ComparisonOut
from xaclab_server.services.baselines import Link, comparison_links
from xaclab_server.services.comparability import NotComparable
from xaclab_server.services.compare_choices import compare_choices
from xaclab_server.services.compare_runs import comparison_out, run_comparison
from xaclab_server.services.compare_view import forest
from xaclab_server.services.suites import Suite, ratios
from xaclab_server.services.systems import Systems, systems_of
from xaclab_server.ui.guards import PageReader, page_router
from xaclab_server.ui.rendering import render

router = page_router()


def _int(text: str | None) -> int | None:
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a number.") from None


@router.get("/compare", response_class=HTMLResponse)
def compare_page(
    request: Request,
    session: SessionDep,
    roles: ParamRolesDep,
    suites: SuitesDep,
    _reader: PageReader,
) -> Response:
    query = {k: v[:100] for k, v in request.query_params.items()}
    result: ComparisonOut | None = None
    error = None
    status = 200
    if query.get("kind") and query.get("a") and query.get("b"):
        try:
            comparison = run_comparison(
                session=session,
                kind=query["kind"],
                a=query["a"],
                b=query["b"],
                suite=query.get("suite") or None,
                run=_int(query.get("run")),
                matrix=_int(query.get("matrix")),
                factor=query.get("factor") or None,
                statistic="mean" if query.get("statistic") == "mean" else "median",
                roles=roles,
                cross_machine=query.get("cross_machine") in ("true", "on", "1"),
            )
            result = comparison_out(comparison)
        except NotComparable as exc:
            error, status = str(exc), 409
        except ValueError as exc:  # ComparisonError too: the sentence is shown above the form
            error, status = str(exc), 422
    systems = systems_of(suites)
    return render(
        request,
        "compare.html",
        {
            "query": query,
            "result": result,
            "forest": forest(result) if result else None,
            "error": error,
            "choices": compare_choices(session=session, suites=suites, systems=systems),
            "recent": _recent(session, systems, suites),
            "export": str(request.url.query),
            "flag_labels": FLAG_LABELS,
        },
        status=status,
    )


RECENT_RUNS = 6


def _recent(
    session: Session, systems: Systems, suites: dict[str, Suite]
) -> list[tuple[Run, list[Link]]]:
    """The newest runs with results and their one-click comparisons."""
    runs = session.scalars(
        select(Run)
        .where(exists().where(Result.run_id == Run.id))
        .order_by(Run.created_at.desc(), Run.id.desc())
        .limit(RECENT_RUNS)
    )
    return [
        (
            run,
            comparison_links(
                session=session, run=run, systems=systems, system_ratios=ratios(suites, run.suite)
            ),
        )
        for run in runs
    ]
