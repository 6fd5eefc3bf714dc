"""The application factory."""

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress

from fastapi import Depends, FastAPI
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from fastapi.staticfiles import StaticFiles
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from sqlalchemy.exc import DataError
from sqlalchemy.orm import Session, sessionmaker
from xaclab_contracts.roles import param_roles

from xaclab_server import __version__
from xaclab_server.api.deps import account_api_guard, user_api_guard
from xaclab_server.api.routes import (
    agent,
    alerts,
    audit,
    auth,
    baselines,
    compare,
    history,
    jobs,
    machines,
    matrices,
    reproduction,
    runs,
    series,
    suites,
    users,
)
from xaclab_server.core import openapi
from xaclab_server.core.clock import SYSTEM_CLOCK, Clock
from xaclab_server.core.config import Settings
from xaclab_server.core.db import make_engine, make_sessionmaker
from xaclab_server.core.errors import data_error_handler, request_validation_handler
from xaclab_server.core.headers import SecurityHeaders
from xaclab_server.core.limits import BodySizeLimit
from xaclab_server.core.metrics import REGISTRY, DatabaseCollector, RequestMetrics
from xaclab_server.core.paths import PACKAGE_DIR
from xaclab_server.services import accounts, scheduler
from xaclab_server.services.libxac_git import LibxacGit
from xaclab_server.services.notifier import JobNotifier
from xaclab_server.services.reproduction import load_report_figures
from xaclab_server.services.results import load_validator
from xaclab_server.services.suites import Suite, load_suites
from xaclab_server.services.systems import declare_titles
from xaclab_server.services.throttle import Throttle
from xaclab_server.services.watcher import Watcher
from xaclab_server.ui import crash as crash_page
from xaclab_server.ui import pages
from xaclab_server.ui import reproduction as reproduction_page

log = logging.getLogger("xaclab_server")


def create_app(settings: Settings, clock: Clock = SYSTEM_CLOCK) -> FastAPI:
    """Build the app for ``settings``; the database must already be migrated (see cli).
    ``clock`` is the time logins, sessions, throttling and the audit log read."""
    engine = make_engine(settings.sqlalchemy_url)
    factory = make_sessionmaker(engine)
    notifier = JobNotifier()
    suite_declarations = load_suites(settings.suites_dir)
    declare_titles(suite_declarations)
    libxac_git = (
        LibxacGit(settings.libxac_git_dir, settings.libxac_git_path)
        if settings.libxac_git_dir
        else None
    )
    watcher = Watcher(factory=factory, settings=settings, notifier=notifier, git=libxac_git)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        await run_in_threadpool(_first_run_hint, factory)
        tasks = []
        if settings.scheduler_seconds > 0:
            tasks.append(
                asyncio.create_task(
                    _scheduler_loop(
                        factory,
                        suite_declarations,
                        notifier,
                        settings.scheduler_seconds,
                        libxac_git,
                    )
                )
            )
        if settings.watch_seconds > 0:
            tasks.append(asyncio.create_task(watcher.run()))
            tasks.append(asyncio.create_task(watcher.run_deliveries()))
        yield
        await notifier.stop()
        for task in tasks:
            task.cancel()
            with suppress(asyncio.CancelledError):
                await task
        engine.dispose()

    # No /docs or /redoc: FastAPI serves their assets from a CDN, and labs are often offline.
    app = FastAPI(
        title="xaclab", version=__version__, lifespan=lifespan, docs_url=None, redoc_url=None
    )
    app.state.settings = settings
    app.state.engine = engine
    app.state.sessionmaker = factory
    app.state.suites = suite_declarations
    # What comparisons match on is what these suites declare (docs/suites.md, roles).
    app.state.param_roles = param_roles(suite_declarations)
    app.state.result_validator = load_validator(
        settings.result_schema_path, suites=suite_declarations
    )
    app.state.notifier = notifier
    app.state.watcher = watcher
    app.state.libxac_git = libxac_git
    app.state.clock = clock
    app.state.throttle = Throttle(settings, clock)
    app.state.thesis_figures = load_report_figures()

    app.add_exception_handler(RequestValidationError, request_validation_handler)
    app.add_exception_handler(DataError, data_error_handler)
    app.add_middleware(BodySizeLimit, max_bytes=settings.max_body_bytes)
    app.add_middleware(SecurityHeaders)
    app.add_middleware(RequestMetrics)

    database_metrics = CollectorRegistry(auto_describe=True)
    database_metrics.register(DatabaseCollector(factory, settings.machine_online_seconds))

    @app.get("/healthz", tags=["health"])
    def healthz() -> dict[str, str]:
        return {"status": "ok", "version": __version__}

    @app.get("/metrics", tags=["health"], response_class=Response)
    def metrics() -> Response:
        """Prometheus text format (docs/server.md, "Operations")."""
        body = generate_latest(REGISTRY) + generate_latest(database_metrics)
        return Response(body, media_type=CONTENT_TYPE_LATEST)

    guarded = [Depends(user_api_guard)]
    app.include_router(agent.router)
    app.include_router(auth.router)
    app.include_router(users.router, dependencies=[Depends(account_api_guard)])
    app.include_router(audit.router, dependencies=guarded)
    for router in (
        machines.router,
        baselines.router,
        suites.router,
        runs.router,
        jobs.router,
        matrices.router,
    ):
        app.include_router(router, dependencies=guarded)
    app.include_router(compare.router, dependencies=guarded)
    app.include_router(history.router, dependencies=guarded)
    app.include_router(reproduction.router, dependencies=guarded)
    app.include_router(alerts.router, dependencies=guarded)
    app.include_router(series.router, dependencies=guarded)
    app.include_router(pages.router)
    app.include_router(reproduction_page.router)
    app.include_router(crash_page.router)
    app.mount("/static", StaticFiles(directory=PACKAGE_DIR / "static"), name="static")
    openapi.install(app)
    return app


def _first_run_hint(factory: sessionmaker[Session]) -> None:
    with factory() as session:
        if accounts.count_users(session=session) == 0:
            log.warning(
                "no user exists yet: create the first admin with "
                "`xaclab-server create-admin --username NAME` (password from "
                "XACLAB_ADMIN_PASSWORD or a prompt)"
            )


async def _scheduler_loop(
    factory: sessionmaker[Session],
    suites: dict[str, Suite],
    notifier: JobNotifier,
    interval: float,
    git: LibxacGit | None,
) -> None:
    def fire() -> list[int]:
        with factory() as session:
            return scheduler.fire_due_schedules(session=session, suites=suites, git=git)

    while True:
        try:
            fired = await run_in_threadpool(fire)
            if fired:
                log.info("schedules queued matrices %s", fired)
                notifier.notify()
        except Exception:  # the loop must outlive a database restart
            log.exception("the scheduler pass failed; trying again in %s s", interval)
        await asyncio.sleep(interval)
