"""README's one command as a new user runs it: `make run` in a fresh copy of the tree.

The copy has no venv, no build folders and no caches of ours; pip's own cache is the
machine's. The test waits for `/healthz` to answer, then checks what was printed before
"bothost is running": make's echoed commands and our one INFO line may be there, no
warning of any kind may (issue 13: ~95 setuptools warnings and pip's notices used to be).
How long it takes is measured by bench/first_run.py, not here.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
from peers import missing

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.packaging, pytest.mark.timeout(900)]

# Creating the venv and installing the runtime (~60 packages) from pip's cache on a loaded
# 2-core machine, then starting the host; a cold index takes longer.
HEALTHY_SECONDS = 600
COPY_IGNORE = shutil.ignore_patterns(
    ".git", ".venv", ".peers", "build", "dist", "*.egg-info", "__pycache__", "*.pyc", ".*_cache"
)
RUNNING = "bothost is running"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


def test_make_run_in_a_fresh_copy_prints_no_warnings_before_running(tmp_path):
    if shutil.which("make") is None:
        missing("make")
    tree = tmp_path / "bothost"
    shutil.copytree(ROOT, tree, ignore=COPY_IGNORE)
    home, port = tmp_path / "home", free_port()
    home.mkdir()
    (home / "bothost.yaml").write_text(f"platforms:\n  web:\n    port: {port}\n")
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTHON", "BOTHOST_", "VIRTUAL_ENV", "PYTEST"))
    }
    env["BOTHOST_HOME"] = str(home)
    log = tmp_path / "make-run.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            ["make", "run"],
            cwd=tree,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + HEALTHY_SECONDS
        while not healthy(port):
            if proc.poll() is not None:
                text = log.read_text()
                if not (tree / ".venv" / ".runtime-installed").exists():  # pip or no index
                    missing(f"the runtime's dependencies (make run: {text[-300:]})")
                pytest.fail(f"make run exited with {proc.returncode}:\n{text[-3000:]}")
            assert time.monotonic() < deadline, f"not healthy:\n{log.read_text()[-3000:]}"
            time.sleep(0.2)
        while RUNNING not in log.read_text():  # printed right after the listener is up
            assert proc.poll() is None, log.read_text()[-3000:]
            assert time.monotonic() < deadline
            time.sleep(0.1)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=60)
    before = log.read_text().split(RUNNING, 1)[0]
    # make echoes its commands, and one sets PYTHONWARNINGS: that line is make's, not a warning
    noisy = [
        line
        for line in before.splitlines()
        if "warn" in line.lower() and "PYTHONWARNINGS=" not in line
    ]
    assert not noisy, "\n".join(noisy)
    assert "Traceback" not in before
    assert (tree / ".venv" / ".runtime-installed").exists()
    assert not (tree / ".venv" / ".installed").exists(), "make run installed the test extra"
