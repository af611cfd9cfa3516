"""``store.url`` from config to CLI: which database, masked everywhere, one-line failures."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from bothost.store import Store, StoreError, core_migrations
from bothost.store.target import store_target
from tests.helpers import run_bothost

COMMAND_TIMEOUT = 120  # one CLI process: imports, plugins, migrations on a loaded machine
PASSWORD = "pg-Secret-4711"
QUIET = (
    "platforms: {web: {port: 0}, console: {enabled: false}}\n"
    "mcp: {servers: {weather: {enabled: false}}}\n"
)


def bothost(home: Path, config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_bothost(*args, home=home, config=config, timeout=COMMAND_TIMEOUT)


def config_with(tmp_path: Path, url: str) -> Path:
    path = tmp_path / "c.yaml"
    path.write_text(QUIET + f"store: {{url: {json.dumps(url)}}}\n")
    return path


def with_password(url: str) -> str:
    """``url`` with a password (the test cluster trusts local users and ignores it)."""
    return url.replace("postgresql://bothost@", f"postgresql://bothost:{PASSWORD}@")


def test_the_default_is_the_sqlite_file_in_the_home(tmp_path):
    assert store_target(None, tmp_path) == tmp_path / "bothost.db"
    assert store_target("sqlite:///srv/b.db", tmp_path) == Path("/srv/b.db")
    assert store_target("other.db", tmp_path) == tmp_path / "other.db"
    assert store_target("postgres://h/db", tmp_path) == "postgres://h/db"


def test_an_unknown_scheme_is_a_config_error(home, tmp_path):
    result = bothost(home, config_with(tmp_path, "mysql://db/bothost"), "config", "show")
    assert result.returncode == 2, result.stderr
    assert "store.url: unknown scheme 'mysql'" in result.stderr


def test_an_unreachable_server_is_one_line_naming_it_without_the_password(tmp_path):
    url = f"postgresql://bothost:{PASSWORD}@/bothost?host={tmp_path}/nowhere&port=1"
    with pytest.raises(StoreError) as caught:
        Store(url, core_migrations())
    text = str(caught.value)
    assert "\n" not in text and PASSWORD not in text, text
    assert text.startswith("postgresql://bothost:***@/bothost") and "cannot connect" in text


def test_migrate_and_config_show_on_postgresql_mask_the_password(home, tmp_path, postgres_url):
    config = config_with(tmp_path, with_password(postgres_url))
    first = bothost(home, config, "db", "migrate", "--json")
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    assert "core:1" in report["applied"] and PASSWORD not in first.stdout + first.stderr
    again = bothost(home, config, "db", "migrate")
    assert again.returncode == 0 and again.stdout.strip().endswith("up to date"), again.stderr
    shown = bothost(home, config, "config", "show")
    assert shown.returncode == 0, shown.stderr
    assert "bothost:***@" in shown.stdout and PASSWORD not in shown.stdout
    assert not (home / "bothost.db").exists()  # the file in the home was never the store


def test_migrate_on_the_default_sqlite_file(home, tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text(QUIET)
    result = bothost(home, config, "db", "migrate")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"{home / 'bothost.db'}: applied core:1")
