"""The command line: push, list, tick, briefings, retry — through the real root group."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from bothost.cli import cli


@pytest.fixture
def bothost(home):
    (home / "bothost.yaml").write_text(
        "tick:\n"
        "  deliver_to: ['console:']\n"
        "  rules: [{match: {source: gmail, payload.from: '*@corp.com'}, priority: high}]\n"
    )
    runner = CliRunner()

    def run(*args, code=0):
        result = runner.invoke(cli, list(args), catch_exceptions=False)
        assert result.exit_code == code, result.output + result.stderr
        return result

    return run


def test_push_list_tick_and_briefings(bothost):
    first = bothost(
        "events",
        "push",
        "gmail",
        "event/new_email",
        '{"id": "1", "from": "ana@corp.com", "summary": "Budget review moved"}',
    )
    assert first.stdout == "Queued event 1.\n"
    dup = bothost("events", "push", "gmail", "event/new_email", '{"id": "1"}')
    assert dup.stdout == "" and "Not queued" in dup.stderr
    bothost("events", "push", "weather", "event/weather_alert", '{"summary": "Rain at 17:00"}')

    listed = json.loads(bothost("events", "list", "--json").stdout)
    assert [(e["id"], e["status"]) for e in listed] == [(2, "pending"), (1, "pending")]
    assert "Budget review moved" in bothost("events", "list", "--status", "pending").stdout

    tick = bothost("tick")
    lines = tick.stdout.splitlines()
    assert lines[0].startswith("Briefing · ") and lines[0].endswith("· 2 events")
    assert lines[1:4] == ["HIGH", lines[2], "FYI"] and "Budget review moved" in lines[2]
    assert tick.stdout.count("Briefing ·") == 1  # console delivery is this printing

    assert bothost("events", "list", "--status", "pending").stdout == "No pending events.\n"
    quiet = bothost("tick")
    assert quiet.stdout == "" and "No briefing" in quiet.stderr

    briefings = json.loads(bothost("briefings", "--json").stdout)
    assert len(briefings) == 1 and briefings[0]["status"] == "delivered"
    assert briefings[0]["deliveries"] == [
        {
            "target": "console:",
            "status": "delivered",
            "attempts": 1,
            "last_error": None,
            "delivered_at": briefings[0]["deliveries"][0]["delivered_at"],
        }
    ]
    assert "console: delivered" in bothost("briefings").stdout


def test_push_says_bad_json_in_one_line_as_mcp_call_does(bothost):
    # found from outside: a three-line usage block here, one line from `mcp call`
    result = bothost("events", "push", "gmail", "event/x", "{bad", code=2)
    assert result.stderr.splitlines() == [
        "bothost: Invalid value for PAYLOAD: not valid JSON: Expecting property name enclosed "
        "in double quotes (line 1, column 2)"
    ]


def test_push_refuses_a_payload_that_is_not_an_object(bothost):
    result = bothost("events", "push", "x", "y", "[1, 2]", code=2)
    assert "must be an object" in result.stderr


@pytest.mark.parametrize(
    ("source", "type", "hint"),
    [
        ("", "", "SOURCE"),
        ("  ", "event/x", "SOURCE"),
        ("gmail", "", "TYPE"),
        (" gmail", "t", "SOURCE"),
    ],
)
def test_push_refuses_an_empty_or_padded_source_or_type(bothost, source, type, hint):
    # found from outside: `bothost events push '' '' {}` was queued, an event no trigger,
    # rule or listing could name
    result = bothost("events", "push", source, type, "{}", code=2)
    assert f"Invalid value for {hint}: it " in result.stderr and "Queued" not in result.stdout
    assert "No events" in bothost("events", "list").stdout


def test_retry_only_touches_failed_events(bothost):
    bothost("events", "push", "gmail", "event/new_email", '{"id": "1"}')
    result = bothost("events", "retry", "1", code=1)
    assert "0 of 1" in result.stdout


def test_a_failed_event_is_listed_and_retried(home):
    # Slack is off, so its target fails every time
    (home / "bothost.yaml").write_text("tick: {deliver_to: ['slack:C1'], max_attempts: 1}\n")
    runner = CliRunner()
    runner.invoke(cli, ["events", "push", "ssh", "event/ssh_alert", '{"summary": "disk"}'])
    tick = runner.invoke(cli, ["tick"])
    assert "slack:C1: failed after 1 attempts" in tick.stderr
    failed = runner.invoke(cli, ["events", "list", "--status", "failed"])
    assert "ssh/event/ssh_alert" in failed.stdout and "after 1 attempts" in failed.stdout
    retried = runner.invoke(cli, ["events", "retry", "1"])
    assert retried.exit_code == 0 and "1 of 1 events back to pending" in retried.stdout
    listed = json.loads(runner.invoke(cli, ["events", "list", "--json"]).stdout)
    assert listed[0]["status"] == "pending" and listed[0]["attempts"] == 0


def test_the_default_target_web_briefings_is_delivered_from_the_cli(home):
    runner = CliRunner()
    runner.invoke(cli, ["events", "push", "weather", "event/weather_alert", '{"summary": "Rain"}'])
    tick = runner.invoke(cli, ["tick"])
    assert tick.exit_code == 0 and "• Rain (weather alert" in tick.stdout, tick.stderr
    listed = json.loads(runner.invoke(cli, ["briefings", "--json"]).stdout)
    assert [(d["target"], d["status"]) for d in listed[0]["deliveries"]] == [
        ("web:briefings", "delivered")
    ]


def test_tick_json_keeps_stdout_for_json_and_prints_console_briefings_on_stderr(bothost):
    bothost("events", "push", "weather", "event/weather_alert", '{"summary": "Rain at 17:00"}')
    tick = bothost("tick", "--json")
    report = json.loads(tick.stdout)
    assert len(report["briefings"]) == 1
    assert tick.stderr.count(report["briefings"][0]["text"]) == 1  # the console: delivery
    briefings = json.loads(bothost("briefings", "--json").stdout)
    assert briefings[0]["deliveries"][0]["status"] == "delivered"


def test_retry_says_which_ids_do_not_exist_and_what_the_others_are(bothost):
    bothost("events", "push", "gmail", "event/new_email", '{"id": "1"}')
    result = bothost("events", "retry", "1", "99", code=1)
    assert "0 of 2" in result.stdout
    assert "event 1 is pending" in result.stdout and "no event 99" in result.stdout


def test_an_event_stored_with_nan_before_it_was_refused_lists_as_valid_json(bothost, home):
    # events stored before NaN was refused (queue.py) still hold `NaN`, `Infinity` in their
    # payload text: `events list --json` printed them as is, which no JSON reader takes
    import sqlite3

    from bothost.events.queue import decode_payload

    bothost("events", "push", "ssh", "event/ssh_alert", '{"id": "a1", "summary": "load"}')
    old = '{"id":"a1","level":NaN,"peak":Infinity,"low":-Infinity,"summary":"load"}'
    with sqlite3.connect(home / "bothost.db") as db:
        db.execute("UPDATE events SET payload = ?", (old,))
    db.close()
    out = bothost("events", "list", "--json").stdout
    [event] = json.loads(out, parse_constant=pytest.fail)  # strict: no NaN token accepted
    assert event["payload"] == {
        "id": "a1",
        "level": "NaN",
        "peak": "Infinity",
        "low": "-Infinity",
        "summary": "load",
    }
    assert "load" in bothost("events", "list").stdout
    # the tick reads stored payloads the same way: the model is never sent a bare NaN
    assert decode_payload(old)["level"] == "NaN"


def test_push_wait_out_of_range_is_a_usage_error(bothost):
    """--wait nan was taken (NaN passes a bound check) and --wait 1e300 or inf waited
    forever on a database that cannot write: refused, exit 2, naming the limit."""
    for wait in ("nan", "inf", "1e300", "-1", "86401"):
        refused = bothost("events", "push", "--wait", wait, "gmail", "event/x", "{}", code=2)
        assert "--wait" in refused.stderr and "86400" in refused.stderr, (wait, refused.stderr)
    assert bothost("events", "push", "--wait", "86400", "gmail", "event/x", "{}").stdout
