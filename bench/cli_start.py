"""Whole-process time of a one-shot command: ``bothost chat -m help`` against ``llm --help``.

Each command runs as a fresh process, as a person types it, on the embedded defaults (a
fresh home, the bundled weather server enabled); the figure is the median wall time after
one warm-up run (which writes the home and the byte-code caches). The peer is Simon
Willison's ``llm`` CLI, another Python chat tool on click. It is not one of our
dependencies: the bench uses ``--peer PATH``, else an ``llm`` beside this interpreter, else
a throwaway venv ``.peers/llm`` that it makes itself (``pip install llm==0.36``
from the registry; ``--no-install`` skips that) and reuses on later runs; when the registry
cannot be reached it says so and prints only our figures. ``python -c pass`` is the floor
no Python CLI goes under.

Run: .venv/bin/python bench/cli_start.py [--runs N] [--peer PATH] [--no-install]
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
ROOT = Path(__file__).resolve().parent.parent
LLM_VERSION = "0.36"  # pinned, so runs on different days compare the same peer
PEER_VENV = ROOT / ".peers" / "llm"  # beside the other peers (`make peers`), never in .venv
INSTALL_TIMEOUT = 600  # seconds for the venv and pip: a slow mirror, not a hung one


def timed(argv: list[str], env: dict[str, str], runs: int) -> float:
    """Median wall seconds of `argv` over `runs` runs, after one warm-up run."""
    subprocess.run(argv, env=env, check=True, capture_output=True)
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(argv, env=env, check=True, capture_output=True)
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def find_peer(explicit: str | None, install: bool) -> tuple[str | None, str]:
    """The ``llm`` to run and where it came from, or None and why there is none."""
    if explicit:
        return explicit, "--peer"
    beside = shutil.which("llm", path=str(BIN))
    if beside:
        return beside, "this venv"
    made = PEER_VENV / "bin" / "llm"
    if made.exists():
        return str(made), str(PEER_VENV.relative_to(ROOT))
    if not install:
        return None, f"not installed; run without --no-install to make {PEER_VENV}"
    print(f"(making {PEER_VENV} with llm=={LLM_VERSION}; once)", flush=True)
    try:
        subprocess.run(
            [sys.executable, "-m", "venv", str(PEER_VENV)],
            check=True,
            capture_output=True,
            timeout=INSTALL_TIMEOUT,
        )
        subprocess.run(
            [
                str(PEER_VENV / "bin" / "python"),
                "-m",
                "pip",
                "install",
                "-q",
                "--disable-pip-version-check",
                f"llm=={LLM_VERSION}",
            ],
            check=True,
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT,
        )
    except subprocess.CalledProcessError as exc:
        shutil.rmtree(PEER_VENV, ignore_errors=True)  # half a venv would be found next time
        last = (exc.stderr or "").strip().splitlines()[-1:] or [str(exc)]
        return None, f"could not install llm=={LLM_VERSION} (registry unreachable?): {last[0]}"
    except subprocess.TimeoutExpired:
        shutil.rmtree(PEER_VENV, ignore_errors=True)
        return None, f"installing llm=={LLM_VERSION} took over {INSTALL_TIMEOUT} s"
    return str(made), str(PEER_VENV.relative_to(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--peer", help="the llm executable to compare with")
    parser.add_argument(
        "--no-install", action="store_true", help=f"never make {PEER_VENV.name} venv"
    )
    args = parser.parse_args()
    peer, origin = find_peer(args.peer, not args.no_install)
    with tempfile.TemporaryDirectory() as home:
        # Byte-code is written as a person's first run writes it (some sandboxes turn it off,
        # which makes every run compile every module).
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["BOTHOST_HOME"] = home
        env["LLM_USER_PATH"] = str(Path(home) / "llm")  # the peer's own state, thrown away too
        floor = timed([sys.executable, "-c", "pass"], env, args.runs)
        ours = timed([str(BIN / "bothost"), "chat", "-m", "help"], env, args.runs)
        print(f"python -c pass            {floor * 1000:7.0f} ms")
        print(f"bothost chat -m help      {ours * 1000:7.0f} ms")
        if peer is None:
            print(f"llm --help                (not measured: {origin})")
            return
        theirs = timed([peer, "--help"], env, args.runs)
        print(f"llm --help                {theirs * 1000:7.0f} ms  ({origin})")
        print(f"ours / llm                {ours / theirs:7.2f}")


if __name__ == "__main__":
    main()
