"""Prometheus metrics at ``/metrics``.

Counted in this process: requests by route template, method and status, their
durations, and the results and raw samples stored (the ingest rate is
``rate(xaclab_ingested_samples_total[1m])``).  Read from the database at each
scrape, so they are the same whichever process answers: queue depth by job
state, agents online, approved and pending machines.  With several server
processes, sum the per-process counters in PromQL.
"""

import time
from collections.abc import Iterator
from datetime import timedelta

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from xaclab_server.models import Job, Machine
from xaclab_server.models.base import utcnow

REGISTRY = CollectorRegistry(auto_describe=True)
REQUESTS = Counter(
    "xaclab_http_requests",
    "HTTP requests answered, by route template, method and status.",
    ["route", "method", "status"],
    registry=REGISTRY,
)
DURATION = Histogram(
    "xaclab_http_request_duration_seconds",
    "Time to the response's first byte, by route template.",
    ["route"],
    registry=REGISTRY,
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
INGESTED_RESULTS = Counter(
    "xaclab_ingested_results", "Results stored from agents' uploads.", registry=REGISTRY
)
THROTTLED = Counter(
    "xaclab_auth_throttled",
    "Logins and registrations refused with 429 because their account or address is blocked.",
    ["kind"],
    registry=REGISTRY,
)
INGESTED_SAMPLES = Counter(
    "xaclab_ingested_samples", "Raw samples stored from agents' uploads.", registry=REGISTRY
)


class DatabaseCollector(Collector):
    def __init__(self, factory: sessionmaker[Session], online_seconds: int) -> None:
        self.factory = factory
        self.online_seconds = online_seconds

    def collect(self) -> Iterator[Metric]:
        queue = GaugeMetricFamily(
            "xaclab_jobs", "Jobs by state (queued is the queue depth).", labels=["status"]
        )
        agents = GaugeMetricFamily(
            "xaclab_agents_online", "Approved machines whose agent was heard from recently."
        )
        pending = GaugeMetricFamily(
            "xaclab_machines_pending", "Machines waiting for an admin's approval."
        )
        cutoff = utcnow() - timedelta(seconds=self.online_seconds)
        with self.factory() as session:
            counts: dict[str, int] = dict(
                session.execute(
                    select(Job.status, func.count())
                    .where(Job.status.in_(("queued", "running")))
                    .group_by(Job.status)
                )
                .tuples()
                .all()
            )
            online = session.scalar(
                select(func.count())
                .select_from(Machine)
                .where(Machine.approved.is_(True), Machine.last_seen_at >= cutoff)
            )
            waiting = session.scalar(
                select(func.count()).select_from(Machine).where(Machine.approved.is_(False))
            )
        for state in ("queued", "running"):
            queue.add_metric([state], counts.get(state, 0))
        agents.add_metric([], online or 0)
        pending.add_metric([], waiting or 0)
        yield queue
        yield agents
        yield pending


class RequestMetrics:
    """ASGI middleware counting requests by route template (never the raw path)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = 500
        timed = False

        async def send_wrapper(message: Message) -> None:
            nonlocal status, timed
            if message["type"] == "http.response.start":
                status = message["status"]
                if not timed:
                    timed = True
                    DURATION.labels(route_of(scope)).observe(time.perf_counter() - start)
            await send(message)

        try:
            await self.app(scope, receive, send_wrapper)
        finally:
            REQUESTS.labels(route_of(scope), scope["method"], str(status)).inc()


def route_of(scope: Scope) -> str:
    # The router leaves the matched route in the scope; unmatched paths share one label.
    route = scope.get("route")
    path = getattr(route, "path", None)
    return path if isinstance(path, str) else "unmatched"
