import logging

from bothost.config import load
from bothost.host.logs import SecretFilter, secret_values


def test_secrets_are_redacted_from_log_records(home, tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("MY_KEY", "sk-very-secret-123")
    config_file = tmp_path / "c.yaml"
    config_file.write_text(
        "llm: {provider: openai, api_key: '${env:MY_KEY}'}\n"
        "mcp: {servers: {r: {url: 'http://x', headers: {Authorization: 'Bearer tok-abcdef'}}}}\n"
    )
    secrets = secret_values(load(config_file, home))
    assert {"sk-very-secret-123", "Bearer tok-abcdef"} <= secrets
    logger = logging.getLogger("test.redaction")
    caplog.handler.addFilter(SecretFilter(secrets))
    logger.warning("calling with key %s and header %s", "sk-very-secret-123", "Bearer tok-abcdef")
    assert "sk-very-secret-123" not in caplog.text and "tok-abcdef" not in caplog.text
    assert "calling with key *** and header ***" in caplog.text


def test_the_host_log_writes_a_lone_surrogate_escaped(home, capsys):
    from pathlib import Path

    from bothost.host.logs import setup

    root = logging.getLogger()
    before = list(root.handlers)
    setup(load(None, home), home)
    try:
        logging.getLogger("test.surrogate").warning("source %s", "mcp\udcff")
    finally:
        for handler in set(root.handlers) - set(before):
            root.removeHandler(handler)
            handler.close()
    assert "mcp\\udcff" in (Path(home) / "logs" / "bothost.log").read_text()
    assert "Logging error" not in capsys.readouterr().err


def test_the_host_log_writes_escape_sequences_escaped(home):
    from pathlib import Path

    from bothost.host.logs import setup

    root = logging.getLogger()
    before = list(root.handlers)
    setup(load(None, home), home)
    try:
        # a server's error or a sender's name, logged: tail on the file must not obey it
        logging.getLogger("test.osc").warning("server said %s", "x\x1b]52;c;cHduZWQ=\x07\u202ey")
    finally:
        for handler in set(root.handlers) - set(before):
            root.removeHandler(handler)
            handler.close()
    raw = (Path(home) / "logs" / "bothost.log").read_text()
    assert "\x1b" not in raw and "\x07" not in raw and "\u202e" not in raw
    assert "server said x\\x1b]52;c;cHduZWQ=\\x07\\u202ey\n" in raw


def redacted_line(secrets, message: str) -> str:
    """``message`` as a handler with a SecretFilter of ``secrets`` writes it."""
    record = logging.LogRecord(
        "test.redaction", logging.WARNING, __file__, 1, "%s", (message,), None
    )
    assert SecretFilter(secrets).filter(record)
    return record.getMessage()


def test_every_occurrence_of_a_secret_is_redacted():
    line = redacted_line(["q7secret42"], "q7secret42 then q7secret42,q7secret42")
    assert line == "*** then ***,***"


def test_overlapping_secrets_leave_no_part_of_either():
    # two values sharing a run of text: whichever is replaced first must not leave the other's
    first, second = "alpha-7Kq9-bravo", "bravo-3Zx8-delta"  # same length: no order helps
    line = redacted_line([first, second], "key alpha-7Kq9-bravo-3Zx8-delta end")
    assert line == "key *** end"
    # a value overlapping itself (its occurrences share characters)
    line = redacted_line(["x9Ax9Ax9A"], "x9Ax9Ax9Ax9Ax9A!")
    assert line == "***!"


def test_a_filters_short_secret_inside_a_known_longer_one_leaves_none_of_it():
    from bothost import redact

    redact.remember(["pre-Wq4tokenQ81-post"])  # learnt from the config, process-wide
    line = redacted_line(["tokenQ81"], "sent pre-Wq4tokenQ81-post and tokenQ81")
    assert line == "sent *** and ***"
    assert redact.conceal("a pre-Wq4tokenQ81-post b") == "a *** b"
