"""Whole-process time of a one-shot command: ``bothost chat -m help`` against ``llm --help``.

Each command runs as a fresh process, as a person types it, on the embedded defaults (a
fresh home, the bundled weather server enabled); the figure is the median wall time after
one warm-up run (which writes the home and the byte-code caches). The peer is Simon
Willison's ``llm`` CLI, another Python chat tool on click (``pip install llm`` into this
venv; without it only our figures print). ``python -c pass`` is the floor no Python CLI
goes under.

Run: .venv/bin/python bench/cli_start.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent


def timed(argv: list[str], env: dict[str, str], runs: int) -> float:
    """Median wall seconds of `argv` over `runs` runs, after one warm-up run."""
    subprocess.run(argv, env=env, check=True, capture_output=True)
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(argv, env=env, check=True, capture_output=True)
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        # Byte-code is written as a person's first run writes it (some sandboxes turn it off,
        # which makes every run compile every module).
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["BOTHOST_HOME"] = home
        floor = timed([sys.executable, "-c", "pass"], env, args.runs)
        ours = timed([str(BIN / "bothost"), "chat", "-m", "help"], env, args.runs)
        print(f"python -c pass            {floor * 1000:7.0f} ms")
        print(f"bothost chat -m help      {ours * 1000:7.0f} ms")
        peer = shutil.which("llm", path=str(BIN)) or shutil.which("llm")
        if peer is None:
            print("llm --help                (not installed: pip install llm)")
            return
        theirs = timed([peer, "--help"], env, args.runs)
        print(f"llm --help                {theirs * 1000:7.0f} ms")
        print(f"ours / llm                {ours / theirs:7.2f}")


if __name__ == "__main__":
    main()
