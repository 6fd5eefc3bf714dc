"""SQLAlchemy models, one entity per module; the tables are documented in docs/database.md."""

from xaclab_server.models.api_token import ApiToken
from xaclab_server.models.audit_event import AuditEvent
from xaclab_server.models.auth_throttle import AuthThrottle
from xaclab_server.models.base import Base
from xaclab_server.models.baseline import Baseline
from xaclab_server.models.bisection import Bisection
from xaclab_server.models.bisection_run import BisectionRun
from xaclab_server.models.change_point import ChangePoint
from xaclab_server.models.job import Job
from xaclab_server.models.job_log import JobLog
from xaclab_server.models.login_session import LoginSession
from xaclab_server.models.machine import Machine
from xaclab_server.models.machine_epoch import MachineEpoch
from xaclab_server.models.matrix import Matrix
from xaclab_server.models.result import Result
from xaclab_server.models.run import Run
from xaclab_server.models.schedule import Schedule
from xaclab_server.models.series import Series
from xaclab_server.models.upload import Upload
from xaclab_server.models.user import User
from xaclab_server.models.watch_settings import WatchSettings
from xaclab_server.models.webhook_delivery import WebhookDelivery

__all__ = [
    "ApiToken",
    "AuditEvent",
    "AuthThrottle",
    "Base",
    "Baseline",
    "Bisection",
    "BisectionRun",
    "ChangePoint",
    "Job",
    "JobLog",
    "LoginSession",
    "Machine",
    "MachineEpoch",
    "Matrix",
    "Result",
    "Run",
    "Schedule",
    "Series",
    "Upload",
    "User",
    "WatchSettings",
    "WebhookDelivery",
]
