"""Bisection: which libxac commit between the two sides of a change point made it?

A change point whose last point before and first point after ran different
libxac revisions ``good`` and ``bad`` (``good`` an ancestor of ``bad``) can be
bisected, on an operator's click or, with ``auto_bisect``, by itself for a
new regression.  The candidates are the commits after ``good`` up to ``bad``
that touch libxac (:meth:`.libxac_git.LibxacGit.between`); ``bad`` is known
to be on the far side.  Each step queues a run on the same machine with the
job's parameters and ``libxac_revision`` set to the middle candidate of the
range still open, and :func:`advance` classes its point when the run has
finished:

- the point is compared with the change point's two levels (the means before
  and after) in units of the series' noise (its robust standard deviation),
  the likelihood ratio of two normal distributions giving the probability
  that it lies on the far side; the side is the likelier one and its
  confidence that probability.  A change found against the same runs' other
  configurations (:mod:`.reference_view`) has that view's levels, and the
  point is taken in that view too: against its own run's other
  configurations, so that the host's speed that day does not decide the side;
- a side known with less than ``bisect_confidence`` is run again (up to
  ``bisect_max_runs`` runs per revision, their mean taken, the noise shrinking
  with the square root of their count);
- a revision whose run failed (it did not build or pass its smoke tests,
  :mod:`xaclab_agent.revisions`) is skipped, as ``git bisect skip`` does, and
  its neighbour tried.

It ends when no untested candidate is left between the last revision on the
near side and the first on the far side: that one is the **culprit**, and the
bisection's confidence is the product of the confidences of the sides it
classed (every one of them had to be right).  When skipped revisions lie just
before it, the message says the change may be in them.
"""

import math
import statistics
from collections.abc import Callable
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from xaclab_server.core.config import Settings
from xaclab_server.models import (
    Bisection,
    BisectionRun,
    ChangePoint,
    Job,
    Result,
    Run,
    Series,
)
from xaclab_server.models.job import TERMINAL_STATES
from xaclab_server.services.libxac_git import GitError, LibxacGit
from xaclab_server.services.reference_view import view_of_run

MIN_NOISE = 1e-12


class BisectionRefused(ValueError):
    """A change point that cannot be bisected; the message is a sentence (HTTP 409/422)."""


def start_bisection(
    *,
    session: Session,
    change: ChangePoint,
    git: LibxacGit | None,
    user_id: int | None,
    now: datetime,
) -> Bisection:
    """Check the change point can be bisected and queue the first run; commits."""
    running = session.scalar(
        select(Bisection).where(
            Bisection.change_point_id == change.id, Bisection.state == "running"
        )
    )
    if running is not None:
        raise BisectionRefused(f"Bisection {running.id} of this alert is still running.")
    if git is None:
        raise BisectionRefused(
            "This server has no libxac git repository (XACLAB_LIBXAC_GIT_DIR) to bisect in."
        )
    if change.before_revision == change.after_revision:
        raise BisectionRefused(
            f"Both sides of the change ran libxac {change.before_revision}: it did not come "
            "with a libxac commit, so there is nothing to bisect (look at what else changed "
            "between the two runs)."
        )
    good, bad = git.resolve(change.before_revision), git.resolve(change.after_revision)
    for asked, found in ((change.before_revision, good), (change.after_revision, bad)):
        if found is None:
            raise BisectionRefused(
                f"libxac revision {asked!r} is not in the server's libxac repository."
            )
    assert good is not None and bad is not None
    if not git.is_ancestor(good, bad):
        raise BisectionRefused(
            f"libxac {change.before_revision} (before the change) is not an ancestor of "
            f"{change.after_revision} (after it); a bisection needs the older revision first."
        )
    candidates = git.between(good, bad)
    bisection = Bisection(
        change_point_id=change.id,
        state="running",
        good_revision=good,
        bad_revision=bad,
        candidates=candidates,
        steps=[],
        message="",
        started_by_id=user_id,
        created_at=now,
    )
    session.add(bisection)
    session.flush()
    _next_step(session, bisection, change, now)
    session.commit()
    return bisection


def advance(
    *,
    session: Session,
    bisection: Bisection,
    settings: Settings,
    now: datetime,
    subject: Callable[[str], str] = lambda _r: "",
) -> bool:
    """Take the finished run's point into account and queue the next run, or finish.
    True when the bisection changed; commits."""
    if bisection.state != "running":
        return False
    run = session.scalar(
        select(Run)
        .join(BisectionRun, BisectionRun.run_id == Run.id)
        .where(BisectionRun.bisection_id == bisection.id)
        .order_by(Run.id.desc())
        .limit(1)
    )
    if run is None or run.status not in TERMINAL_STATES:
        return False
    change = session.get_one(ChangePoint, bisection.change_point_id)
    steps = [dict(s) for s in bisection.steps]
    revision = _run_revision(session, run)
    step = next((s for s in steps if s["revision"] == revision and s["side"] == "pending"), None)
    if step is None:
        return False
    value = _run_value(session, run, change, settings.change_history)
    step["runs"] = [*step["runs"], run.id]
    if run.status == "cancelled":
        bisection.steps = steps
        return _finish(session, bisection, now, "failed", "A run of the bisection was cancelled.")
    if value is None:
        step["side"], step["reason"] = "skip", _why_no_point(session, run)
    else:
        step["values"] = [*step["values"], value]
        side, confidence = classify(step["values"], change)
        step["confidence"] = confidence
        if (
            confidence < settings.bisect_confidence
            and len(step["values"]) < settings.bisect_max_runs
        ):
            bisection.steps = steps
            _queue_run(session, bisection, change, revision)
            session.commit()
            return True
        step["side"] = side
    step["subject"] = subject(revision)
    bisection.steps = steps
    _next_step(session, bisection, change, now)
    session.commit()
    return True


def classify(values: list[float], change: ChangePoint) -> tuple[str, float]:
    """(side, confidence) of the mean of ``values`` between the change's two levels."""
    sigma = max(change.noise * abs(change.mean_before), MIN_NOISE) / math.sqrt(len(values))
    x = statistics.fmean(values)
    before = (x - change.mean_before) / sigma
    after = (x - change.mean_after) / sigma
    log_ratio = (before * before - after * after) / 2  # log P(x | after) / P(x | before)
    p_after = 1 / (1 + math.exp(-log_ratio)) if log_ratio > -700 else 0.0
    return ("after", p_after) if p_after >= 0.5 else ("before", 1 - p_after)


def _bounds(bisection: Bisection) -> tuple[int, int]:
    """(index of the last candidate known on the near side or -1, index of the first on the
    far side); the last candidate is on the far side by definition."""
    sides = {s["revision"]: s["side"] for s in bisection.steps}
    index = {r: i for i, r in enumerate(bisection.candidates)}
    high = len(bisection.candidates) - 1
    for revision, side in sides.items():
        if side == "after":
            high = min(high, index[revision])
    low = max((index[r] for r, s in sides.items() if s == "before" and index[r] < high), default=-1)
    return low, high


def _next_step(session: Session, bisection: Bisection, change: ChangePoint, now: datetime) -> None:
    low, high = _bounds(bisection)
    tried = {s["revision"] for s in bisection.steps}
    open_range = [i for i in range(low + 1, high) if bisection.candidates[i] not in tried]
    if not open_range:
        _conclude(session, bisection, change, low, high, now)
        return
    middle = (low + high) / 2
    pick = min(open_range, key=lambda i: (abs(i - middle), i))
    revision = bisection.candidates[pick]
    bisection.steps = [
        *bisection.steps,
        {"revision": revision, "side": "pending", "runs": [], "values": [], "confidence": None},
    ]
    _queue_run(session, bisection, change, revision)


def _conclude(
    session: Session,
    bisection: Bisection,
    change: ChangePoint,
    low: int,
    high: int,
    now: datetime,
) -> None:
    culprit = bisection.candidates[high]
    classed = [s["confidence"] for s in bisection.steps if s["side"] in ("before", "after")]
    # Without any classified step, the answer rests on the change point alone.
    confidence = math.prod(classed) if classed else 1 - change.p_value
    skipped = [
        bisection.candidates[i][:12]
        for i in range(low + 1, high)
        if any(
            s["revision"] == bisection.candidates[i] and s["side"] == "skip"
            for s in bisection.steps
        )
    ]
    message = f"The first revision on the far side of the change is {culprit[:12]}."
    if skipped:
        message += (
            f" It may instead be one of {', '.join(skipped)}, which could not be measured "
            "(their runs failed)."
        )
    bisection.culprit, bisection.confidence = culprit, confidence
    _finish(session, bisection, now, "done", message)


def _finish(
    session: Session, bisection: Bisection, now: datetime, state: str, message: str
) -> bool:
    bisection.state, bisection.message, bisection.finished_at = state, message, now
    session.flush()
    return True


def _queue_run(session: Session, bisection: Bisection, change: ChangePoint, revision: str) -> Run:
    template = _template_job(session, change)
    params = {**template.params, "libxac_revision": revision}
    run = Run(
        machine_id=template.machine_id,
        suite=template.suite,
        profile=template.profile,
        params=params,
        status="queued",
    )
    run.jobs.append(
        Job(
            machine_id=template.machine_id,
            suite=template.suite,
            profile=template.profile,
            params=params,
            status="queued",
        )
    )
    session.add(run)
    session.flush()
    session.add(BisectionRun(run_id=run.id, bisection_id=bisection.id))
    session.flush()
    return run


def _template_job(session: Session, change: ChangePoint) -> Job:
    """The job that measured the first point after the change: the bisection repeats it."""
    job = session.scalar(
        select(Job)
        .join(Result, Result.job_id == Job.id)
        .where(Result.run_id == change.after_run_id, Result.series_id == change.series_id)
        .order_by(Job.id)
        .limit(1)
    )
    if job is None:
        raise BisectionRefused(f"Run {change.after_run_id} no longer holds the series' results.")
    return job


def _run_revision(session: Session, run: Run) -> str:
    return str(run.params.get("libxac_revision", ""))


def _run_value(session: Session, run: Run, change: ChangePoint, history: int) -> float | None:
    """The run's point of the change's series, in the view the change was found in (its
    means are that view's: services/reference_view.py)."""
    medians = list(
        session.scalars(
            select(Result.median).where(
                Result.run_id == run.id, Result.series_id == change.series_id
            )
        )
    )
    if not medians:
        return None
    value = float(statistics.median(medians))
    if change.view != "relative":
        return value
    series = session.get_one(Series, change.series_id)
    return view_of_run(session=session, series=series, run_id=run.id, value=value, history=history)


def _why_no_point(session: Session, run: Run) -> str:
    job = session.scalar(select(Job).where(Job.run_id == run.id).order_by(Job.id).limit(1))
    if run.status != "succeeded":
        return f"run {run.id} {run.status}: {job.message if job else ''}"[:300]
    return f"run {run.id} measured no point of this series (another epoch?)"


def active_bisections(session: Session) -> list[Bisection]:
    return list(session.scalars(select(Bisection).where(Bisection.state == "running")))


def auto_bisect_wanted(
    *, session: Session, change: ChangePoint, series: Series, git: LibxacGit | None
) -> bool:
    """Whether the server should bisect a new change by itself: a regression between two
    revisions whose range no bisection on the same machine has taken yet."""
    if git is None or change.direction != "regression":
        return False
    if change.before_revision == change.after_revision:
        return False
    try:
        good, bad = git.resolve(change.before_revision), git.resolve(change.after_revision)
    except (GitError, OSError):
        return False
    if good is None or bad is None:
        return False
    taken = session.scalar(
        select(Bisection.id)
        .join(ChangePoint, ChangePoint.id == Bisection.change_point_id)
        .join(Series, Series.id == ChangePoint.series_id)
        .where(
            Series.machine_id == series.machine_id,
            Bisection.good_revision == good,
            Bisection.bad_revision == bad,
            Bisection.state.in_(("running", "done")),
        )
        .limit(1)
    )
    return taken is None


def step_summary(step: dict[str, Any]) -> str:
    """One step in words, for the alert page."""
    if step["side"] == "pending":
        return "running"
    if step["side"] == "skip":
        return f"skipped: {step.get('reason', '')}"
    side = "far side (after)" if step["side"] == "after" else "near side (before)"
    return f"{side}, {step['confidence'] * 100:.1f}% sure"
