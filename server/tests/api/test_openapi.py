"""The OpenAPI document tells the truth about errors: every error answer is documented, with
the body the server sends ({"detail": sentence}; a validation error adds "errors")."""

from typing import Any

import jsonschema
from fastapi.testclient import TestClient

METHODS = ("get", "post", "put", "patch", "delete")


def _operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (path, method, op)
        for path, item in document["paths"].items()
        for method, op in item.items()
        if method in METHODS
    ]


def _schema(document: dict[str, Any], op: dict[str, Any], code: str) -> dict[str, Any]:
    ref = op["responses"][code]["content"]["application/json"]["schema"]["$ref"]
    found: dict[str, Any] = document["components"]["schemas"][ref.rsplit("/", 1)[1]]
    return found


def test_every_error_answer_has_the_error_body(client: TestClient) -> None:
    document = client.get("/openapi.json").json()
    assert "HTTPValidationError" not in str(document)
    for path, method, op in _operations(document):
        for code in op["responses"]:
            if code.isdigit() and int(code) >= 400:
                want = "ValidationError" if code == "422" else "Error"
                assert _schema(document, op, code)["title"] == want, (path, method, code)
        if path.startswith("/api/v1/") and path != "/api/v1/login":
            assert "401" in op["responses"], (path, method)
        if (
            method != "get"
            and path.startswith("/api/v1/")
            and path not in ("/api/v1/login", "/api/v1/logout")
        ):
            assert "403" in op["responses"], (path, method)
        if "{" in path:
            assert "404" in op["responses"], (path, method)
    claim = document["paths"]["/api/agent/v1/jobs/{job_id}/finish"]["post"]["responses"]
    assert {"401", "403", "404", "409", "422", "400", "413"} <= set(claim)


def test_real_error_bodies_match_their_documented_schema(client: TestClient) -> None:
    document = client.get("/openapi.json").json()
    answers = [
        ("/api/v1/runs/{run_id}", "get", client.get("/api/v1/runs/424242")),
        ("/api/v1/runs", "post", client.post("/api/v1/runs", json={"suite": 5})),
        (
            "/api/v1/runs",
            "post",
            client.post(
                "/api/v1/runs", json={"machine_id": 1, "suite": "nope", "profile": "quick"}
            ),
        ),
        ("/api/v1/compare", "get", client.get("/api/v1/compare?kind=runs&a=x&b=y")),
        (
            "/api/v1/users",
            "post",
            client.post(
                "/api/v1/users", content=b"\xff\xfe", headers={"Content-Type": "application/json"}
            ),
        ),
        (
            "/api/v1/runs/{run_id}",
            "get",
            client.get("/api/v1/runs/1", headers={"Authorization": "Bearer nope"}),
        ),
    ]
    codes = []
    for path, method, reply in answers:
        op = document["paths"][path][method]
        code = str(reply.status_code)
        assert code in op["responses"], (path, code)
        jsonschema.validate(reply.json(), _schema(document, op, code))
        assert isinstance(reply.json()["detail"], str)
        codes.append(reply.status_code)
    assert codes == [404, 422, 422, 422, 400, 401]
