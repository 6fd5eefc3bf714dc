"""A stored result as the API, the run page and the exports show it: its figures, its
validity flags and its precision (docs/validity.md)."""

from xaclab_contracts.precision import detectable_percent, half_width_percent

from xaclab_server.models import Result
from xaclab_server.schemas.figure import IntervalKind
from xaclab_server.schemas.result import ResultOut

CSV_FIELDS = (
    "id",
    "benchmark",
    "sut",
    "params",
    "metric",
    "unit",
    "better",
    "n",
    "mean",
    "median",
    "min",
    "max",
    "stddev",
    "p99",
    "epoch",
    "flags",
    "median_ci_low",
    "median_ci_high",
    "median_ci_percent",
    "detectable",
    "write_cache",
)


def result_out(result: Result) -> ResultOut:
    width = None
    if result.median_ci_low is not None and result.median_ci_high is not None:
        width = half_width_percent(result.median_ci_low, result.median_ci_high, result.median)
    return ResultOut(
        id=result.id,
        benchmark=result.benchmark,
        sut=result.sut,
        params=result.params,
        metric=result.metric,
        unit=result.unit,
        better=result.better,
        n=result.n,
        mean=result.mean,
        median=result.median,
        min=result.min,
        max=result.max,
        stddev=result.stddev,
        p99=result.p99,
        epoch=result.epoch,
        flags=None if result.flags is None else {k: str(v) for k, v in result.flags.items()},
        median_ci_low=result.median_ci_low,
        median_ci_high=result.median_ci_high,
        median_ci_percent=width,
        detectable=detectable_percent(width),
        write_cache=result.write_cache,
    )


def result_interval(result: Result) -> tuple[float | None, float | None, IntervalKind]:
    """What a figure draws around a result's median: the 95% interval of the median, or the
    samples' lowest and highest below 6 samples (no such interval exists), or nothing for
    one sample."""
    if result.median_ci_low is not None and result.median_ci_high is not None:
        return result.median_ci_low, result.median_ci_high, "median_ci"
    if result.n >= 2:
        return result.min, result.max, "range"
    return None, None, "none"


def flags_of(result: Result) -> dict[str, str] | None:
    """A result's validity flags as pages show them; None when it was not judged."""
    return None if result.flags is None else {k: str(v) for k, v in result.flags.items()}
