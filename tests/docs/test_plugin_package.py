"""A third-party plugin as its own installed distribution, written from docs/plugins.md.

The distribution is laid out as pip leaves one in site-packages (the package and its
``.dist-info`` with the ``bothost`` entry point) in a folder on ``PYTHONPATH``, so the real
entry-point discovery finds it without a slow build; the commands run in subprocesses.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.helpers import run_bothost

COMMAND_TIMEOUT = 60  # one CLI command: imports, migrations, one offline turn

# Written from the docs alone: a provider is a factory of objects with `complete`; the docs
# ask for nothing else (no `name`: the name is the one it is registered under).
PLUGIN = """
from bothost.hookspecs import hookimpl
from bothost.llm.base import ChatResponse, Usage


class EchoModel:
    def __init__(self, llm_config):
        self.model = llm_config.model

    async def complete(self, request):
        return ChatResponse(
            text=f"echo: {request.messages[-1]['content']}", usage=Usage(input=3, output=2)
        )


@hookimpl
def register_llm_providers(register):
    register("echo", EchoModel)
"""


@pytest.fixture
def site(tmp_path) -> Path:
    """A folder holding the installed distribution ``bothost-demo``."""
    folder = tmp_path / "site"
    (folder / "bothost_demo").mkdir(parents=True)
    (folder / "bothost_demo" / "__init__.py").write_text(PLUGIN)
    info = folder / "bothost_demo-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: bothost-demo\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[bothost]\ndemo = bothost_demo\n")
    return folder


def bothost(site: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(site)}
    return run_bothost(*args, home=home, env=env, timeout=COMMAND_TIMEOUT)


def test_the_plugin_is_found_by_its_entry_point(site, home):
    listed = json.loads(bothost(site, home, "plugins", "--json").stdout)
    demo = next(p for p in listed if p["name"] == "demo")
    assert demo["origin"] == "entry-point:bothost-demo"
    assert demo["hooks"] == ["register_llm_providers"]


def test_a_provider_needs_no_name_attribute(site, home):
    (home / "bothost.yaml").write_text("llm: {provider: echo, model: m1}\n")
    result = bothost(site, home, "chat", "-m", "hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "echo: hi"
    assert "unexpected" not in result.stderr
    usage = json.loads(bothost(site, home, "usage", "--by", "model", "--json").stdout)
    assert [(row["key"], row["input"], row["output"]) for row in usage["rows"]] == [("m1", 3, 2)], (
        usage
    )
