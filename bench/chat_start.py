"""Time from launching ``bothost chat -m hi`` to the model's request arriving, against the SDK.

Issue 39 asks that ``chat -m`` with a model start its request within 0.5 s of launch on an
idle machine. The model is the fake OpenAI server of the tests (``tests/fakes/llm.py``) on
127.0.0.1, in this process, so the launch and the request's arrival are read on one clock:
each run starts a fresh process and takes the time from just before the launch to the
moment the fake reads the request's body. The home is fresh (the embedded defaults, the
bundled weather server enabled) with an ``llm:`` block naming the fake; one warm-up run
writes the home and the byte-code caches first.

The named peer is the usual way a Python program asks OpenAI: ``python -c`` importing the
official ``openai`` SDK and sending the same streamed request. bothost no longer goes through
the SDK (``bothost/llm/wire.py`` speaks the API over aiohttp, which bothost imports anyway),
so it may start its request before the SDK alone does: below 1.0x is bothost ahead.

Run: .venv/bin/python bench/chat_start.py [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the tests' fake model

from tests.fakes.llm import FakeLlm  # noqa: E402  (after the path above)

RUN_TIMEOUT = 60  # seconds for one launched process: a hung run, not a slow one

SDK = """
import sys, openai
client = openai.OpenAI(base_url=sys.argv[1], api_key="test-key")
for _ in client.chat.completions.create(
    model="m", messages=[{"role": "user", "content": "hi"}], stream=True
):
    pass
"""


class Arrivals:
    """The fake's script: every request answers "hello" and notes when it arrived."""

    def __init__(self) -> None:
        self.times: list[float] = []

    def __call__(self, body: dict) -> dict:
        self.times.append(time.perf_counter())
        return {"text": "hello"}


async def one_run(argv: list[str], env: dict[str, str], fake: FakeLlm, seen: Arrivals) -> float:
    """Seconds from launching ``argv`` to the fake receiving its request."""
    fake.script = [seen] * 4  # a turn makes one request; spares in case a run retries
    before = len(seen.times)
    started = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        *argv, env=env, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE
    )
    async with asyncio.timeout(RUN_TIMEOUT):
        _, err = await process.communicate()
    if process.returncode != 0 or len(seen.times) == before:
        raise SystemExit(f"{argv[1:3]} failed ({process.returncode}): {err.decode()[-500:]}")
    return seen.times[before] - started


async def median(argv: list[str], env: dict[str, str], fake, seen, runs: int) -> list[float]:
    await one_run(argv, env, fake, seen)  # warm-up: the home, the byte-code caches
    return [await one_run(argv, env, fake, seen) for _ in range(runs)]


def describe(name: str, samples: list[float]) -> str:
    return (
        f"{name:<28} median {statistics.median(samples) * 1000:7.0f} ms"
        f"  (min {min(samples) * 1000:.0f}, max {max(samples) * 1000:.0f}, n={len(samples)})"
    )


async def main(runs: int) -> None:
    seen = Arrivals()
    fake = await FakeLlm().start()
    try:
        with tempfile.TemporaryDirectory() as home:
            config = Path(home) / "bothost.yaml"
            config.write_text(
                "llm: {provider: openai, model: m, api_key: test-key,"
                f' base_url: "{fake.openai_url}"}}\n',
                "utf-8",
            )
            env = {**os.environ, "BOTHOST_HOME": home}
            ours = await median(
                [sys.executable, "-m", "bothost", "chat", "-m", "hi"], env, fake, seen, runs
            )
            sdk = await median([sys.executable, "-c", SDK, fake.openai_url], env, fake, seen, runs)
    finally:
        await fake.stop()
    print(describe("bothost chat -m hi", ours))
    print(describe("openai SDK (python -c)", sdk))
    ratio = statistics.median(ours) / statistics.median(sdk)
    print(f"bothost / SDK: {ratio:.2f}x  (goal: bothost under 500 ms on an idle machine)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=9, help="timed runs of each (default 9)")
    asyncio.run(main(parser.parse_args().runs))
