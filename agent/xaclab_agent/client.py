"""The agent protocol, version 1 (docs/agent-protocol.md), over httpx.

Every message may be resent safely, so every call is retried on what is
retryable — transport errors, 5xx and 429 — with capped exponential backoff
and full jitter.  Any other 4xx is raised at once as :class:`RequestRejected`.

An ``https://`` server must present a certificate that the agent's
``ca_file`` (the lab CA), or else the system's trusted CAs, vouch for; one
that does not is refused at once with :class:`UntrustedServerError`, never
retried, and nothing (no token, no result) is sent to it.  A plain
``http://`` server other than a loopback one draws a warning.
"""

from __future__ import annotations

import logging
import random
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
from xaclab_contracts.loopback import is_loopback

from xaclab_agent.errors import (
    AuthenticationError,
    ConfigError,
    ConflictError,
    ProtocolError,
    RequestRejected,
    UnavailableError,
    UntrustedServerError,
)

log = logging.getLogger(__name__)

API_PREFIX = "/api/agent/v1"
USER_AGENT = "xaclab-agent/0.1.0"


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently a retryable failure is retried."""

    attempts: int = 5
    base_delay: float = 0.5
    max_delay: float = 30.0

    def delay(self, attempt: int, rng: random.Random) -> float:
        """Full-jitter backoff before retry number ``attempt`` (1-based)."""
        return rng.uniform(0, min(self.max_delay, self.base_delay * 2 ** (attempt - 1)))


NO_RETRY = RetryPolicy(attempts=1)


@dataclass(frozen=True)
class Job:
    """A claimed job."""

    job_id: int
    run_id: int
    suite: str
    profile: str
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RegisterReply:
    machine_id: int
    agent_token: str


@dataclass(frozen=True)
class JobState:
    status: str
    cancel: bool


@dataclass(frozen=True)
class UploadReceipt:
    stored: int
    duplicate: bool


def is_retryable_status(status_code: int) -> bool:
    return status_code == 429 or status_code >= 500


def tls_context(ca_file: Path | None) -> ssl.SSLContext:
    """The servers the agent trusts: those whose certificate ``ca_file``'s CAs signed, or,
    without one, those the system's trusted CAs vouch for."""
    try:
        return ssl.create_default_context(cafile=str(ca_file) if ca_file else None)
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError(
            f"ca_file {ca_file} does not load as a PEM file of CA certificates: {exc}"
        ) from None


def untrusted_sentence(
    server: str, ca_file: Path | None, refusal: ssl.SSLCertVerificationError
) -> str:
    trust = f"the CA file {ca_file}" if ca_file else "the system's trusted CAs"
    reason = (refusal.verify_message or str(refusal)).rstrip(".")
    return (
        f"The server {server} presented a certificate that {trust} does not vouch for "
        f"({reason}); the agent refuses to talk to it. Point ca_file at the lab CA that "
        "issued the server's certificate, or check that this is the right server."
    )


def is_loopback_url(url: str) -> bool:
    return is_loopback(urlsplit(url).hostname or "")


def untrusted_certificate(exc: BaseException) -> ssl.SSLCertVerificationError | None:
    """The certificate refusal behind a transport error (httpx wraps ssl's), if it is one."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ssl.SSLCertVerificationError):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


class AgentClient:
    """A client of the agent API.  Thread-safe: progress is posted from a helper thread."""

    def __init__(
        self,
        base_url: str,
        token: str | None = None,
        *,
        transport: httpx.BaseTransport | None = None,
        timeout: float = 30.0,
        retry: RetryPolicy = RetryPolicy(),  # noqa: B008 - frozen, so sharing is safe
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
        ca_file: Path | None = None,
    ) -> None:
        headers = {"User-Agent": USER_AGENT}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        if base_url.startswith("http://") and not is_loopback_url(base_url):
            log.warning(
                "talking to %s in plain HTTP: its tokens and results cross the network in "
                "clear text; give the server a certificate and use https://",
                base_url,
            )
        self._base_url = base_url
        self._ca_file = ca_file
        self._http = httpx.Client(
            base_url=base_url.rstrip("/") + API_PREFIX,
            headers=headers,
            transport=transport,
            timeout=timeout,
            verify=tls_context(ca_file),
        )
        self._timeout = timeout
        self._retry = retry
        self._sleep = sleep
        self._rng = rng or random.Random()

    def __enter__(self) -> AgentClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def register(
        self, *, registration_token: str, name: str, fingerprint: dict[str, Any]
    ) -> RegisterReply:
        body = {"registration_token": registration_token, "name": name, "fingerprint": fingerprint}
        data = self._json(self._request("POST", "/register", json=body))
        try:
            return RegisterReply(int(data["machine_id"]), str(data["agent_token"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise ProtocolError(f"malformed /register reply: {data!r}") from exc

    def claim(self, *, wait: int = 25) -> Job | None:
        """Long-poll for a job; ``None`` when none arrived within ``wait`` seconds."""
        response = self._request(
            "POST",
            "/jobs/claim",
            params={"wait": wait},
            timeout=httpx.Timeout(self._timeout, read=wait + self._timeout),
        )
        if response.status_code == 204:
            return None
        data = self._json(response)
        try:
            params = data.get("params") or {}
            return Job(
                job_id=int(data["job_id"]),
                run_id=int(data["run_id"]),
                suite=str(data["suite"]),
                profile=str(data["profile"]),
                params=params,
            )
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            raise ProtocolError(f"malformed claim reply: {data!r}") from exc

    def progress(
        self, job_id: int, *, fraction: float, message: str, retry: RetryPolicy | None = None
    ) -> None:
        body = {"fraction": fraction, "message": message[:500]}
        self._request("POST", f"/jobs/{job_id}/progress", json=body, retry=retry)

    def upload_results(
        self,
        job_id: int,
        *,
        upload_id: str,
        results: list[dict[str, Any]],
        retry: RetryPolicy | None = None,
    ) -> UploadReceipt:
        body = {"upload_id": upload_id, "results": results}
        response = self._request("POST", f"/jobs/{job_id}/results", json=body, retry=retry)
        data = self._json(response)
        return UploadReceipt(int(data.get("stored", 0)), bool(data.get("duplicate", False)))

    def heartbeat(self, job_id: int, *, retry: RetryPolicy | None = None) -> JobState:
        """Extend the job's lease; the reply says whether it was cancelled."""
        data = self._json(self._request("POST", f"/jobs/{job_id}/heartbeat", json={}, retry=retry))
        return JobState(status=str(data.get("status", "")), cancel=bool(data.get("cancel", False)))

    def send_log(
        self,
        job_id: int,
        *,
        seq: int,
        stream: str,
        text: str,
        retry: RetryPolicy | None = None,
    ) -> None:
        """One log chunk; the server keeps the first chunk of each ``seq`` (idempotent)."""
        body = {"seq": seq, "stream": stream, "text": text}
        self._request("POST", f"/jobs/{job_id}/logs", json=body, retry=retry)

    def finish(
        self, job_id: int, *, status: str, message: str, retry: RetryPolicy | None = None
    ) -> None:
        body = {"status": status, "message": message[:500]}
        self._request("POST", f"/jobs/{job_id}/finish", json=body, retry=retry)

    def _request(
        self,
        method: str,
        path: str,
        *,
        retry: RetryPolicy | None = None,
        **kwargs: Any,
    ) -> httpx.Response:
        policy = retry or self._retry
        last_problem = ""
        for attempt in range(1, policy.attempts + 1):
            try:
                response = self._http.request(method, path, **kwargs)
            except httpx.TransportError as exc:
                refusal = untrusted_certificate(exc)
                if refusal is not None:
                    raise self._untrusted(refusal) from None
                last_problem = f"{type(exc).__name__}: {exc}"
            else:
                if response.is_success:
                    return response
                if not is_retryable_status(response.status_code):
                    raise _rejection(response)
                last_problem = f"HTTP {response.status_code}: {_detail(response)}"
                if attempt < policy.attempts:
                    self._sleep(_retry_after(response) or policy.delay(attempt, self._rng))
                    continue
                break
            if attempt < policy.attempts:
                self._sleep(policy.delay(attempt, self._rng))
        raise UnavailableError(
            f"{method} {path} failed after {policy.attempts} attempt(s): {last_problem}"
        )

    def _untrusted(self, refusal: ssl.SSLCertVerificationError) -> UntrustedServerError:
        return UntrustedServerError(untrusted_sentence(self._base_url, self._ca_file, refusal))

    @staticmethod
    def _json(response: httpx.Response) -> dict[str, Any]:
        try:
            data = response.json()
        except ValueError as exc:
            raise ProtocolError(f"reply to {response.request.url.path} is not JSON") from exc
        if not isinstance(data, dict):
            raise ProtocolError(f"reply to {response.request.url.path} is not a JSON object")
        return data


def _detail(response: httpx.Response) -> str:
    try:
        data = response.json()
    except ValueError:
        return response.text[:300] or response.reason_phrase
    if isinstance(data, dict) and "detail" in data:
        return str(data["detail"])[:300]
    return str(data)[:300]


def _rejection(response: httpx.Response) -> RequestRejected:
    cls: type[RequestRejected] = RequestRejected
    if response.status_code == 401:
        cls = AuthenticationError
    elif response.status_code == 409:
        cls = ConflictError
    return cls(response.status_code, _detail(response))


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("Retry-After", "")
    try:
        return min(max(float(value), 0.0), 60.0)
    except ValueError:
        return None
