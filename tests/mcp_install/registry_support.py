"""Registry entries for the install tests, a wheel to install offline and the CLI as a child.

The PyPI entry names a wheel written here (a console script that starts the echo test
server with this interpreter, and refuses to start without its secret), installed by pip
from a folder (PIP_NO_INDEX, PIP_FIND_LINKS): the ordinary isolated install, no network.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
import sys
import zipfile
from pathlib import Path

from tests.fakes.mcp_registry import item
from tests.mcp_install.support import ECHO_SERVER, INSTALL_TIMEOUT

REPO = {"url": "https://github.com/bothost-tests/servers", "source": "github"}
WRAPPER = """
import os, sys


def main():
    if os.environ.get("REG_ECHO_TOKEN") != "t0k3n":
        sys.exit("reg-echo: REG_ECHO_TOKEN is not set")
    if os.environ.get("REG_ECHO_MODE") != "quiet":
        sys.exit("reg-echo: REG_ECHO_MODE is not quiet")
    os.execv({python!r}, [{python!r}, {server!r}, *sys.argv[1:]])
"""


def echo_wheel(folder: Path) -> Path:
    """`bothost-reg-echo` 0.1: its console script runs the echo server once the env is right."""
    name, info = "bothost_reg_echo", "bothost_reg_echo-0.1.dist-info"
    files = {
        f"{name}/__init__.py": WRAPPER.format(python=sys.executable, server=str(ECHO_SERVER)),
        f"{info}/METADATA": "Metadata-Version: 2.1\nName: bothost-reg-echo\nVersion: 0.1\n"
        "Summary: the package's own summary\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: bothost-tests\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
        f"{info}/entry_points.txt": f"[console_scripts]\nbothost-reg-echo = {name}:main\n",
    }

    def digest(data: bytes) -> str:
        return (
            "sha256="
            + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        )

    record = "".join(f"{p},{digest(t.encode())},{len(t.encode())}\n" for p, t in files.items())
    path = folder / "bothost_reg_echo-0.1-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for member, content in files.items():
            archive.writestr(member, content)
        archive.writestr(f"{info}/RECORD", record + f"{info}/RECORD,,\n")
    return path


def pypi_entry(version: str = "0.1", latest: bool = True) -> dict:
    return item(
        {
            "name": "io.github.bothost-tests/reg-echo",
            "title": "Echo",
            "description": "Echoes things back (from the registry)",
            "version": version,
            "repository": REPO,
            "packages": [
                {
                    "registryType": "pypi",
                    "registryBaseUrl": "https://pypi.org",
                    "identifier": "bothost-reg-echo",
                    "version": version,
                    "runtimeHint": "uvx",
                    "transport": {"type": "stdio"},
                    "environmentVariables": [
                        {
                            "name": "REG_ECHO_TOKEN",
                            "description": "API token",
                            "isRequired": True,
                            "isSecret": True,
                            "format": "string",
                        },
                        {
                            "name": "REG_ECHO_MODE",
                            "description": "how loud",
                            "isRequired": True,
                            "default": "quiet",
                        },
                        {"name": "REG_ECHO_DEBUG", "description": "debug logs"},
                    ],
                }
            ],
        },
        latest=latest,
    )


def npm_entry() -> dict:
    return item(
        {
            "name": "io.github.bothost-tests/npm-echo",
            "description": "Echo, from npm",
            "version": "2.0.1",
            "packages": [
                {
                    "registryType": "npm",
                    "identifier": "@bothost-tests/echo-server",
                    "version": "2.0.1",
                    "runtimeHint": "npx",
                    "transport": {"type": "stdio"},
                    "packageArguments": [
                        {"type": "positional", "value": "--stdio"},
                        {"type": "named", "name": "--level", "value": "info"},
                        {"type": "named", "name": "--color", "description": "optional"},
                    ],
                    "environmentVariables": [
                        {"name": "ECHO_API_KEY", "isRequired": True, "isSecret": True}
                    ],
                }
            ],
        }
    )


def remote_entry(url: str) -> dict:
    return item(
        {
            "name": "io.github.bothost-tests/remote-echo",
            "description": "Echo, hosted",
            "version": "1.0.0",
            "websiteUrl": "https://example.com/echo",
            "remotes": [
                {"type": "sse", "url": url.replace("/mcp", "/sse")},
                {
                    "type": "streamable-http",
                    "url": url,
                    "headers": [
                        {
                            "name": "Authorization",
                            "value": "Bearer {echo_token}",
                            "isRequired": True,
                            "isSecret": True,
                        },
                        {"name": "X-Client", "value": "bothost", "isRequired": False},
                        {"name": "X-Trace", "isSecret": True},
                    ],
                },
            ],
        }
    )


def oci_entry() -> dict:
    return item(
        {
            "name": "io.github.bothost-tests/boxed",
            "description": "Echo in a box",
            "version": "1.2.3",
            "packages": [
                {
                    "registryType": "oci",
                    "identifier": "docker.io/bothost-tests/boxed",
                    "version": "1.2.3",
                    "runtimeHint": "docker",
                    "transport": {"type": "stdio"},
                }
            ],
        }
    )


def filler(count: int, word: str = "weather") -> list[dict]:
    """``count`` ordinary entries whose names contain ``word``, for paging."""
    return [
        item(
            {
                "name": f"io.github.example{i:02d}/{word}-{i:02d}",
                "description": f"{word.title()} server number {i}",
                "version": f"1.{i}.0",
                "packages": [
                    {
                        "registryType": "npm" if i % 2 else "pypi",
                        "identifier": f"{word}-server-{i:02d}",
                        "version": f"1.{i}.0",
                        "transport": {"type": "stdio"},
                    }
                ],
            }
        )
        for i in range(count)
    ]


async def bothost(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """``python -m bothost ARGS`` as a child, so that the fake registry on this loop answers
    it; its exit status, stdout and stderr."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bothost",
        *args,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, **(env or {})},
    )
    try:
        async with asyncio.timeout(INSTALL_TIMEOUT):
            out, err = await process.communicate()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    return process.returncode or 0, out.decode(), err.decode()
