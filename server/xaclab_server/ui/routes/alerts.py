"""The alerts pages: every change point the detector found, one alert's facts and
bisection, and (for admins) the webhook and automatic bisection (docs/change-points.md)."""

from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy import select

from xaclab_server.api.deps import ClockDep, LibxacGitDep, NotifierDep, SessionDep, SettingsDep
from xaclab_server.models import Machine
from xaclab_server.services import alerts, bisection, watch_admin, watch_coverage, webhooks
from xaclab_server.services.alerts import AlertFilter
from xaclab_server.services.detection import detector_options
from xaclab_server.ui.forms import AdminForm, OperatorForm, submit
from xaclab_server.ui.guards import PageReader, page_router
from xaclab_server.ui.rendering import not_found, refused, render, see_other

router = page_router()

PAGE = 100
STATES = ("open", "acknowledged", "dismissed")
DIRECTIONS = ("regression", "improvement")


@router.get("/alerts", response_class=HTMLResponse)
def alerts_page(
    request: Request, session: SessionDep, settings: SettingsDep, _reader: PageReader
) -> Response:
    query = request.query_params
    state = query.get("state", "") if query.get("state", "") in STATES else ""
    direction = query.get("direction", "") if query.get("direction", "") in DIRECTIONS else ""
    machine_text = query.get("machine_id", "")
    machine_id = int(machine_text) if machine_text.isdigit() and len(machine_text) < 10 else None
    current = query.get("current", "") == "1"
    where = AlertFilter(
        state=state or None,
        direction=direction or None,
        machine_id=machine_id,
        include_withdrawn=not current,
    )
    rows = alerts.list_alerts(session=session, where=where, limit=PAGE)
    latest = alerts.latest_bisections(session=session, change_ids=[c.id for c, _s, _m in rows])
    views = [alerts.alert_view(c, s, m, latest.get(c.id)) for c, s, m in rows]
    _point_to_shared_bisections(views)
    admin = _admin_context(session, request)
    return render(
        request,
        "alerts.html",
        {
            "alerts": views,
            "chosen": {
                "state": state,
                "direction": direction,
                "machine_id": machine_id,
                "current": current,
            },
            "states": STATES,
            "directions": DIRECTIONS,
            "machines": session.execute(select(Machine.id, Machine.name).order_by(Machine.name)),
            "limit": PAGE,
            "coverage": watch_coverage.watch_coverage(
                session=session, options=detector_options(settings), machine_id=machine_id
            ),
            "coverage_step": watch_coverage.STEP,
            "coverage_after": watch_coverage.AFTER,
            "coverage_named": watch_coverage.NOISIEST,
            **admin,
        },
    )


def _point_to_shared_bisections(views: list[dict[str, Any]]) -> None:
    """One commit's slowdown raises an alert per series but gets one bisection (per
    machine and revision range): the other alerts of that range point at it."""
    bisected = [v for v in views if v["bisection"]]
    for view in views:
        if view["bisection"]:
            continue
        view["bisected_with"] = next((o for o in bisected if _same_range(o, view)), None)


def _same_range(bisected: dict[str, Any], view: dict[str, Any]) -> bool:
    """Same machine, and the bisection's sides (full hashes) are the alert's (12 digits)."""
    good, bad = bisected["bisection"]["good_revision"], bisected["bisection"]["bad_revision"]
    before, after = view["before"]["revision"], view["after"]["revision"]
    return bool(
        bisected["series"]["machine_id"] == view["series"]["machine_id"]
        and before
        and after
        and good.startswith(before)
        and bad.startswith(after)
    )


def _admin_context(
    session: SessionDep, request: Request, error: str | None = None
) -> dict[str, object]:
    principal = getattr(request.state, "principal", None)
    if principal is None or principal.user is None or principal.user.role != "admin":
        return {}
    row = webhooks.watch_settings(session)
    session.commit()
    return {
        "watch": row,
        "deliveries": [
            watch_admin.delivery_view(d) for d in watch_admin.recent_deliveries(session=session)
        ],
        "settings_error": error,
    }


@router.get("/alerts/{alert_id}", response_class=HTMLResponse)
def alert_page(
    request: Request, session: SessionDep, _reader: PageReader, alert_id: int
) -> Response:
    return _alert_page(request, session, alert_id)


def _alert_page(
    request: Request, session: SessionDep, alert_id: int, error: str | None = None
) -> Response:
    found = alerts.get_alert(session=session, alert_id=alert_id)
    if found is None:
        return not_found(request, f"Alert {alert_id}")
    change, series, machine = found
    latest = alerts.latest_bisections(session=session, change_ids=[change.id])
    view = alerts.alert_view(change, series, machine, latest.get(change.id))
    steps = [
        {**step, "summary": bisection.step_summary(step)}
        for step in (view["bisection"] or {}).get("steps", [])
    ]
    return render(
        request,
        "alert.html",
        {"alert": view, "steps": steps, "error": error},
        status=422 if error else 200,
    )


@router.post("/alerts/{alert_id}/state", response_class=HTMLResponse)
def alert_state(
    request: Request, session: SessionDep, clock: ClockDep, alert_id: int, form: OperatorForm
) -> Response:
    found = alerts.get_alert(session=session, alert_id=alert_id)
    action = form.get("action")
    if found is None or action not in alerts.ACTIONS:
        return not_found(request, f"Alert {alert_id}")

    def change_state() -> Response:
        alerts.set_state(
            session=session,
            change=found[0],
            state=alerts.ACTIONS[action],
            note=form.get("note"),
            user_id=form.user.id,
            now=clock(),
        )
        return see_other(f"/alerts/{alert_id}")

    return submit(
        change_state, refused=lambda why: _alert_page(request, session, alert_id, error=why)
    )


@router.post("/alerts/{alert_id}/bisect", response_class=HTMLResponse)
def alert_bisect(
    request: Request,
    session: SessionDep,
    clock: ClockDep,
    git: LibxacGitDep,
    notifier: NotifierDep,
    alert_id: int,
    form: OperatorForm,
) -> Response:
    found = alerts.get_alert(session=session, alert_id=alert_id)
    if found is None:
        return not_found(request, f"Alert {alert_id}")

    def start() -> Response:
        bisection.start_bisection(
            session=session, change=found[0], git=git, user_id=form.user.id, now=clock()
        )
        notifier.notify()
        return see_other(f"/alerts/{alert_id}")

    return submit(start, refused=lambda why: _alert_page(request, session, alert_id, error=why))


@router.post("/alerts/settings", response_class=HTMLResponse)
def alert_settings(
    request: Request, session: SessionDep, clock: ClockDep, form: AdminForm
) -> Response:
    def save() -> Response:
        watch_admin.update_settings(
            session=session,
            webhook_url=form.get("webhook_url"),
            auto_bisect=form.get("auto_bisect") == "true",
            endpoint=watch_admin.endpoint_of(request),
            user_id=form.user.id,
            now=clock(),
        )
        return see_other("/alerts#settings")

    return submit(save, refused=lambda why: refused(request, why, 422))


@router.post("/alerts/settings/test", response_class=HTMLResponse)
def alert_settings_test(
    request: Request, session: SessionDep, clock: ClockDep, form: AdminForm
) -> Response:
    def send() -> Response:
        watch_admin.queue_test_message(session=session, now=clock())
        request.app.state.watcher.poke()
        return see_other("/alerts#settings")

    return submit(send, refused=lambda why: refused(request, why, 422))
