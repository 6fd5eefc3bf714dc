"""Results for the thesis-reproduction tests, stored the way an agent stores them."""

from typing import Any

from tests.conftest import REGISTRATION_TOKEN
from tests.helpers import AGENT, HttpClient, claim, result_record, upload


def register_machine(
    client: HttpClient, name: str, fingerprint: dict[str, Any] | None = None
) -> tuple[int, dict[str, str]]:
    reply = client.post(
        f"{AGENT}/register",
        json={
            "registration_token": REGISTRATION_TOKEN,
            "name": name,
            "fingerprint": fingerprint or {"cpu": {"model": "Test CPU", "cores": 2}},
        },
    )
    assert reply.status_code == 201, reply.text
    body = reply.json()
    return body["machine_id"], {"Authorization": f"Bearer {body['agent_token']}"}


def store_results(
    client: HttpClient,
    machine_id: int,
    agent: dict[str, str],
    suite: str,
    records: list[dict[str, Any]],
    params: dict[str, Any] | None = None,
) -> int:
    """Queue a run of ``suite``, claim it as the agent, upload ``records``, finish; the run id."""
    made = client.post(
        "/api/v1/runs",
        json={"machine_id": machine_id, "suite": suite, "profile": "quick", "params": params or {}},
    )
    assert made.status_code == 201, made.text
    claimed = claim(client, agent)
    assert claimed.status_code == 200, claimed.text
    job_id = claimed.json()["job_id"]
    for record in records:
        record["suite"] = suite
    sent = upload(client, agent, job_id, records)
    assert sent.status_code == 201, sent.text
    done = client.post(f"{AGENT}/jobs/{job_id}/finish", json={"status": "succeeded"}, headers=agent)
    assert done.status_code == 200, done.text
    run_id: int = made.json()["run_id"]
    return run_id


def touch(access: str, advisory: bool, samples: list[float], **params: Any) -> dict[str, Any]:
    """A page_touch result at n = 1024 (nondurable unless ``durability`` says otherwise)."""
    return result_record(
        params={
            "n": 1024,
            "access": access,
            "advisory": advisory,
            "durability": "nondurable",
            **params,
        },
        samples=samples,
    )


def os_result(benchmark: str, metric: str, samples: list[float], **params: Any) -> dict[str, Any]:
    """A storage-suite floor (sut os), in ns unless ``unit`` is given."""
    unit = params.pop("unit", "ns")
    return result_record(
        benchmark=benchmark, sut="os", metric=metric, unit=unit, params=params, samples=samples
    )
