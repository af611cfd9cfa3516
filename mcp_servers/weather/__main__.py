"""Entry point of `bothost-mcp-weather` and `python -m bothost.mcp_servers.weather`."""

from bothost.mcp_servers.weather.server import build_server


def main() -> None:
    build_server().run()


if __name__ == "__main__":
    main()
