"""A clock the test moves by hand: delays and expiries are tested without waiting for time."""

from datetime import UTC, datetime, timedelta


class ManualClock:
    """Stands still until :meth:`advance`; ``create_app(settings, clock=ManualClock())``."""

    def __init__(self, start: datetime = datetime(2026, 11, 24, 9, 0, tzinfo=UTC)) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)
