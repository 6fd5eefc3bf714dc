"""Agent-level factors: job parameters the agent applies itself, not the program.

``write_cache``, ``pin_cpu``, ``drop_caches``, ``target_dir``, ``timeout`` and
``libxac_revision`` (built by :mod:`.revisions`) are taken out of a job's params
before the suite declaration checks the rest and builds the argument vector
(docs/suites.md).  Each is checked for its form
by :func:`xaclab_contracts.factors.check_agent_factor` (as the server checked
it at queue time), then here for what only this machine knows: the CPUs the
agent may use and its allowed directories.  A bad one refuses the job before
anything runs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xaclab_contracts.factors import check_agent_factor
from xaclab_contracts.suites import AGENT_FACTOR_NAMES

from xaclab_agent.errors import ParamError

FACTORS = AGENT_FACTOR_NAMES


@dataclass(frozen=True)
class Factors:
    write_cache: str = "unchanged"
    pin_cpu: int | None = None
    drop_caches: bool = False
    target_dir: Path | None = None
    timeout: float | None = None
    libxac_revision: str | None = None


def split_factors(
    params: object, *, allowed_dirs: tuple[Path, ...], default_dir: Path
) -> tuple[Factors, dict[str, Any]]:
    """(the agent-level factors, the remaining params for the suite declaration)."""
    if not isinstance(params, dict):
        raise ParamError(f"Params must be a JSON object, not {type(params).__name__}.")
    for name in FACTORS:
        if name in params:
            check_agent_factor(name, params[name])
    rest = {k: v for k, v in params.items() if k not in FACTORS}
    pin_cpu = params.get("pin_cpu")
    if pin_cpu is not None:
        usable = sorted(os.sched_getaffinity(0))
        if pin_cpu not in usable:
            raise ParamError(
                f"Parameter 'pin_cpu' must be a CPU number this agent may use ({usable}), "
                f"not {pin_cpu!r}."
            )
    timeout = params.get("timeout")
    factors = Factors(
        write_cache=str(params.get("write_cache", "unchanged")),
        pin_cpu=pin_cpu,
        drop_caches=params.get("drop_caches", False),
        target_dir=_target_dir(params.get("target_dir"), allowed_dirs, default_dir),
        timeout=None if timeout is None else float(timeout),
        libxac_revision=params.get("libxac_revision"),
    )
    return factors, rest


def _target_dir(value: object, allowed_dirs: tuple[Path, ...], default_dir: Path) -> Path:
    """The directory under test: ``value`` (of a checked form) inside the allow-list, or the
    default."""
    if value is None:
        return default_dir
    assert isinstance(value, str)
    real = Path(os.path.realpath(value))
    allowed = [Path(os.path.realpath(d)) for d in (default_dir, *allowed_dirs)]
    if not any(real == a or a in real.parents for a in allowed):
        shown = ", ".join(str(a) for a in allowed)
        raise ParamError(f"target_dir {value!r} is outside the agent's allowed_dirs ({shown})")
    if not real.is_dir():
        raise ParamError(f"target_dir {value!r} is not an existing directory")
    return real
