from __future__ import annotations

from pathlib import Path

import pytest

from xaclab_agent import config as config_module
from xaclab_agent.config import load_config
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
