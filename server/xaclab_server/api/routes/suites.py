"""User API: the suite declarations (docs/suites.md), as written in contracts/suites/."""

from typing import Any

from fastapi import APIRouter

from xaclab_server.api.deps import SuitesDep

router = APIRouter(prefix="/api/v1", tags=["user"])


@router.get("/suites")
def list_suites(suites: SuitesDep) -> list[dict[str, Any]]:
    return [suite.declaration for suite in suites.values()]
