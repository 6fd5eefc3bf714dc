"""The agent API, ``/api/agent/v1`` (docs/agent-protocol.md)."""

import asyncio
import json
import time
from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Depends, HTTPException, Query, Request, Response, status
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError
from sqlalchemy.orm import Session, sessionmaker
from xaclab_contracts.results import find_unstorable

from xaclab_server.api.deps import (
    CurrentAgent,
    NotifierDep,
    ParamRolesDep,
    ResultValidatorDep,
    SessionDep,
    SessionFactoryDep,
    SettingsDep,
    ThrottleDep,
    WatcherDep,
    client_address,
)
from xaclab_server.core.config import Settings
from xaclab_server.core.metrics import THROTTLED
from xaclab_server.core.openapi import CONFLICT, RAW_BODY
from xaclab_server.models import Job
from xaclab_server.schemas.agent import (
    ClaimOut,
    FinishIn,
    JobStateOut,
    LogIn,
    LogOut,
    ProgressIn,
    RegisterIn,
    RegisterOut,
    UploadIn,
    UploadOut,
)
from xaclab_server.services import jobs, registrations, results
from xaclab_server.services.machines import RegistrationRefused

router = APIRouter(prefix="/api/agent/v1", tags=["agent"])

MAX_FINGERPRINT_BYTES = 64 * 1024
MAX_CLAIM_WAIT = 60.0
UNPROCESSABLE = 422  # named differently across Starlette versions


@router.post(
    "/register",
    status_code=status.HTTP_201_CREATED,
    responses={
        202: {"model": RegisterOut, "description": "Registered; waits for approval."},
        401: {"description": "The registration token is not valid."},
        429: {"description": "Too many wrong registration tokens from this address."},
        **CONFLICT,
    },
)
def register(
    body: RegisterIn,
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    throttle: ThrottleDep,
    response: Response,
) -> RegisterOut:
    """With the registration token: approved at once.  Without one: pending an admin's approval.
    Wrong tokens are throttled per client address (429 with Retry-After)."""
    size = len(json.dumps(body.fingerprint, separators=(",", ":")).encode("utf-8"))
    if size > MAX_FINGERPRINT_BYTES:
        raise HTTPException(
            UNPROCESSABLE,
            f"The fingerprint is {size} bytes; at most {MAX_FINGERPRINT_BYTES} are accepted.",
        )
    bad = find_unstorable(body.fingerprint)
    if bad is not None:
        raise HTTPException(
            UNPROCESSABLE,
            f"The fingerprint has a non-finite number or a NUL character at {bad}.",
        )
    try:
        machine, token = registrations.register(
            session=session,
            throttle=throttle,
            expected_token=settings.registration_token.get_secret_value(),
            registration=registrations.Registration(
                name=body.name,
                fingerprint=body.fingerprint,
                token=body.registration_token,
                address=client_address(request),
            ),
        )
    except registrations.Throttled as refusal:
        THROTTLED.labels(kind="registration").inc()
        raise HTTPException(
            status.HTTP_429_TOO_MANY_REQUESTS,
            "Too many registrations with a wrong registration token from this address; "
            f"try again in {refusal.retry_after} seconds.",
            headers={"Retry-After": str(refusal.retry_after)},
        ) from None
    except registrations.WrongToken:
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED, "The registration token is not valid."
        ) from None
    except RegistrationRefused as exc:
        raise HTTPException(status.HTTP_409_CONFLICT, str(exc)) from exc
    if not machine.approved:
        response.status_code = status.HTTP_202_ACCEPTED
    return RegisterOut(machine_id=machine.id, agent_token=token, approved=machine.approved)


@router.post(
    "/jobs/claim",
    responses={200: {"model": ClaimOut}, 204: {"description": "No job arrived within wait."}},
)
async def claim(
    agent: CurrentAgent,
    factory: SessionFactoryDep,
    settings: SettingsDep,
    notifier: NotifierDep,
    wait: Annotated[float, Query(ge=0, le=MAX_CLAIM_WAIT)] = 25,
) -> Response:
    """Long poll: no database connection is held while waiting.

    One claim now; then the claim sleeps until this process queues a job or
    the shared poller (services/notifier.py) sees one for this machine.
    """
    deadline = time.monotonic() + wait

    interval = settings.claim_poll_seconds

    def look(machine_ids: set[int]) -> set[int]:
        sweep = notifier.sweep_due(interval)
        with factory() as session:
            return jobs.machines_with_queued_jobs(
                session=session,
                machine_ids=machine_ids,
                lease_seconds=settings.lease_seconds if sweep else None,
                max_attempts=settings.lease_max_attempts,
            )

    with notifier.subscribe(agent.id) as woken:
        # A re-poll right after a look that found nothing for this machine
        # waits without asking the database (JobNotifier.known_idle).
        skip = wait > 0 and notifier.known_idle(agent.id, interval)
        while True:
            woken.clear()
            if not skip:
                sweep = notifier.sweep_due(interval)
                job = await run_in_threadpool(_claim_once, factory, agent.id, settings, sweep)
                if job is not None:
                    return Response(job.model_dump_json(), media_type="application/json")
            skip = False
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return Response(status_code=status.HTTP_204_NO_CONTENT)
            notifier.ensure_poller(look, interval)
            try:
                await asyncio.wait_for(woken.wait(), timeout=remaining)
            except TimeoutError:
                return Response(status_code=status.HTTP_204_NO_CONTENT)


def _claim_once(
    factory: sessionmaker[Session], machine_id: int, settings: Settings, sweep: bool
) -> ClaimOut | None:
    """Claim once; sweep expired leases first when ``sweep`` (at most once per poll interval
    per process: see JobNotifier.sweep_due)."""
    with factory() as session:
        job = jobs.claim_job(
            session=session,
            machine_id=machine_id,
            lease_seconds=settings.lease_seconds if sweep else None,
            max_attempts=settings.lease_max_attempts,
        )
        if job is None:
            return None
        return ClaimOut(
            job_id=job.id,
            run_id=job.run_id,
            suite=job.suite,
            profile=job.profile,
            params=job.params,
        )


def _agent_job(session: SessionDep, agent: CurrentAgent, job_id: int) -> Job:
    try:
        return jobs.get_agent_job(session=session, machine=agent, job_id=job_id)
    except jobs.JobNotFound as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, str(exc)) from exc
    except jobs.JobConflict as exc:
        raise HTTPException(status.HTTP_409_CONFLICT, str(exc)) from exc


def _state(job: Job) -> JobStateOut:
    return JobStateOut(
        job_id=job.id,
        status=job.status,
        progress=job.progress,
        message=job.message,
        cancel=job.cancel_requested,
    )


@router.post("/jobs/{job_id}/heartbeat", responses=CONFLICT)
def heartbeat(job_id: int, session: SessionDep, agent: CurrentAgent) -> JobStateOut:
    job = _agent_job(session, agent, job_id)
    try:
        jobs.heartbeat(session=session, job=job)
    except jobs.JobConflict as exc:
        raise HTTPException(status.HTTP_409_CONFLICT, str(exc)) from exc
    return _state(job)


@router.post("/jobs/{job_id}/logs", responses=CONFLICT)
def logs(
    job_id: int, body: LogIn, session: SessionDep, agent: CurrentAgent, response: Response
) -> LogOut:
    job = _agent_job(session, agent, job_id)
    try:
        stored = jobs.record_log(
            session=session, job=job, seq=body.seq, stream=body.stream, text=body.text
        )
    except jobs.JobConflict as exc:
        raise HTTPException(status.HTTP_409_CONFLICT, str(exc)) from exc
    response.status_code = status.HTTP_201_CREATED if stored else status.HTTP_200_OK
    return LogOut(stored=stored)


@router.post("/jobs/{job_id}/progress", responses=CONFLICT)
def progress(
    job_id: int, body: ProgressIn, session: SessionDep, agent: CurrentAgent
) -> JobStateOut:
    job = _agent_job(session, agent, job_id)
    try:
        jobs.record_progress(session=session, job=job, fraction=body.fraction, message=body.message)
    except jobs.JobConflict as exc:
        raise HTTPException(status.HTTP_409_CONFLICT, str(exc)) from exc
    return _state(job)


def _parse_upload(raw: bytes) -> UploadIn:
    """orjson first (several times faster on a million samples); the standard decoder second,
    which also reads NaN and Infinity so that the result checks can name where they are."""
    data: Any
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise RequestValidationError(
                [{"type": "json_invalid", "loc": ("body",), "msg": f"JSON decode error: {exc}"}]
            ) from None
    try:
        return UploadIn.model_validate(data)
    except ValidationError as exc:
        errors = [
            {**error, "loc": ("body", *error["loc"])}
            for error in exc.errors(include_url=False, include_context=False)
        ]
        raise RequestValidationError(errors) from None


async def upload_body(request: Request) -> UploadIn:
    """The body of an upload, parsed off the event loop (a big one takes tens of ms)."""
    return await run_in_threadpool(_parse_upload, await request.body())


@router.post(
    "/jobs/{job_id}/results",
    status_code=status.HTTP_201_CREATED,
    responses={
        200: {"model": UploadOut, "description": "A duplicate upload; nothing stored."},
        **CONFLICT,
        **RAW_BODY,
    },
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": UploadIn.model_json_schema()}},
        }
    },
)
def upload_results(
    job_id: int,
    body: Annotated[UploadIn, Depends(upload_body)],
    session: SessionDep,
    agent: CurrentAgent,
    validator: ResultValidatorDep,
    roles: ParamRolesDep,
    watcher: WatcherDep,
    response: Response,
) -> UploadOut:
    job = _agent_job(session, agent, job_id)
    if job.status == "queued":
        raise HTTPException(
            status.HTTP_409_CONFLICT, f"Job {job.id} is queued; claim it before uploading results."
        )
    try:
        samples = results.check_results(validator=validator, results=body.results, job=job)
        outcome = results.store_upload(
            session=session,
            job=job,
            upload_id=str(body.upload_id),
            results=body.results,
            samples=samples,
            roles=roles,
        )
    except results.ResultError as exc:
        raise HTTPException(UNPROCESSABLE, str(exc)) from exc
    except results.UploadConflict as exc:
        raise HTTPException(status.HTTP_409_CONFLICT, str(exc)) from exc
    if outcome.duplicate:
        response.status_code = status.HTTP_200_OK
    else:
        watcher.poke()  # change-point detection runs after the upload, never within it
    return UploadOut(stored=outcome.stored, duplicate=outcome.duplicate)


@router.post("/jobs/{job_id}/finish", responses=CONFLICT)
def finish(job_id: int, body: FinishIn, session: SessionDep, agent: CurrentAgent) -> JobStateOut:
    job = _agent_job(session, agent, job_id)
    try:
        jobs.finish_job(session=session, job=job, status=body.status, message=body.message)
    except jobs.JobConflict as exc:
        raise HTTPException(status.HTTP_409_CONFLICT, str(exc)) from exc
    return _state(job)
