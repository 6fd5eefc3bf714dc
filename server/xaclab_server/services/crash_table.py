"""The crash-consistency table: per system, mode and kind of crash, what a run's crash points
found (docs/crash-consistency.md).

One row per (system, variant, mode, kind) of one run: the counts are the sums of its
results (crash points, acknowledged commits checked, acknowledged commits lost, uncommitted
commits visible, the in-flight commit visible, invariant violations), the recovery time the
median and p99 of its per-crash-point samples.  A variant tells a system's configurations
apart where it has several (the LIBXAC trees: tree, block size, advisory calls).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session
from xaclab_contracts.suites import SystemDecl

from xaclab_server.models import Result, Run

SUITE = "crash-consistency"
COUNTS = (
    "crash_points",
    "acked_commits",
    "acked_lost",
    "uncommitted_visible",
    "in_flight_visible",
    "invariant_violations",
)
KINDS = {"process-crash": "process crash (SIGKILL)", "power-loss": "power loss (simulated)"}


@dataclass
class CrashRow:
    system: str
    title: str
    variant: str
    mode: str
    durability: str
    kind: str
    counts: dict[str, int] = field(default_factory=dict)
    recovery_p50_ms: float | None = None
    recovery_p99_ms: float | None = None

    @property
    def finding(self) -> bool:
        """A durable mode that lost an acknowledged commit, showed an uncommitted one or broke
        an invariant."""
        bad = sum(self.counts.get(k, 0) for k in ("uncommitted_visible", "invariant_violations"))
        lost = self.counts.get("acked_lost", 0) if self.durability == "durable" else 0
        return bad + lost > 0


def variant_of(params: dict[str, Any]) -> str:
    """The configuration within a system: the LIBXAC tree, its block size and advice."""
    if "tree" not in params:
        return ""
    text = str(params["tree"])
    if params.get("block_bytes"):
        text += f" {int(params['block_bytes']) // 1024} KiB"
    if params.get("advisory"):
        text += " advisory"
    return text


def newest_run_id(session: Session) -> int | None:
    return session.scalar(
        select(Run.id)
        .join(Result, Result.run_id == Run.id)
        .where(Result.suite == SUITE)
        .order_by(Run.id.desc())
        .limit(1)
    )


def crash_rows(session: Session, run_id: int, systems: dict[str, SystemDecl]) -> list[CrashRow]:
    """The table of run ``run_id``, systems in declaration order."""
    rows: dict[tuple[str, str, str, str], CrashRow] = {}
    found = session.scalars(
        select(Result).where(Result.run_id == run_id, Result.suite == SUITE).order_by(Result.id)
    )
    for r in found:
        params = r.params or {}
        key = (r.sut, variant_of(params), str(params.get("mode", "")), r.benchmark)
        row = rows.get(key)
        if row is None:
            decl = systems.get(r.sut)
            row = rows[key] = CrashRow(
                system=r.sut,
                title=decl.title if decl else r.sut,
                variant=key[1],
                mode=key[2],
                durability=str(params.get("durability", "")),
                kind=KINDS.get(r.benchmark, r.benchmark),
            )
        if r.metric in COUNTS:
            row.counts[r.metric] = row.counts.get(r.metric, 0) + round(r.median * r.n)
        elif r.metric == "recovery_time":
            scale = {"s": 1e3, "us": 1e-3, "ns": 1e-6}.get(r.unit, 1.0)
            row.recovery_p50_ms = r.median * scale
            row.recovery_p99_ms = r.p99 * scale
    order = {name: i for i, name in enumerate(systems)}
    return sorted(
        rows.values(), key=lambda x: (order.get(x.system, len(order)), x.variant, x.mode, x.kind)
    )
