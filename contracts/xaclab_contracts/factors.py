"""The factors every suite takes because the agent applies them itself (docs/suites.md).

``write_cache``, ``pin_cpu``, ``drop_caches``, ``target_dir``, ``timeout`` and
``libxac_revision`` are checked here for their form, by the server when it
queues a job and by the agent before it runs one; the agent then checks what
only the machine knows (the CPUs it may use, its allowed directories, the
commits its libxac clone holds).  The server also checks that a
``libxac_revision`` names a commit, and stores the commit's full hash.  Their
role in comparisons is ``workload``; a series is ordered by the revision, not
told apart by it (docs/change-points.md).
"""

from __future__ import annotations

import re
from typing import Any

from xaclab_contracts.suites import (
    AGENT_FACTOR_NAMES,
    ParamDecl,
    ParamError,
    Suite,
    check_param,
    show,
)

AGENT_FACTORS: dict[str, ParamDecl] = {
    "write_cache": ParamDecl(
        "write_cache",
        "enum",
        "",
        "Disk write cache during the run.",
        choices=("on", "off", "unchanged"),
    ),
    "pin_cpu": ParamDecl("pin_cpu", "integer", "", "Pin the program to this CPU.", 0, 4095),
    "drop_caches": ParamDecl("drop_caches", "boolean", "", "Drop the page cache first."),
    "timeout": ParamDecl(
        "timeout", "number", "", "Stop the job after this many seconds.", 1, 7 * 24 * 3600
    ),
}
# A directory under test: absolute, plain characters only (no '..' segment either).
TARGET_DIR = re.compile(r"/[A-Za-z0-9._+/-]{0,4095}")
# A git revision: a hash, branch, tag or HEAD~3; no leading dash, whitespace or '..'.
LIBXAC_REVISION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/^~-]{0,199}")


def is_revision_name(value: object) -> bool:
    """Whether ``value`` has the form of a git revision a job may ask for."""
    return (
        isinstance(value, str)
        and bool(LIBXAC_REVISION.fullmatch(value))
        and ".." not in value
        and "@{" not in value
    )


def check_agent_factor(name: str, value: Any) -> None:
    """Refuse a factor value of the wrong form with ParamError."""
    if name == "target_dir":
        if (
            not isinstance(value, str)
            or not TARGET_DIR.fullmatch(value)
            or ".." in value.split("/")
        ):
            raise ParamError(
                "Parameter 'target_dir' must be an absolute path of plain characters "
                f"without '..', not {show(value)}."
            )
        return
    if name == "libxac_revision":
        if not is_revision_name(value):
            raise ParamError(
                "Parameter 'libxac_revision' must be a git revision (a commit hash, branch or "
                f"tag of letters, digits and ._/^~-, without '..'), not {show(value)}."
            )
        return
    check_param(AGENT_FACTORS[name], value)


def check_job_params(suite: Suite, params: object) -> dict[str, Any]:
    """A job's params as the server queues them: factors by form, the rest by the suite."""
    if not isinstance(params, dict):
        raise ParamError(f"Params must be a JSON object, not {type(params).__name__}.")
    for name, value in params.items():
        if name in AGENT_FACTOR_NAMES:
            check_agent_factor(name, value)
    suite.validate({k: v for k, v in params.items() if k not in AGENT_FACTOR_NAMES})
    return params
