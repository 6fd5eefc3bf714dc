"""The alerting webhook: which URLs are allowed, and delivering messages to it.

An admin sets one URL (:class:`~xaclab_server.models.WatchSettings`).
:func:`check_webhook_url` refuses, with a sentence, a URL that is not
``http://`` or ``https://``, carries a user name or password, names no host,
does not resolve, or points at this server itself: one of its addresses is
an address of this host (loopback, unspecified, or one a socket can bind to
here) and its port is the port the server answered the admin's request on,
or it names the very host and port the admin's browser used.

Messages are written to ``webhook_deliveries`` in the transaction that
raises them (:func:`queue_message`).  :func:`deliver_due` sends the due ones
outside any request: it claims a message (moving ``next_attempt_at`` past
the post's timeout, so another process leaves it alone), POSTs its JSON
(no redirects followed), and on a 2xx marks it delivered; otherwise it tries
again after ``webhook_retry_seconds``, tripled each attempt, until
``webhook_attempts`` are spent.  Uploads never wait for any of it.
"""

import ipaddress
import json
import socket
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import httpx
from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from xaclab_server import __version__
from xaclab_server.core.config import Settings
from xaclab_server.models import WatchSettings, WebhookDelivery
from xaclab_server.models.base import utcnow

MAX_URL_LENGTH = 2000
MAX_ERROR = 500
BATCH = 20

Resolver = Callable[[str, int], list[str]]


class WebhookUrlRefused(ValueError):
    """A webhook URL that may not be set; the message is a sentence (HTTP 422)."""


@dataclass(frozen=True, slots=True)
class ServerEndpoint:
    """Where the admin's request reached this server: the socket's own address and port,
    and the host and port the client asked for (its ``Host``)."""

    local_port: int | None
    host: str | None
    host_port: int | None


def resolve(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return sorted({str(info[4][0]) for info in infos})


def check_webhook_url(url: str, *, endpoint: ServerEndpoint, resolver: Resolver = resolve) -> str:
    """The URL, stripped, if it may be the webhook; WebhookUrlRefused otherwise."""
    url = url.strip()
    if len(url) > MAX_URL_LENGTH:
        raise WebhookUrlRefused(f"The webhook URL is longer than {MAX_URL_LENGTH} characters.")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise WebhookUrlRefused(
            f"The webhook URL must start with http:// or https://, not {url[:60]!r}."
        )
    if parts.username is not None or parts.password is not None:
        raise WebhookUrlRefused(
            "The webhook URL must not carry a user name or password: it is shown on the "
            "alerts page; put a secret in the path or query instead."
        )
    host = parts.hostname
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise WebhookUrlRefused(f"The webhook URL's port is not a port: {url[:80]!r}.") from None
    if not host:
        raise WebhookUrlRefused(f"The webhook URL names no host: {url[:80]!r}.")
    same_host = endpoint.host is not None and host.lower() == endpoint.host.lower()
    if same_host and port == endpoint.host_port:
        raise WebhookUrlRefused(_self_sentence(url))
    try:
        addresses = resolver(host, port)
    except (OSError, UnicodeError):
        raise WebhookUrlRefused(
            f"The webhook URL's host {host!r} does not resolve from the server."
        ) from None
    if port == endpoint.local_port and any(is_own_address(a) for a in addresses):
        raise WebhookUrlRefused(_self_sentence(url))
    return url


def _self_sentence(url: str) -> str:
    return (
        f"The webhook URL {url[:80]!r} points at this xaclab server itself; give the "
        "address of the service that should receive the alerts."
    )


def is_own_address(address: str) -> bool:
    """Whether ``address`` is this host's: loopback, unspecified, or bindable here."""
    try:
        parsed = ipaddress.ip_address(address.split("%")[0])
    except ValueError:
        return False
    if parsed.is_loopback or parsed.is_unspecified:
        return True
    family = socket.AF_INET6 if parsed.version == 6 else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((address, 0))
        except OSError:
            return False
    return True


def watch_settings(session: Session) -> WatchSettings:
    """The one settings row (made on first use)."""
    found = session.get(WatchSettings, 1)
    if found is None:
        found = WatchSettings(id=1, webhook_url=None, auto_bisect=False, updated_at=utcnow())
        session.add(found)
        session.flush()
    return found


def queue_message(
    *, session: Session, event: str, payload: dict[str, Any], change_point_id: int | None
) -> WebhookDelivery | None:
    """Write a message for the webhook, if one is set; part of the caller's transaction."""
    url = watch_settings(session).webhook_url
    if not url:
        return None
    delivery = WebhookDelivery(
        event=event,
        change_point_id=change_point_id,
        url=url,
        payload={"event": event, **payload},
        status="pending",
        attempts=0,
        next_attempt_at=utcnow(),
        last_error="",
    )
    session.add(delivery)
    return delivery


def deliver_due(
    *,
    factory: sessionmaker[Session],
    settings: Settings,
    client: httpx.Client,
    now: Callable[[], datetime] = utcnow,
) -> list[int]:
    """Post every due message once; return the ids of those delivered."""
    delivered = []
    for delivery_id in _due(factory, now()):
        claimed = _claim(factory, delivery_id, now(), settings.webhook_timeout_seconds)
        if claimed is None:
            continue
        url, payload = claimed
        error = _post(client, url, payload, settings.webhook_timeout_seconds)
        _record(factory, delivery_id, error, settings, now())
        if error is None:
            delivered.append(delivery_id)
    return delivered


def _due(factory: sessionmaker[Session], now: datetime) -> list[int]:
    with factory() as session:
        return list(
            session.scalars(
                select(WebhookDelivery.id)
                .where(WebhookDelivery.status == "pending", WebhookDelivery.next_attempt_at <= now)
                .order_by(WebhookDelivery.next_attempt_at, WebhookDelivery.id)
                .limit(BATCH)
            )
        )


def _claim(
    factory: sessionmaker[Session], delivery_id: int, now: datetime, timeout: float
) -> tuple[str, dict[str, Any]] | None:
    """Move the message's next attempt past this post, unless another process did first."""
    with factory() as session:
        row = session.get(WebhookDelivery, delivery_id)
        if row is None or row.status != "pending" or row.next_attempt_at > now:
            return None
        done = session.execute(
            update(WebhookDelivery)
            .where(
                WebhookDelivery.id == delivery_id,
                WebhookDelivery.next_attempt_at == row.next_attempt_at,
            )
            .values(next_attempt_at=now + timedelta(seconds=timeout * 2 + 5))
            .execution_options(synchronize_session=False)
        )
        session.commit()
        if done.rowcount != 1:  # type: ignore[attr-defined]
            return None
        return row.url, dict(row.payload)


def _post(client: httpx.Client, url: str, payload: dict[str, Any], timeout: float) -> str | None:
    """None when the receiver took it (2xx); otherwise what went wrong, in words."""
    try:
        reply = client.post(
            url,
            content=json.dumps(payload, sort_keys=True),
            headers={
                "Content-Type": "application/json",
                "User-Agent": f"xaclab-server/{__version__}",
                "X-Xaclab-Event": str(payload.get("event", "")),
            },
            timeout=timeout,
            follow_redirects=False,
        )
    except httpx.HTTPError as exc:
        return f"{type(exc).__name__}: {exc}"[:MAX_ERROR] or type(exc).__name__
    if 200 <= reply.status_code < 300:
        return None
    return f"HTTP {reply.status_code} from the receiver"


def _record(
    factory: sessionmaker[Session],
    delivery_id: int,
    error: str | None,
    settings: Settings,
    now: datetime,
) -> None:
    with factory() as session:
        row = session.get_one(WebhookDelivery, delivery_id)
        row.attempts += 1
        if error is None:
            row.status, row.delivered_at, row.last_error = "delivered", now, ""
        else:
            row.last_error = error
            if row.attempts >= settings.webhook_attempts:
                row.status = "failed"
            else:
                delay = settings.webhook_retry_seconds * 3 ** (row.attempts - 1)
                row.next_attempt_at = now + timedelta(seconds=delay)
        session.commit()
