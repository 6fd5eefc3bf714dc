"""Which of a revision range's new regressions an automatic bisection follows.

One libxac commit usually moves several series at once (a slower ``xend`` moves the
time per page of every configuration, the fit's fixed cost c, and often the fit's
slopes and r2 as well).  The server bisects the range once, in the series that
separates the two sides most clearly: a bisection classes each revision by one or a
few of its runs, and that only works where a single point lands on its side.

The change's recorded noise is the robust spread of both sides pooled
(:mod:`.edivisive`).  It hides a side that scatters: eight steady points before and
six erratic ones after still pool to the steady side's spread, since most of the
residuals are the steady ones.  A fit's r2 made erratic by a constant cost is such a
series: steady to five digits before the change and scattered after it, its shift
measured in the pooled noise can be in the thousands, and one bisection run of the
slow commit may land among the old points.  CI saw that once: a bisection named the
commit after the slow one with confidence 1.0, which a series steady on both sides
(the fit's c, fifteen times higher after the change) cannot do.  So the
**separation** of a change is the shift between the two sides' means over the larger
of the two sides' own robust standard deviations, each side's points read in the view
the change was found in (:mod:`.reference_view`).
"""

import statistics
from collections.abc import Sequence

from sqlalchemy.orm import Session

from xaclab_server.models import ChangePoint, Series
from xaclab_server.services.edivisive import MAD_TO_SD
from xaclab_server.services.reference_view import SiblingCache, view_of_series
from xaclab_server.services.series import series_points

MIN_SIDE_POINTS = 2  # fewer: a side has no spread to speak of
RELATIVE_FLOOR = 1e-9  # the smallest spread counted, relative to the larger mean


def separation(
    *,
    session: Session,
    change: ChangePoint,
    series: Series,
    history: int,
    siblings: SiblingCache | None = None,
) -> float:
    """How many of its sides' own standard deviations apart the change's two sides are.
    Where the points it was found on are no longer in the series' newest ``history``,
    the shift over the recorded (pooled) noise.  ``siblings``: what the watcher's pass
    read for the same runs' view (the detection just before), read again only if absent."""
    pooled = abs(change.mean_after - change.mean_before) / max(
        change.noise * abs(change.mean_before), RELATIVE_FLOOR
    )
    points = series_points(session=session, series_id=series.id, limit=history)
    index = next((i for i, p in enumerate(points) if p.run_id == change.after_run_id), None)
    if index is None:
        return pooled
    values: Sequence[float] = [p.value for p in points]
    if change.view == "relative":
        view = view_of_series(session=session, series=series, points=points, cache=siblings)
        if view is None:
            return pooled
        values = view
    before = values[max(0, index - change.points_before) : index]
    after = values[index : index + change.points_after]
    if len(before) < MIN_SIDE_POINTS or len(after) < MIN_SIDE_POINTS:
        return pooled
    return sides_apart(before, after)


def sides_apart(before: Sequence[float], after: Sequence[float]) -> float:
    """|mean after - mean before| over the larger robust standard deviation of the sides."""
    mean_before, mean_after = statistics.fmean(before), statistics.fmean(after)
    floor = RELATIVE_FLOOR * max(abs(mean_before), abs(mean_after), 1.0)
    spread = max(_robust_sd(before), _robust_sd(after), floor)
    return abs(mean_after - mean_before) / spread


def _robust_sd(values: Sequence[float]) -> float:
    middle = statistics.median(values)
    return MAD_TO_SD * statistics.median(abs(v - middle) for v in values)
