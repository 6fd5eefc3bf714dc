"""Free ports are free, and a bound one is not."""

import socket

from xaclab_testsupport import free_port, port_is_free


def test_a_free_port_can_be_bound_and_then_is_taken() -> None:
    port = free_port()
    assert port_is_free(port)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))
        sock.listen()
        assert not port_is_free(port)
