"""Agent-level factors: job parameters the agent applies itself, not the program.

``write_cache``, ``pin_cpu``, ``drop_caches``, ``target_dir`` and ``timeout``
are taken out of a job's params before the suite declaration checks the rest
and builds the argument vector (docs/suites.md).  Each is validated here, and
a bad one refuses the job before anything runs.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xaclab_agent.errors import ParamError

FACTORS = ("write_cache", "pin_cpu", "drop_caches", "target_dir", "timeout")
WRITE_CACHE_CHOICES = ("on", "off", "unchanged")
MAX_TIMEOUT = 7 * 24 * 3600
# A target directory: absolute, plain characters only, no '..' segment.
SAFE_PATH = re.compile(r"/[A-Za-z0-9._+/-]{0,4095}")


@dataclass(frozen=True)
class Factors:
    write_cache: str = "unchanged"
    pin_cpu: int | None = None
    drop_caches: bool = False
    target_dir: Path | None = None
    timeout: float | None = None


def split_factors(
    params: object, *, allowed_dirs: tuple[Path, ...], default_dir: Path
) -> tuple[Factors, dict[str, Any]]:
    """(the agent-level factors, the remaining params for the suite declaration)."""
    if not isinstance(params, dict):
        raise ParamError(f"params must be a JSON object, not {type(params).__name__}")
    rest = {k: v for k, v in params.items() if k not in FACTORS}
    write_cache = params.get("write_cache", "unchanged")
    if write_cache not in WRITE_CACHE_CHOICES:
        raise ParamError(
            f"parameter 'write_cache' must be one of {', '.join(WRITE_CACHE_CHOICES)}, "
            f"not {_show(write_cache)}"
        )
    pin_cpu = params.get("pin_cpu")
    if pin_cpu is not None:
        usable = sorted(os.sched_getaffinity(0))
        if isinstance(pin_cpu, bool) or not isinstance(pin_cpu, int) or pin_cpu not in usable:
            raise ParamError(
                f"parameter 'pin_cpu' must be a CPU number this agent may use ({usable}), "
                f"not {_show(pin_cpu)}"
            )
    drop_caches = params.get("drop_caches", False)
    if not isinstance(drop_caches, bool):
        raise ParamError(f"parameter 'drop_caches' must be true or false, not {_show(drop_caches)}")
    timeout = params.get("timeout")
    if timeout is not None and (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not 1 <= timeout <= MAX_TIMEOUT
    ):
        raise ParamError(
            f"parameter 'timeout' must be 1-{MAX_TIMEOUT} seconds, not {_show(timeout)}"
        )
    target = check_target_dir(params.get("target_dir"), allowed_dirs, default_dir)
    factors = Factors(
        write_cache=str(write_cache),
        pin_cpu=pin_cpu,
        drop_caches=drop_caches,
        target_dir=target,
        timeout=None if timeout is None else float(timeout),
    )
    return factors, rest


def check_target_dir(value: object, allowed_dirs: tuple[Path, ...], default_dir: Path) -> Path:
    if value is None:
        return default_dir
    if not isinstance(value, str) or not SAFE_PATH.fullmatch(value):
        raise ParamError(
            f"parameter 'target_dir' {_show(value)} must be an absolute path of plain characters "
            "(no shell metacharacters, whitespace or control characters)"
        )
    if ".." in value.split("/"):
        raise ParamError(f"parameter 'target_dir' {value!r} must not contain '..'")
    real = Path(os.path.realpath(value))
    allowed = [Path(os.path.realpath(d)) for d in (default_dir, *allowed_dirs)]
    if not any(real == a or a in real.parents for a in allowed):
        shown = ", ".join(str(a) for a in allowed)
        raise ParamError(f"target_dir {value!r} is outside the agent's allowed_dirs ({shown})")
    if not real.is_dir():
        raise ParamError(f"target_dir {value!r} is not an existing directory")
    return real


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
