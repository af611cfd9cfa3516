"""bothost.logs.connection: a failed connection's cause as the OS words it.

The real errors come from real sockets: a connect to a closed port on 127.0.0.1, which is
what aiohttp wraps. The names that do not resolve and the networks that cannot be reached
are the OS's own errors as the resolver and connect() raise them (this machine may have a
network, so they cannot be caused here)."""

from __future__ import annotations

import errno
import socket
import ssl

import pytest

from bothost.logs.connection import cause
from tests.helpers import free_port


class Wrapped(Exception):
    """Shaped as aiohttp's ClientConnectorError: its own wording, the OS's error kept."""

    def __init__(self, os_error: OSError) -> None:
        super().__init__(f"Cannot connect to host h:443 ssl:default [{os_error.strerror}]")
        self.os_error = os_error


def refused() -> OSError:
    with socket.socket() as sock, pytest.raises(OSError) as raised:
        sock.connect(("127.0.0.1", free_port()))
    return raised.value


def test_a_refused_connect_is_connection_refused_bare_or_wrapped():
    assert cause(refused()) == "Connection refused"
    assert cause(Wrapped(refused())) == "Connection refused"


@pytest.mark.parametrize(
    ("error", "says"),
    [
        (
            socket.gaierror(socket.EAI_NONAME, "Name or service not known"),
            "Name or service not known",
        ),
        (OSError(errno.ENETUNREACH, "Connect call failed ('h', 443)"), "Network is unreachable"),
        (OSError(errno.EHOSTUNREACH, "Connect call failed ('h', 443)"), "No route to host"),
    ],
)
def test_what_the_os_names_is_said_in_its_words(error, says):
    assert cause(Wrapped(error)) == says


def test_anything_else_keeps_its_own_words_or_its_name():
    # an ssl.SSLError carries OpenSSL's number (1), which is not an errno ("Operation not
    # permitted" would be a lie)
    certificate = ssl.SSLCertVerificationError(
        1, "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed"
    )
    assert "CERTIFICATE_VERIFY_FAILED" in cause(Wrapped(certificate))
    assert cause(ValueError("URL has no host")) == "URL has no host"
    assert cause(TimeoutError()) == "TimeoutError"
