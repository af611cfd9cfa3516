"""A real ``bothost run`` in a subprocess, serving HTTP with webhooks on, for fault tests.

The host runs with a soft ``RLIMIT_NOFILE`` of 1,024 (the usual default on Linux), so the
tests see the file-descriptor pressure a real install sees. Its stderr goes to a file, never
a pipe: a host flooding its log must not block on a pipe nobody reads.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import signal
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import aiohttp
import yaml
from bothost.plugins.web.signing import new_secret, sign_headers

from tests.helpers import free_port

HOST_NOFILE = 1024  # the soft limit most Linux installs give a service


def limit_files(soft: int = HOST_NOFILE) -> None:
    """preexec_fn: the child's soft open-file limit (within its hard limit)."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(soft, hard), hard))


def raise_own_file_limit(wanted: int) -> None:
    """Let this test process hold ``wanted`` sockets (up to the hard limit)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


class RunningHost:
    """``bothost run`` on a free port of 127.0.0.1; ``await start()``, ``stop()``."""

    def __init__(self, home: Path, workdir: Path, **extra: Any) -> None:
        self.home, self.workdir = home, workdir
        self.port = free_port()
        self.secret = new_secret()
        data: dict[str, Any] = {
            "platforms": {
                "web": {"port": self.port},
                "console": {"enabled": False},
                "webhook": {"secret": self.secret},
            },
            "mcp": {"servers": {"weather": {"enabled": False}}},
            "tick": {"enabled": False},
        }
        data.update(extra)
        self.config = workdir / "host.yaml"
        self.config.write_text(yaml.safe_dump(data))
        self.stderr_path = workdir / "host.stderr"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        with open(self.stderr_path, "wb") as stderr:
            # by hand, not with tests.helpers.bothost_process: the host's own open-file limit
            # (preexec_fn) is the point of these tests
            self.process = subprocess.Popen(
                [sys.executable, "-m", "bothost", "--config", str(self.config), "run"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                env={**os.environ, "BOTHOST_HOME": str(self.home)},
                preexec_fn=limit_files,
            )
        async with asyncio.timeout(60):
            while "bothost is running" not in self.stderr():
                if self.process.poll() is not None:
                    raise AssertionError(f"host exited early:\n{self.stderr()}")
                await asyncio.sleep(0.05)

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def stop(self) -> int:
        assert self.process is not None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                return self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
                raise AssertionError("host did not stop on SIGTERM") from None
        return self.process.returncode

    def open_fds(self) -> int:
        assert self.process is not None
        return len(os.listdir(f"/proc/{self.process.pid}/fd"))

    async def webhook(
        self,
        session: aiohttp.ClientSession,
        data: Any,
        *,
        source: str = "faults",
        msg_id: str | None = None,
        timeout: float = 30,
    ) -> tuple[int, dict[str, str], Any]:
        """POST a signed event; (status, headers, parsed JSON or text)."""
        body = data if isinstance(data, bytes) else json.dumps(data).encode()
        headers = sign_headers(self.secret, msg_id or f"msg_{uuid.uuid4().hex}", body)
        headers["Content-Type"] = "application/json"
        return await self.send(session, f"/webhook/events/{source}", body, headers, timeout)

    async def post(
        self, session: aiohttp.ClientSession, path: str, data: Any, timeout: float = 30
    ) -> tuple[int, dict[str, str], Any]:
        """POST JSON to ``path``: signed for ``/webhook/…``, plain for the local API."""
        body = json.dumps(data).encode()
        headers = {"Content-Type": "application/json"}
        if path.startswith("/webhook/"):
            headers.update(sign_headers(self.secret, f"msg_{uuid.uuid4().hex}", body))
        return await self.send(session, path, body, headers, timeout)

    async def send(
        self,
        session: aiohttp.ClientSession,
        path: str,
        body: bytes,
        headers: dict[str, str],
        timeout: float,
    ) -> tuple[int, dict[str, str], Any]:
        """POST ``body``; (status, headers, parsed JSON or text)."""
        client_timeout = aiohttp.ClientTimeout(total=timeout)
        async with session.post(
            f"{self.url}{path}", data=body, headers=headers, timeout=client_timeout
        ) as response:
            text = await response.text()
            try:
                parsed: Any = json.loads(text)
            except ValueError:
                parsed = text
            return response.status, dict(response.headers), parsed

    async def healthz(
        self, session: aiohttp.ClientSession, timeout: float = 30
    ) -> tuple[int, dict[str, str], Any]:
        client_timeout = aiohttp.ClientTimeout(total=timeout)
        async with session.get(f"{self.url}/healthz", timeout=client_timeout) as response:
            return response.status, dict(response.headers), await response.json()
