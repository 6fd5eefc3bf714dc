"""What makes results one series: machine × suite × benchmark × system × metric × params.

A series' params are a result's matched params (its own, its job's factors,
the write cache with its scope) less the ``observed`` ones, which record what
the kernel allowed rather than what was asked (docs/suites.md, "Roles").  The
history page (``/history``) draws one series over time across the machine's
epochs; its address is :func:`history_url`.
"""

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from xaclab_contracts.roles import ParamRoles

from xaclab_server.models import Result


@dataclass(frozen=True, slots=True)
class SeriesKey:
    machine_id: int
    suite: str
    benchmark: str
    sut: str
    metric: str
    unit: str
    params: str  # canonical JSON: sorted keys, no spaces

    @property
    def params_dict(self) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads(self.params)
        return loaded


def canonical(params: dict[str, Any]) -> str:
    return json.dumps(params, sort_keys=True, separators=(",", ":"))


def series_params(suite: str, params: dict[str, Any], roles: ParamRoles) -> dict[str, Any]:
    return {k: v for k, v in params.items() if roles.role(suite, k) != "observed"}


def series_key(result: Result, params: dict[str, Any], roles: ParamRoles) -> SeriesKey:
    """The series of ``result``, whose matched params are ``params``."""
    return SeriesKey(
        machine_id=result.machine_id,
        suite=result.suite,
        benchmark=result.benchmark,
        sut=result.sut,
        metric=result.metric,
        unit=result.unit,
        params=canonical(series_params(result.suite, params, roles)),
    )


def history_url(key: SeriesKey) -> str:
    query = {
        "machine_id": key.machine_id,
        "suite": key.suite,
        "benchmark": key.benchmark,
        "sut": key.sut,
        "metric": key.metric,
        "unit": key.unit,
        "params": key.params,
    }
    return "/history?" + urlencode(query)
