"""``bothost.api.is_loopback``: the one answer to "is this host this machine?".

The config check (a non-loopback bind needs a token) and the web plugin (who is served
without one) must not drift apart, so both use this one function.
"""

from __future__ import annotations

import pytest

from bothost import api
from bothost.config import check
from plugins.web import security


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "127.8.9.10", "::1"])
def test_this_machine_is_loopback(host):
    assert api.is_loopback(host)


@pytest.mark.parametrize(
    "host", ["0.0.0.0", "::", "", "10.0.0.1", "example.com", "localhost.example.com", "[::1]"]
)
def test_anything_else_is_not(host):
    assert not api.is_loopback(host)


def test_the_config_check_and_the_web_plugin_ask_the_same_function():
    assert check.is_loopback is api.is_loopback
    assert security.is_loopback is api.is_loopback
