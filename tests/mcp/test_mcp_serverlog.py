"""Each server's log file: rotated at 5 MB with one backup."""

from __future__ import annotations

from bothost.mcp.serverlog import MAX_BYTES, close_server_logger, log_path, server_logger


def test_server_log_rotates_at_5_mb_keeping_one_backup(home):
    log = server_logger(home, "chatty")
    line = "x" * 1000
    try:
        for _ in range(MAX_BYTES * 2 // 1000 + 100):  # enough for two rotations
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
    assert "[message db\\x1b]52;c;ZWNobyBwd25lZA==\\x07] two\nlines\n" in raw
