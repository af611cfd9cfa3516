"""``bothost reload``: asking the host that runs on a home to read its config now.

A running ``bothost run`` says where it is in ``state/config-status.json`` (its pid:
:func:`bothost.host.reload.publish`). This sends that pid SIGHUP, which the host answers by
loading its config at once (:class:`~bothost.host.reload.ConfigWatcher`), and waits for the
status of a look that began after the signal was sent: the sections it applied, the keys
that wait for a restart, or the one line saying why the edit was refused. Same machine,
same clock: the host stamps each look with ``time.time()``, which this compares.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bothost.host.reload import read_published

ANSWER_SECONDS = 30.0  # a look that starts MCP servers answers once they were asked to start
READ_EVERY = 0.05  # seconds between reads of the status file while waiting


class ReloadRequestError(Exception):
    """No host runs on this home, or it did not answer."""


@dataclass
class Answer:
    """What the host's look found."""

    applied: list[str]
    restart_needed: list[str]
    error: str

    @classmethod
    def from_status(cls, status: dict[str, Any]) -> Answer:
        return cls(
            list(status.get("applied") or []),
            list(status.get("restart_needed") or []),
            str(status.get("error") or ""),
        )

    def lines(self) -> list[str]:
        """What ``bothost reload`` prints when the edit was valid."""
        said = [
            f"config applied: {', '.join(self.applied)}" if self.applied else "nothing new to apply"
        ]
        if self.restart_needed:
            them = "them" if len(self.restart_needed) > 1 else "it"
            keys = ", ".join(self.restart_needed)
            said.append(f"restart needed: {keys} (restart bothost run to apply {them})")
        return said


def request_reload(home: Path, timeout: float = ANSWER_SECONDS) -> Answer:
    """SIGHUP the host running on ``home`` and wait (up to ``timeout``) for its answer."""
    status = read_published(home)
    if status is None:
        raise ReloadRequestError(f"no host runs on {home}: start it with `bothost run`")
    pid = int(status["pid"])
    sent = time.time()
    try:
        os.kill(pid, signal.SIGHUP)
    except ProcessLookupError:
        raise ReloadRequestError(f"no host runs on {home}: start it with `bothost run`") from None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = read_published(home)
        if status is None or status.get("pid") != pid:
            raise ReloadRequestError(f"the host on {home} (pid {pid}) stopped before it answered")
        if (status.get("looked_at") or 0) >= sent:
            return Answer.from_status(status)
        time.sleep(READ_EVERY)
    raise ReloadRequestError(
        f"the host on {home} (pid {pid}) did not answer within {timeout:g} s; "
        f"see {home / 'logs' / 'bothost.log'}"
    )
