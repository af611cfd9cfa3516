"""A server's environment and headers: an allowlist, never the host's whole environment.

A stdio server gets PATH, HOME, LANG, LC_ALL, TZ, BOTHOST_HOME, USER, LOGNAME, TMPDIR and
the proxy and CA variables from the host, the names listed in its ``env_passthrough``, and
its own ``env`` — nothing else, so API keys the host holds for one server never leak into
another. ``${env:NAME}`` in an ``env`` or ``headers``
value is resolved here, when the server starts (config values arrive resolved already;
values added at run time with ``bothost mcp add`` are resolved now).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from bothost.config import McpServerConfig

BASE = ("PATH", "HOME", "LANG", "LC_ALL", "TZ", "BOTHOST_HOME", "USER", "LOGNAME", "TMPDIR")
# Without the proxy and CA names, every npx/uvx server behind a corporate proxy or a private
# CA fails its first download ("invalid peer certificate: UnknownIssuer"). They name where
# traffic goes and which CAs to trust; they hold no credential of ours.
NETWORK = (
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS",
)
ALLOWED = BASE + NETWORK
ENV_REF = re.compile(r"\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}")


class UnsetVariableError(ValueError):
    """A ``${env:NAME}`` reference to a variable that is not set."""


def resolve(value: str, where: str, environ: Mapping[str, str]) -> str:
    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in environ:
            raise UnsetVariableError(f"{where}: environment variable {name} is not set")
        return environ[name]

    return ENV_REF.sub(one, value)


def server_env(
    config: McpServerConfig, home: Path, environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment a stdio server starts with."""
    environ = os.environ if environ is None else environ
    env = {name: environ[name] for name in ALLOWED if name in environ}
    env["BOTHOST_HOME"] = str(home)
    env.update({name: environ[name] for name in config.env_passthrough if name in environ})
    env.update(
        {key: resolve(str(value), f"env.{key}", environ) for key, value in config.env.items()}
    )
    return env


def server_headers(
    config: McpServerConfig, environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    environ = os.environ if environ is None else environ
    return {
        key: resolve(str(value), f"headers.{key}", environ) for key, value in config.headers.items()
    }
