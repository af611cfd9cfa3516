"""The one decoder for JSON and text from outside (bothost.jsondecode), and the CLI commands
that take JSON or text in argv: a clear one-line error, never a crash."""

from __future__ import annotations

import os
import subprocess

import pytest

from bothost import jsondecode
from bothost.jsondecode import JsonInputError, decode, decode_object
from tests.helpers import run_bothost

DEEP = "[" * 1000 + "]" * 1000


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (DEEP, "nested deeper than 64"),
        ('{"a":' * 65 + "1" + "}" * 65, "nested deeper than 64"),
        ("[{" * 33 + "}]" * 33, "nested deeper than 64"),
        ('"\\ud800"', "lone surrogate"),
        ('{"\\udfff": 1}', "lone surrogate"),
        ('"\udc80"', "not valid UTF-8"),
        (b'"\xed\xa0\x80"', "not UTF-8"),  # a surrogate encoded as UTF-8 bytes
        (b"\xff", "not UTF-8"),
        ("NaN", "NaN is not a JSON number"),
        ("[Infinity]", "Infinity is not a JSON number"),
        ("9" * 5000, "not valid JSON"),
        ("[1, 2", "not valid JSON"),
        ("", "Expecting value (line 1, column 1)"),
        ("  ", "Expecting value (line 1, column 3)"),
        ('{"a": 1} x', "Extra data (line 1, column 10)"),
        ('{"a": 1}{}', "Extra data (line 1, column 9)"),
        ('{"a": 1', "Expecting ',' delimiter"),
        ("x" * 100, "larger than 10 bytes"),
    ],
)
def test_hostile_input_is_refused_with_one_line(data, reason):
    limits = {"max_bytes": 10} if reason.startswith("larger") else {}
    with pytest.raises(JsonInputError) as raised:
        decode(data, **limits)
    assert reason in str(raised.value) and "\n" not in str(raised.value)


@pytest.mark.parametrize(
    ("data", "value"),
    [
        ("[" * 3 + "]" * 3, [[[]]]),
        ('{"a": "' + "[" * 72 + '"}', {"a": "[" * 72}),  # brackets in a string do not nest
        ('"\\ud83d\\ude00 \\\\ud800"', "\U0001f600 \\ud800"),  # a pair, and an escaped backslash
        (b'{"k": "caf\xc3\xa9"}', {"k": "café"}),
        (' \n{"a": [1, 2.5, null]}\r\n\t', {"a": [1, 2.5, None]}),  # whitespace around
        ('{"a": {"b": true}}  ', {"a": {"b": True}}),
        ("7", 7),
    ],
)
def test_good_input_decodes_as_json_does(data, value):
    assert decode(data) == value


def test_64_levels_are_accepted():
    value = decode("[" * 64 + "]" * 64)
    for _ in range(63):
        value = value[0]
    assert value == []


def test_an_object_is_required_where_asked():
    with pytest.raises(JsonInputError, match="must be an object"):
        decode_object("[1]")


def bothost(home, *args: str) -> subprocess.CompletedProcess[bytes]:
    # argv as bytes: what a shell passes when the text is not UTF-8
    return run_bothost(*args, env={**os.environ, "BOTHOST_HOME": str(home)}, timeout=60, text=False)


@pytest.mark.parametrize(
    "args",
    [
        ["events", "push", "src", "t", DEEP],
        ["events", "push", "src", "t", '{"summary": "\\ud800"}'],
        ["events", "push", "src", "t", os.fsdecode(b'{"summary": "\xff"}')],
        ["events", "push", "src", os.fsdecode(b"event/\xff"), "{}"],
        ["chat", "-m", os.fsdecode(b"hello \xff")],
    ],
)
def test_the_cli_ends_hostile_argv_with_a_one_line_error(home, args):
    result = bothost(home, *args)
    assert result.returncode == 2
    error = result.stderr.decode().strip().splitlines()[-1]
    assert "Invalid value for " in error and "Traceback" not in result.stderr.decode()


def test_the_offline_agent_answers_a_hostile_call_from_the_cli(home):
    result = bothost(home, "chat", "-m", f"call events_list {DEEP}")
    assert result.returncode == 0, result.stderr.decode()
    assert b"nested deeper than 64 levels" in result.stdout


def test_text_is_checked_for_lone_surrogates():
    assert jsondecode.check_text("café 😀") == "café 😀"
    with pytest.raises(JsonInputError):
        jsondecode.check_text("x\udcff")


@pytest.mark.parametrize(
    "data",
    [
        '{"user": "bob", "user": "admin"}',
        '{"a": {"id": 1, "id": 2}}',  # at any depth
        '[{"k": 1}, {"k": 2, "k": 3}]',
        '{"user": "bob", "us\\u0065r": "admin"}',  # the same key, escaped
    ],
)
def test_a_key_written_twice_is_refused(data):
    """Parsers disagree on which of two values counts (Python's json keeps the last, many
    keep the first): a signed body or an id must mean one thing to every reader."""
    with pytest.raises(JsonInputError) as raised:
        decode(data)
    assert "repeats the key" in str(raised.value) and "\n" not in str(raised.value)


def test_equal_keys_in_different_objects_are_fine():
    assert decode('[{"k": 1}, {"k": 2}, {"a": {"k": 3}, "k": 4}]')[2] == {"a": {"k": 3}, "k": 4}


def test_only_text_with_an_escape_is_searched_for_escaped_surrogates():
    # the search runs only when a \u escape is in the text (jsondecode.decode): a surrogate
    # escape anywhere is still found, a pair or a plain escape passes, and the text of a
    # backslash followed by "ud800" is no escape
    assert decode(b'{"a": [{"b": "x\\ud83d\\ude00"}], "c": "\\u0041"}') == {
        "a": [{"b": "x\U0001f600"}],
        "c": "A",
    }
    assert decode(b'"\\\\ud800"') == "\\ud800"
    with pytest.raises(JsonInputError, match="lone surrogate"):
        decode(b'{"a": [{"b": "ok"}, {"c": "\\ude00"}]}')
