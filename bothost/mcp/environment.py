"""A server's environment and headers: an allowlist, never the host's whole environment.

A stdio server gets PATH, HOME, LANG, LC_ALL, TZ, BOTHOST_HOME, USER, LOGNAME, TMPDIR and
the proxy and CA variables from the host, the names listed in its ``env_passthrough``, and
its own ``env`` — nothing else, so API keys the host holds for one server never leak into
another. ``${env:NAME}`` in an ``env`` or ``headers``
value is resolved here, when the server starts (config values arrive resolved already;
values added at run time with ``bothost mcp add`` are resolved now). A reference written
wrong (``${env:TOKEN``, ``${envTOKEN}``) is refused as config refuses it — when the server
is added (:func:`reference_problem`) and again when it starts, for rows stored before that
check — because used as literal text it would be sent to the server as the credential.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from bothost.config import ENV_PATTERN, McpServerConfig
from bothost.config.check import url_problem

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
ENV_REF = ENV_PATTERN  # one syntax for config files and run-time servers
# a broken reference as its error quotes it: up to its brace, a space or 40 characters (a
# name is short; what follows a space is the rest of the value, perhaps a credential)
BROKEN_REF = re.compile(r"\$\{env[^\s}]{0,40}\}?")


class UnsetVariableError(ValueError):
    """A ``${env:NAME}`` reference to a variable that is not set, or one written wrong."""


class ServerAddressError(ValueError):
    """A server's url, its ``${env:NAME}`` put in, is not one a request can go to."""


def reference_problem(value: str, where: str) -> str | None:
    """Why ``value`` holds a ``${env…`` that is not a well-formed ``${env:NAME}``, or None.

    The message quotes the broken reference alone: the rest of a header value may be a
    credential pasted beside it, and this text reaches terminals, logs and ``mcp list``."""
    found = BROKEN_REF.search(ENV_REF.sub("", value))
    if found is None:
        return None
    broken = found.group(0)
    return f"{where}: expected ${{env:NAME}} (NAME of letters, digits and _), got {broken!r}"


def config_problem(config: McpServerConfig) -> str | None:
    """The first malformed reference in a server's ``headers`` or ``env``, or None."""
    for section, values in (("headers", config.headers), ("env", config.env)):
        for key, value in values.items():
            problem = reference_problem(str(value), f"{section}.{key}")
            if problem:
                return problem
    return None


def resolve(value: str, where: str, environ: Mapping[str, str]) -> str:
    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in environ:
            raise UnsetVariableError(f"{where}: environment variable {name} is not set")
        return environ[name]

    problem = reference_problem(value, where)
    if problem:
        raise UnsetVariableError(problem)
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


def server_url(config: McpServerConfig, environ: Mapping[str, str] | None = None) -> str:
    """The url an HTTP server is reached at, each ``${env:NAME}`` in it put in (a server
    added at run time stores the reference; config's arrive resolved) and the result
    checked as :func:`bothost.config.check.url_problem` checks a url: the check when it was
    added saw the reference, not the value. :class:`ServerAddressError` names the variables,
    never their values; :class:`UnsetVariableError` for an unset one."""
    environ = os.environ if environ is None else environ
    url = resolve(config.url or "", "url", environ)
    wrong = url_problem(url)
    if wrong:
        names = ", ".join(f"${{env:{name}}}" for name in ENV_REF.findall(config.url or ""))
        where = f" with {names} put in; check that variable" if names else ""
        raise ServerAddressError(f"url: {wrong}{where}")
    return url
