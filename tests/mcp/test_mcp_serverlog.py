"""Each server's log file: rotated at 5 MB with one backup."""

from __future__ import annotations

from bothost.mcp.serverlog import MAX_BYTES, close_server_logger, log_path, server_logger


def test_server_log_rotates_at_5_mb_keeping_one_backup(home):
    log = server_logger(home, "chatty")
    # the bytes of two rotations in long lines: each record costs its formatting and
    # redaction whatever its length, and 1,000-byte lines took 10,585 records (19 s loaded)
    line = "x" * 20_000
    try:
        for _ in range(MAX_BYTES * 2 // len(line) + 5):  # enough for two rotations
            log.info("[stderr] %s", line)
    finally:
        close_server_logger("chatty")
    path = log_path(home, "chatty")
    assert MAX_BYTES == 5 * 1024 * 1024
    assert path.stat().st_size <= MAX_BYTES
    assert path.with_name("chatty.log.1").stat().st_size <= MAX_BYTES
    assert not path.with_name("chatty.log.2").exists()
    assert path.stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in path.parent.iterdir()) == ["chatty.log", "chatty.log.1"]


def test_a_lone_surrogate_is_written_escaped_not_a_logging_error(home, capsys):
    log = server_logger(home, "odd")
    try:
        log.warning("handling %s failed", "event/\ud800")
    finally:
        close_server_logger("odd")
    assert "event/\\ud800" in log_path(home, "odd").read_text()
    assert "Logging error" not in capsys.readouterr().err


OSC_52 = "\x1b]52;c;ZWNobyBwd25lZA==\x07"  # sets the clipboard of a terminal that shows it


def test_escape_sequences_are_written_escaped_so_tailing_the_file_is_safe(home):
    from bothost.mcp.serverlog import log_message

    log = server_logger(home, "hostile")
    try:
        log.info("[stderr] %s", f"ready{OSC_52}\x1b[2J\rhidden \u202eevil\u202c done\tok")
        log_message(log, {"level": "error", "logger": f"db{OSC_52}", "data": "two\nlines"})
    finally:
        close_server_logger("hostile")
    raw = log_path(home, "hostile").read_text()
    assert "\x1b" not in raw and "\x07" not in raw and "\r" not in raw
    assert "\u202e" not in raw and "\u202c" not in raw
    assert "ready\\x1b]52;c;ZWNobyBwd25lZA==\\x07\\x1b[2J\\x0dhidden \\u202eevil\\u202c" in raw
    assert "done\tok" in raw  # a tab stays a tab, and a message's lines stay lines
    assert "[message db\\x1b]52;c;ZWNobyBwd25lZA==\\x07] two\n  | lines\n" in raw


def test_a_flood_of_log_messages_is_written_up_to_its_budget_and_the_rest_counted():
    """A server's notifications/message flood held the host's event loop writing each line
    (a neighbour's tool call took 19 s at load 10): past a burst of LOG_BURST, LOG_RATE a
    second are written, and what is dropped is said in the server's log with its count."""
    import logging

    from bothost.mcp import jsonrpc
    from bothost.mcp.inbound import LOG_BURST, LOG_RATE, Inbound

    class Lines(logging.Handler):
        def __init__(self) -> None:
            super().__init__()
            self.lines: list[str] = []

        def emit(self, record: logging.LogRecord) -> None:
            self.lines.append(record.getMessage())

    log = logging.getLogger("bothost.mcp.server.test-log-budget")
    log.setLevel(logging.DEBUG)
    log.propagate = False
    lines = Lines()
    log.addHandler(lines)
    now = [100.0]
    inbound = Inbound(None, name="t", log=log, roots=[], clock=lambda: now[0])  # type: ignore[arg-type]

    def send(count: int) -> None:
        for i in range(count):
            message = {"level": "info", "data": f"line {i}"}
            inbound.on_notification(jsonrpc.notification("notifications/message", message))

    def written() -> int:
        return sum(1 for line in lines.lines if line.startswith("[message]"))

    try:
        send(LOG_BURST * 5)  # all at one instant
        assert written() == LOG_BURST
        assert any(
            "flood control" in line and "notifications/message beyond" in line
            for line in lines.lines
        ), lines.lines
        now[0] += 1.0  # a second later: a second's worth more, no more
        send(int(LOG_RATE) * 2)
        assert written() == LOG_BURST + int(LOG_RATE)
        now[0] += 60.0  # a quiet minute refills the burst, no more than the burst
        send(LOG_BURST + 1)
        assert written() == 2 * LOG_BURST + int(LOG_RATE)
    finally:
        log.removeHandler(lines)


FORGED = "2026-12-03 20:00:00,000 ERROR bothost.http.server: the web token is hunter2"


def test_a_message_of_several_lines_cannot_forge_a_line_of_ours(home):
    # found last session: a server's notifications/message data (or any message we log with
    # its text) holding "\n2026-… ERROR bothost …" wrote a line of its own into the file,
    # indistinguishable from one the host wrote. Each further line of a record is marked.
    from bothost.mcp.serverlog import log_message

    log = server_logger(home, "forger")
    try:
        log_message(log, {"level": "info", "logger": "x\n" + FORGED, "data": "ok\n" + FORGED})
        log.info("[stderr] %s", "done")
    finally:
        close_server_logger("forger")
    lines = log_path(home, "forger").read_text().splitlines()
    assert not any(line.startswith("2026-12-03 20:00:00,000") for line in lines), lines
    ours = [line for line in lines if not line.startswith("  | ")]
    assert len(ours) == 2 and ours[1].endswith("INFO [stderr] done"), lines
    assert f"  | {FORGED}" in lines


def test_the_host_log_marks_the_further_lines_of_a_record_too(home):
    import logging

    from bothost.logs.terminal import ShownFormatter

    record = logging.LogRecord(
        "bothost.mcp", logging.WARNING, __file__, 1, "said: %s", ("a\n" + FORGED,), None
    )
    text = ShownFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s").format(record)
    assert text.splitlines()[1] == "  | " + FORGED
