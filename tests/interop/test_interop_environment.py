"""Servers launched the way users launch them — ``npx`` a package, ``uvx`` a wheel — see the
proxy, CA and user variables of the host's environment, and none of its secrets.

A test server (tests/interop/env_server.py, and the same in Node under env_server_npm/) answers
its environment from a tool; ``bothost mcp call`` runs it in a process whose environment holds
both kinds of variable. Both launchers run offline: npx from a local folder, uvx from a wheel
built here, with their caches in the test's folder.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from peers import program, python_script

from tests.helpers import write_config

HERE = Path(__file__).resolve().parent
BOTHOST = Path(sys.executable).with_name("bothost")
CALL_BOUND = 120  # seconds: npx or uvx set up a package before the server starts (a few here)
PASSED = {
    "HTTP_PROXY": "http://proxy.corp.example:3128",
    "HTTPS_PROXY": "http://proxy.corp.example:3129",
    "NO_PROXY": "127.0.0.1,localhost,.corp.example",
    "http_proxy": "http://proxy.corp.example:3128",
    "https_proxy": "http://proxy.corp.example:3129",
    "no_proxy": "127.0.0.1,localhost,.corp.example",
    "USER": "interop-user",
    "LOGNAME": "interop-user",
}
SECRETS = {
    "OPENAI_API_KEY": "sk-interop-secret",
    "ANTHROPIC_API_KEY": "sk-ant-interop-secret",
    "SLACK_BOT_TOKEN": "xoxb-interop-secret",
    "AWS_SECRET_ACCESS_KEY": "interop-secret",
    "GITHUB_TOKEN": "ghp_interop_secret",
}


def env_wheel(folder: Path) -> Path:
    """A wheel of env_server.py with a console script, written by hand (no build backend, so
    nothing is downloaded): the smallest package uvx installs like one from PyPI."""
    name, version = "bothost_env_server", "0.1.0"
    info = f"{name}-{version}.dist-info"
    files = {
        f"{name}.py": (HERE / "env_server.py").read_bytes(),
        f"{info}/METADATA": (
            f"Metadata-Version: 2.1\nName: bothost-env-server\nVersion: {version}\n"
        ).encode(),
        f"{info}/WHEEL": (
            b"Wheel-Version: 1.0\nGenerator: bothost-tests\nRoot-Is-Purelib: true\n"
            b"Tag: py3-none-any\n"
        ),
        f"{info}/entry_points.txt": f"[console_scripts]\nbothost-env-server = {name}:main\n".encode(),
    }

    def digest(data: bytes) -> str:
        raw = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
        return "sha256=" + raw.decode()

    record = "".join(f"{path},{digest(data)},{len(data)}\n" for path, data in files.items())
    wheel = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, data in files.items():
            archive.writestr(path, data)
        archive.writestr(f"{info}/RECORD", record + f"{info}/RECORD,,\n")
    return wheel


def launchers(tmp: Path) -> dict[str, dict]:
    return {
        "npx": {
            "command": program("npx"),
            "args": ["--offline", "--yes", str(HERE / "env_server_npm")],
            "env": {"npm_config_cache": str(tmp / "npm-cache")},
        },
        "uvx": {
            "command": python_script("uvx"),
            "args": [
                "--offline",
                "--python",
                sys.executable,
                "--from",
                str(env_wheel(tmp)),
                "bothost-env-server",
            ],
            "env": {"UV_CACHE_DIR": str(tmp / "uv-cache")},
        },
    }


@pytest.mark.parametrize("launcher", ["npx", "uvx"])
def test_launched_server_sees_proxy_and_ca_variables_and_no_secret(launcher, tmp_path, home):
    server = launchers(tmp_path)[launcher]
    config = write_config(tmp_path / "bothost.yaml", {"mcp": {"servers": {"env": server}}})
    certs = tmp_path / "certs"
    certs.mkdir()
    bundle = certs / "corp-ca.pem"
    bundle.write_text("-----BEGIN CERTIFICATE-----\n")  # only the path matters offline
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    expected = {
        **PASSED,
        "SSL_CERT_FILE": str(bundle),
        "SSL_CERT_DIR": str(certs),
        "REQUESTS_CA_BUNDLE": str(bundle),
        "NODE_EXTRA_CA_CERTS": str(bundle),
        "TMPDIR": str(scratch),
    }
    environ = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "LANG": "C.UTF-8",
        **expected,
        **SECRETS,
    }
    result = subprocess.run(
        [str(BOTHOST), "--home", str(home), "--config", str(config)]
        + ["mcp", "call", "env", "environment", "--json"],
        env=environ,
        capture_output=True,
        text=True,
        timeout=CALL_BOUND,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, (result.stdout, result.stderr)
    seen = json.loads(result.stdout)["structured"]
    assert {name: seen.get(name) for name in expected} == expected
    assert not set(SECRETS) & set(seen)
    assert not [v for v in seen.values() if "interop-secret" in v or "interop_secret" in v]
