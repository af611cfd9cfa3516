"""bothost.platform.terminal_input: a prompted line from a pipe, read without stdin's buffer."""

from __future__ import annotations

import io
import os

import pytest

from bothost.platform import terminal_input


@pytest.fixture
def piped(monkeypatch):
    """Stdin a pipe; the end the test writes to."""
    read, write = os.pipe()
    stdin = open(read, encoding="utf-8")  # noqa: SIM115 - closed below
    monkeypatch.setattr("sys.stdin", stdin)
    yield write
    stdin.close()


def test_lines_written_at_once_come_one_prompt_each_then_eof(piped, capsys):
    write = piped
    os.write(write, "first\r\nsecond ünï\nlast without newline".encode())
    os.close(write)
    said = [terminal_input("you> ") for _ in range(3)]
    assert said == ["first", "second ünï", "last without newline"]
    with pytest.raises(EOFError):
        terminal_input("you> ")
    assert capsys.readouterr().out == "you> " * 4


def test_an_empty_line_is_not_the_end(piped):
    write = piped
    os.write(write, b"\n\nexit\n")
    os.close(write)
    assert [terminal_input("") for _ in range(3)] == ["", "", "exit"]
    with pytest.raises(EOFError):
        terminal_input("")


def test_a_stdin_that_is_no_file_is_read_with_input(monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("typed\n"))
    assert terminal_input("? ") == "typed"


@pytest.fixture
def terminal(monkeypatch):
    """Stdin a terminal (a pty); the controller end the test types into."""
    import pty

    controller, end = pty.openpty()
    stdin = open(end, encoding="utf-8")  # noqa: SIM115 - closed below
    monkeypatch.setattr("sys.stdin", stdin)
    yield controller
    stdin.close()
    os.close(controller)


def test_a_terminal_whose_output_is_redirected_is_read_without_input(terminal, monkeypatch, capsys):
    # `bothost chat > out.txt`, `mcp call … | jq` at a terminal: input() reads the terminal
    # itself only when stdout is one too; else it reads through stdin's buffer and holds its
    # lock, and Ctrl-C at the prompt ended the process in "Fatal Python error:
    # _enter_buffered_busy" (SIGABRT) instead of exiting
    def no_input(prompt=""):
        raise AssertionError("input() would hold stdin's buffer lock")

    monkeypatch.setattr("builtins.input", no_input)
    os.write(terminal, b"typed\n")
    assert terminal_input("you> ") == "typed"
    os.write(terminal, b"asked\n")
    assert terminal_input("Answer? ", err=True) == "asked"
    said = capsys.readouterr()
    assert said.out == "you> " and said.err == "Answer? "


def test_the_consoles_approval_and_form_are_read_without_input(piped, monkeypatch):
    # the console plugin asked its approvals and forms with input(): with stdin piped it
    # held stdin's buffer lock in its daemon thread, and Ctrl-C at the question aborted the
    # process at shutdown (SIGABRT) as the chat prompt once did
    from bothost.plugins.console.platform import ask_terminal

    from bothost.platform import Question

    def no_input(prompt=""):
        raise AssertionError("input() would hold stdin's buffer lock")

    monkeypatch.setattr("builtins.input", no_input)
    os.write(piped, b"y\nAna\n")
    assert ask_terminal(Question("Run it?")) is True
    form = Question("Who?", kind="form", schema={"properties": {"name": {"type": "string"}}})
    assert ask_terminal(form) == {"name": "Ana"}
