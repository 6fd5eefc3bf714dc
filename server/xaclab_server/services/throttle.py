"""Throttling of failed logins and registrations, shared by every server process.

A login is counted under two keys: its account (the username as typed, so
an unknown name is throttled exactly like a known one and nothing tells
them apart) and its client address; a registration with a registration
token under its client address.  The counts live in ``auth_throttles``.

An attempt is counted *before* its secret is checked and a success takes
its count back, so a burst of concurrent guesses cannot all slip through
before the first failure is written.  A key that reaches its limit's
``free`` failures is blocked for ``delay`` seconds, doubled by each further
failure up to ``max_delay``; while any of an attempt's keys is blocked the
attempt is refused (:class:`Throttled`, answered 429 with Retry-After)
without its secret being checked, and counts nothing.  A key's failures are
forgotten ``forget`` seconds after its last one.

Both databases serialise the counting: PostgreSQL by ``SELECT … FOR
UPDATE`` on the rows (made first with ``INSERT … ON CONFLICT DO NOTHING``),
SQLite because that insert takes the database's write lock.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import and_, delete, or_, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from xaclab_server.core.clock import Clock
from xaclab_server.core.config import Settings
from xaclab_server.models import AuthThrottle

LOGIN_ACCOUNT = "login-account"
LOGIN_ADDRESS = "login-address"
REGISTER_ADDRESS = "register-address"
# How often one process sweeps rows whose failures are forgotten and whose block is over.
SWEEP_SECONDS = 60.0


@dataclass(frozen=True, slots=True)
class Limit:
    scope: str
    # What a key of the scope is, in words: "account" or "address".
    what: str
    free: int
    delay: float
    max_delay: float
    forget: float

    def block_seconds(self, failures: int) -> float | None:
        """How long ``failures`` failures block a key; None below the limit."""
        if failures < self.free:
            return None
        return min(self.max_delay, self.delay * 2.0 ** min(failures - self.free, 64))


@dataclass(frozen=True, slots=True)
class Key:
    limit: Limit
    value: str

    @property
    def ident(self) -> tuple[str, str]:
        return (self.limit.scope, self.value)


class Throttled(Exception):
    """Too many failures under one of an attempt's keys; retry after ``retry_after`` s."""

    def __init__(self, *, what: str, retry_after: int, first_refusal: bool) -> None:
        super().__init__(f"the {what} is blocked for {retry_after} s")
        self.what = what
        self.retry_after = retry_after
        # The block's first refused attempt: the one the audit log records.
        self.first_refusal = first_refusal


@dataclass(frozen=True, slots=True)
class Counted:
    """An attempt counted under its keys: the blocks it starts should it fail."""

    keys: tuple[Key, ...]
    blocks: dict[str, float]

    def block_facts(self) -> dict[str, int]:
        """The blocks for the audit log: ``{"account_blocked_seconds": 2}``."""
        return {f"{what}_blocked_seconds": math.ceil(s) for what, s in self.blocks.items()}


class Throttle:
    """The limits of :class:`Settings` on the clock the app reads."""

    def __init__(self, settings: Settings, clock: Clock) -> None:
        def limit(scope: str, free: int) -> Limit:
            return Limit(
                scope=scope,
                what="account" if scope == LOGIN_ACCOUNT else "address",
                free=free,
                delay=settings.throttle_delay_seconds,
                max_delay=settings.throttle_max_delay_seconds,
                forget=settings.throttle_forget_seconds,
            )

        self.account = limit(LOGIN_ACCOUNT, settings.login_free_failures)
        self.login_address = limit(LOGIN_ADDRESS, settings.login_address_free_failures)
        self.register_address = limit(REGISTER_ADDRESS, settings.registration_free_failures)
        self.clock = clock
        self._swept_at: datetime | None = None

    def login_keys(self, *, username: str, address: str) -> tuple[Key, ...]:
        return (Key(self.account, username), Key(self.login_address, address))

    def registration_keys(self, *, address: str) -> tuple[Key, ...]:
        return (Key(self.register_address, address),)

    def count(self, session: Session, keys: Sequence[Key]) -> Counted:
        """Count one attempt under every key and commit, or raise :class:`Throttled`."""
        now = self.clock()
        ordered = sorted(keys, key=lambda k: k.ident)
        rows = self._locked_rows(session, ordered, now)
        blocked = [
            (row, key)
            for key in ordered
            if (row := rows[key.ident]).blocked_until is not None and row.blocked_until > now
        ]
        if blocked:
            row, key = max(blocked, key=lambda pair: pair[0].blocked_until or now)
            assert row.blocked_until is not None
            first = not row.refusal_recorded
            row.refusal_recorded = True
            session.commit()
            wait = math.ceil((row.blocked_until - now).total_seconds())
            raise Throttled(what=key.limit.what, retry_after=max(1, wait), first_refusal=first)
        blocks: dict[str, float] = {}
        for key in ordered:
            row = rows[key.ident]
            if row.last_failure_at <= now - timedelta(seconds=key.limit.forget):
                row.failures = 0
            row.failures += 1
            row.last_failure_at = now
            seconds = key.limit.block_seconds(row.failures)
            if seconds is not None:
                row.blocked_until = now + timedelta(seconds=seconds)
                row.refusal_recorded = False
                blocks[key.limit.what] = seconds
        self._sweep(session, now)
        session.commit()
        return Counted(keys=tuple(ordered), blocks=blocks)

    def succeeded(self, session: Session, counted: Counted, *, clear: Sequence[str]) -> None:
        """Take an attempt's count back; keys of a scope in ``clear`` forget every failure
        (an account whose password was just given), the others only this attempt's (an
        address, lest one good login wipe the failures of a guesser behind it)."""
        now = self.clock()
        rows = self._locked_rows(session, counted.keys, now)
        for key in counted.keys:
            row = rows[key.ident]
            row.failures = 0 if key.limit.scope in clear else max(0, row.failures - 1)
            if key.limit.block_seconds(row.failures) is None:
                row.blocked_until = None
                row.refusal_recorded = False
        session.commit()

    def _locked_rows(
        self, session: Session, keys: Sequence[Key], now: datetime
    ) -> dict[tuple[str, str], AuthThrottle]:
        insert = (
            postgresql.insert if session.get_bind().dialect.name == "postgresql" else sqlite.insert
        )
        for key in keys:
            session.execute(
                insert(AuthThrottle)
                .values(scope=key.limit.scope, key=key.value, failures=0, last_failure_at=now)
                .on_conflict_do_nothing(index_elements=["scope", "key"])
            )
        query = (
            select(AuthThrottle)
            .where(
                or_(
                    *(
                        and_(AuthThrottle.scope == s, AuthThrottle.key == v)
                        for s, v in (key.ident for key in keys)
                    )
                )
            )
            .order_by(AuthThrottle.scope, AuthThrottle.key)
            .with_for_update()
            .execution_options(populate_existing=True)
        )
        return {(row.scope, row.key): row for row in session.scalars(query)}

    def _sweep(self, session: Session, now: datetime) -> None:
        if self._swept_at is not None and now - self._swept_at < timedelta(seconds=SWEEP_SECONDS):
            return
        self._swept_at = now
        longest = max(self.account.forget, self.login_address.forget, self.register_address.forget)
        session.execute(
            delete(AuthThrottle).where(
                AuthThrottle.last_failure_at < now - timedelta(seconds=longest),
                or_(AuthThrottle.blocked_until.is_(None), AuthThrottle.blocked_until < now),
            )
        )
