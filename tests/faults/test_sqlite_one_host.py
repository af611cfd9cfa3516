"""Two ``bothost run`` on one SQLite file: the second is refused with one clear line.

On SQLite the one host always leads (``bothost.crosshost.leadership``): it runs the singleton
servers and ticks on its timetable. A second host on the same file would lead too — both
watchers pushing, both ticking on schedule — so it must not start. Commands (``bothost
events list``, ``bothost tick``) still share the file with the running host, and a host that
was SIGKILLed leaves nothing behind that stops the next one.
"""

from __future__ import annotations

import os
import signal
import subprocess

from tests.faults.http_host import RunningHost
from tests.helpers import run_bothost

START_TIMEOUT = 60.0  # seconds for a refused `bothost run` to exit; ~1 s on an idle machine


def second_run(host: RunningHost, tmp_path) -> subprocess.CompletedProcess[str]:
    other = RunningHost(host.home, tmp_path / "second")  # its own port and config file
    env = {**os.environ, "BOTHOST_HOME": str(host.home)}
    return run_bothost("run", config=other.config, env=env, timeout=START_TIMEOUT)


async def test_a_second_host_on_one_sqlite_file_is_refused_until_the_first_is_gone(tmp_path):
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    (tmp_path / "first").mkdir()
    (tmp_path / "second").mkdir()
    first = RunningHost(home, tmp_path / "first")
    await first.start()
    try:
        refused = second_run(first, tmp_path)
        assert refused.returncode == 1, refused.stderr
        lines = [line for line in refused.stderr.splitlines() if line.startswith("bothost:")]
        assert len(lines) == 1, refused.stderr
        assert str(home / "bothost.db") in lines[0] and f"pid {first.process.pid}" in lines[0]
        assert "PostgreSQL" in lines[0] and "Traceback" not in refused.stderr

        env = {**os.environ, "BOTHOST_HOME": str(home)}
        listed = run_bothost("events", "list", config=first.config, env=env, timeout=START_TIMEOUT)
        assert listed.returncode == 0, listed.stderr  # commands still share the file
        assert first.process.poll() is None
    finally:
        first.process.send_signal(signal.SIGKILL)
        first.process.wait(10)

    after = RunningHost(home, tmp_path / "second")
    await after.start()  # the dead host's hold went with its process
    assert after.stop() == 0
