"""Fixtures for install and import: the real CLI in a subprocess.

Tests marked ``network`` download packages from PyPI or npm. They run in CI (where
BOTHOST_REQUIRE_PEERS=1 turns an unreachable registry into a failure) and skip locally only
when the registry cannot be reached.
"""

from __future__ import annotations

import pytest

from tests.helpers import run_bothost
from tests.mcp_install.support import CLI_TIMEOUT


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "network: downloads packages from PyPI or npm (runs in CI; skipped "
        "locally only when the registry is unreachable)",
    )


@pytest.fixture
def bothost(home):
    """Run `python -m bothost --home HOME ARGS…` and return the finished process."""

    def run(*args: str, timeout: float = CLI_TIMEOUT, env: dict | None = None):
        return run_bothost(*args, home=home, env=env, timeout=timeout)

    return run
