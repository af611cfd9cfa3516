"""Plugin packages in bothost's own Python environment: ``bothost install`` and ``uninstall``.

pip does the work; this module turns what it did into one line per package (the name, the
version, where it went, and whether it brings a bothost plugin). pip's own output, dozens of
lines for a package with dependencies, is kept back and shown only when pip fails, with the
command to rerun, or when asked for (``-v``). What was installed comes from pip's
``--report`` (JSON, pip ≥ 22.2), not from parsing its text.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import json
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# A big package with its dependencies from a slow mirror; pip times out stalled reads itself.
PIP_SECONDS = 900
ENTRY_POINT_GROUP = "bothost"  # where discovery looks for plugins (bothost/hooks/discovery.py)


@dataclass
class Package:
    name: str
    version: str
    location: str  # the folder it is installed in (site-packages, or pip's --target)
    plugins: list[str] = field(default_factory=list)  # its `bothost` entry points
    requested: bool = True  # False: a dependency pip added

    def line(self, verb: str) -> str:
        what = f"{verb} {self.name} {self.version}"
        if self.plugins:
            what += f" (bothost plugin{'s' if len(self.plugins) > 1 else ''}: "
            what += ", ".join(self.plugins) + ")"
        elif not self.requested:
            what += " (dependency)"
        preposition = "from" if verb == "removed" else "in"
        return f"{what} {preposition} {self.location}"


@dataclass
class PipResult:
    """What one pip run did: its status, its output and the packages it changed."""

    command: list[str]
    status: int
    output: str
    packages: list[Package] = field(default_factory=list)

    @property
    def rerun(self) -> str:
        return shlex.join(self.command)


def pip_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "pip", "--disable-pip-version-check", *args]


def no_pip(command: str, spec: str) -> str | None:
    """What to do instead, when this environment has no pip (a venv made by uv, or with
    ``--without-pip``): pip's own "No module named pip" and a rerun of it would not say."""
    if importlib.util.find_spec("pip") is not None:
        return None
    python = shlex.quote(sys.executable)
    return (
        f"no pip in {sys.prefix} (a venv made by uv or with --without-pip): add it with "
        f"`{python} -m ensurepip`, or run `uv pip {command} --python {python} {shlex.quote(spec)}`"
    )


def run_pip(command: list[str], verbose: bool) -> tuple[int, str]:
    """pip's status and output; with ``verbose`` its output goes straight to the terminal."""
    if verbose:
        return subprocess.call(command, timeout=PIP_SECONDS), ""
    done = subprocess.run(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        timeout=PIP_SECONDS,
    )
    return done.returncode, done.stdout


def install(spec: str, verbose: bool = False) -> PipResult:
    """``pip install spec`` into this interpreter's environment; the packages it installed."""
    with tempfile.TemporaryDirectory(prefix="bothost-pip-") as folder:
        report = Path(folder) / "report.json"
        command = pip_command("install", "--report", str(report), spec)
        status, output = run_pip(command, verbose)
        shown = pip_command("install", spec)  # the report file is gone by the time one reruns
        if status != 0 or not report.exists():
            return PipResult(shown, status or 1, output)
        installed = json.loads(report.read_text(encoding="utf-8")).get("install", [])
    importlib.invalidate_caches()  # the new folders' distributions, seen by this process
    packages = [described(item) for item in installed]
    return PipResult(shown, status, output, packages)


def described(item: dict[str, Any]) -> Package:
    """A package of pip's report, with where it landed and its plugins as installed."""
    metadata = item.get("metadata", {})
    name, version = metadata.get("name", "?"), metadata.get("version", "?")
    requested = bool(item.get("requested", True))
    found = distribution(name)
    if found is None:  # installed where this interpreter does not look (pip --target)
        return Package(name, version, "a folder outside sys.path", requested=requested)
    return of(found, requested)


def distribution(name: str) -> importlib.metadata.Distribution | None:
    try:
        return importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def of(found: importlib.metadata.Distribution, requested: bool = True) -> Package:
    plugins = sorted(ep.name for ep in found.entry_points if ep.group == ENTRY_POINT_GROUP)
    return Package(
        found.metadata["Name"],
        found.version,
        str(Path(str(found.locate_file(""))).resolve()),
        plugins,
        requested,
    )


def uninstall(name: str, verbose: bool = False) -> PipResult:
    """``pip uninstall -y name``; the package removed (none if it was not installed)."""
    found = distribution(name)
    # described before pip runs: its metadata is read from the files pip deletes
    before = of(found) if found is not None else None
    command = pip_command("uninstall", "-y", name)
    status, output = run_pip(command, verbose)
    packages = [before] if before is not None and status == 0 else []
    return PipResult(command, status, output, packages)
