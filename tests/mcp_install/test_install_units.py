"""Install without a registry: package names, server names, commands, and the clean-up."""

from __future__ import annotations

import os
import sys

import pytest

from bothost.mcp import commands
from bothost.mcp.install import (
    Installed,
    InstallError,
    default_name,
    install_server,
    parse_package,
    pick_command,
)
from tests.helpers import make_host
from tests.mcp_install.support import ECHO_SERVER, rows


@pytest.mark.parametrize(
    "package, name",
    [
        ("mcp-server-time", "time"),
        ("@modelcontextprotocol/server-everything", "everything"),
        ("notion-mcp-server", "notion"),
        ("github-mcp", "github"),
        ("mcp-server-", "mcp-server"),
        ("server-", "server"),
        ("weird.name_pkg", "weird-name_pkg"),
        ("mcp", "mcp"),
    ],
)
def test_default_name(package, name):
    assert default_name(package) == name


@pytest.mark.parametrize(
    "text, kind, spec, name",
    [
        ("mcp-server-time", "pypi", "mcp-server-time", "mcp-server-time"),
        (
            "MCP_Server.Fetch[extra]==1.2",
            "pypi",
            "MCP_Server.Fetch[extra]==1.2",
            "mcp-server-fetch",
        ),
        ("npm:left-pad@1.3.0", "npm", "left-pad@1.3.0", "left-pad"),
        ("@scope/server-x@^2", "npm", "@scope/server-x@^2", "@scope/server-x"),
    ],
)
def test_parse_package(text, kind, spec, name):
    package = parse_package(text)
    assert (package.kind, package.spec, package.name) == (kind, spec, name)


# What pip or npm would take as a path, a URL, an option or a marker, not a registry name.
REFUSED_SPECS = [
    "pkg==../../x",
    "pkg>=1.0/../../x",
    "pkg @ https://evil.example/x.whl",
    "pkg==1.0; python_version > '3'",
    "pkg==1 --index-url http://evil.example",
    "-e",
    "--index-url=http://evil.example",
    "npm:left-pad@file:../../x",
    "@scope/x@github:evil/repo",
    "npm:x@git+https://evil.example/r.git",
]


@pytest.mark.parametrize(
    "text",
    [
        "--index-url=http://evil",
        "./local/dir",
        "git+https://x/y",
        "npm:",
        "npm:../x",
        "pkg; rm -rf /",
        *REFUSED_SPECS,
    ],
)
def test_parse_package_refuses_what_is_not_a_name(text):
    with pytest.raises(InstallError):
        parse_package(text)


@pytest.mark.parametrize("text", REFUSED_SPECS)
def test_install_refuses_a_spec_that_is_no_name_before_anything_runs(bothost, home, text):
    # these reached pip or npm (a venv was made, the installer ran) before they were refused
    result = bothost("mcp", "install", "--", text)
    assert result.returncode == 2, result.stderr
    assert "Invalid value for 'PACKAGE'" in result.stderr and "not installed" in result.stderr
    assert not (home / "mcp").exists() and not (home / "bothost.db").exists()


def test_pick_command():
    assert (
        pick_command(["mcp-server-time"], ["mcp-server-time", "time"], None, "p")
        == "mcp-server-time"
    )
    assert pick_command(["cli", "foo-mcp"], ["foo"], None, "p") == "foo-mcp"
    assert pick_command(["a", "b"], ["b"], None, "p") == "b"
    assert pick_command(["a", "b"], [], "a", "p") == "a"
    with pytest.raises(InstallError, match="installs several commands: a, b; pick one"):
        pick_command(["a", "b"], ["c"], None, "PyPI package p")
    with pytest.raises(InstallError, match="no command to run"):
        pick_command([], ["c"], None, "PyPI package p")
    with pytest.raises(InstallError, match="has no command 'z'; it has: a, b"):
        pick_command(["a", "b"], [], "z", "p")


@pytest.fixture
async def manager(home):
    host = make_host(home)
    yield commands.manager_for(host.config, host.store, home)
    host.store.close()


def fake_installer(command: list[str]):
    """An installer that 'installs' a script running `command` into the folder."""

    async def install(package, folder, progress, names, chosen, output):
        script = folder / "run-server"
        script.write_text("#!/bin/sh\nexec " + " ".join(command) + ' "$@"\n')
        script.chmod(0o755)
        progress("installed")
        output("pretend | installed")
        return Installed(package, folder, script, "1.0", "A test server", ["run-server"])

    return install


async def test_install_registers_starts_and_lists(manager, home, monkeypatch):
    monkeypatch.setattr(
        "bothost.mcp.install.install_pypi", fake_installer([sys.executable, str(ECHO_SERVER)])
    )
    lines = []
    result = await install_server(
        manager, "mcp-server-echo", args=[], env={"A": "1"}, progress=lines.append
    )
    assert result.name == "echo" and result.status.state == "ready"
    assert "echo" in {t["name"] for t in result.tools}
    assert "installed" in lines and "pretend | installed" not in lines  # pip's own: with -v
    row = (await manager.store.run(lambda db: db.query("SELECT * FROM mcp_servers ORDER BY 1")))[0]
    assert (row["name"], row["origin"], row["description"]) == ("echo", "install", "A test server")


async def test_server_that_does_not_start_leaves_nothing(manager, home, monkeypatch):
    monkeypatch.setattr("bothost.mcp.install.install_pypi", fake_installer(["false"]))
    with pytest.raises(InstallError, match="installed but the server did not start"):
        await install_server(manager, "mcp-server-broken")
    assert not (home / "mcp" / "broken").exists()
    assert "broken" not in rows(home)


async def test_taken_names_refused_before_installing(manager, home, monkeypatch):
    monkeypatch.setattr("bothost.mcp.install.install_pypi", fake_installer(["false"]))
    with pytest.raises(InstallError, match="config file already defines .* 'weather'"):
        await install_server(manager, "mcp-server-weather")
    with pytest.raises(InstallError, match="letters, digits"):
        await install_server(manager, "x", name="no spaces")
    assert not (home / "mcp").exists()


async def test_npm_missing(manager, home, monkeypatch):
    monkeypatch.setenv("PATH", str(home / "empty-bin"))
    with pytest.raises(InstallError, match="npm is not installed"):
        await install_server(manager, "@modelcontextprotocol/server-everything")
    assert not (home / "mcp" / "everything").exists()
    assert os.environ["PATH"].endswith("empty-bin")


async def test_leftover_folder_of_an_unregistered_server_is_replaced(manager, home, monkeypatch):
    monkeypatch.setattr(
        "bothost.mcp.install.install_pypi", fake_installer([sys.executable, str(ECHO_SERVER)])
    )
    stale = home / "mcp" / "echo" / "stale-file"
    stale.parent.mkdir(parents=True)
    stale.write_text("from a removed server")
    lines = []
    result = await install_server(manager, "echo-mcp", progress=lines.append)
    assert result.name == "echo" and not stale.exists()
    assert any(line.startswith("replacing the unregistered folder") for line in lines)


HOST_PIP = [sys.executable, "-m", "pip", "--python", "VENV_PYTHON", "install"]
VENV_PIP = ["VENV_PYTHON", "-m", "pip", "install"]


@pytest.mark.parametrize(
    "pip_version, venv_options, pip_argv",
    [
        # the host's pip fills a venv made without one (ensurepip took 7.3 s of CPU)
        ("26.3", ["--without-pip"], HOST_PIP),
        ("22.3", ["--without-pip"], HOST_PIP),
        # a pip without --python, or none at all: the venv's own, bootstrapped
        ("22.2.2", [], VENV_PIP),
        (None, [], VENV_PIP),
    ],
)
async def test_a_pypi_install_uses_the_hosts_pip_when_it_can_fill_the_venv(
    tmp_path, monkeypatch, pip_version, venv_options, pip_argv
):
    import importlib.metadata

    from bothost.mcp import install

    def version(name):
        assert name == "pip"
        if pip_version is None:
            raise importlib.metadata.PackageNotFoundError(name)
        return pip_version

    ran: list[list[str]] = []

    async def run_streamed(argv, progress, prefix, env=None):
        ran.append(argv)
        return 0, []

    async def read_metadata(python, name):
        return {"version": "1.0", "summary": "", "scripts": ["mcp-server-time"]}

    monkeypatch.setattr(importlib.metadata, "version", version)
    monkeypatch.setattr(install, "run_streamed", run_streamed)
    monkeypatch.setattr(install, "read_metadata", read_metadata)
    folder = tmp_path / "time"
    venv = folder / "venv"
    done = await install.install_pypi(
        parse_package("mcp-server-time"), folder, lambda line: None, ["time"], None
    )
    assert done.command == venv / "bin" / "mcp-server-time"
    made, filled = ran
    assert made == [sys.executable, "-m", "venv", *venv_options, str(venv)]
    expected = [str(venv / "bin" / "python") if a == "VENV_PYTHON" else a for a in pip_argv]
    assert filled[: len(expected)] == expected
    assert filled[-1] == "mcp-server-time"
