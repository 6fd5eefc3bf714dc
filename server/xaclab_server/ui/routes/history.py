"""The history page: one series over time, with its epochs, intervals and change points."""

from fastapi import Request
from fastapi.responses import HTMLResponse, Response

from xaclab_server.api.deps import ParamRolesDep, SessionDep, SuitesDep
from xaclab_server.api.routes.history import series_key_of
from xaclab_server.services.baselines import compare_url
from xaclab_server.services.history import SeriesUnknown, series_history
from xaclab_server.services.systems import systems_of
from xaclab_server.ui.guards import PageReader, page_router
from xaclab_server.ui.rendering import not_found, refused, render

router = page_router()


def script_json(text: str) -> str:
    """JSON that is safe inside a ``<script>`` element: no ``</script>`` can close it early."""
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


FIELDS = ("machine_id", "suite", "benchmark", "sut", "metric", "unit")
MAX_ID = 2**31  # ids are PostgreSQL integers


@router.get("/history", response_class=HTMLResponse)
def history_page(
    request: Request,
    session: SessionDep,
    roles: ParamRolesDep,
    suites: SuitesDep,
    _reader: PageReader,
) -> Response:
    query = request.query_params
    missing = [name for name in FIELDS if not query.get(name)]
    if missing:
        return refused(
            request,
            "A history names its series: " + ", ".join(missing) + " missing. Open it from a "
            "run page's or a machine's overview, where every value links to its history.",
            422,
        )
    machine_id = query["machine_id"]
    if not machine_id.isdigit() or int(machine_id) >= MAX_ID:
        return not_found(request, f"Machine {machine_id[:20]!r}")
    try:
        key = series_key_of(
            machine_id=int(machine_id),
            suite=query["suite"][:100],
            benchmark=query["benchmark"][:100],
            sut=query["sut"][:100],
            metric=query["metric"][:100],
            unit=query["unit"][:100],
            params=query.get("params", "{}")[:4000],
        )
        history = series_history(session=session, key=key, roles=roles)
    except ValueError as exc:
        return refused(request, str(exc), 422)
    except SeriesUnknown as exc:
        return not_found(request, str(exc).removesuffix(" does not exist."))
    previous = [None, *[p.run_id for p in history.points[:-1]]]
    return render(
        request,
        "history.html",
        {
            "history": history,
            "compare_links": [
                compare_url(kind="runs", a=before, b=p.run_id)
                if before is not None and before != p.run_id
                else None
                for before, p in zip(previous, history.points, strict=True)
            ],
            "colour": systems_of(suites).style(history.sut).colour,
            "series_json": script_json(history.model_dump_json()),
        },
    )
