"""The agent API refuses a result whose system its suite does not declare (contracts/suites)."""

from fastapi.testclient import TestClient

from tests.helpers import claim, create_run, register, result_record, upload


def test_an_upload_with_an_undeclared_system_is_refused(client: TestClient) -> None:
    machine_id, headers = register(client)
    create_run(client, machine_id)
    job_id = claim(client, headers).json()["job_id"]
    refused = upload(client, headers, job_id, [result_record(), result_record(sut="rocksdb")])
    assert refused.status_code == 422
    assert (
        "system 'rocksdb' is not one that suite 'page-touch' declares" in refused.json()["detail"]
    )
    stored = upload(client, headers, job_id, [result_record(), result_record(sut="os")])
    assert stored.status_code == 201, stored.text
