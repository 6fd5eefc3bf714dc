from __future__ import annotations

import json
import random
from collections.abc import Callable

import httpx
import pytest

from xaclab_agent.client import AgentClient, RetryPolicy
from xaclab_agent.errors import (
    AuthenticationError,
    ConflictError,
    RequestRejected,
    UnavailableError,
)

Handler = Callable[[httpx.Request], httpx.Response]


def make_client(handler: Handler, sleeps: list[float], attempts: int = 4) -> AgentClient:
    return AgentClient(
        "http://agent.test",
        "tok",
        transport=httpx.MockTransport(handler),
        retry=RetryPolicy(attempts=attempts, base_delay=1.0, max_delay=8.0),
        sleep=sleeps.append,
        rng=random.Random(1),
    )


def scripted(*responses: httpx.Response | Exception) -> tuple[Handler, list[httpx.Request]]:
    seen: list[httpx.Request] = []
    queue = list(responses)

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        item = queue.pop(0)
        if isinstance(item, Exception):
            raise item
        return item

    return handler, seen


def test_claim_204_means_no_job() -> None:
    handler, seen = scripted(httpx.Response(204))
    with make_client(handler, []) as client:
        assert client.claim(wait=7) is None
    assert seen[0].url.path == "/api/agent/v1/jobs/claim"
    assert seen[0].url.params["wait"] == "7"
    assert seen[0].headers["Authorization"] == "Bearer tok"


def test_claim_returns_job() -> None:
    job = {"job_id": 17, "run_id": 9, "suite": "page-touch", "profile": "quick", "params": {}}
    handler, _ = scripted(httpx.Response(200, json=job))
    with make_client(handler, []) as client:
        claimed = client.claim()
    assert claimed is not None
    assert (claimed.job_id, claimed.run_id, claimed.suite) == (17, 9, "page-touch")


@pytest.mark.parametrize("status", [500, 502, 503, 429])
def test_retryable_statuses_are_retried(status: int) -> None:
    handler, seen = scripted(
        httpx.Response(status, json={"detail": "busy"}),
        httpx.Response(status, json={"detail": "busy"}),
        httpx.Response(200, json={}),
    )
    sleeps: list[float] = []
    with make_client(handler, sleeps) as client:
        client.finish(3, status="succeeded", message="ok")
    assert len(seen) == 3
    assert len(sleeps) == 2
    assert all(0 <= s <= 8.0 for s in sleeps)
    assert json.loads(seen[-1].content) == {"status": "succeeded", "message": "ok"}


def test_transport_errors_are_retried_then_unavailable() -> None:
    handler, seen = scripted(*[httpx.ConnectError("refused")] * 4)
    sleeps: list[float] = []
    with make_client(handler, sleeps) as client, pytest.raises(UnavailableError) as err:
        client.progress(3, fraction=0.5, message="half")
    assert len(seen) == 4
    assert len(sleeps) == 3
    assert "ConnectError" in str(err.value)


def test_retry_after_header_is_honoured() -> None:
    handler, _ = scripted(
        httpx.Response(429, headers={"Retry-After": "3"}, json={"detail": "slow down"}),
        httpx.Response(200, json={}),
    )
    sleeps: list[float] = []
    with make_client(handler, sleeps) as client:
        client.finish(1, status="failed", message="x")
    assert sleeps == [3.0]


def test_401_is_not_retried() -> None:
    handler, seen = scripted(httpx.Response(401, json={"detail": "unknown token"}))
    sleeps: list[float] = []
    with make_client(handler, sleeps) as client, pytest.raises(AuthenticationError) as err:
        client.claim()
    assert len(seen) == 1 and sleeps == []
    assert err.value.status_code == 401 and err.value.detail == "unknown token"


@pytest.mark.parametrize(
    ("status", "exc"), [(409, ConflictError), (422, RequestRejected), (404, RequestRejected)]
)
def test_other_4xx_are_not_retried(status: int, exc: type[RequestRejected]) -> None:
    handler, seen = scripted(httpx.Response(status, json={"detail": "no"}))
    with make_client(handler, []) as client, pytest.raises(exc):
        client.upload_results(5, upload_id="u", results=[])
    assert len(seen) == 1


def test_per_call_retry_policy_overrides_default() -> None:
    handler, seen = scripted(httpx.Response(503, json={"detail": "down"}))
    with make_client(handler, []) as client, pytest.raises(UnavailableError):
        client.progress(1, fraction=0.1, message="m", retry=RetryPolicy(attempts=1))
    assert len(seen) == 1


def test_upload_duplicate_reply() -> None:
    handler, seen = scripted(httpx.Response(200, json={"stored": 0, "duplicate": True}))
    with make_client(handler, []) as client:
        receipt = client.upload_results(5, upload_id="u-1", results=[{"a": 1}])
    assert receipt.duplicate and receipt.stored == 0
    assert json.loads(seen[0].content) == {"upload_id": "u-1", "results": [{"a": 1}]}


def test_register_sends_token_in_body_and_parses_reply() -> None:
    handler, seen = scripted(httpx.Response(201, json={"machine_id": 3, "agent_token": "xa_1"}))
    with AgentClient("http://agent.test/", transport=httpx.MockTransport(handler)) as client:
        reply = client.register(registration_token="reg", name="lab-01", fingerprint={"a": 1})
    assert (reply.machine_id, reply.agent_token) == (3, "xa_1")
    assert "Authorization" not in seen[0].headers
    assert json.loads(seen[0].content)["registration_token"] == "reg"


def test_progress_message_is_capped() -> None:
    handler, seen = scripted(httpx.Response(200, json={}))
    with make_client(handler, []) as client:
        client.progress(1, fraction=1.0, message="x" * 900)
    assert len(json.loads(seen[0].content)["message"]) == 500
