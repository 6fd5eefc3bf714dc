"""The application factory."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from fastapi.staticfiles import StaticFiles

from xaclab_server import __version__
from xaclab_server.api.routes import agent, machines, runs, suites
from xaclab_server.core.config import Settings
from xaclab_server.core.db import make_engine, make_sessionmaker
from xaclab_server.core.errors import request_validation_handler
from xaclab_server.core.limits import BodySizeLimit
from xaclab_server.core.paths import PACKAGE_DIR
from xaclab_server.services.notifier import JobNotifier
from xaclab_server.services.results import load_validator
from xaclab_server.services.suites import load_suites
from xaclab_server.ui import pages


def create_app(settings: Settings) -> FastAPI:
    """Build the app for ``settings``; the database must already be migrated (see cli)."""
    engine = make_engine(settings.sqlalchemy_url)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        yield
        engine.dispose()

    # No /docs or /redoc: FastAPI serves their assets from a CDN, and labs are often offline.
    app = FastAPI(
        title="xaclab", version=__version__, lifespan=lifespan, docs_url=None, redoc_url=None
    )
    app.state.settings = settings
    app.state.engine = engine
    app.state.sessionmaker = make_sessionmaker(engine)
    app.state.suites = load_suites(settings.suites_dir)
    app.state.result_validator = load_validator(settings.result_schema_path)
    app.state.notifier = JobNotifier()

    app.add_exception_handler(RequestValidationError, request_validation_handler)
    app.add_middleware(BodySizeLimit, max_bytes=settings.max_body_bytes)

    @app.get("/healthz", tags=["health"])
    def healthz() -> dict[str, str]:
        return {"status": "ok", "version": __version__}

    app.include_router(agent.router)
    app.include_router(machines.router)
    app.include_router(suites.router)
    app.include_router(runs.router)
    app.include_router(pages.router)
    app.mount("/static", StaticFiles(directory=PACKAGE_DIR / "static"), name="static")
    return app
