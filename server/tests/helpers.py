"""Test helpers: a generator of valid result-format records and agent calls over HTTP."""

import random
import re
import uuid
from typing import Any

import httpx
from fastapi.testclient import TestClient

from tests.conftest import REGISTRATION_TOKEN
from xaclab_server.services.histogram import from_samples

AGENT = "/api/agent/v1"
HttpClient = TestClient | httpx.Client


def result_record(**overrides: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "format": "xaclab-result",
        "format_version": 1,
        "suite": "page-touch",
        "benchmark": "page_touch",
        "sut": "libxac",
        "params": {"n": 1, "access": "read", "advisory": False, "durability": "nondurable"},
        "metric": "time_per_page",
        "unit": "us",
        "better": "lower",
        "samples": [4.1, 4.0, 4.2],
        "library": {"name": "libxac", "version": "0.1.0", "git_revision": "3f2a9c1"},
    }
    record.update(overrides)
    return record


def histogram_record(values: Any, **overrides: Any) -> dict[str, Any]:
    """A result that carries the histogram of ``values`` (more than 100,000 of them)."""
    record = result_record(histogram=from_samples(values).to_json(), **overrides)
    del record["samples"]
    return record


def page_touch_results(
    *, max_pages: int = 16, repetitions: int = 5, seed: int = 1
) -> list[dict[str, Any]]:
    """What page_touch would print: 4 series over n = 1, 2, 4 ... max_pages, plus OS floors."""
    rng = random.Random(seed)
    results = []
    n = 1
    while n <= max_pages:
        for access in ("read", "write"):
            for advisory in (False, True):
                base = (2.0 if access == "read" else 6.0) * (0.5 if advisory else 1.0) + 8.0 / n
                results.append(
                    result_record(
                        params={
                            "n": n,
                            "access": access,
                            "advisory": advisory,
                            "durability": "nondurable",
                        },
                        samples=[
                            round(base * rng.uniform(0.95, 1.05), 4) for _ in range(repetitions)
                        ],
                        started_at="2026-11-22T19:00:00Z",
                    )
                )
        n *= 2
    for benchmark in ("sigsegv_roundtrip", "mprotect"):
        results.append(
            result_record(
                benchmark=benchmark,
                sut="os",
                params={},
                metric="time_per_call",
                samples=[round(rng.uniform(0.9, 1.1), 4) for _ in range(repetitions)],
            )
        )
    return results


def register(client: HttpClient, name: str = "lab-01") -> tuple[int, dict[str, str]]:
    reply = client.post(
        f"{AGENT}/register",
        json={"registration_token": REGISTRATION_TOKEN, "name": name, "fingerprint": {"cpu": name}},
    )
    assert reply.status_code == 201, reply.text
    body = reply.json()
    return body["machine_id"], {"Authorization": f"Bearer {body['agent_token']}"}


def create_run(client: HttpClient, machine_id: int, **params: Any) -> dict[str, Any]:
    reply = client.post(
        "/api/v1/runs",
        json={
            "machine_id": machine_id,
            "suite": "page-touch",
            "profile": "quick",
            "params": params,
        },
    )
    assert reply.status_code == 201, reply.text
    body: dict[str, Any] = reply.json()
    return body


def claim(client: HttpClient, headers: dict[str, str], wait: float = 0) -> httpx.Response:
    return client.post(f"{AGENT}/jobs/claim", params={"wait": wait}, headers=headers)


def upload(
    client: HttpClient,
    headers: dict[str, str],
    job_id: int,
    results: list[Any],
    upload_id: str | None = None,
) -> httpx.Response:
    return client.post(
        f"{AGENT}/jobs/{job_id}/results",
        json={"upload_id": upload_id or str(uuid.uuid4()), "results": results},
        headers=headers,
    )


def web_login(client: TestClient, username: str, password: str) -> str:
    """Log in through the login form as a browser would; return the session's CSRF token."""
    page = client.get("/login")
    match = re.search(r'name="csrf_token" value="([^"]+)"', page.text)
    assert match, page.text
    reply = client.post(
        "/login",
        data={"csrf_token": match.group(1), "username": username, "password": password},
        follow_redirects=False,
    )
    assert reply.status_code == 303, reply.text
    me = client.get("/api/v1/me").json()
    assert me["username"] == username
    token: str = me["csrf_token"]
    return token
