"""``bothost chat -m`` with a model imports what its turn uses (issue 39: the request
should start within 0.5 s of launch; ``bench/chat_start.py`` measures it against the
openai SDK's own floor, here the modules are checked, which does not depend on the machine).
The providers speak HTTP over aiohttp, so no vendor SDK and nothing it brings is loaded.
"""

from __future__ import annotations

import asyncio
import os
import sys

from tests.fakes.llm import FakeLlm

# what a turn with a model loads no part of: each is imported where it is used
NOT_FOR_A_MODEL_TURN = (
    "croniter",  # cron schedules (bothost.schedules.when): the scheduling tools load without it
    "dateutil",  # croniter's
    "slack_bolt",
    "slack_sdk",
    "psycopg",
    "openai",  # the vendor SDKs: bothost.llm.wire speaks their APIs itself
    "anthropic",
    "pydantic",  # theirs: models of every API type, most of the SDKs' import time
    "pydantic_core",
    "httpx",
    "httpx2",
)


async def test_a_chat_with_a_model_imports_no_cron_or_other_stack(tmp_path):
    fake = await FakeLlm([{"text": "hello"}]).start()
    try:
        home = tmp_path / "home"
        home.mkdir()
        (home / "bothost.yaml").write_text(
            f"llm: {{provider: openai, model: m, api_key: test-key, base_url: '{fake.openai_url}'}}\n"
        )
        process = await asyncio.create_subprocess_exec(
            *(sys.executable, "-X", "importtime", "-m", "bothost", "chat", "-m", "hi"),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={**os.environ, "BOTHOST_HOME": str(home)},
        )
        async with asyncio.timeout(60):
            out, err = await process.communicate()
    finally:
        await fake.stop()
    assert process.returncode == 0, err.decode()[-2000:]
    assert out.decode().strip() == "hello" and len(fake.requests) == 1
    modules = {
        line.rsplit("|", 1)[1].strip().split(".")[0]
        for line in err.decode().splitlines()
        if line.startswith("import time:") and line.count("|") == 2
    }
    assert {"bothost", "aiohttp"} <= modules  # the parsing found the imports, the request's too
    assert not modules & set(NOT_FOR_A_MODEL_TURN), sorted(modules & set(NOT_FOR_A_MODEL_TURN))
