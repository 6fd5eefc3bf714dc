import pytest

from xaclab_contracts.loopback import is_loopback


@pytest.mark.parametrize("host", ["127.0.0.1", "127.8.9.1", "::1", "[::1]", "localhost"])
def test_loopback_hosts(host: str) -> None:
    assert is_loopback(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "10.0.0.1", "lab-01", "localhost.example", ""])
def test_other_hosts(host: str) -> None:
    assert not is_loopback(host)
