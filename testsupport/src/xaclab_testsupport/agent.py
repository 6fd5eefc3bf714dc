"""The real agent, ``xaclab-agent``: one command at a time, or its daemon."""

import subprocess
from collections.abc import Mapping
from pathlib import Path

from xaclab_testsupport.paths import LIBXAC_BIN, VENV_BIN
from xaclab_testsupport.processes import ChildProcess, checked, environment, run_command


class AgentProcess(ChildProcess):
    """``xaclab-agent`` as a lab machine runs it, with what it keeps under ``home``:
    an empty config file ``agent.toml`` (so no file of this machine's is read) and
    the state and work directories (``state_dir``, ``work_dir`` to put them
    elsewhere).  The benchmark programs come from ``bin_dir`` (libxac/bin).

    :attr:`env` is the environment every command gets: this process's without its
    ``XACLAB_*`` settings (unless ``inherit_xaclab_env``), the ``XACLAB_AGENT_*``
    paths, ``XACLAB_AGENT_SERVER`` and ``XACLAB_REGISTRATION_TOKEN`` when given,
    then ``env``.  :meth:`run` runs one command to its end; :meth:`start` starts
    the daemon (``xaclab-agent run``), logging to ``log_path``, until :meth:`stop`.
    """

    def __init__(
        self,
        home: Path,
        *,
        server_url: str | None = None,
        registration_token: str | None = None,
        bin_dir: Path = LIBXAC_BIN,
        suites_dir: Path | None = None,
        state_dir: Path | None = None,
        work_dir: Path | None = None,
        env: Mapping[str, str] | None = None,
        log_path: Path | None = None,
        inherit_xaclab_env: bool = False,
    ) -> None:
        super().__init__(log_path or home / "agent.log")
        home.mkdir(parents=True, exist_ok=True)
        self.home = home
        self.server_url = server_url
        self.config_path = home / "agent.toml"
        if not self.config_path.exists():
            self.config_path.write_text("")
        self.state_dir = state_dir or home / "state"
        self.work_dir = work_dir or home / "work"
        self.env = environment(inherit_xaclab=inherit_xaclab_env)
        self.env.update(
            XACLAB_AGENT_CONFIG=str(self.config_path),
            XACLAB_AGENT_STATE_DIR=str(self.state_dir),
            XACLAB_AGENT_WORK_DIR=str(self.work_dir),
            XACLAB_AGENT_BIN_DIR=str(bin_dir),
        )
        if suites_dir is not None:
            self.env["XACLAB_AGENT_SUITES_DIR"] = str(suites_dir)
        if server_url is not None:
            self.env["XACLAB_AGENT_SERVER"] = server_url
        if registration_token is not None:
            self.env["XACLAB_REGISTRATION_TOKEN"] = registration_token
        self.env.update(env or {})

    def command(self, *args: str) -> list[str]:
        return [str(VENV_BIN / "xaclab-agent"), *args]

    def run(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """``xaclab-agent ARGS`` to its end, output captured; the caller judges it."""
        return run_command(self.command(*args), env=self.env, cwd=self.home, timeout=timeout)

    def register(self, name: str, *args: str) -> None:
        """``xaclab-agent register`` with the server given at construction;
        :class:`ProcessFailed` with the agent's stderr when it is refused."""
        if self.server_url is None:
            raise ValueError("register needs the server_url")
        done = self.run("register", "--server", self.server_url, "--name", name, *args, timeout=120)
        checked(done, "xaclab-agent register")

    def start(self, *args: str) -> None:
        """The daemon: ``xaclab-agent run`` (or ``xaclab-agent ARGS``) in the background."""
        self.spawn(self.command(*(args or ("run",))), env=self.env, cwd=self.home)
