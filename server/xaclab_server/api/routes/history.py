"""User API: one series over time (the history page's data)."""

import json
from typing import Annotated

from fastapi import APIRouter, HTTPException, Query
from sqlalchemy.orm import Session
from xaclab_contracts.roles import ParamRoles

from xaclab_server.api.deps import ParamRolesDep, SessionDep
from xaclab_server.schemas.history import HistoryOut
from xaclab_server.services.history import SeriesUnknown, series_history
from xaclab_server.services.series_keys import SeriesKey, canonical

router = APIRouter(prefix="/api/v1", tags=["user"])

Name = Annotated[str, Query(min_length=1, max_length=100)]


def series_key_of(
    *, machine_id: int, suite: str, benchmark: str, sut: str, metric: str, unit: str, params: str
) -> SeriesKey:
    """The series a query names; ValueError with a sentence when ``params`` is no JSON object."""
    try:
        loaded = json.loads(params)
    except ValueError:
        raise ValueError("params must be a JSON object of the series' parameters.") from None
    if not isinstance(loaded, dict):
        raise ValueError("params must be a JSON object of the series' parameters.")
    return SeriesKey(machine_id, suite, benchmark, sut, metric, unit, canonical(loaded))


def history_of(session: Session, roles: ParamRoles, key: SeriesKey) -> HistoryOut:
    try:
        return series_history(session=session, key=key, roles=roles)
    except SeriesUnknown as exc:
        raise HTTPException(404, str(exc)) from exc


@router.get("/history", responses={404: {"description": "No machine of that id"}})
def read_history(
    session: SessionDep,
    roles: ParamRolesDep,
    machine_id: int,
    suite: Name,
    benchmark: Name,
    sut: Name,
    metric: Name,
    unit: Name,
    params: Annotated[str, Query(max_length=4000)] = "{}",
) -> HistoryOut:
    """One series over time: every result of the machine with this suite, benchmark, system,
    metric, unit and params (less the observed ones), oldest first, across the machine's
    epochs, each with the 95% interval of its median and its validity flags; and the series'
    change points."""
    try:
        key = series_key_of(
            machine_id=machine_id,
            suite=suite,
            benchmark=benchmark,
            sut=sut,
            metric=metric,
            unit=unit,
            params=params,
        )
    except ValueError as exc:
        raise HTTPException(422, str(exc)) from exc
    return history_of(session, roles, key)
