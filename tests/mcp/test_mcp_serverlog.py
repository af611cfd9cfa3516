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
