"""Installing an MCP server package into a folder of its own, then registering it.

``bothost mcp install`` puts each server under ``$BOTHOST_HOME/mcp/<name>/``. A PyPI package
gets a virtual environment there (``venv/``, made with ``python -m venv`` and filled by the
host's pip through ``--python``, or by the venv's own pip where the host's is too old or
missing), so its dependencies can never break the host's; an npm package
(``npm:name`` or ``@scope/name``) is installed with ``npm install --prefix``. The command
is the distribution's console script (read with the venv's own Python, since the host cannot
import from that environment) or the npm package's ``bin``. The server is then added to the
``mcp_servers`` table (origin ``install``, what was installed recorded in the row's
``install`` column), started and asked for its tools. Any failure on the way removes the row
and the folder again: an install either completes or leaves nothing behind.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import os
import re
import shutil
import sys
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bothost.config import McpServerConfig
from bothost.mcp import commands, stored
from bothost.mcp.manager import McpManager, McpManagerError
from bothost.mcp.roster import NAME
from bothost.mcp.runner import ServerStatus

INSTALL_TIMEOUT = 900.0  # a big package on a slow mirror; pip and npm time out stalls themselves
PROBE_TIMEOUT = 60.0  # reading a distribution's metadata with the venv's Python
OUTPUT_KEPT = 15  # lines of pip/npm output quoted when an install fails
# pip's --python (install into another interpreter, running this pip's own code there) came
# in pip 22.3; with it the server's venv is made without a pip of its own
PIP_TARGETS_OTHERS = (22, 3)
LINE_LIMIT = 1 << 20  # npm prints long lines; asyncio's default 64 KiB would raise
MAX_NAME = 40  # the manager's limit on server names
NAME_PREFIXES = ("mcp-server-", "server-")
NAME_SUFFIXES = ("-mcp-server", "-mcp")  # longest first: "x-mcp-server" must not keep "-server"
# What `mcp install` passes on is a requirement in PEP 508's form and nothing more: a name,
# extras, a version specifier — no URL (`name @ https://…`), no path, no environment marker,
# no option (`-e`, `--index-url`), no characters a version cannot hold (`==../../x`), so
# pip and npm only ever look a name up in their registry. (Checked by hand: `packaging` is
# not a dependency of bothost.)
MAX_SPEC = 200  # a name with extras and a version range is far shorter
PYPI_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")
PEP440_CLAUSE = r"(?:~=|===|==|!=|<=|>=|<|>)\s*[A-Za-z0-9][A-Za-z0-9.*+!_-]*"
PYPI_REST = re.compile(
    rf"\s*(\[\s*(?:{PYPI_NAME.pattern}(?:\s*,\s*{PYPI_NAME.pattern})*)?\s*\])?"  # extras
    rf"\s*(?:{PEP440_CLAUSE}(?:\s*,\s*{PEP440_CLAUSE})*)?\s*"  # version specifier
)
NPM_NAME = re.compile(r"(@[a-z0-9][\w.~-]*/)?[a-z0-9][\w.~-]*")
# After `name@`: a version, a range (`^2`, `>=1 <2`, `1.x || 2.x`) or a dist-tag (`latest`);
# never `file:`, `git+…`, `github:user/repo`, a URL or a path (no ":" and no "/").
NPM_VERSION = re.compile(r"[\w.^~<>=*|+ -]{1,100}")
UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
# Run with the venv's Python (-I: nothing from the caller's environment leaks in).
PROBE = """
import importlib.metadata as m, json, sys
d = m.distribution(sys.argv[1])
scripts = sorted(e.name for e in d.entry_points if e.group == "console_scripts")
print(json.dumps({"version": d.version, "summary": d.metadata.get("Summary") or "",
                  "scripts": scripts}))
"""

Progress = Callable[[str], None]


def quiet(_line: str) -> None:
    """Where pip's and npm's own lines go unless asked for (``-v``): ~60 lines for one
    server said nothing a person needed; the last of them are quoted if the install fails."""


class InstallError(Exception):
    """An install that cannot be done or failed; the message says why in one or a few lines."""


@dataclass
class Package:
    kind: str  # pypi | npm
    spec: str  # what pip or npm is given (may carry a version)
    name: str  # the distribution's or npm package's name


@dataclass
class Installed:
    package: Package
    folder: Path
    command: Path
    version: str = ""
    description: str = ""
    found: list[str] = field(default_factory=list)  # every console script / bin

    def record(self) -> dict[str, Any]:
        """What the ``install`` column keeps, so the install can be explained and redone."""
        return {
            "kind": self.package.kind,
            "package": self.package.name,
            "spec": self.package.spec,
            "version": self.version,
            "folder": str(self.folder),
            "command": self.command.name,
        }


class PackageSpecError(InstallError):
    """What was given is no package name (with an optional version): nothing was run."""


def parse_package(text: str) -> Package:
    """`mcp-server-time`, `pkg==1.2`, `npm:name`, `@scope/name@1.0` → what to install.

    Raises :class:`PackageSpecError` for anything else (a URL, a path, an option, a version
    that is not one), before any installer runs."""
    text = text.strip()
    if len(text) > MAX_SPEC:
        raise PackageSpecError(f"a package name with its version is at most {MAX_SPEC} characters")
    if text.startswith("npm:") or text.startswith("@"):
        spec = text.removeprefix("npm:")
        at = spec.find("@", 1)
        name, version = (spec[:at], spec[at + 1 :]) if at > 0 else (spec, None)
        if not NPM_NAME.fullmatch(name):
            raise PackageSpecError(
                f"{text!r} is not an npm package name (npm:NAME[@VERSION] or @scope/NAME[@VERSION])"
            )
        if version is not None and not NPM_VERSION.fullmatch(version):
            raise PackageSpecError(
                f"{version!r} is not an npm version, range or tag (paths, URLs and git "
                "specs are not installed)"
            )
        return Package("npm", spec, name)
    match = PYPI_NAME.match(text)
    if not match or not PYPI_REST.fullmatch(text[match.end() :]):
        raise PackageSpecError(
            f"{text!r} is not a PyPI package name with an optional version (NAME, NAME[EXTRA],"
            " NAME==1.2, NAME>=1,<2) nor an npm one (npm:NAME, @scope/NAME); paths, URLs and"
            " pip options are not installed"
        )
    return Package("pypi", text, re.sub(r"[-_.]+", "-", match.group(0)).lower())


def default_name(package: str) -> str:
    """The server name for a package: `mcp-server-time` → `time`, `@x/server-foo` → `foo`."""
    base = package.rsplit("/", 1)[-1].lower()
    for prefix in NAME_PREFIXES:
        if base.startswith(prefix) and len(base) > len(prefix):
            base = base[len(prefix) :]
            break
    for suffix in NAME_SUFFIXES:
        if base.endswith(suffix) and len(base) > len(suffix):
            base = base[: -len(suffix)]
            break
    return UNSAFE.sub("-", base).strip("-")[:MAX_NAME] or "server"


def server_folder(home: Path, name: str) -> Path:
    return Path(home) / "mcp" / name


def pick_command(found: list[str], preferred: list[str], chosen: str | None, what: str) -> str:
    """The script/bin to run: the one asked for, one named like the package, or the only one."""
    if chosen:
        if chosen in found:
            return chosen
        raise InstallError(f"{what} has no command {chosen!r}; it has: {', '.join(found) or '-'}")
    for name in preferred:
        if name in found:
            return name
    mcp_like = [n for n in found if "mcp" in n.lower()]
    if len(found) == 1 or len(mcp_like) == 1:
        return found[0] if len(found) == 1 else mcp_like[0]
    if not found:
        raise InstallError(
            f"{what} installs no command to run (no console script or bin); "
            "it is a library, not a server"
        )
    raise InstallError(
        f"{what} installs several commands: {', '.join(found)}; pick one with --command"
    )


async def run_streamed(
    argv: list[str], progress: Progress, prefix: str, env: dict[str, str] | None = None
) -> tuple[int, list[str]]:
    """Run a program, giving each output line to `progress`; its exit code and last lines."""
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            env=env,
            limit=LINE_LIMIT,
        )
    except OSError as exc:
        raise InstallError(f"cannot run {argv[0]}: {exc}") from None
    tail: deque[str] = deque(maxlen=OUTPUT_KEPT)
    try:
        async with asyncio.timeout(INSTALL_TIMEOUT):
            assert proc.stdout is not None
            async for raw in proc.stdout:
                line = raw.decode("utf-8", "replace").rstrip()
                if line.strip():
                    tail.append(line)
                    progress(f"{prefix} | {line}")
            return await proc.wait(), list(tail)
    except TimeoutError:
        raise InstallError(f"{prefix} took longer than {INSTALL_TIMEOUT:.0f} s") from None
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


def explain_failure(package: Package, tail: list[str]) -> InstallError:
    text = "\n".join(tail)
    if package.kind == "pypi" and "No matching distribution found" in text:
        return InstallError(
            f"PyPI has no package {package.spec!r} (or no release of it for "
            f"Python {sys.version_info.major}.{sys.version_info.minor})"
        )
    if package.kind == "npm" and re.search(r"\b(E404|404 Not Found|404\s+The requested)", text):
        return InstallError(f"npm has no package {package.spec!r}")
    quoted = "\n".join(f"  {line}" for line in tail[-OUTPUT_KEPT:])
    return InstallError(f"{package.kind} could not install {package.spec!r}:\n{quoted}")


async def install_pypi(
    package: Package,
    folder: Path,
    progress: Progress,
    names: list[str],
    chosen: str | None,
    output: Progress = quiet,
) -> Installed:
    venv = folder / "venv"
    python = venv / "bin" / "python"
    # Bootstrapping a pip into the new venv (ensurepip) took 7.3 s of CPU, more than a small
    # server's whole pip install; the host's own pip fills the venv as well when it can.
    ours = host_pip_targets_others()
    progress(f"creating a virtual environment in {venv}")
    code, tail = await run_streamed(
        [sys.executable, "-m", "venv", *(["--without-pip"] if ours else []), str(venv)],
        output,
        "venv",
    )
    if code != 0:
        raise InstallError("could not create a virtual environment:\n" + "\n".join(tail))
    pip = (
        [sys.executable, "-m", "pip", "--python", str(python)]
        if ours
        else [str(python), "-m", "pip"]
    )
    progress(f"installing {package.spec} from PyPI…")
    code, tail = await run_streamed(
        [
            *pip,
            "install",
            "--disable-pip-version-check",
            "--no-input",
            # byte-compiling every dependency was half of pip's CPU time; Python compiles
            # what the server imports when it first starts
            "--no-compile",
            "--progress-bar",
            "off",
            package.spec,
        ],
        output,
        "pip",
        env=child_env(),
    )
    if code != 0:
        raise explain_failure(package, tail)
    meta = await read_metadata(python, package.name)
    progress(f"installed {package.name} {meta['version']}")
    script = pick_command(
        meta["scripts"], [package.name, *names], chosen, f"PyPI package {package.name}"
    )
    return Installed(
        package, folder, venv / "bin" / script, meta["version"], meta["summary"], meta["scripts"]
    )


def host_pip_targets_others() -> bool:
    """Whether the Python running bothost has a pip that installs into another interpreter."""
    try:
        version = importlib.metadata.version("pip")
    except importlib.metadata.PackageNotFoundError:
        return False
    found = re.match(r"(\d+)\.(\d+)", version)
    return found is not None and (int(found[1]), int(found[2])) >= PIP_TARGETS_OTHERS


async def read_metadata(python: Path, name: str) -> dict[str, Any]:
    """Version, summary and console scripts of `name`, asked of the venv's own Python."""
    probe = await asyncio.create_subprocess_exec(
        str(python),
        "-I",
        "-c",
        PROBE,
        name,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        async with asyncio.timeout(PROBE_TIMEOUT):
            out, err = await probe.communicate()
        if probe.returncode != 0:
            last = (err.decode(errors="replace").strip().splitlines() or ["no output"])[-1]
            raise InstallError(f"cannot read the metadata of {name}: {last}")
        return json.loads(out)
    except TimeoutError:
        raise InstallError(
            f"reading the metadata of {name} took over {PROBE_TIMEOUT:.0f} s"
        ) from None
    except ValueError as exc:
        raise InstallError(f"cannot read the metadata of {name}: {exc}") from None
    finally:
        if probe.returncode is None:
            probe.kill()
            await probe.wait()


async def install_npm(
    package: Package,
    folder: Path,
    progress: Progress,
    names: list[str],
    chosen: str | None,
    output: Progress = quiet,
) -> Installed:
    npm = shutil.which("npm")
    if npm is None:
        raise InstallError(
            "npm is not installed; npm packages need Node.js and npm on PATH "
            "(e.g. `apt-get install npm`)"
        )
    folder.mkdir(parents=True, exist_ok=True)
    # Without a package.json here npm walks up and may install into a parent project.
    (folder / "package.json").write_text('{"private": true}\n')
    progress(f"installing {package.spec} from npm into {folder}…")
    code, tail = await run_streamed(
        [npm, "install", "--prefix", str(folder), "--no-audit", "--no-fund", package.spec],
        output,
        "npm",
    )
    if code != 0:
        raise explain_failure(package, tail)
    try:
        manifest = json.loads(
            (folder / "node_modules" / package.name / "package.json").read_text(encoding="utf-8")
        )
    except (OSError, ValueError) as exc:
        raise InstallError(
            f"npm installed {package.spec} but its package.json is unreadable: {exc}"
        ) from None
    progress(f"installed {package.name} {manifest.get('version', '')}".rstrip())
    unscoped = package.name.rsplit("/", 1)[-1]
    bins = manifest.get("bin")
    found = [unscoped] if isinstance(bins, str) else sorted(bins or {})
    script = pick_command(found, [unscoped, *names], chosen, f"npm package {package.name}")
    return Installed(
        package,
        folder,
        folder / "node_modules" / ".bin" / script,
        str(manifest.get("version", "")),
        str(manifest.get("description", "")),
        found,
    )


def child_env() -> dict[str, str]:
    return {**os.environ, "PYTHONUNBUFFERED": "1"}  # pip's lines as they come, not at exit


async def check_name_free(manager: McpManager, name: str) -> None:
    if not NAME.fullmatch(name):
        raise InstallError(
            f"{name!r}: a server name uses letters, digits, _ and - "
            f"(at most {MAX_NAME}); choose one with --name"
        )
    if name in manager.config_servers:
        raise InstallError(
            f"the config file already defines an MCP server named {name!r}; "
            "choose another name with --name"
        )
    rows = await manager.store.run(stored.load)
    row = rows.get(name)
    if row is not None and row.origin != stored.OVERRIDE:
        raise InstallError(
            f"an MCP server named {name!r} exists (added by {row.origin}); "
            f"`bothost mcp remove {name}` first, or choose a name with --name"
        )


def save_record(db: Any, name: str, record: dict[str, Any]) -> None:
    db.execute(f"UPDATE {stored.TABLE} SET install = ? WHERE name = ?", [json.dumps(record), name])


@dataclass
class InstallResult:
    name: str
    installed: Installed
    status: ServerStatus | None  # None: registered, not started (`start=False`)
    tools: list[dict[str, Any]]


async def install_server(
    manager: McpManager,
    text: str,
    *,
    name: str | None = None,
    args: list[str] | None = None,
    env: dict[str, str] | None = None,
    command: str | None = None,
    progress: Progress = lambda _line: None,
    output: Progress = quiet,
    description: str | None = None,
    start: bool = True,
    record: dict[str, Any] | None = None,
) -> InstallResult:
    """Install `text` (see :func:`parse_package`), register it, start it and list its tools.

    ``progress`` hears a line per step, ``output`` each line pip or npm prints (by default
    none: their end is quoted if the install fails). ``description`` replaces the package's
    summary; ``start=False`` registers the server without starting it (a registry entry
    whose required variables are not set here); ``record`` adds to what the row's
    ``install`` column keeps."""
    package = parse_package(text)
    name = name or default_name(package.name)
    await check_name_free(manager, name)
    folder = server_folder(manager.home, name)
    registered = False
    try:
        if folder.exists():
            # Not registered (checked above): left by `mcp remove` or an interrupted install.
            progress(f"replacing the unregistered folder {folder}")
            shutil.rmtree(folder)
        folder.mkdir(parents=True, mode=0o700)
        install = install_pypi if package.kind == "pypi" else install_npm
        installed = await install(package, folder, progress, [name], command, output)
        config = McpServerConfig(
            command=str(installed.command),
            args=list(args or []),
            env=dict(env or {}),
            description=(installed.description if description is None else description)[:200],
        )
        await manager.add_server(name, config, origin="install")
        registered = True
        kept = {**installed.record(), **(record or {})}
        await manager.store.run(lambda db: save_record(db, name, kept))
        if not start:
            return InstallResult(name, installed, None, [])
        progress(f"starting {name}: {installed.command}")
        status, tools = await started(manager, name, f"{package.name} was installed but")
        return InstallResult(name, installed, status, tools)
    except BaseException:
        if registered:
            await manager.store.run(lambda db: stored.delete(db, name))
        shutil.rmtree(folder, ignore_errors=True)
        raise


async def started(
    manager: McpManager, name: str, what: str
) -> tuple[ServerStatus, list[dict[str, Any]]]:
    """Start server `name` for a moment: its status and tools; :class:`InstallError` saying
    ``{what} the server did not start`` (and the end of its log) when it is not ready."""
    async with commands.private(manager, {name}):
        status = next(s for s in manager.status() if s.name == name)
        tools = manager.tools(name)
    if status.state != "ready":
        raise InstallError(
            f"{what} the server did not start: "
            f"{status.error or status.state}{log_hint(manager.home, name)}"
        )
    return status, tools


def log_hint(home: Path, name: str) -> str:
    try:
        lines = commands.tail_log(home, name, OUTPUT_KEPT)
    except McpManagerError:
        return ""
    return "\nits log ends with:\n" + "\n".join(f"  {line}" for line in lines)
