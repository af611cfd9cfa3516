"""`bothost-mcp-gcal [--http HOST:PORT]` serves MCP; `bothost-mcp-gcal auth` authorizes."""

from __future__ import annotations

import sys

from ..google.auth import run_auth


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["auth"]:
        sys.exit(run_auth("gcal", args[1:]))
    from .server import build_server

    build_server().run(args)


if __name__ == "__main__":
    main()
