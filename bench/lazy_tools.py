"""Prompt tokens of lazy MCP loading: the groups table against every tool's schema.

With 40 MCP tools available and nothing granted, a turn's prompt carries the compact table
of tool groups (``bothost.agent.prompt.groups_table``) plus the one ``activate_tools``
definition; without lazy loading it would carry every tool as an entry of the OpenAI
``tools`` array. The tools are real: the bundled servers weather, ssh, gmail and gcal
(they list their tools without credentials) started through a host's MCP manager, topped
up to exactly 40 with the test echo server (and an allowlist on the last server if the
bundled ones alone pass 40). Tokens are counted with the repo's download-free estimate
(``bothost.llm.base.estimate_tokens``) and, if it is installed, tiktoken (``o200k_base``,
the GPT-4o family's encoding) — the peer a real model bills by. tiktoken downloads its
encoding on first use; where that host is out of reach, the same file shipped inside the
PyPI package ``bpe-openai`` seeds tiktoken's cache (tiktoken checks its SHA-256 either way).
Neither is a dependency: ``pip install tiktoken bpe-openai`` to get the second count.

Run: .venv/bin/python bench/lazy_tools.py [--tools 40]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import gzip
import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import yaml

from bothost.config import load
from bothost.hooks.discovery import load_plugins, new_plugin_manager
from bothost.host.host import Host
from bothost.llm.base import estimate_tokens

ROOT = Path(__file__).resolve().parent.parent
ECHO_SERVER = ROOT / "tests" / "mcp_servers" / "echo_server.py"
BUNDLED = ("weather", "ssh", "gmail", "gcal")
TIKTOKEN_ENCODING = "o200k_base"
# Where tiktoken fetches the encoding; its cache file is named by this URL's SHA-1.
TIKTOKEN_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
SETTLE = 30.0  # seconds for a restarted server to list its tools again


def config_file(directory: Path) -> Path:
    servers: dict[str, Any] = {name: {"enabled": True} for name in BUNDLED}
    servers["echo"] = {
        "command": sys.executable,
        "args": [str(ECHO_SERVER)],
        "description": "Echoes things back, for tests",
    }
    path = directory / "bench.yaml"
    path.write_text(
        yaml.safe_dump({"platforms": {"console": {"enabled": False}}, "mcp": {"servers": servers}})
    )
    return path


async def trim_to(host: Host, wanted: int) -> None:
    """Allowlist tools so exactly `wanted` are available, bundled servers first."""
    manager = host.mcp
    order = [*BUNDLED, "echo"]
    left = wanted
    for name in order:
        names = [t["name"] for t in manager.tools(name)]
        keep = names[: max(left, 0)]
        left -= len(keep)
        config = manager.config_servers[name]
        manager.config_servers[name] = dataclasses.replace(config, tools=keep, enabled=bool(keep))
    await manager.reload()
    await asyncio.gather(
        *(r.wait_settled(SETTLE) for r in manager.runners.values() if r.config.enabled)
    )


def tiktoken_counter(cache: Path) -> tuple[Any, str]:
    """tiktoken's o200k_base `encode`, or None and why not."""
    try:
        import tiktoken
    except ImportError:
        return None, "tiktoken not installed (`pip install tiktoken bpe-openai` for a real count)"
    try:
        return tiktoken.get_encoding(TIKTOKEN_ENCODING).encode, ""
    except Exception as exc:  # no route to the encoding's host: try the bundled copy
        why = f"tiktoken could not fetch {TIKTOKEN_ENCODING}: {type(exc).__name__}"
    try:
        import bpe_openai
    except ImportError:
        return None, why + " (`pip install bpe-openai` ships the file)"
    bundled = Path(bpe_openai.__file__).parent / "data" / f"{TIKTOKEN_ENCODING}.tiktoken.gz"
    cache.mkdir(parents=True, exist_ok=True)
    (cache / hashlib.sha1(TIKTOKEN_URL.encode()).hexdigest()).write_bytes(
        gzip.decompress(bundled.read_bytes())
    )
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
    try:
        return tiktoken.get_encoding(TIKTOKEN_ENCODING).encode, ""
    except Exception as exc:
        return None, f"{why}; the copy from bpe-openai did not load either: {exc}"


async def measure(wanted: int) -> dict[str, Any]:
    from bothost.agent.prompt import groups_table

    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        home.mkdir(mode=0o700)
        config = load(config_file(Path(tmp)), home)
        pm = new_plugin_manager()
        load_plugins(pm, [], [])
        host = Host(config, home, pm)
        await host.start(serve_http=False, platforms=False, mcp=True, tick=False)
        try:
            await host.mcp.settle(set(host.mcp.runners), SETTLE)
            await trim_to(host, wanted)
            failed = [s.name for s in host.mcp.status() if s.enabled and s.state != "ready"]
            if failed:
                raise SystemExit(f"servers not ready: {failed}")
            session = SimpleNamespace(is_admin=False)
            groups = host.registry.groups(is_admin=False)
            mcp_tools = [t for g in groups for t in host.registry.group_tools(g.name)]
            activate = host.registry.native["activate_tools"]
            table = groups_table(host, session, set())
            lazy_tools = json.dumps([{"type": "function", "function": activate.spec()}])
            every = json.dumps([{"type": "function", "function": t.spec()} for t in mcp_tools])
        finally:
            await host.stop()
    return {
        "tools": len(mcp_tools),
        "groups": len(groups),
        "table": table,
        "lazy": table + "\n" + lazy_tools,
        "every": every,
    }


def report(found: dict[str, Any], cache: Path) -> None:
    print(f"{found['tools']} MCP tools in {found['groups']} groups, no grants\n")
    print(found["table"] + "\n")
    rows = [("repo estimate (chars/4)", estimate_tokens)]
    encode, why = tiktoken_counter(cache)
    if encode is not None:
        rows.append((f"tiktoken {TIKTOKEN_ENCODING}", lambda text: len(encode(text))))
    else:
        print(f"({why})\n")
    print(f"{'counter':26} {'lazy table':>11} {'every tool':>11} {'ratio':>7}")
    for label, count in rows:
        lazy, every = count(found["lazy"]), count(found["every"])
        print(f"{label:26} {lazy:>11} {every:>11} {every / lazy:>6.1f}x")
    print("\nlazy = groups table in the system prompt + the activate_tools definition;")
    print("every = all tools as the OpenAI `tools` array (JSON).")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tools", type=int, default=40)
    args = parser.parse_args()
    found = asyncio.run(measure(args.tools))
    with tempfile.TemporaryDirectory() as cache:
        report(found, Path(cache))


if __name__ == "__main__":
    main()
