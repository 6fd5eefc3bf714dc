"""SQLAlchemy models, one entity per module; the tables are documented in docs/database.md."""

from xaclab_server.models.base import Base
from xaclab_server.models.job import Job
from xaclab_server.models.machine import Machine
from xaclab_server.models.result import Result
from xaclab_server.models.run import Run
from xaclab_server.models.upload import Upload

__all__ = ["Base", "Job", "Machine", "Result", "Run", "Upload"]
