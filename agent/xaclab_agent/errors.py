"""The agent's exceptions; the hierarchy is documented in the package docstring.

SuiteError and ParamError are xaclab_contracts' (the suite parser is shared
with the server); the agent re-exports them.
"""

from __future__ import annotations

from xaclab_contracts.suites import ParamError, SuiteError

__all__ = [
    "AgentError",
    "AuthenticationError",
    "BuildError",
    "ConfigError",
    "ConflictError",
    "ParamError",
    "ProtocolError",
    "RequestRejected",
    "ResultError",
    "SuiteError",
    "UnavailableError",
    "UntrustedServerError",
]


class AgentError(Exception):
    """Base class of every error the agent raises on purpose."""


class ConfigError(AgentError):
    """The configuration file, an environment variable or the state dir is unusable."""


class BuildError(AgentError):
    """A job's libxac revision cannot be built, or failed its smoke tests (nothing runs)."""


class ResultError(AgentError):
    """A line on a benchmark program's stdout is not a valid version-1 result."""


class ProtocolError(AgentError):
    """Talking to the server failed."""


class UntrustedServerError(ProtocolError):
    """The server's TLS certificate is not one the agent's CA file (or the system) vouches for.

    Never retried: a server that cannot prove who it is gets no token and no result.
    """


class UnavailableError(ProtocolError):
    """The server could not be reached, or kept answering 5xx/429, after every retry."""


class RequestRejected(ProtocolError):
    """The server refused the request with a 4xx status; resending it will not help."""

    def __init__(self, status_code: int, detail: str) -> None:
        super().__init__(f"server answered {status_code}: {detail}")
        self.status_code = status_code
        self.detail = detail


class AuthenticationError(RequestRejected):
    """401: the agent token (or registration token) is unknown or missing."""


class ConflictError(RequestRejected):
    """409: the job is not running, not this agent's, or finished with another status."""
