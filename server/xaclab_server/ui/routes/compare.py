"""The comparison page: pick two runs, machines, systems or factor values; see B against A."""

from fastapi import Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy import select
from xaclab_contracts.suites import declared_systems
from xaclab_contracts.validity import FLAG_LABELS

from xaclab_server.api.deps import ParamRolesDep, SessionDep, SuitesDep
from xaclab_server.models import Machine, Run
from xaclab_server.schemas.comparison import ComparisonOut
from xaclab_server.services.comparability import NotComparable
from xaclab_server.services.compare_runs import comparison_out, run_comparison
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
    runs = session.scalars(select(Run).order_by(Run.id.desc()).limit(50)).all()
    machines = session.scalars(select(Machine).order_by(Machine.name)).all()
    return render(
        request,
        "compare.html",
        {
            "query": query,
            "result": result,
            "error": error,
            "runs": runs,
            "machines": machines,
            "export": str(request.url.query),
            "systems": list(declared_systems(suites)),
            "flag_labels": FLAG_LABELS,
        },
        status=status,
    )
