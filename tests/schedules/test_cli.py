"""``bothost schedule``: what the commands print, and a refused request as one line."""

from __future__ import annotations

import getpass
import json
import os

from tests.helpers import run_bothost, write_config


def bothost(home, config, *args):
    return run_bothost(*args, home=home, config=config, env={**os.environ})


def test_add_list_cancel(home, tmp_path):
    config = write_config(tmp_path / "c.yaml", {"tick": {"timezone": "Europe/Zurich"}})
    added = bothost(home, config, "schedule", "add", "--in", "10m", "call", "Ana")
    assert added.returncode == 0, added.stderr
    assert added.stdout.startswith("Scheduled #1: message at ")
    assert added.stdout.rstrip().endswith("(Europe/Zurich) to console:.")
    cron = bothost(home, config, "schedule", "add", "--cron", "0 9 * * 1", "--to", "web:x", "hi")
    assert "cron '0 9 * * 1' (Europe/Zurich), next Mon " in cron.stdout
    listed = json.loads(bothost(home, config, "schedule", "list", "--json").stdout)
    assert [(j["id"], j["text"], j["target"]) for j in listed] == [
        (1, "call Ana", "console:"),
        (2, "hi", "web:x"),
    ]
    assert {j["owner"] for j in listed} == {f"console:{getpass.getuser()}"}
    assert bothost(home, config, "schedule", "cancel", "#1").stdout == "Cancelled #1: call Ana\n"
    text = bothost(home, config, "schedule", "list").stdout
    assert text.startswith("#2 scheduled message cron") and "#1" not in text


def test_refusals_are_one_line(home, tmp_path):
    config = write_config(tmp_path / "c.yaml", {"schedules": {"max_per_person": 1}})
    cases = [
        (("--in", "5m", "--at", "09:00", "x"), "give exactly one of --at, --in and --cron"),
        (("--cron", "*/2 * * * *", "x"), "the shortest repeat is 5 min (schedules.min_repeat)"),
        (("--at", "yesterday-ish", "x"), "cannot read 'yesterday-ish' as a time"),
        (("--in", "5m", "--to", "ops", "x"), "not a target: 'ops'"),
    ]
    for args, line in cases:
        done = bothost(home, config, "schedule", "add", *args)
        assert done.returncode == 2 and line in done.stderr.strip().splitlines()[-1], done.stderr
    assert bothost(home, config, "schedule", "add", "--in", "5m", "x").returncode == 0
    full = bothost(home, config, "schedule", "add", "--in", "5m", "y")
    assert full.returncode == 2 and "the most allowed (schedules.max_per_person)" in full.stderr
    gone = bothost(home, config, "schedule", "cancel", "9")
    assert (gone.returncode, gone.stderr) == (
        1,
        "bothost: no job #9 of yours (bothost schedule list)\n",
    )
