"""The time that logins, sessions, throttling and the audit log read.

The app keeps one :data:`Clock` on ``app.state.clock``: the wall clock in
UTC.  Tests give ``create_app`` a clock they move by hand, so a test of a
delay or an expiry never waits for real time and never depends on it.
"""

from collections.abc import Callable
from datetime import datetime

from xaclab_server.models.base import utcnow

Clock = Callable[[], datetime]

SYSTEM_CLOCK: Clock = utcnow
