"""A new user's first `make run`: seconds from a fresh clone to `/healthz` answering.

Clones this repository twice into a temporary folder — at HEAD and at a baseline commit
(default: 3980041, the first version, whose `make run` installed the test extra too) — and
times `make run` in each from nothing until `GET /healthz` answers 200, with a fresh home and
a free port. The pip cache stays warm for both, as it is for anyone who installed Python
packages before; the figure is the project's own install and start-up. Runs are alternated
so that load on the machine hits both alike. Prints each run, the medians and the ratio.

    python bench/first_run.py [--baseline COMMIT] [--runs N]
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEADLINE = 600.0  # the baseline installs mypy, selenium, schemathesis…: minutes, not hours


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


def clone(commit: str, into: Path) -> Path:
    subprocess.run(["git", "clone", "-q", str(REPO), str(into)], check=True)
    subprocess.run(["git", "-C", str(into), "checkout", "-q", commit], check=True)
    return into


def first_run(tree: Path) -> float:
    """Seconds from `make run` in a fresh clone to /healthz answering 200."""
    home = tree / "home"
    home.mkdir()
    port = free_port()
    (home / "bothost.yaml").write_text(f"platforms:\n  web:\n    port: {port}\n")
    env = dict(os.environ, BOTHOST_HOME=str(home))
    start = time.monotonic()
    proc = subprocess.Popen(
        ["make", "run"],
        cwd=tree,
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while not healthy(port):
            if proc.poll() is not None:
                raise SystemExit(f"make run in {tree} exited with {proc.returncode}")
            if time.monotonic() - start > DEADLINE:
                raise SystemExit(f"make run in {tree} not healthy after {DEADLINE:.0f} s")
            time.sleep(0.1)
        return time.monotonic() - start
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="3980041")
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    head = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    times: dict[str, list[float]] = {head: [], args.baseline: []}
    with tempfile.TemporaryDirectory(prefix="first-run-") as tmp:
        for run in range(args.runs):
            for commit in (args.baseline, head):
                tree = clone(commit, Path(tmp) / f"{commit}-{run}")
                seconds = first_run(tree)
                times[commit].append(seconds)
                print(f"{commit:>10}  run {run + 1}: {seconds:6.1f} s", flush=True)
    ours, base = statistics.median(times[head]), statistics.median(times[args.baseline])
    print(
        f"median: HEAD {head} {ours:.1f} s, baseline {args.baseline} {base:.1f} s, "
        f"ratio {ours / base:.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
