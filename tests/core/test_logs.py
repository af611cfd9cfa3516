import logging

from bothost.config import load
from bothost.logs import SecretFilter, secret_values


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

    from bothost.logs import setup

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

    from bothost.logs import setup

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
