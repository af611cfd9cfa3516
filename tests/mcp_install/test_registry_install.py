"""`bothost mcp install REGISTRY_NAME` against a fake registry on 127.0.0.1: a PyPI entry
installed offline (a wheel on disk) with a secret variable, a remote with a secret header,
npm and OCI entries written as servers, a name the registry does not know."""

from __future__ import annotations

import json
import os
import sys

import pytest

from bothost.mcp import commands
from bothost.mcp.registry.installer import install_entry
from tests.fakes.mcp_registry import FakeRegistry
from tests.helpers import make_host
from tests.mcp_install.registry_support import (
    bothost,
    echo_wheel,
    filler,
    npm_entry,
    oci_entry,
    pypi_entry,
    remote_entry,
)
from tests.mcp_install.support import ECHO_SERVER, rows
from tests.mcp_install.test_mcp_import import echo_url  # noqa: F401  (a fixture)

pytestmark = pytest.mark.timeout(600)  # a venv and a pip run on a busy 2-core machine


@pytest.fixture
async def registry(echo_url):  # noqa: F811
    fake = await FakeRegistry(
        [
            pypi_entry("0.0.9", latest=False),
            pypi_entry(),
            npm_entry(),
            remote_entry(echo_url),
            oci_entry(),
            *filler(3, "echo-tools"),
        ],
        page_size=4,
    ).start()
    yield fake
    await fake.close()


async def test_a_pypi_entry_is_installed_with_its_secret_as_a_reference(home, registry, tmp_path):
    offline = {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(echo_wheel(tmp_path).parent)}
    name = "io.github.bothost-tests/reg-echo"
    code, out, err = await bothost("mcp", "install", name, "--registry", registry.url, env=offline)
    assert code == 0, err
    script = home / "mcp" / "reg-echo" / "venv" / "bin" / "bothost-reg-echo"
    assert out.splitlines() == [
        f"installed reg-echo from {name}: pypi 0.1 → {script}",
        "  reads ${env:REG_ECHO_TOKEN} from bothost's environment (not set here)",
        "  left out (optional): REG_ECHO_DEBUG",
        "not started: set REG_ECHO_TOKEN where bothost runs, then `bothost mcp list --check`",
    ]
    assert f"{name} 0.1: pypi bothost-reg-echo==0.1" in err
    assert "installed bothost-reg-echo 0.1" in err and "pip | " not in err  # no -v
    row = rows(home)["reg-echo"]
    assert json.loads(row["env"]) == {
        "REG_ECHO_TOKEN": "${env:REG_ECHO_TOKEN}",
        "REG_ECHO_MODE": "quiet",
    }
    assert row["description"] == "Echoes things back (from the registry)"
    record = json.loads(row["install"])
    assert (record["kind"], record["entry"], record["registry"]) == ("pypi", name, registry.url)

    # the secret comes from the environment the server starts in, never from the table
    called = await bothost(
        "mcp", "call", "reg-echo", "echo", '{"text": "hi"}', env={"REG_ECHO_TOKEN": "t0k3n"}
    )
    assert called[0] == 0 and called[1].strip() == "hi", called[2]
    assert "t0k3n" not in (home / "bothost.db").read_bytes().decode("latin-1")


async def test_a_remote_entry_is_added_with_its_header_and_started(home, registry, echo_url):  # noqa: F811
    code, out, err = await bothost(
        "mcp",
        "install",
        "io.github.bothost-tests/remote-echo",
        "--registry",
        registry.url,
        env={"ECHO_TOKEN": "s3cret"},
    )
    assert code == 0, err
    lines = out.splitlines()
    assert lines[:3] == [
        f"installed remote-echo from io.github.bothost-tests/remote-echo: remote 1.0.0 → {echo_url}",
        "  reads ${env:ECHO_TOKEN} from bothost's environment (set here)",
        "  left out (optional): header X-Trace",
    ]
    assert any(line.startswith("  remote-echo/echo ") for line in lines)
    assert lines[-1].endswith("tools; try `bothost mcp call remote-echo TOOL '{…}'`")
    assert "(it also offers" not in err
    row = rows(home)["remote-echo"]
    assert row["url"] == echo_url and row["origin"] == "install"
    assert json.loads(row["headers"]) == {
        "Authorization": "Bearer ${env:ECHO_TOKEN}",
        "X-Client": "bothost",
    }


async def test_an_unknown_name_is_one_line_with_did_you_mean(home, registry):
    code, out, err = await bothost(
        "mcp", "install", "io.github.bothost-tests/reg-ecko", "--registry", registry.url
    )
    assert code == 1 and out == ""
    assert err.strip() == (
        f"bothost: install failed: the MCP registry at {registry.url} has no server "
        "io.github.bothost-tests/reg-ecko; did you mean io.github.bothost-tests/reg-echo?"
    )
    assert not rows(home) if (home / "bothost.db").exists() else True


@pytest.fixture
async def manager(home):
    host = make_host(home)
    yield commands.manager_for(host.config, host.store, home)
    host.store.close()


def echo_script(folder):
    script = folder / "run-server"
    script.write_text(f"#!/bin/sh\nexec {sys.executable} {ECHO_SERVER}\n")
    script.chmod(0o755)
    return script


async def test_an_npm_entry_goes_through_the_npm_install(manager, home, registry, monkeypatch):
    from bothost.mcp.install import Installed

    asked = []

    async def install_npm(package, folder, progress, names, chosen, *_output):
        asked.append(package.spec)
        return Installed(package, folder, echo_script(folder), "2.0.1", "npm's summary", [])

    monkeypatch.setattr("bothost.mcp.install.install_npm", install_npm)
    monkeypatch.setenv("ECHO_API_KEY", "k")
    done = await install_entry(manager, registry.url, "io.github.bothost-tests/npm-echo")
    assert asked == ["@bothost-tests/echo-server@2.0.1"]
    assert done.started and "echo" in {tool["name"] for tool in done.tools}
    row = rows(home)["npm-echo"]
    assert json.loads(row["args"]) == ["--stdio", "--level", "info"]
    assert json.loads(row["env"]) == {"ECHO_API_KEY": "${env:ECHO_API_KEY}"}
    assert row["description"] == "Echo, from npm"


async def test_an_oci_entry_is_refused_even_with_docker_on_path(
    manager, home, registry, monkeypatch, tmp_path
):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "docker").write_text(f"#!/bin/sh\ntouch {tmp_path}/ran\n")
    (bin_dir / "docker").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin:/bin")
    with pytest.raises(Exception, match="published only as the OCI image") as raised:
        await install_entry(manager, registry.url, "io.github.bothost-tests/boxed")
    assert "\n" not in str(raised.value)
    assert "boxed" not in rows(home) and not (tmp_path / "ran").exists()
