"""An admin's alerting settings: the webhook URL (checked) and automatic bisection."""

from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from datetime import datetime

from fastapi import Request
from sqlalchemy import select
from sqlalchemy.orm import Session

from xaclab_server.models import WebhookDelivery
from xaclab_server.services import webhooks
from xaclab_server.services.webhooks import ServerEndpoint, WebhookUrlRefused

RESOLVE_SECONDS = 3.0
_resolving = ThreadPoolExecutor(max_workers=2, thread_name_prefix="webhook-resolve")


def endpoint_of(request: Request) -> ServerEndpoint:
    """Where this request reached the server: its socket's port and the Host it named."""
    server = request.scope.get("server")
    local_port = int(server[1]) if server and server[1] is not None else None
    host_port = request.url.port or (443 if request.url.scheme == "https" else 80)
    return ServerEndpoint(local_port=local_port, host=request.url.hostname, host_port=host_port)


def bounded_resolve(host: str, port: int) -> list[str]:
    """:func:`.webhooks.resolve`, given up after a few seconds (a name server may not answer)."""
    future = _resolving.submit(webhooks.resolve, host, port)
    try:
        return future.result(timeout=RESOLVE_SECONDS)
    except FutureTimeout:
        raise OSError(f"no answer for {host!r} within {RESOLVE_SECONDS:g} s") from None


def update_settings(
    *,
    session: Session,
    webhook_url: str | None,
    auto_bisect: bool,
    endpoint: ServerEndpoint,
    user_id: int,
    now: datetime,
) -> None:
    """Check and store the settings; WebhookUrlRefused (a sentence) changes nothing. Commits."""
    url = None
    if webhook_url is not None and webhook_url.strip():
        url = webhooks.check_webhook_url(webhook_url, endpoint=endpoint, resolver=bounded_resolve)
    row = webhooks.watch_settings(session)
    row.webhook_url, row.auto_bisect = url, auto_bisect
    row.updated_at, row.updated_by_id = now, user_id
    session.commit()


def queue_test_message(*, session: Session, now: datetime) -> WebhookDelivery:
    """A ``test`` message to the webhook, so an admin sees it arrive; commits."""
    delivery = webhooks.queue_message(
        session=session,
        event="test",
        payload={"message": "A test message from xaclab's alerts page.", "at": now.isoformat()},
        change_point_id=None,
    )
    if delivery is None:
        raise WebhookUrlRefused("No webhook URL is set; set one first.")
    session.commit()
    return delivery


def recent_deliveries(*, session: Session, limit: int = 20) -> list[WebhookDelivery]:
    return list(
        session.scalars(select(WebhookDelivery).order_by(WebhookDelivery.id.desc()).limit(limit))
    )


def delivery_view(delivery: WebhookDelivery) -> dict[str, object]:
    return {
        "id": delivery.id,
        "event": delivery.event,
        "alert_id": delivery.change_point_id,
        "url": delivery.url,
        "status": delivery.status,
        "attempts": delivery.attempts,
        "next_attempt_at": delivery.next_attempt_at.isoformat(),
        "last_error": delivery.last_error,
        "created_at": delivery.created_at.isoformat(),
        "delivered_at": None
        if delivery.delivered_at is None
        else delivery.delivered_at.isoformat(),
    }
