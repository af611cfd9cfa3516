"""The `bothost` command line (placeholder until the CLI lands)."""


def main() -> None:
    raise SystemExit("bothost: not built yet")
