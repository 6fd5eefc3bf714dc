"""A small cron: five fields (minute hour day-of-month month day-of-week), in UTC.

Each field is ``*``, a number, a range ``a-b``, a step ``*/n`` or ``a-b/n``,
or a comma-separated list of those; day-of-week runs 0-6 from Sunday (7 is
Sunday too).  As in Vixie cron, when both day fields are restricted a day
matching either one fires.  No names, no seconds, no ``@reboot``.
"""

from dataclasses import dataclass
from datetime import datetime, timedelta

FIELDS = (("minute", 0, 59), ("hour", 0, 23), ("day of month", 1, 31), ("month", 1, 12))
SEARCH_DAYS = 366 * 5  # 29 February on a Monday is found within this


class CronError(ValueError):
    """An expression this parser refuses; the message is a sentence."""


@dataclass(frozen=True, slots=True)
class Cron:
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 = Sunday
    days_restricted: bool
    weekdays_restricted: bool

    def matches_day(self, moment: datetime) -> bool:
        if moment.month not in self.months:
            return False
        in_days = moment.day in self.days
        in_weekdays = (moment.isoweekday() % 7) in self.weekdays
        if self.days_restricted and self.weekdays_restricted:
            return in_days or in_weekdays
        return in_days and in_weekdays

    def next_after(self, moment: datetime) -> datetime:
        """The first matching minute strictly after ``moment`` (timezone kept)."""
        start = moment.replace(second=0, microsecond=0) + timedelta(minutes=1)
        day = start.replace(hour=0, minute=0)
        for offset in range(SEARCH_DAYS):
            current = day + timedelta(days=offset)
            if not self.matches_day(current):
                continue
            for hour in sorted(self.hours):
                for minute in sorted(self.minutes):
                    candidate = current.replace(hour=hour, minute=minute)
                    if candidate >= start:
                        return candidate
        raise CronError("The cron expression never fires.")


def parse_cron(expression: str) -> Cron:
    parts = expression.split()
    if len(parts) != 5:
        raise CronError(
            f"A cron expression has five fields (minute hour day month weekday), "
            f"not {len(parts)}: {expression!r}."
        )
    values = [_field(part, *spec) for part, spec in zip(parts[:4], FIELDS, strict=True)]
    weekdays = _field(parts[4], "day of week", 0, 7)
    if 7 in weekdays:
        weekdays = (weekdays - {7}) | {0}
    cron = Cron(
        minutes=values[0],
        hours=values[1],
        days=values[2],
        months=values[3],
        weekdays=weekdays,
        days_restricted=parts[2] != "*",
        weekdays_restricted=parts[4] != "*",
    )
    return cron


def _field(text: str, name: str, low: int, high: int) -> frozenset[int]:
    chosen: set[int] = set()
    for item in text.split(","):
        base, _, step_text = item.partition("/")
        step = _number(step_text, name) if step_text else 1
        if step < 1:
            raise CronError(f"The {name} step must be at least 1 in {text!r}.")
        if base == "*":
            first, last = low, high
        elif "-" in base:
            a, _, b = base.partition("-")
            first, last = _number(a, name), _number(b, name)
        else:
            first = _number(base, name)
            last = high if step_text else first
        if not (low <= first <= high and low <= last <= high) or first > last:
            raise CronError(f"The {name} field {text!r} is outside {low}-{high}.")
        chosen.update(range(first, last + 1, step))
    return frozenset(chosen)


def _number(text: str, name: str) -> int:
    if not text.isdigit():
        raise CronError(f"The {name} field has {text!r} where a number belongs.")
    return int(text)
