"""Platforms translate their wire to a message and a reply back; the host does the rest.

Stop words, the order of a conversation's messages and redelivered messages are decided in
``bothost/host/`` (``Host.handle_message``, ``bothost/host/inbox.py``) for every platform,
so no module under ``plugins/`` may check a stop word, build locks per conversation, stop
turns itself or keep a record of what it received (issue 35). The behaviour through each
platform is in tests/slack/test_slack_host_path.py and tests/web/test_host_path.py.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLUGINS = ROOT / "plugins"

# what only the host calls: the stop check, stopping turns, the delivery and webhook records
HOST_ONLY = {
    "is_stop",
    "stop_turns",
    "cancel",
    "claim_delivery",
    "remember_webhook",
    "forget_webhook",
    "forget_webhooks",
    "webhook_seen",
}


def is_lock(node: ast.AST) -> bool:
    """``asyncio.Lock()`` or ``Lock()``."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name == "Lock"


def problems(source: str, where: str = "<source>") -> list[str]:
    """What in ``source`` does the host's work: one line each."""
    found = []
    for node in ast.walk(ast.parse(source)):
        line = f"{where}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Name) and node.id in HOST_ONLY:
            found.append(f"{line}: uses {node.id}")
        elif isinstance(node, ast.Attribute) and node.attr in HOST_ONLY:
            if node.attr == "cancel" and not is_host(node.value):
                continue  # a task's or a timer's cancel is not stopping turns
            found.append(f"{line}: uses .{node.attr}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            # a lock per key: locks.setdefault(key, Lock()) or locks[key] = Lock()
            if node.func.attr == "setdefault" and any(is_lock(a) for a in node.args):
                found.append(f"{line}: a lock per key")
        elif isinstance(node, ast.Assign) and is_lock(node.value):
            if any(isinstance(t, ast.Subscript) for t in node.targets):
                found.append(f"{line}: a lock per key")
    return found


def is_host(node: ast.AST) -> bool:
    """Whether an expression names the host (``host``, ``self.host``, ``x.platform.host``)."""
    return (isinstance(node, ast.Name) and node.id == "host") or (
        isinstance(node, ast.Attribute) and node.attr == "host"
    )


def test_no_plugin_checks_stops_orders_turns_or_remembers_deliveries():
    found = []
    for path in sorted(PLUGINS.rglob("*.py")):
        found += problems(path.read_text(), str(path.relative_to(ROOT)))
    assert found == []


def test_the_check_sees_what_slack_and_the_webhooks_once_did():
    slack = """
if api.is_stop(text):
    await self.platform.host.stop_turns(address, within=True)
lock = self.locks.setdefault(key, asyncio.Lock())
new = await self.platform.host.queries.claim_delivery("slack", keys, now, 3600)
"""
    webhooks = """
self.locks[msg_id] = asyncio.Lock()
new = await self.host.queries.remember_webhook(msg_id, time.time())
self.host.cancel(address)
task.cancel()
"""
    assert len(problems(slack)) == 4
    assert len(problems(webhooks)) == 3  # a task's cancel is no turn's
