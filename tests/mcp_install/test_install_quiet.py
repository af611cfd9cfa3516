"""``bothost mcp install`` says a line per step, not pip's ~60 (issue 39).

A real venv and a real pip, fed a wheel made here through pip's own configuration
(``PIP_NO_INDEX``, ``PIP_FIND_LINKS``), so no network is needed. The wheel's console script
execs the echo server with this interpreter: the install starts the server it installed.
"""

from __future__ import annotations

import base64
import hashlib
import os
import sys
import zipfile
from pathlib import Path

import pytest

from tests.helpers import run_bothost
from tests.mcp_install.support import ECHO_SERVER, INSTALL_TIMEOUT

pytestmark = pytest.mark.timeout(INSTALL_TIMEOUT)

MODULE = f"""import os, sys
def main():
    os.execv({sys.executable!r}, [{sys.executable!r}, {str(ECHO_SERVER)!r}, *sys.argv[1:]])
"""


def make_wheel(folder: Path) -> None:
    """``mcp-server-quiet`` 1.0 with a console script of the same name."""
    dist = "mcp_server_quiet-1.0.dist-info"
    files = {
        "mcp_server_quiet.py": MODULE,
        f"{dist}/METADATA": "Metadata-Version: 2.1\nName: mcp-server-quiet\nVersion: 1.0\n"
        "Summary: An echo server\n",
        f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
        f"{dist}/entry_points.txt": "[console_scripts]\nmcp-server-quiet = mcp_server_quiet:main\n",
    }
    record = []
    with zipfile.ZipFile(folder / "mcp_server_quiet-1.0-py3-none-any.whl", "w") as wheel:
        for name, text in files.items():
            data = text.encode()
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            record.append(f"{name},sha256={digest.decode()},{len(data)}")
            wheel.writestr(name, data)
        wheel.writestr(f"{dist}/RECORD", "\n".join([*record, f"{dist}/RECORD,,"]) + "\n")


@pytest.fixture
def bothost(home, tmp_path):
    """``bothost mcp install ARGS`` with pip reading only a folder holding our wheel."""
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    make_wheel(wheels)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env |= {"BOTHOST_HOME": str(home), "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheels)}

    def run(*args: str):
        return run_bothost("mcp", "install", *args, home=home, env=env, timeout=INSTALL_TIMEOUT)

    return run


def test_an_install_says_a_line_per_step_and_not_pips_output(bothost):
    result = bothost("mcp-server-quiet")
    assert result.returncode == 0, result.stderr
    said = result.stderr.splitlines()
    assert "  installing mcp-server-quiet from PyPI…" in said
    assert "  installed mcp-server-quiet 1.0" in said
    assert not [line for line in said if "pip |" in line], result.stderr
    assert len(said) <= 5, result.stderr  # venv, installing, installed, starting
    assert "installed quiet: pypi mcp-server-quiet 1.0" in result.stdout


def test_verbose_shows_pips_output_and_a_failure_quotes_it_without(bothost):
    shown = bothost("-v", "mcp-server-absent")
    assert shown.returncode == 1
    assert "  pip | " in shown.stderr  # as pip prints it, prefixed
    quiet = bothost("mcp-server-absent")
    assert quiet.returncode == 1
    assert "pip | " not in quiet.stderr
    assert "PyPI has no package 'mcp-server-absent'" in quiet.stderr
