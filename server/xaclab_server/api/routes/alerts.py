"""User API: alerts (change points), their state, bisection, and the alerting settings.

Reading alerts is open to every reader; acknowledging, dismissing, reopening
and bisecting need an operator; the webhook and automatic bisection are an
admin's (docs/change-points.md).
"""

from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Query, Request, status
from sqlalchemy import select

from xaclab_server.api.deps import (
    AdminUser,
    ClockDep,
    LibxacGitDep,
    NotifierDep,
    OperatorUser,
    SessionDep,
    SettingsDep,
    WatcherDep,
)
from xaclab_server.core.openapi import CONFLICT
from xaclab_server.models import Bisection, ChangePoint, WatchSettings
from xaclab_server.schemas.alert import AlertNote, WatchSettingsIn, WatchSettingsOut
from xaclab_server.services import alerts, bisection, watch_admin, webhooks
from xaclab_server.services.alerts import AlertFilter, AlertRefused
from xaclab_server.services.webhooks import WebhookUrlRefused

router = APIRouter(prefix="/api/v1", tags=["alerts"])

PAGE_MAX = 500


@router.get("/alerts")
def list_alerts(
    session: SessionDep,
    settings: SettingsDep,
    state: Literal["open", "acknowledged", "dismissed"] | None = None,
    direction: Literal["regression", "improvement"] | None = None,
    machine_id: Annotated[int | None, Query(ge=1, le=2**31 - 1)] = None,
    suite: Annotated[str | None, Query(max_length=100)] = None,
    current: bool = False,
    before: Annotated[int | None, Query(ge=1, le=2**31 - 1)] = None,
    limit: Annotated[int, Query(ge=1, le=PAGE_MAX)] = 50,
) -> dict[str, Any]:
    """Alerts newest first; ``current=true`` leaves out those the detector withdrew.
    ``next_before``, passed as ``before``, gives the next older page."""
    where = AlertFilter(
        state=state,
        direction=direction,
        machine_id=machine_id,
        suite=suite,
        include_withdrawn=not current,
    )
    rows = alerts.list_alerts(session=session, where=where, before=before, limit=limit)
    latest = alerts.latest_bisections(session=session, change_ids=[c.id for c, _s, _m in rows])
    base = (settings.public_url or "").rstrip("/")
    return {
        "alerts": [alerts.alert_view(c, s, m, latest.get(c.id), base_url=base) for c, s, m in rows],
        "next_before": rows[-1][0].id if len(rows) == limit else None,
    }


def _alert(session: SessionDep, alert_id: int) -> tuple[ChangePoint, Any, str]:
    found = alerts.get_alert(session=session, alert_id=alert_id)
    if found is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"Alert {alert_id} does not exist.")
    return found


def _view(session: SessionDep, settings: SettingsDep, alert_id: int) -> dict[str, Any]:
    change, series, machine = _alert(session, alert_id)
    latest = alerts.latest_bisections(session=session, change_ids=[change.id])
    return alerts.alert_view(
        change, series, machine, latest.get(change.id), (settings.public_url or "").rstrip("/")
    )


@router.get("/alerts/{alert_id}")
def read_alert(session: SessionDep, settings: SettingsDep, alert_id: int) -> dict[str, Any]:
    return _view(session, settings, alert_id)


@router.post(
    "/alerts/{alert_id}/bisections", status_code=status.HTTP_201_CREATED, responses=CONFLICT
)
def bisect_alert(
    session: SessionDep,
    settings: SettingsDep,
    clock: ClockDep,
    git: LibxacGitDep,
    notifier: NotifierDep,
    user: OperatorUser,
    alert_id: int,
) -> dict[str, Any]:
    """Queue runs at the libxac revisions between the two sides of the change, on the same
    machine, until the first revision on the far side is named (docs/change-points.md)."""
    change, _series, _machine = _alert(session, alert_id)
    try:
        started = bisection.start_bisection(
            session=session, change=change, git=git, user_id=user.id, now=clock()
        )
    except bisection.BisectionRefused as exc:
        raise HTTPException(status.HTTP_409_CONFLICT, str(exc)) from exc
    notifier.notify()
    return alerts.bisection_view(started)


@router.post("/alerts/{alert_id}/{action}")
def change_alert_state(
    session: SessionDep,
    settings: SettingsDep,
    clock: ClockDep,
    user: OperatorUser,
    alert_id: int,
    action: Literal["acknowledge", "dismiss", "reopen"],
    body: AlertNote | None = None,
) -> dict[str, Any]:
    """``acknowledge``: someone looks into it (an optional note says who or what);
    ``dismiss``: the change is expected, the note (required) says why; ``reopen``."""
    change, _series, _machine = _alert(session, alert_id)
    try:
        alerts.set_state(
            session=session,
            change=change,
            state=alerts.ACTIONS[action],
            note=body.note if body else "",
            user_id=user.id,
            now=clock(),
        )
    except AlertRefused as exc:
        raise HTTPException(422, str(exc)) from exc
    return _view(session, settings, alert_id)


@router.get("/bisections/{bisection_id}")
def read_bisection(session: SessionDep, bisection_id: int) -> dict[str, Any]:
    found = session.get(Bisection, bisection_id)
    if found is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"Bisection {bisection_id} does not exist.")
    return alerts.bisection_view(found)


@router.get("/watch/settings")
def read_watch_settings(session: SessionDep, _admin: AdminUser) -> WatchSettingsOut:
    row = session.scalar(select(WatchSettings).where(WatchSettings.id == 1))
    if row is None:
        return WatchSettingsOut(webhook_url=None, auto_bisect=False)
    return WatchSettingsOut(webhook_url=row.webhook_url, auto_bisect=row.auto_bisect)


@router.put("/watch/settings")
def write_watch_settings(
    request: Request, body: WatchSettingsIn, session: SessionDep, clock: ClockDep, admin: AdminUser
) -> WatchSettingsOut:
    """The webhook URL (null or empty: none) and automatic bisection.  A URL that is not
    http(s), carries credentials, does not resolve or points at this server is refused (422)."""
    try:
        watch_admin.update_settings(
            session=session,
            webhook_url=body.webhook_url,
            auto_bisect=body.auto_bisect,
            endpoint=watch_admin.endpoint_of(request),
            user_id=admin.id,
            now=clock(),
        )
    except WebhookUrlRefused as exc:
        raise HTTPException(422, str(exc)) from exc
    row = webhooks.watch_settings(session)
    return WatchSettingsOut(webhook_url=row.webhook_url, auto_bisect=row.auto_bisect)


@router.post("/watch/test", status_code=status.HTTP_202_ACCEPTED, responses=CONFLICT)
def test_webhook(
    session: SessionDep, clock: ClockDep, watcher: WatcherDep, _admin: AdminUser
) -> dict[str, Any]:
    """Queue a ``test`` message to the webhook; its delivery shows in ``/watch/deliveries``.
    409 while no webhook URL is set: the request is fine, the settings are not ready."""
    try:
        delivery = watch_admin.queue_test_message(session=session, now=clock())
    except WebhookUrlRefused as exc:
        raise HTTPException(status.HTTP_409_CONFLICT, str(exc)) from exc
    watcher.poke()
    return watch_admin.delivery_view(delivery)


@router.get("/watch/deliveries")
def list_deliveries(
    session: SessionDep,
    _admin: AdminUser,
    limit: Annotated[int, Query(ge=1, le=PAGE_MAX)] = 20,
) -> list[dict[str, Any]]:
    """The newest webhook messages with their delivery state, attempts and last error."""
    return [
        watch_admin.delivery_view(d)
        for d in watch_admin.recent_deliveries(session=session, limit=limit)
    ]
