"""Ctrl-C while a command waits for another process's hold on the SQLite database.

Found from outside: with another process holding the write lock, Ctrl-C on `bothost tick` or
`bothost events push` did nothing until the store's busy timeout (10 s) ran out, and the
command then ended in "database error: … locked by another process" with exit status 1.
"""

from __future__ import annotations

import asyncio
import signal
import sqlite3
from pathlib import Path

import pytest

from tests.helpers import bothost_process, run_bothost

# Starting a Python process that imports the host, on a loaded machine.
STEP_SECONDS = 60


async def opened(pid: int, database: Path) -> None:
    """Until process ``pid`` has the database open: its open then waits on the lock."""
    fds = Path(f"/proc/{pid}/fd")
    while not any(_points_to(fd, database) for fd in fds.iterdir()):
        await asyncio.sleep(0.05)


def _points_to(fd: Path, target: Path) -> bool:
    try:
        return fd.resolve() == target.resolve()
    except OSError:  # closed meanwhile
        return False


@pytest.mark.parametrize(
    "args",
    [["tick"], ["events", "push", "test", "ping", "{}"], ["rules", "list"]],
    ids=["tick", "push", "rules"],
)
async def test_ctrl_c_while_another_process_holds_the_database_exits_130_at_once(
    tmp_path, home, args
):
    config = tmp_path / "c.yaml"
    config.write_text("mcp: {servers: {weather: {enabled: false}}}\n")
    assert run_bothost("db", "migrate", config=config).returncode == 0
    database = home / "bothost.db"
    holder = sqlite3.connect(database, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process's write lock, held throughout
    process = await bothost_process(home, config, *args, stderr=asyncio.subprocess.STDOUT)
    assert process.stdout
    try:
        async with asyncio.timeout(STEP_SECONDS):
            await opened(process.pid, database)
        process.send_signal(signal.SIGINT)
        # held for the whole test: before, the command waited out the busy timeout, then
        # failed with the lock's error and 1
        status = await asyncio.wait_for(process.wait(), STEP_SECONDS)
        said = (await process.stdout.read()).decode()
        assert status == 130, said
        assert said.rstrip().endswith("bothost: interrupted"), said
        assert "database error" not in said
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        holder.execute("ROLLBACK")
        holder.close()
