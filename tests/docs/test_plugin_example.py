"""The example plugin of docs/plugins.md loads from ``plugins.dirs``, works, and keeps to
the public interface it describes."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from bothost.models import Address, IncomingMessage
from tests.helpers import make_host
from tests.test_boundaries import core_tables, private_imports, table_mentions, untyped_hosts

DOC = Path(__file__).resolve().parents[2] / "docs" / "plugins.md"
HEADING = "### Example: a plugin that uses only the interface"


def example() -> str:
    """The first ```python block after the example's heading."""
    text = DOC.read_text("utf-8")
    assert HEADING in text, "docs/plugins.md lost its example plugin"
    match = re.search(r"^```python\n(.*?)^```$", text[text.index(HEADING) :], re.S | re.M)
    assert match, "no python block after the example's heading"
    return match[1]


def test_the_example_uses_only_the_public_interface():
    tree = ast.parse(example())
    assert private_imports(tree) == []
    assert table_mentions(tree, core_tables()) == []
    assert untyped_hosts(tree) == []


@pytest.fixture
async def host(home, tmp_path):
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "standup.py").write_text(example(), "utf-8")
    host = make_host(home, {"plugins": {"dirs": [str(folder)]}})
    await host.start(serve_http=False, platforms=False, mcp=False, tick=False)
    yield host
    await host.stop()


async def say(host, text: str) -> str:
    message = IncomingMessage(address=Address("console", ""), text=text, user="me", is_admin=True)
    return (await host.handle_message(message)).text


async def test_the_example_loads_from_plugins_dirs_and_works(host):
    assert "Noted." in await say(host, 'call note {"text": "deploy at 3"}')
    await host.ingest_event("ops", "alert", {"summary": "disk"})
    summary = await say(host, "call standup {}")
    assert "Notes: deploy at 3" in summary
    assert "Events: 1 pending, 0 failed" in summary
    assert "- note: ok" in summary
