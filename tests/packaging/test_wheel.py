"""bothost as users get it: the built wheel, installed into a fresh venv, away from the tree.

A session fixture builds the wheel once (`pip wheel --no-deps` from a copy of the source
tree, so a stale `build/` never hides a missing file) and installs it into a new venv; its
dependencies come from pip's cache or the configured index. Every command then runs from
a temp dir with a clean environment, so nothing of the checkout is importable: a module or
data file the wheel lacks fails here as it would for a user.

Installing needs the package index; where it cannot be reached the tests skip locally and
fail in CI (BOTHOST_REQUIRE_PEERS=1), like a missing peer.
"""

from __future__ import annotations

import asyncio
import json
import os
import selectors
import shutil
import subprocess
import sys
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from peers import missing

from tests.fakes.llm import FakeLlm
from tests.helpers import MCP_PROTOCOL, initialize_request

ROOT = Path(__file__).resolve().parents[2]
# Building and installing the wheel with all its dependencies on a loaded 2-core machine.
pytestmark = [pytest.mark.packaging, pytest.mark.timeout(900)]

# pip resolving and installing ~60 dependencies from its cache; a cold index takes longer.
INSTALL_SECONDS = 600
# One CLI command of a fresh install: imports, migrations, maybe starting an MCP server.
COMMAND_SECONDS = 120
# An MCP server process starting and answering `initialize`.
INITIALIZE_SECONDS = 60
# Source folder -> the name it installs under (setup.py's mapping).
FOLDERS = {
    "bothost": "bothost",
    "plugins": "bothost/plugins",
    "mcp_servers": "bothost/mcp_servers",
    "config": "bothost/defaults",
    "docs": "bothost/docs",  # `bothost docs` prints them
}
COPY_IGNORE = shutil.ignore_patterns(
    ".git", ".venv", ".peers", "build", "dist", "*.egg-info", "__pycache__", "*.pyc", ".*_cache"
)
SERVERS = ["weather", "ssh", "gmail", "gcal"]
# Source files that stay out of the wheel: the pictures the README and docs/web.md show on
# the web (half a megabyte of PNG) and the script that takes them, which imports the tests;
# `bothost docs` prints text pages only.
NOT_SHIPPED = ("docs/screenshots/",)


@dataclass
class Installed:
    wheel: Path
    source: Path  # the copy of the tree the wheel was built from
    build_output: str
    venv: Path
    workdir: Path

    def env(self, home: Path) -> dict[str, str]:
        """The environment of a user's shell with the venv first on PATH: no tree, no test env."""
        keep = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("PYTHON", "BOTHOST_", "VIRTUAL_ENV", "PYTEST"))
        }
        keep["PATH"] = f"{self.venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"
        keep["HOME"] = str(home)
        return keep

    def run(self, *argv: str, home: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.venv / "bin" / argv[0]), *argv[1:]],
            cwd=self.workdir,
            env=self.env(home),
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=COMMAND_SECONDS,
        )


def expected_files(tree: Path) -> set[str]:
    """Every file of the source folders, by the name it must have in the wheel."""
    names = set()
    for folder, installed in FOLDERS.items():
        for path in (tree / folder).rglob("*"):
            source = path.relative_to(tree).as_posix()
            if source.startswith(NOT_SHIPPED):
                continue
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                names.add(f"{installed}/{path.relative_to(tree / folder).as_posix()}")
    return names


@pytest.fixture(scope="session")
def installed(tmp_path_factory) -> Installed:
    base = tmp_path_factory.mktemp("wheel")
    source = base / "source"
    shutil.copytree(ROOT, source, ignore=COPY_IGNORE)
    out = base / "dist"
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(out), str(source)],
        cwd=base,
        capture_output=True,
        text=True,
        timeout=INSTALL_SECONDS,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    assert build.returncode == 0, build.stdout + build.stderr
    wheel = next(out.glob("bothost-*.whl"))
    venv = base / "venv"
    # no pip in the new venv: this pip installs into it (--python), which saves bootstrapping
    # one; --no-compile because Python compiles what the commands import
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)],
        check=True,
        cwd=base,
        timeout=COMMAND_SECONDS,
    )
    pip = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(venv / "bin" / "python"),
            "install",
            "--quiet",
            "--no-compile",
            str(wheel),
        ],
        cwd=base,
        capture_output=True,
        text=True,
        timeout=INSTALL_SECONDS,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    if pip.returncode != 0:
        missing(f"the wheel's dependencies (pip install failed: {pip.stderr.strip()[-300:]})")
    workdir = base / "elsewhere"
    workdir.mkdir()
    return Installed(wheel, source, build.stdout + build.stderr, venv, workdir)


@pytest.fixture
def user_home(tmp_path) -> Path:
    path = tmp_path / "user"
    path.mkdir()
    return path


def test_wheel_holds_every_module_and_data_file(installed):
    names = set(zipfile.ZipFile(installed.wheel).namelist())
    assert expected_files(installed.source) - names == set()
    assert not [name for name in names if name.startswith("bothost/docs/screenshots/")]
    assert "bothost/py.typed" in names
    assert {
        "bothost/defaults/bothost.yaml",
        "bothost/defaults/bothost.yaml.json",  # its parsed twin (bothost.config.file)
        "bothost/defaults/agents/main.md",
        "bothost/defaults/agents/tick.md",
        "bothost/plugins/web/static/index.html",
    } <= names
    # no generic top-level names in site-packages
    assert {name.split("/")[0] for name in names} == {"bothost", wheel_dist_info(names)}


def wheel_dist_info(names: set[str]) -> str:
    return next(name.split("/")[0] for name in names if ".dist-info/" in name)


def test_building_the_wheel_prints_no_setuptools_warnings(installed):
    """pip's own `WARNING:` lines (index locations of this machine) are not the build's."""
    output = installed.build_output
    assert "would be ignored" not in output
    assert "BuildBackendWarning" not in output and "SetuptoolsWarning" not in output, output
    assert "SetuptoolsDeprecationWarning" not in output, output


def test_every_source_folder_is_a_package():
    """A folder of modules without __init__.py is silently left out by find_packages."""
    for folder in ("bothost", "plugins", "mcp_servers"):
        for path in (ROOT / folder).rglob("*.py"):
            if "__pycache__" not in path.parts:
                assert (path.parent / "__init__.py").exists(), f"{path.parent} lacks __init__.py"


def test_nothing_of_the_tree_is_importable(installed, user_home):
    probe = installed.run(
        "python",
        "-c",
        "import bothost, importlib.util as u; print(bothost.__file__);"
        "print(u.find_spec('plugins'), u.find_spec('mcp_servers'), u.find_spec('config'))",
        home=user_home,
    )
    assert probe.returncode == 0, probe.stderr
    location, specs = probe.stdout.splitlines()
    assert Path(location).is_relative_to(installed.venv)
    assert specs == "None None None"


IMPORT_EVERY_MODULE = """
import importlib, pkgutil, bothost
failed = []
for info in pkgutil.walk_packages(bothost.__path__, "bothost."):
    if info.name.rsplit(".", 1)[-1] == "__main__":
        continue  # a server's entry point: importing it is starting it
    try:
        importlib.import_module(info.name)
    except Exception as exc:
        failed.append(f"{info.name}: {type(exc).__name__}: {exc}")
print("\\n".join(failed))
"""


def test_every_module_imports_with_only_the_runtime_dependencies(installed, user_home):
    """Optional drivers (psycopg, the `postgres` extra) are imported when used, not before."""
    probe = installed.run("python", "-c", IMPORT_EVERY_MODULE, home=user_home)
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.strip() == ""


def test_postgresql_without_its_extra_says_how_to_install_it(installed, user_home):
    config = user_home / "pg.yaml"
    config.write_text("store:\n  url: postgresql://bothost:secret@127.0.0.1:1/bothost\n")
    result = installed.run(
        "bothost",
        "--home",
        str(user_home / "bh"),
        "--config",
        str(config),
        "db",
        "migrate",
        home=user_home,
    )
    assert result.returncode == 1, result.stderr
    assert "pip install 'bothost[postgres]'" in result.stderr
    assert "secret" not in result.stderr and "Traceback" not in result.stderr


def test_chat_help_runs_from_the_wheel(installed, user_home):
    result = installed.run(
        "bothost", "--home", str(user_home / "bh"), "chat", "-m", "help", home=user_home
    )
    assert result.returncode == 0, result.stderr
    assert "offline agent" in result.stdout
    assert "Traceback" not in result.stderr


def test_the_docs_the_offline_agent_points_at_print_from_the_wheel(installed, user_home):
    home = str(user_home / "bh")
    help_text = installed.run("bothost", "--home", home, "chat", "-m", "help", home=user_home)
    assert "`bothost docs llm`" in help_text.stdout
    page = installed.run("bothost", "docs", "llm", home=user_home)
    assert page.returncode == 0, page.stderr
    assert page.stdout == (installed.source / "docs" / "llm.md").read_text("utf-8")
    readme = installed.run("bothost", "docs", "readme", home=user_home)
    assert readme.stdout == (installed.source / "README.md").read_text("utf-8").strip() + "\n"


def test_doctor_runs_from_the_wheel(installed, user_home):
    """doctor may find problems on this machine (exit 1) but must check, not crash."""
    result = installed.run(
        "bothost", "--home", str(user_home / "bh"), "doctor", "--json", home=user_home
    )
    assert result.returncode in (0, 1), result.stderr
    assert "Traceback" not in result.stderr
    checks = {c["check"]: c for c in json.loads(result.stdout)}
    assert checks["config"]["ok"] and "bothost/defaults/bothost.yaml" in checks["config"]["detail"]
    assert checks["database"]["ok"], checks["database"]
    assert checks["plugins"]["ok"], checks["plugins"]


# The vendor LLM SDKs and what they brought: test-only since bothost.llm.wire speaks the
# APIs itself (issue 39). The repo's venv has them (the `test` extra), so only an install
# without them shows a provider that still imports one, even inside a function.
VENDOR_SDKS = ("openai", "anthropic", "pydantic", "httpx")


def test_the_wheel_installs_no_vendor_llm_sdk(installed, user_home):
    probe = installed.run(
        "python",
        "-c",
        f"import importlib.util as u; print([n for n in {VENDOR_SDKS!r} if u.find_spec(n)])",
        home=user_home,
    )
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.strip() == "[]"


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_chat_with_a_model_answers_from_the_wheel_without_the_sdks(
    installed, user_home, provider
):
    fake = await FakeLlm([{"text": f"hello from {provider}"}]).start()
    url = fake.openai_url if provider == "openai" else fake.anthropic_url
    config = user_home / "model.yaml"
    config.write_text(
        f"llm: {{provider: {provider}, model: m, base_url: '{url}', api_key: test-key}}\n"
    )
    try:
        process = await asyncio.create_subprocess_exec(
            *(installed.venv / "bin" / "bothost", "--home", user_home / "bh"),
            *("--config", config, "chat", "-m", "hi"),
            cwd=installed.workdir,
            env=installed.env(user_home),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        async with asyncio.timeout(COMMAND_SECONDS):
            out, err = await process.communicate()
    finally:
        await fake.stop()
    assert process.returncode == 0, err.decode()
    assert out.decode().strip() == f"hello from {provider}"
    assert len(fake.requests) == 1 and "Traceback" not in err.decode()


@pytest.mark.parametrize("command", ["install", "uninstall"])
def test_a_venv_without_pip_says_how_to_install_plugins(installed, user_home, command):
    """The fixture's venv has no pip, as one made by uv (or `venv --without-pip`) has none:
    found from outside, `bothost install` printed "No module named pip" and a command to
    retry that failed the same way."""
    result = installed.run("bothost", command, "bothost-demo", home=user_home)
    assert result.returncode == 1, result.stdout + result.stderr
    python = str(installed.venv / "bin" / "python")
    assert result.stderr.startswith(f"bothost: no pip in {installed.venv}"), result.stderr
    assert f"{python} -m ensurepip" in result.stderr
    assert f"uv pip {command} --python {python} bothost-demo" in result.stderr
    assert "No module named pip" not in result.stderr and "Traceback" not in result.stderr


def test_tick_runs_from_the_wheel(installed, user_home):
    result = installed.run("bothost", "--home", str(user_home / "bh"), "tick", home=user_home)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert "0 events looked at" in result.stdout + result.stderr


@pytest.mark.parametrize("server", SERVERS)
def test_bundled_server_answers_initialize(installed, user_home, server):
    request = initialize_request("wheel-test")
    proc = subprocess.Popen(
        [str(installed.venv / "bin" / f"bothost-mcp-{server}")],
        cwd=installed.workdir,
        env=installed.env(user_home),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stdin and proc.stdout
        proc.stdin.write(json.dumps(request).encode() + b"\n")
        proc.stdin.flush()
        line = read_line(proc, INITIALIZE_SECONDS)
        proc.stdin.close()
        proc.wait(timeout=INITIALIZE_SECONDS)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        stderr = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()
    assert line, f"no answer to initialize; stderr:\n{stderr}"
    response = json.loads(line)
    assert response["id"] == 1
    assert response["result"]["serverInfo"]["name"], response
    assert response["result"]["protocolVersion"] == MCP_PROTOCOL
    assert "Traceback" not in stderr


def read_line(proc: subprocess.Popen[bytes], seconds: float) -> bytes:
    """The first line the process writes on stdout, waiting at most `seconds`."""
    assert proc.stdout
    fd = proc.stdout.fileno()
    buffer = b""
    deadline = time.monotonic() + seconds
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while b"\n" not in buffer and time.monotonic() < deadline:
            if selector.select(timeout=deadline - time.monotonic()):
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                buffer += chunk
    return buffer.partition(b"\n")[0]
