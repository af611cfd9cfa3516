"""Environment references a config file gets wrong: the shell's way, and a misspelt name.

bothost reads only ``${env:NAME}`` (:data:`bothost.config.ENV_PATTERN`). ``${NAME}`` and
``$NAME`` are the shell's, and were used as written: ``api_key: ${OPENAI_API_KEY}`` went to
the provider as the key, and its refusal blamed ``llm.base_url``. They are refused at load
with the way to write them, except in the arguments of a server run by a shell, whose own
references they are. A ``${env:NAME}`` whose NAME is unset but close to a set variable's
name says that name (names only: a value is never shown).
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from bothost.config.check import source_of
from bothost.config.schema import ConfigError

if TYPE_CHECKING:
    from bothost.config import Config

# ``${NAME}`` anywhere; ``$NAME`` in capitals (how variables are named) and not inside a
# word or after another ``$``, so "pa$$word", "a$b" or "$5" stay text
SHELL_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|(?<![\w$])\$([A-Z_][A-Z0-9_]*)\b")
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "fish"})
CLOSE_ENOUGH = 0.85  # OPENAI_APIKEY and OPEN_API_KEY for OPENAI_API_KEY; not OTHER_KEY


def check_shell_references(data: dict[str, Any], merged: dict[str, Any], where: str) -> None:
    """Refuse a shell-style reference in the file ``where``'s ``data`` (``merged``: the
    sources read so far with this one, to know which servers a shell runs)."""
    skip = {f"mcp.servers.{name}.args" for name in shell_servers(merged)}
    for path, value in strings(data, ""):
        found = SHELL_REFERENCE.search(value)
        if found and not any(path.startswith(f"{s}[") for s in skip):
            name = found.group(1) or found.group(2)
            raise ConfigError(
                f"{where}: {path}: {found.group(0)} is the shell's way to name a variable and "
                f"bothost would use it as written; write ${{env:{name}}}"
            )


def shell_servers(merged: dict[str, Any]) -> list[str]:
    """The MCP servers whose command is a shell (``sh -c '… $HOME …'``)."""
    servers = (merged.get("mcp") or {}).get("servers") if isinstance(merged, dict) else None
    if not isinstance(servers, dict):
        return []
    return [
        str(name)
        for name, server in servers.items()
        if isinstance(server, dict)
        and isinstance(server.get("command"), str)
        and os.path.basename(server["command"]) in SHELLS
    ]


def strings(value: Any, path: str) -> Iterable[tuple[str, str]]:
    """Each string in ``value`` with its key path (``mcp.servers.x.args[1]``)."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from strings(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from strings(v, f"{path}[{i}]")
    elif isinstance(value, str):
        yield path, value


def close_variable(name: str) -> str | None:
    """The name of a set environment variable that ``name`` (unset) is likely a typo of."""
    by_upper = {n.upper(): n for n in os.environ if n != name}
    if name.upper() in by_upper:
        return by_upper[name.upper()]
    close = difflib.get_close_matches(name.upper(), list(by_upper), n=1, cutoff=CLOSE_ENOUGH)
    return by_upper[close[0]] if close else None


def key_path(path: str) -> list[str]:
    """``mcp.servers.x.args[1]`` as the mapping keys leading to it: mcp, servers, x, args."""
    return [part for part in re.sub(r"\[\d+\]", "", path).split(".") if part]


def unset_env_error(config: Config, path: str, name: str) -> ConfigError:
    """The error for ``${env:NAME}`` at ``path`` with NAME unset, naming the file that set it
    (and a set variable whose name is close: a typo on either side)."""
    close = close_variable(name)
    return ConfigError(
        f"{source_of(config, *key_path(path))}: {path}: environment variable {name} is not "
        f"set{f'; did you mean {close}?' if close else ''} (export it, or disable this part "
        "of the config)"
    )
