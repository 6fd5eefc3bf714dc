"""The macro expander against the cases in Grafana's own macros_test.go.

The expected strings are the ones Grafana's PostgreSQL macro engine produces
(pkg/tsdb/grafana-postgresql-datasource/macros_test.go), rewritten here as
our own cases, plus the template-variable and global-substitution rules.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from dashboards.grafana_sql import (
    MacroError,
    TimeRange,
    Variable,
    expand,
    expand_macros,
    format_interval,
    interpolate_global,
    interpolate_variables,
    parse_interval,
)

FROM = datetime(2018, 4, 12, 18, 0, tzinfo=UTC)
RANGE = TimeRange(FROM, FROM + timedelta(minutes=5))


def macros(sql: str, time_range: TimeRange = RANGE, *, timescaledb: bool = False) -> str:
    return expand_macros(sql, time_range, timescaledb=timescaledb)[0]


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("select $__time(time_column)", 'select time_column AS "time"'),
        ("select min($__time(time_column))", 'select min(time_column AS "time")'),
        ("select $__timeEpoch(time_column)", 'select extract(epoch from time_column) as "time"'),
        (
            "WHERE $__timeFilter(time_column)",
            "WHERE time_column BETWEEN '2018-04-12T18:00:00Z' AND '2018-04-12T18:05:00Z'",
        ),
        ("select $__timeFrom()", "select '2018-04-12T18:00:00Z'"),
        ("select $__timeTo()", "select '2018-04-12T18:05:00Z'"),
        # Pre-5.3 compatibility: a comma right after the macro adds the alias.
        (
            "SELECT $__timeGroup(time_column,'5m'), value",
            'SELECT floor(extract(epoch from time_column)/300)*300 AS "time", value',
        ),
        (
            "SELECT $__timeGroup(time_column,'5m') as time, value",
            "SELECT floor(extract(epoch from time_column)/300)*300 as time, value",
        ),
        ("SELECT $__timeGroup(time_column,'5m')", "SELECT floor(extract(epoch from time_column)/300)*300"),
        (
            "SELECT $__timeGroupAlias(time_column,'5m')",
            'SELECT floor(extract(epoch from time_column)/300)*300 AS "time"',
        ),
        ("$__timeGroup(time_column , '5m')", "floor(extract(epoch from time_column)/300)*300"),
        ("$__timeGroupAlias(time_column , '5m')", 'floor(extract(epoch from time_column)/300)*300 AS "time"'),
        ("select $__unixEpochFilter(time)", "select time >= 1523556000 AND time <= 1523556300"),
        (
            "select $__unixEpochNanoFilter(time)",
            "select time >= 1523556000000000000 AND time <= 1523556300000000000",
        ),
        ("select $__unixEpochNanoFrom()", "select 1523556000000000000"),
        ("select $__unixEpochNanoTo()", "select 1523556300000000000"),
        (
            "SELECT $__unixEpochGroup(time_column+time_adjustment,'5m')",
            "SELECT floor((time_column+time_adjustment)/300)*300",
        ),
        (
            "SELECT $__unixEpochGroupAlias(time_column+time_adjustment,'5m')",
            'SELECT floor((time_column+time_adjustment)/300)*300 AS "time"',
        ),
    ],
)
def test_macro_matches_grafana(sql: str, expected: str) -> None:
    assert macros(sql) == expected


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("GROUP BY $__timeGroup(time_column,'5m')", "GROUP BY time_bucket('300.000s',time_column)"),
        ("GROUP BY $__timeGroup(time_column , '5m')", "GROUP BY time_bucket('300.000s',time_column)"),
        ("GROUP BY $__timeGroup(time_column , '12d')", "GROUP BY time_bucket('1036800.000s',time_column)"),
        ("GROUP BY $__timeGroup(time_column , '20ms')", "GROUP BY time_bucket('0.020s',time_column)"),
    ],
)
def test_timescaledb_time_bucket(sql: str, expected: str) -> None:
    assert macros(sql, timescaledb=True) == expected


@pytest.mark.parametrize(
    ("start", "end", "start_text", "end_text"),
    [
        (
            datetime(1960, 2, 1, 7, tzinfo=UTC),
            datetime(1965, 2, 3, 8, tzinfo=UTC),
            "1960-02-01T07:00:00Z",
            "1965-02-03T08:00:00Z",
        ),
        (
            datetime(1960, 2, 1, 7, tzinfo=UTC),
            datetime(1980, 2, 3, 8, tzinfo=UTC),
            "1960-02-01T07:00:00Z",
            "1980-02-03T08:00:00Z",
        ),
        (
            datetime(1960, 2, 1, 7, 0, 0, 500000, tzinfo=UTC),
            datetime(1980, 2, 3, 8, 0, 0, 500000, tzinfo=UTC),
            "1960-02-01T07:00:00.5Z",
            "1980-02-03T08:00:00.5Z",
        ),
    ],
)
def test_ranges_before_1970(start: datetime, end: datetime, start_text: str, end_text: str) -> None:
    time_range = TimeRange(start, end)
    assert macros("WHERE $__timeFilter(time_column)", time_range) == (
        f"WHERE time_column BETWEEN '{start_text}' AND '{end_text}'"
    )
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    start_s = int((start - epoch).total_seconds() // 1)
    end_s = int((end - epoch).total_seconds() // 1)
    assert macros("select $__unixEpochFilter(time)", time_range) == (
        f"select time >= {start_s} AND time <= {end_s}"
    )
    start_ns = round((start - epoch) / timedelta(microseconds=1)) * 1000
    end_ns = round((end - epoch) / timedelta(microseconds=1)) * 1000
    assert macros("select $__unixEpochNanoFilter(time)", time_range) == (
        f"select time >= {start_ns} AND time <= {end_ns}"
    )


def test_unix_epoch_of_a_negative_half_second_rounds_down() -> None:
    # Go's Time.Unix() floors: 1969-12-31T23:59:59.5Z is -1, not 0.
    moment = datetime(1969, 12, 31, 23, 59, 59, 500000, tzinfo=UTC)
    assert macros("$__unixEpochFilter(t)", TimeRange(moment, moment)) == "t >= -1 AND t <= -1"


def test_large_group_interval_prints_like_go() -> None:
    # interval.Seconds() through %v: Go prints 1036800 as 1.0368e+06.
    assert macros("$__timeGroup(t, '12d')") == "floor(extract(epoch from t)/1.0368e+06)*1.0368e+06"
    assert macros("$__timeGroup(t, 1w)") == "floor(extract(epoch from t)/604800)*604800"
    assert macros("$__unixEpochGroup(t, 250ms)") == "floor((t)/0.25)*0.25"


def test_fill_argument_sets_the_fill_mode() -> None:
    sql, fill = expand_macros("SELECT $__timeGroupAlias(t, '5m', 0) FROM x", RANGE)
    assert sql == 'SELECT floor(extract(epoch from t)/300)*300 AS "time" FROM x'
    assert fill is not None and (fill.mode, fill.value, fill.interval_seconds) == ("value", 0.0, 300)
    assert expand_macros("$__timeGroup(t, 1h, NULL)", RANGE)[1].mode == "null"  # type: ignore[union-attr]
    assert expand_macros("$__timeGroup(t, 1h, previous)", RANGE)[1].mode == "previous"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("$__unknown(x)", "unknown macro"),
        ("$__timeGroup(t)", "needs time column and interval"),
        ("$__timeGroup(t, 'fortnight')", "error parsing interval"),
        ("$__timeGroup(t, 5m, sometimes)", "error parsing fill value"),
    ],
)
def test_bad_macros_are_errors(sql: str, message: str) -> None:
    with pytest.raises(MacroError, match=message):
        macros(sql)


def test_empty_argument_list_is_one_empty_argument() -> None:
    # strings.Split("", ",") is [""], so $__time() is not "missing an argument".
    assert macros("$__time()") == ' AS "time"'


def test_alias_compatibility_looks_at_the_first_occurrence() -> None:
    sql = "SELECT $__timeGroup(t,'5m'), v FROM x GROUP BY $__timeGroup(t,'5m')"
    assert macros(sql) == (
        'SELECT floor(extract(epoch from t)/300)*300 AS "time", v FROM x '
        'GROUP BY floor(extract(epoch from t)/300)*300 AS "time"'
    )


def test_intervals_parse_like_gtime() -> None:
    assert parse_interval("5m") == timedelta(minutes=5)
    assert parse_interval("1h30m") == timedelta(minutes=90)
    assert parse_interval("1.5s") == timedelta(milliseconds=1500)
    assert parse_interval("2d") == timedelta(days=2)
    assert parse_interval("1M", datetime(2021, 1, 31, tzinfo=UTC)) == timedelta(days=31)
    assert parse_interval("1y", datetime(2020, 3, 1, tzinfo=UTC)) == timedelta(days=365)
    with pytest.raises(ValueError):
        parse_interval("5")


def test_format_interval_uses_the_largest_whole_unit() -> None:
    assert format_interval(timedelta(minutes=10)) == "10m"
    assert format_interval(timedelta(seconds=90)) == "1m"
    assert format_interval(timedelta(days=400)) == "1y"
    assert format_interval(timedelta(milliseconds=20)) == "20ms"
    assert format_interval(timedelta(0)) == "1ms"


def test_global_substitutions() -> None:
    sql = "$__interval_ms $__interval $__unixEpochFrom() $__unixEpochTo()"
    assert interpolate_global(sql, RANGE, timedelta(minutes=10)) == "600000 10m 1523556000 1523556300"


def test_template_variables_follow_the_sql_datasources() -> None:
    variables = {
        "machine": Variable(["lab-01", "o'brien"], multi=True, include_all=True),
        "single": Variable("it's"),
        "one_of_many": Variable("lab-01", multi=True),
        "n": Variable(64),
    }
    sql = "IN ($machine) [[machine]] ${machine} '$single' $one_of_many $n ${machine:csv} $other"
    assert interpolate_variables(sql, variables) == (
        "IN ('lab-01','o''brien') 'lab-01','o''brien' 'lab-01','o''brien' 'it''s' 'lab-01' 64 "
        "lab-01,o'brien $other"
    )


def test_variables_then_globals_then_macros() -> None:
    sql = (
        "SELECT $__timeGroupAlias(created_at, $__interval) FROM r "
        "WHERE $__timeFilter(created_at) AND m IN ($machine)"
    )
    expanded = expand(
        sql, RANGE, variables={"machine": Variable(["a"], multi=True)}, interval=timedelta(minutes=1)
    )
    assert expanded == (
        'SELECT floor(extract(epoch from created_at)/60)*60 AS "time" FROM r WHERE '
        "created_at BETWEEN '2018-04-12T18:00:00Z' AND '2018-04-12T18:05:00Z' AND m IN ('a')"
    )
