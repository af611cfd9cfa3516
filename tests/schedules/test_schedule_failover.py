"""Two ``bothost run`` hosts on one PostgreSQL database: the leader is SIGKILLed as it is
about to send a due job, and the other host, leading next, sends it — once, same job.

The kill comes from the fault hook (``BOTHOST_FAULT_KILL_AT=job-sending``,
:mod:`bothost.events.faults`) in the first host only, so the moment is exact: after the
leader took the ``schedules`` lease and read the job due, before anything left the process.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import aiohttp
import psycopg
import pytest
import yaml

from tests.helpers import bothost_process, free_port, run_bothost
from tests.schedules.test_host_schedules import SECRET, Receiver, wait_for

pytestmark = pytest.mark.timeout(240)

ROOT = Path(__file__).resolve().parents[2]
LEASE = 6.0  # tick.lease: the leader lease, and the schedules lease's expiry


class Host:
    def __init__(self, name: str, root: Path, url: str, receiver: Receiver) -> None:
        self.name, self.home = name, root / name
        self.home.mkdir()
        self.port = free_port()
        self.config = root / f"{name}.yaml"
        self.config.write_text(
            yaml.safe_dump(
                {
                    "store": {"url": url},
                    "llm": {"provider": "offline"},
                    "tick": {"enabled": False, "lease": f"{LEASE}s"},
                    "platforms": {
                        "web": {"host": "127.0.0.1", "port": self.port},
                        "console": {"enabled": False},
                        "webhook": {"secret": SECRET, "targets": {"ops": {"url": receiver.url}}},
                    },
                }
            )
        )
        self.log = root / f"{name}.log"
        self.process: asyncio.subprocess.Process | None = None

    async def start(self, **env: str) -> None:
        with self.log.open("wb") as stderr:
            self.process = await bothost_process(
                self.home, self.config, "run", stderr=stderr, PYTHONPATH=str(ROOT), **env
            )

    async def health(self) -> dict[str, Any] | None:
        try:
            async with aiohttp.ClientSession() as client:
                async with client.get(f"http://127.0.0.1:{self.port}/healthz") as response:
                    return await response.json()
        except aiohttp.ClientError:
            return None

    async def leading(self) -> bool:
        report = await self.health()
        return bool(report and report["tick"]["leading"])

    async def stop(self) -> None:
        if self.process is None or self.process.returncode is not None:
            return
        self.process.terminate()
        try:
            async with asyncio.timeout(30):
                await self.process.wait()
        except TimeoutError:
            self.process.kill()
            await self.process.wait()


def query(url: str, sql: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute(sql).fetchall()


async def test_a_leader_killed_before_sending_leaves_the_job_to_the_next(tmp_path, postgres_url):
    receiver = await Receiver().start()
    first = Host("a", tmp_path, postgres_url, receiver)
    second = Host("b", tmp_path, postgres_url, receiver)
    try:
        await first.start(BOTHOST_FAULT_KILL_AT="job-sending")
        await wait_for(first.leading, "the first host to lead")
        await second.start()
        await wait_for(second.health, "the second host to serve")
        env = {**os.environ, "BOTHOST_HOME": str(first.home), "PYTHONPATH": str(ROOT)}
        added = await asyncio.to_thread(
            run_bothost,
            "schedule",
            "add",
            "--in",
            "2s",
            "--to",
            "webhook:ops",
            "fail over",
            config=second.config,
            env=env,
        )
        assert added.returncode == 0, added.stderr
        assert first.process is not None
        await wait_for(lambda: first.process.returncode is not None, "the leader's death")
        assert first.process.returncode == -9  # killed at the fault point, not ended
        await wait_for(lambda: receiver.texts() == ["Reminder: fail over"], "the other host")
        await wait_for(second.leading, "the second host to lead")
        rows = query(postgres_url, "SELECT id, status FROM schedule_jobs")
        assert [status for _, status in rows] == ["done"]
        fires = query(postgres_url, "SELECT session_id, status FROM tool_calls")
        assert fires == [(f"schedule:{rows[0][0]}", "ok")]
        assert len(receiver.received) == 1  # exactly once: the dead leader sent nothing
    finally:
        await asyncio.gather(first.stop(), second.stop())
        await receiver.stop()
        for host in (first, second):
            print(f"--- {host.name}\n{host.log.read_text()[-3000:]}")
