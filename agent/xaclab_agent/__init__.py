"""xaclab agent: runs LIBXAC benchmark suites and reports them to the xaclab server.

Public API (everything else is internal and may change):

- :class:`AgentClient` — the agent protocol (docs/agent-protocol.md) over httpx.
- :class:`Spool` — uploads and finish messages kept on disk until the server takes them.
- :func:`load_suite`, :class:`Suite` — suite declarations (docs/suites.md; from xaclab_contracts).
- :func:`run_job` — runs a validated suite plan and collects results.
- :func:`collect_fingerprint` — the machine fingerprint added to every result.
- :class:`Config`, :func:`load_config` — configuration file + environment.

Exception hierarchy::

    AgentError
     ├── ConfigError            unusable config file, env variable or state dir
     ├── BuildError             a job's libxac revision did not build or pass its smoke tests
     ├── ResultError            a stdout line is not a valid result
     └── ProtocolError          talking to the server failed
          ├── UnavailableError  transport error / 5xx / 429 after every retry
          └── RequestRejected   any other 4xx (status_code, detail); never retried
               ├── AuthenticationError   401
               └── ConflictError         409

    SuiteError                  unknown suite/profile, unusable declaration
     └── ParamError             a job parameter refused (nothing runs)

SuiteError and ParamError come from :mod:`xaclab_contracts.suites`, whose
parser the server uses too.
"""

from xaclab_contracts.suites import Suite, load_suite

from xaclab_agent.client import AgentClient, Job, RetryPolicy
from xaclab_agent.config import Config, load_config
from xaclab_agent.errors import (
    AgentError,
    AuthenticationError,
    ConfigError,
    ConflictError,
    ParamError,
    ProtocolError,
    RequestRejected,
    ResultError,
    SuiteError,
    UnavailableError,
)
from xaclab_agent.fingerprint import collect_fingerprint
from xaclab_agent.runner import RunOutcome, run_job
from xaclab_agent.spool import Spool

__all__ = [
    "AgentClient",
    "AgentError",
    "AuthenticationError",
    "Config",
    "ConfigError",
    "ConflictError",
    "Job",
    "ParamError",
    "ProtocolError",
    "RequestRejected",
    "ResultError",
    "RetryPolicy",
    "RunOutcome",
    "Spool",
    "Suite",
    "SuiteError",
    "UnavailableError",
    "collect_fingerprint",
    "load_config",
    "load_suite",
    "run_job",
]
