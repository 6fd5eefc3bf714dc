"""The small cron parser."""

from datetime import UTC, datetime

import pytest

from xaclab_server.services.cron import CronError, parse_cron

MONDAY = datetime(2026, 11, 23, 10, 7, tzinfo=UTC)


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("*/15 * * * *", datetime(2026, 11, 23, 10, 15, tzinfo=UTC)),
        ("0 3 * * 1", datetime(2026, 11, 30, 3, 0, tzinfo=UTC)),
        ("0 0 29 2 *", datetime(2028, 2, 29, 0, 0, tzinfo=UTC)),
        ("30 2 1 * 0", datetime(2026, 11, 29, 2, 30, tzinfo=UTC)),  # day 1 OR a Sunday
        ("5 4 * * 7", datetime(2026, 11, 29, 4, 5, tzinfo=UTC)),
        ("0 9-17/4 * * 1-5", datetime(2026, 11, 23, 13, 0, tzinfo=UTC)),
        ("7 10 * * *", datetime(2026, 11, 24, 10, 7, tzinfo=UTC)),
    ],
)
def test_next_after(expression: str, expected: datetime) -> None:
    assert parse_cron(expression).next_after(MONDAY) == expected


@pytest.mark.parametrize(
    ("expression", "words"),
    [
        ("* * * *", "five fields"),
        ("60 * * * *", "outside 0-59"),
        ("* * * * mon", "where a number belongs"),
        ("*/0 * * * *", "at least 1"),
        ("5-1 * * * *", "outside"),
        ("0 0 31 2 *", "never fires"),
    ],
)
def test_refusals(expression: str, words: str) -> None:
    with pytest.raises(CronError, match=words):
        parse_cron(expression).next_after(MONDAY)
