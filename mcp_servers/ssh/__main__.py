"""Entry point of `bothost-mcp-ssh` and `python -m bothost.mcp_servers.ssh`."""

from __future__ import annotations

from .server import build_server


def main() -> None:
    build_server().run()


if __name__ == "__main__":
    main()
