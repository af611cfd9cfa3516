"""``doctor`` and ``db export`` count the same tables and say which (issue 39).

Found from outside: doctor said 25 tables where ``db export`` said 24: doctor counted the
migration record too, which an export does not copy.
"""

from __future__ import annotations

import json

from tests.helpers import run_bothost

QUIET = "platforms: {web: {port: 0}, console: {enabled: false}}\nmcp: {servers: {}}\n"


def test_doctor_and_db_export_count_the_same_data_tables(home, tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text(QUIET)
    exported = run_bothost("db", "export", str(tmp_path / "dump"), home=home, config=config)
    assert exported.returncode == 0, exported.stderr
    as_json = run_bothost(
        "db", "export", str(tmp_path / "dump2"), "--json", home=home, config=config
    )
    tables = len(json.loads(as_json.stdout)["tables"])
    assert f" in {tables} data tables exported from " in exported.stdout
    doctor = run_bothost("doctor", "--offline", home=home, config=config)
    line = next(x for x in doctor.stdout.splitlines() if x.startswith("ok  database:"))
    assert f": {tables} data tables, schema " in line, line
