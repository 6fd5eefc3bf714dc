"""Web pages: machines, queue, run form, run matrices, run pages, comparisons,
schedules, API tokens, users and the login.  Every asset comes from /static.

The run form is built from the suite declarations; its fields are named
``<suite>.profile`` and ``<suite>.param.<name>`` so that only the chosen
suite's fields count, with or without JavaScript.

Every form that changes something carries the session's CSRF token
(synchronizer token, field ``csrf_token``) and needs a logged-in user of the
right role; the login form is guarded by a double-submit cookie instead,
since there is no session yet.  Pages are readable without a login only
while ``XACLAB_ANONYMOUS_READ`` is true.
"""

import functools
import inspect
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from xaclab_server.api.deps import (
    NotifierDep,
    Principal,
    PrincipalDep,
    SessionDep,
    SessionFactoryDep,
    SettingsDep,
    SuitesDep,
    get_principal,
)
from xaclab_server.core.config import Settings
from xaclab_server.core.cookies import set_session_cookie
from xaclab_server.core.headers import CSP
from xaclab_server.core.paths import PACKAGE_DIR
from xaclab_server.core.security import (
    CSRF_FIELD,
    LOGIN_CSRF_COOKIE,
    SESSION_COOKIE,
    new_token,
    same_secret,
)
from xaclab_server.models import Job, Machine, Run, Schedule, User
from xaclab_server.models.base import utcnow
from xaclab_server.models.job import TERMINAL_STATES
from xaclab_server.models.user import ROLES, role_at_least
from xaclab_server.schemas.matrix import MatrixIn
from xaclab_server.schemas.run import RunIn
from xaclab_server.schemas.schedule import ScheduleIn
from xaclab_server.services import accounts, jobs, matrices, scheduler
from xaclab_server.services.compare_runs import comparison_out, run_comparison
from xaclab_server.services.comparisons import ComparisonError
from xaclab_server.services.cron import CronError
from xaclab_server.services.machines import approve_machine, is_online, rotate_agent_token
from xaclab_server.services.notifier import JobNotifier
from xaclab_server.services.run_queue import RunRefused, queue_run
from xaclab_server.services.suites import AGENT_FACTORS, ParamError, Suite, coerce_form_value

router = APIRouter(include_in_schema=False)
templates = Jinja2Templates(directory=PACKAGE_DIR / "templates")

RECENT_RUNS = 20
MATRIX_FACTORS = ("write_cache", "durability", "procs", "advisory")


class PageRefused(Exception):
    """Raised by a page handler to answer with a redirect to the login or a 403 page."""

    def __init__(self, response: Response) -> None:
        self.response = response


def _page(
    request: Request,
    name: str,
    context: dict[str, Any],
    status: int = 200,
    principal: Principal | None = None,
) -> Response:
    principal = principal or getattr(request.state, "principal", None)
    context = {
        "me": principal.user if principal else None,
        "csrf_token": principal.csrf_token if principal else None,
        "anonymous_read": request.app.state.settings.anonymous_read,
        **context,
    }
    response = templates.TemplateResponse(request, name, context, status_code=status)
    response.headers["Content-Security-Policy"] = CSP
    return response


def _login_redirect(request: Request) -> Response:
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return RedirectResponse(f"/login?next={quote(target, safe='')}", status_code=303)


def _reader(request: Request, principal: Principal, settings: Settings) -> Principal:
    request.state.principal = principal
    if principal.user is None and not settings.anonymous_read:
        raise PageRefused(_login_redirect(request))
    return principal


def _writer(request: Request, principal: Principal, fields: dict[str, str], role: str) -> User:
    """The user behind a form post, who must have ``role`` and echo the CSRF token."""
    request.state.principal = principal
    if principal.user is None or principal.via != "session":
        raise PageRefused(_login_redirect(request))
    if not same_secret(fields.get(CSRF_FIELD), principal.csrf_token):
        raise PageRefused(
            _page(request, "refused.html", {"why": "The form was stale; reload it."}, 403)
        )
    if not role_at_least(principal.user.role, role):
        why = f"This needs the {role} role; you are a {principal.user.role}."
        raise PageRefused(_page(request, "refused.html", {"why": why}, 403))
    return principal.user


async def _form(request: Request) -> dict[str, str]:
    form = await request.form()
    return {key: value for key, value in form.items() if isinstance(value, str)}


async def _form_lists(request: Request) -> dict[str, list[str]]:
    form = await request.form()
    lists: dict[str, list[str]] = {}
    for key, value in form.multi_items():
        if isinstance(value, str):
            lists.setdefault(key, []).append(value)
    return lists


def refusals(handler: Any) -> Any:
    """Turn PageRefused into its response (a decorator for the page handlers)."""
    if inspect.iscoroutinefunction(handler):

        @functools.wraps(handler)
        async def async_wrapper(*args: Any, **kwargs: Any) -> Response:
            try:
                response: Response = await handler(*args, **kwargs)
            except PageRefused as refused:
                return refused.response
            return response

        return async_wrapper

    @functools.wraps(handler)
    def wrapper(*args: Any, **kwargs: Any) -> Response:
        try:
            response: Response = handler(*args, **kwargs)
        except PageRefused as refused:
            return refused.response
        return response

    return wrapper


# ---- login ---------------------------------------------------------------------------------


@router.get("/login", response_class=HTMLResponse)
def login_page(request: Request, next: str = "/") -> Response:
    token = new_token()
    response = _page(
        request,
        "login.html",
        {"login_csrf": token, "next": _safe_next(next), "error": None},
        principal=Principal(user=None, via="anonymous"),
    )
    response.set_cookie(LOGIN_CSRF_COOKIE, token, httponly=True, samesite="strict", path="/login")
    return response


def _safe_next(target: str) -> str:
    # Only paths on this server: never '//host' or a full URL.
    if not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    return target


@router.post("/login", response_class=HTMLResponse)
async def login_submit(
    request: Request, factory: SessionFactoryDep, settings: SettingsDep
) -> Response:
    fields = await _form(request)
    return await run_in_threadpool(_login, request, factory, settings, fields)


def _login(
    request: Request, factory: sessionmaker[Session], settings: Settings, fields: dict[str, str]
) -> Response:
    anonymous = Principal(user=None, via="anonymous")
    target = _safe_next(fields.get("next", "/"))
    if not same_secret(fields.get(CSRF_FIELD), request.cookies.get(LOGIN_CSRF_COOKIE)):
        return _page(
            request,
            "login.html",
            {"login_csrf": "", "next": target, "error": "The form was stale; reload the page."},
            403,
            anonymous,
        )
    with factory() as session:
        user = accounts.authenticate(
            session=session,
            username=fields.get("username", "")[:64],
            password=fields.get("password", "")[:1024],
        )
        if user is None:
            token = new_token()
            response = _page(
                request,
                "login.html",
                {
                    "login_csrf": token,
                    "next": target,
                    "error": "The username or password is wrong.",
                },
                401,
                anonymous,
            )
            response.set_cookie(
                LOGIN_CSRF_COOKIE, token, httponly=True, samesite="strict", path="/login"
            )
            return response
        new = accounts.start_session(session=session, user=user, hours=settings.session_hours)
    response = RedirectResponse(target, status_code=303)
    set_session_cookie(response, settings, new.token)
    response.delete_cookie(LOGIN_CSRF_COOKIE, path="/login")
    return response


@router.post("/logout")
async def logout_submit(request: Request, factory: SessionFactoryDep) -> Response:
    fields = await _form(request)
    cookie = request.cookies.get(SESSION_COOKIE)

    def end() -> None:
        with factory() as session:
            found = accounts.user_for_session(session=session, token=cookie) if cookie else None
            if found and same_secret(fields.get(CSRF_FIELD), found[1].csrf_token):
                accounts.end_session(session=session, token=cookie or "")

    await run_in_threadpool(end)
    response = RedirectResponse("/", status_code=303)
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response


# ---- machines ------------------------------------------------------------------------------


@router.get("/", response_class=HTMLResponse)
@router.get("/machines", response_class=HTMLResponse)
@refusals
def machines_page(
    request: Request, session: SessionDep, settings: SettingsDep, principal: PrincipalDep
) -> Response:
    _reader(request, principal, settings)
    now = utcnow()
    machines = [
        (m, is_online(m, now=now, window_seconds=settings.machine_online_seconds))
        for m in session.scalars(select(Machine).order_by(Machine.name))
    ]
    runs = session.scalars(select(Run).order_by(Run.id.desc()).limit(RECENT_RUNS)).all()
    names = {m.id: m.name for m, _online in machines}
    return _page(request, "machines.html", {"machines": machines, "runs": runs, "names": names})


@router.post("/machines/{machine_id}/{action}", response_class=HTMLResponse)
async def machine_action(
    request: Request, machine_id: int, action: str, factory: SessionFactoryDep
) -> Response:
    fields = await _form(request)

    @refusals
    def act() -> Response:
        with factory() as session:
            user = _writer(request, get_principal(request, session), fields, "admin")
            machine = session.get(Machine, machine_id)
            if machine is None or action not in ("approve", "rotate-token"):
                return _page(request, "not_found.html", {"what": f"Machine {machine_id}"}, 404)
            if action == "approve":
                approve_machine(session=session, machine=machine)
                return RedirectResponse("/machines", status_code=303)
            token = rotate_agent_token(session=session, machine=machine)
            return _page(
                request,
                "secret.html",
                {
                    "title": f"New agent token for {machine.name}",
                    "secret": token,
                    "help": "Put it in the agent's configuration; the old token no longer works. "
                    "It is shown only this once.",
                    "user": user,
                },
            )

    response: Response = await run_in_threadpool(act)
    return response


# ---- run form and matrices ---------------------------------------------------------------


@router.get("/runs/new", response_class=HTMLResponse)
@refusals
def new_run_page(
    request: Request,
    session: SessionDep,
    suites: SuitesDep,
    settings: SettingsDep,
    principal: PrincipalDep,
    machine_id: int | None = None,
) -> Response:
    _reader(request, principal, settings)
    return _form_page(request, session, suites, chosen={"machine_id": machine_id})


def _form_page(
    request: Request,
    session: Session,
    suites: dict[str, Suite],
    *,
    chosen: dict[str, Any],
    error: str | None = None,
) -> Response:
    machines = session.scalars(select(Machine).order_by(Machine.name)).all()
    return _page(
        request,
        "run_new.html",
        {"machines": machines, "suites": list(suites.values()), "chosen": chosen, "error": error},
        status=422 if error else 200,
    )


@router.post("/runs/new", response_class=HTMLResponse)
async def submit_run(
    request: Request,
    factory: SessionFactoryDep,
    suites: SuitesDep,
    notifier: NotifierDep,
) -> Response:
    fields = await _form(request)
    response: Response = await run_in_threadpool(
        _submit_run, request, factory, suites, notifier, fields
    )
    return response


@refusals
def _submit_run(
    request: Request,
    factory: sessionmaker[Session],
    suites: dict[str, Suite],
    notifier: JobNotifier,
    fields: dict[str, str],
) -> Response:
    suite_name = fields.get("suite", "")
    chosen: dict[str, Any] = {"suite": suite_name, "fields": fields}
    with factory() as session:
        user = _writer(request, get_principal(request, session), fields, "operator")
        try:
            machine_id = int(fields.get("machine_id", ""))
        except ValueError:
            return _form_page(request, session, suites, chosen=chosen, error="Choose a machine.")
        chosen["machine_id"] = machine_id
        suite = suites.get(suite_name)
        if suite is None:
            return _form_page(
                request, session, suites, chosen=chosen, error=f"Unknown suite {suite_name!r}."
            )
        params: dict[str, Any] = {}
        try:
            for name, decl in suite.params.items():
                raw = fields.get(f"{suite.name}.param.{name}", "")
                # An unticked box is not given: a boolean false is never passed (docs/suites.md).
                if raw.strip():
                    params[name] = coerce_form_value(decl, raw)
        except ParamError as exc:
            return _form_page(request, session, suites, chosen=chosen, error=str(exc))
        body = RunIn(
            machine_id=machine_id,
            suite=suite.name,
            profile=fields.get(f"{suite.name}.profile", ""),
            params=params,
        )
        try:
            run = queue_run(
                session=session, suites=suites, notifier=notifier, request=body, user_id=user.id
            )
        except RunRefused as exc:
            return _form_page(request, session, suites, chosen=chosen, error=str(exc))
        return RedirectResponse(f"/runs/{run.id}", status_code=303)


@router.get("/matrices/new", response_class=HTMLResponse)
@refusals
def new_matrix_page(
    request: Request,
    session: SessionDep,
    suites: SuitesDep,
    settings: SettingsDep,
    principal: PrincipalDep,
) -> Response:
    _reader(request, principal, settings)
    return _matrix_page(request, session, suites, chosen={}, error=None)


def _matrix_page(
    request: Request,
    session: Session,
    suites: dict[str, Suite],
    *,
    chosen: dict[str, list[str]],
    error: str | None,
) -> Response:
    machines = session.scalars(select(Machine).order_by(Machine.name)).all()
    profiles = sorted({p for s in suites.values() for p in s.profiles})
    return _page(
        request,
        "matrix_new.html",
        {
            "machines": machines,
            "suites": list(suites.values()),
            "profiles": profiles,
            "write_cache": AGENT_FACTORS["write_cache"].choices,
            "factors": MATRIX_FACTORS,
            "chosen": chosen,
            "error": error,
        },
        status=422 if error else 200,
    )


def _factor_value(text: str) -> Any:
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    try:
        return int(lowered)
    except ValueError:
        pass
    try:
        return float(lowered)
    except ValueError:
        return text.strip()


def matrix_from_form(lists: dict[str, list[str]]) -> MatrixIn:
    """The matrix a form asks for; ValueError with a sentence if it is incomplete."""
    try:
        machine_ids = [int(v) for v in lists.get("machine_ids", [])]
    except ValueError:
        raise ValueError("Choose machines from the list.") from None
    factors: dict[str, list[Any]] = {}
    cache = lists.get("factor.write_cache", [])
    if cache:
        factors["write_cache"] = cache
    for name in MATRIX_FACTORS[1:]:
        text = (lists.get(f"factor.{name}") or [""])[0]
        values = [_factor_value(v) for v in text.split(",") if v.strip()]
        if values:
            factors[name] = values
    if not machine_ids or not lists.get("suites"):
        raise ValueError("Choose at least one machine and one suite.")
    return MatrixIn(
        machine_ids=machine_ids,
        suites=lists.get("suites", []),
        profiles=lists.get("profiles") or ["quick"],
        factors=factors,
    )


@router.post("/matrices/new", response_class=HTMLResponse)
async def submit_matrix(
    request: Request, factory: SessionFactoryDep, suites: SuitesDep, notifier: NotifierDep
) -> Response:
    lists = await _form_lists(request)
    fields = {k: v[0] for k, v in lists.items()}

    @refusals
    def submit() -> Response:
        with factory() as session:
            user = _writer(request, get_principal(request, session), fields, "operator")
            try:
                spec = matrix_from_form(lists)
                cron = fields.get("cron", "").strip()
                if cron:
                    body = ScheduleIn(
                        name=fields.get("name", "").strip() or cron, cron=cron, matrix=spec
                    )
                    scheduler.create_schedule(session=session, suites=suites, body=body, user=user)
                    return RedirectResponse("/schedules", status_code=303)
                matrix, runs = matrices.queue_matrix(
                    session=session, suites=suites, spec=spec, user_id=user.id
                )
            except (ValueError, ParamError, CronError) as exc:
                return _matrix_page(request, session, suites, chosen=lists, error=_sentence(exc))
            notifier.notify()
            return RedirectResponse(f"/queue?matrix={matrix.id}", status_code=303)

    response: Response = await run_in_threadpool(submit)
    return response


def _sentence(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        first = errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        return f"{where}: {first.get('msg', 'invalid')}."
    return str(exc)


# ---- queue and runs ----------------------------------------------------------------------


@router.get("/queue", response_class=HTMLResponse)
@refusals
def queue_page(
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    principal: PrincipalDep,
    matrix: int | None = None,
) -> Response:
    _reader(request, principal, settings)
    query = select(Run).order_by(Run.id.desc()).limit(100)
    if matrix is not None:
        query = select(Run).where(Run.matrix_id == matrix).order_by(Run.id)
    runs = session.scalars(query).all()
    waiting = session.scalars(
        select(Job).where(Job.status.in_(("queued", "running"))).order_by(Job.id).limit(500)
    ).all()
    names = dict(session.execute(select(Machine.id, Machine.name)).tuples().all())
    return _page(
        request,
        "queue.html",
        {"runs": runs, "jobs": waiting, "names": names, "matrix": matrix},
    )


@router.post("/runs/{run_id}/{action}", response_class=HTMLResponse)
async def run_action(
    request: Request, run_id: int, action: str, factory: SessionFactoryDep, notifier: NotifierDep
) -> Response:
    fields = await _form(request)

    @refusals
    def act() -> Response:
        with factory() as session:
            user = _writer(request, get_principal(request, session), fields, "operator")
            run = session.get(Run, run_id)
            if run is None or action not in ("cancel", "rerun"):
                return _page(request, "not_found.html", {"what": f"Run {run_id}"}, 404)
            if action == "cancel":
                for job in list(run.jobs):
                    if job.status not in TERMINAL_STATES:
                        jobs.cancel_job(session=session, job=job)
                return RedirectResponse(f"/runs/{run.id}", status_code=303)
            copy = matrices.rerun(session=session, run=run, user_id=user.id)
            notifier.notify()
            return RedirectResponse(f"/runs/{copy.id}", status_code=303)

    response: Response = await run_in_threadpool(act)
    return response


@router.get("/runs/{run_id}", response_class=HTMLResponse)
@refusals
def run_page(
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    principal: PrincipalDep,
    run_id: int,
) -> Response:
    _reader(request, principal, settings)
    run = session.get(Run, run_id)
    if run is None:
        return _page(request, "not_found.html", {"what": f"Run {run_id}"}, status=404)
    machine = session.get_one(Machine, run.machine_id)
    return _page(request, "run.html", {"run": run, "machine": machine})


# ---- comparisons -------------------------------------------------------------------------


@router.get("/compare", response_class=HTMLResponse)
@refusals
def compare_page(
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    principal: PrincipalDep,
) -> Response:
    _reader(request, principal, settings)
    query = {k: v[:100] for k, v in request.query_params.items()}
    result = None
    error = None
    if query.get("kind") and query.get("a") and query.get("b"):
        try:
            comparison = run_comparison(
                session=session,
                kind=query["kind"],
                a=query["a"],
                b=query["b"],
                suite=query.get("suite") or None,
                run=_int(query.get("run")),
                matrix=_int(query.get("matrix")),
                factor=query.get("factor") or None,
                statistic="mean" if query.get("statistic") == "mean" else "median",
            )
            result = comparison_out(comparison)
        except (ComparisonError, ValueError) as exc:
            error = str(exc)
    runs = session.scalars(select(Run).order_by(Run.id.desc()).limit(50)).all()
    machines = session.scalars(select(Machine).order_by(Machine.name)).all()
    return _page(
        request,
        "compare.html",
        {
            "query": query,
            "result": result,
            "error": error,
            "runs": runs,
            "machines": machines,
            "export": str(request.url.query),
        },
        status=422 if error else 200,
    )


def _int(text: str | None) -> int | None:
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a number.") from None


# ---- schedules ---------------------------------------------------------------------------


@router.get("/schedules", response_class=HTMLResponse)
@refusals
def schedules_page(
    request: Request, session: SessionDep, settings: SettingsDep, principal: PrincipalDep
) -> Response:
    _reader(request, principal, settings)
    schedules = session.scalars(select(Schedule).order_by(Schedule.id)).all()
    return _page(request, "schedules.html", {"schedules": schedules})


@router.post("/schedules/{schedule_id}/{action}", response_class=HTMLResponse)
async def schedule_action(
    request: Request, schedule_id: int, action: str, factory: SessionFactoryDep
) -> Response:
    fields = await _form(request)

    @refusals
    def act() -> Response:
        with factory() as session:
            _writer(request, get_principal(request, session), fields, "operator")
            schedule = session.get(Schedule, schedule_id)
            if schedule is None or action not in ("enable", "disable", "delete"):
                return _page(request, "not_found.html", {"what": f"Schedule {schedule_id}"}, 404)
            if action == "delete":
                session.delete(schedule)
                session.commit()
            else:
                scheduler.update_schedule(
                    session=session, schedule=schedule, enabled=action == "enable", cron=None
                )
            return RedirectResponse("/schedules", status_code=303)

    response: Response = await run_in_threadpool(act)
    return response


# ---- tokens and users --------------------------------------------------------------------


@router.get("/tokens", response_class=HTMLResponse)
@refusals
def tokens_page(request: Request, session: SessionDep, principal: PrincipalDep) -> Response:
    request.state.principal = principal
    if principal.user is None:
        raise PageRefused(_login_redirect(request))
    tokens = accounts.list_api_tokens(session=session, user=principal.user)
    return _page(request, "tokens.html", {"tokens": tokens})


@router.post("/tokens/{action}", response_class=HTMLResponse)
async def token_action(request: Request, action: str, factory: SessionFactoryDep) -> Response:
    fields = await _form(request)

    @refusals
    def act() -> Response:
        with factory() as session:
            user = _writer(request, get_principal(request, session), fields, "viewer")
            try:
                if action == "create":
                    _row, token = accounts.create_api_token(
                        session=session, user=user, name=fields.get("name", "")
                    )
                    return _page(
                        request,
                        "secret.html",
                        {
                            "title": "New API token",
                            "secret": token,
                            "help": "Send it as 'Authorization: Bearer <token>'. "
                            "It is shown only this once.",
                        },
                    )
                if action == "revoke":
                    accounts.revoke_api_token(
                        session=session, user=user, token_id=int(fields.get("token_id", "0"))
                    )
                    return RedirectResponse("/tokens", status_code=303)
            except (accounts.AccountError, ValueError) as exc:
                return _page(request, "refused.html", {"why": str(exc)}, 422)
            return _page(request, "not_found.html", {"what": f"Action {action!r}"}, 404)

    response: Response = await run_in_threadpool(act)
    return response


@router.get("/users", response_class=HTMLResponse)
@refusals
def users_page(request: Request, session: SessionDep, principal: PrincipalDep) -> Response:
    request.state.principal = principal
    if principal.user is None:
        raise PageRefused(_login_redirect(request))
    if principal.user.role != "admin":
        return _page(request, "refused.html", {"why": "Only admins manage users."}, 403)
    users = session.scalars(select(User).order_by(User.username)).all()
    return _page(request, "users.html", {"users": users, "roles": ROLES})


@router.post("/users/{action}", response_class=HTMLResponse)
async def user_action(request: Request, action: str, factory: SessionFactoryDep) -> Response:
    fields = await _form(request)

    @refusals
    def act() -> Response:
        with factory() as session:
            _writer(request, get_principal(request, session), fields, "admin")
            try:
                if action == "create":
                    accounts.create_user(
                        session=session,
                        username=fields.get("username", ""),
                        password=fields.get("password", ""),
                        role=fields.get("role", "viewer"),
                    )
                elif action == "update":
                    target = session.get(User, int(fields.get("user_id", "0")))
                    if target is None:
                        raise accounts.AccountError("That user does not exist.")
                    accounts.update_user(
                        session=session,
                        user=target,
                        role=fields.get("role") or None,
                        disabled=fields.get("disabled") == "true",
                    )
                else:
                    return _page(request, "not_found.html", {"what": f"Action {action!r}"}, 404)
            except (accounts.AccountError, ValueError) as exc:
                return _page(request, "refused.html", {"why": str(exc)}, 422)
            return RedirectResponse("/users", status_code=303)

    response: Response = await run_in_threadpool(act)
    return response
