from __future__ import annotations

from pathlib import Path

import pytest

from xaclab_agent import cli
from xaclab_agent import config as config_module
from xaclab_agent.config import load_config, secret_from_env
from xaclab_agent.errors import ConfigError


def test_file_then_env_then_overrides(tmp_path: Path) -> None:
    file = tmp_path / "agent.toml"
    file.write_text('server = "http://a:1"\nname = "lab-01"\nclaim_wait = 10\nbin_dir = "/x"\n')
    env = {"XACLAB_AGENT_NAME": "lab-02", "XACLAB_AGENT_STATE_DIR": str(tmp_path / "s")}
    config = load_config(file, env)
    assert config.server == "http://a:1"
    assert config.name == "lab-02"
    assert config.claim_wait == 10
    assert config.bin_dir == Path("/x")
    assert config.state_dir == tmp_path / "s"
    assert config.spool_dir == tmp_path / "s" / "spool"
    assert config.with_overrides(claim_wait=3, server=None).claim_wait == 3


@pytest.fixture(autouse=True)
def no_system_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(config_module, "DEFAULT_CONFIG", tmp_path / "etc-agent.toml")


def test_missing_default_is_fine_missing_named_is_not(tmp_path: Path) -> None:
    config = load_config(None, {"XACLAB_AGENT_CONFIG": ""})
    assert config.bin_dir.name == "bin"
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "nope.toml", {})
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(None, {"XACLAB_AGENT_CONFIG": str(tmp_path / "nope.toml")})


def test_checkout_default_bin_dir() -> None:
    config = load_config(None, {})
    assert config.bin_dir == Path(__file__).resolve().parents[2] / "libxac" / "bin"


@pytest.mark.parametrize(
    ("text", "env", "reason"),
    [
        ("srever = 'x'\n", {}, "unknown key"),
        ("claim_wait = 99\n", {}, "0-60"),
        ("", {"XACLAB_AGENT_CLAIM_WAIT": "soon"}, "invalid"),
        ("server = 'ftp://x'\n", {}, "http"),
        ("server = [\n", {}, "unreadable"),
    ],
)
def test_bad_config(tmp_path: Path, text: str, env: dict[str, str], reason: str) -> None:
    file = tmp_path / "agent.toml"
    file.write_text(text)
    with pytest.raises(ConfigError, match=reason):
        load_config(file, env)


def test_secret_from_env_reads_the_variable_or_the_file(tmp_path: Path) -> None:
    secret = tmp_path / "token"
    secret.write_text("from-a-file\n\n")
    assert secret_from_env("XACLAB_X", {"XACLAB_X": "direct"}) == "direct"
    assert secret_from_env("XACLAB_X", {"XACLAB_X_FILE": str(secret)}) == "from-a-file"
    empty_and_file = {"XACLAB_X": "", "XACLAB_X_FILE": str(secret)}
    assert secret_from_env("XACLAB_X", empty_and_file) == "from-a-file"
    assert secret_from_env("XACLAB_X", {}) is None
    assert secret_from_env("XACLAB_X", {"XACLAB_X": "", "XACLAB_X_FILE": ""}) is None
    secret.write_text(" a b\r\n")
    assert secret_from_env("XACLAB_X", {"XACLAB_X_FILE": str(secret)}) == " a b"


def test_secret_from_env_refuses_both_and_bad_files(tmp_path: Path) -> None:
    secret = tmp_path / "token"
    secret.write_text("from-a-file\n")
    with pytest.raises(ConfigError, match="XACLAB_X and XACLAB_X_FILE are both set"):
        secret_from_env("XACLAB_X", {"XACLAB_X": "direct", "XACLAB_X_FILE": str(secret)})
    with pytest.raises(ConfigError, match=r"XACLAB_X_FILE: cannot read .*nope: No such file"):
        secret_from_env("XACLAB_X", {"XACLAB_X_FILE": str(tmp_path / "nope")})
    with pytest.raises(ConfigError, match="cannot read .*: Is a directory"):
        secret_from_env("XACLAB_X", {"XACLAB_X_FILE": str(tmp_path)})
    secret.write_text("\n")
    with pytest.raises(ConfigError, match="is empty"):
        secret_from_env("XACLAB_X", {"XACLAB_X_FILE": str(secret)})


def test_registration_token_comes_from_its_file_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = tmp_path / "token"
    secret.write_text("token-from-a-file\n")
    monkeypatch.delenv("XACLAB_REGISTRATION_TOKEN", raising=False)
    monkeypatch.setenv("XACLAB_REGISTRATION_TOKEN_FILE", str(secret))
    assert cli._registration_token(None) == "token-from-a-file"
    monkeypatch.setenv("XACLAB_REGISTRATION_TOKEN", "token-in-the-environment")
    with pytest.raises(ConfigError, match="both set"):
        cli._registration_token(None)
    monkeypatch.delenv("XACLAB_REGISTRATION_TOKEN")
    monkeypatch.setenv("XACLAB_REGISTRATION_TOKEN_FILE", str(tmp_path / "nope"))
    with pytest.raises(ConfigError, match="XACLAB_REGISTRATION_TOKEN_FILE: cannot read"):
        cli._registration_token(None)


def test_ca_file_comes_from_the_file_or_the_environment_and_is_absolute(tmp_path: Path) -> None:
    file = tmp_path / "agent.toml"
    file.write_text('server = "https://lab:8000"\nca_file = "/etc/xaclab/ca.crt"\n')
    assert load_config(file, {}).ca_file == Path("/etc/xaclab/ca.crt")
    assert load_config(file, {"XACLAB_AGENT_CA_FILE": "/srv/ca.pem"}).ca_file == Path("/srv/ca.pem")
    assert load_config(None, {"XACLAB_AGENT_CONFIG": ""}).ca_file is None
    with pytest.raises(ConfigError, match="ca_file must be an absolute path"):
        load_config(file, {"XACLAB_AGENT_CA_FILE": "ca.crt"})
