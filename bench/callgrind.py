"""Counting a bench's instructions with callgrind: one run, its event loop apart from the rest.

A script measured this way runs itself again under ``valgrind --tool=callgrind`` with its
own internal flag; inside, it warms up, calls :func:`zero`, does the counted work and calls
:func:`dump`. :func:`count` starts that run and reads back the dumped part, split into the
first thread (the event loop's) and every other thread (the store's, aiohttp's resolver).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path


def zero() -> None:
    """Inside callgrind: forget what was counted so far (the warm-up)."""
    subprocess.run(["callgrind_control", "-z", str(os.getpid())], check=True, capture_output=True)


def dump() -> None:
    """Inside callgrind: write what was counted since :func:`zero` as the run's part 1."""
    control = ["callgrind_control", "-d", "counted", str(os.getpid())]
    subprocess.run(control, check=True, capture_output=True)


def count(name: str, script: str, arguments: list[str], out: Path) -> tuple[int, int]:
    """(event loop thread, other threads) instructions that ``script arguments`` counted
    between its zero() and its dump(); ``name`` keeps runs side by side in ``out`` apart."""
    pattern = out / f"{name}.%p"
    command = ["valgrind", "--tool=callgrind", "--separate-threads=yes",
               f"--callgrind-out-file={pattern}", sys.executable, script, *arguments]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{name}: exit {done.returncode}\n{done.stderr[-2000:]}")
    loop = other = 0
    # the dump asked for is part 1 (the one at exit is part 2); thread 1 is the event loop's
    for part in out.glob(f"{name}.*.1-*"):
        found = re.search(r"^summary: (\d+)", part.read_text(errors="replace"), re.M)
        instructions = int(found.group(1)) if found else 0
        if part.name.endswith("-01"):
            loop += instructions
        else:
            other += instructions
    return loop, other
