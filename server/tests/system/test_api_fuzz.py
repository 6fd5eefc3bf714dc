"""Schemathesis against the OpenAPI document: the server answers what the document says.

In process (ASGI) on PostgreSQL, the stricter database (integer ranges, NUL
characters, jsonb).  Every generated request carries an admin's API token, a
fresh one per example (an example may revoke its token or demote its user),
and agent calls carry an approved agent's token, so the write endpoints are
exercised past authentication.  Checked for every answer: no 5xx
(``not_a_server_error``), a status code the operation documents
(``status_code_conformance``) and a body that matches the schema documented
for that code (``response_schema_conformance``); core/openapi.py documents
the error answers.  Up to :data:`MAX_EXAMPLES` examples per operation: every
operation with a parameter or a body got 107 to 261 in a run (2026-11-26); one
without any has a single possible request, which Hypothesis sends and stops.
"""

import itertools
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from fastapi import FastAPI
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.generation.case import Case
from schemathesis.specs.openapi.checks import (
    response_schema_conformance,
    status_code_conformance,
)

from tests.conftest import add_user, clear_tables, make_settings
from xaclab_server.app import create_app
from xaclab_server.services.machines import register_machine

MAX_EXAMPLES = 100
CHECKS = [not_a_server_error, status_code_conformance, response_schema_conformance]


@pytest.fixture(scope="module")
def fuzz_app(pg_url: str) -> Iterator[FastAPI]:
    app = create_app(make_settings(pg_url, scheduler_seconds=0))
    yield app
    clear_tables(app)


@pytest.fixture(scope="module")
def credentials(fuzz_app: FastAPI) -> Iterator[dict[str, str]]:
    with fuzz_app.state.sessionmaker() as session:
        _machine, agent_token = register_machine(
            session=session, name="fuzz-agent", fingerprint={"cpu": "fuzz"}, trusted=True
        )
    yield {"agent": agent_token}


@pytest.fixture(scope="module")
def api_schema(fuzz_app: FastAPI) -> schemathesis.BaseSchema:
    return schemathesis.openapi.from_asgi("/openapi.json", fuzz_app)


schema = schemathesis.pytest.from_fixture("api_schema")
_users = itertools.count()


@schema.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    database=None,
)
def test_every_answer_is_one_the_openapi_documents(
    case: Case[Any], fuzz_app: FastAPI, credentials: dict[str, str]
) -> None:
    if case.path.endswith("/jobs/claim") and isinstance(case.query, dict):
        try:
            if float(case.query.get("wait", 25)) > 0.1:
                case.query["wait"] = 0.1  # a long poll would only wait
        except (TypeError, ValueError):
            pass
    if case.path.startswith("/api/agent/"):
        token = credentials["agent"]
    else:
        token = add_user(fuzz_app, f"fuzz{next(_users)}", "admin")
    case.call_and_validate(headers={"Authorization": f"Bearer {token}"}, checks=CHECKS, timeout=3)
