"""``bothost run`` as a user runs it: stays up without stdin, serves, stops on SIGTERM."""

import asyncio
import re
import signal

import aiohttp

from tests.helpers import bothost_process, free_port, write_config


async def test_run_serves_until_sigterm(tmp_path, home):
    port = free_port()
    config = write_config(
        tmp_path / "c.yaml",
        {"platforms": {"web": {"port": port}}, "mcp": {"servers": {"weather": {"enabled": False}}}},
    )
    process = await bothost_process(home, config, "run")
    banner = await asyncio.wait_for(process.stderr.readline(), 30)
    # the one line README promises, first and alone: the log's INFO lines go to its file
    assert banner.decode().startswith(f"bothost is running: http://127.0.0.1:{port}/"), banner
    async with aiohttp.ClientSession() as client:
        async with client.get(f"http://127.0.0.1:{port}/healthz") as response:
            assert response.status == 200
    process.send_signal(signal.SIGTERM)
    assert await asyncio.wait_for(process.wait(), 30) == 0


async def test_run_freezes_its_start_up_heap(tmp_path, home):
    # bothost run settles the collector once started (bothost/host/heap.py): start-up's objects
    # are never scanned again, so a burst of events is not slowed by full collections
    port = free_port()
    config = write_config(
        tmp_path / "c.yaml",
        {"platforms": {"web": {"port": port}}, "mcp": {"servers": {"weather": {"enabled": False}}}},
    )
    process = await bothost_process(home, config, "run", stdout=asyncio.subprocess.DEVNULL)
    try:
        async with asyncio.timeout(30):  # log lines come first on stderr, then the banner
            while b"bothost is running" not in await process.stderr.readline():
                assert not process.stderr.at_eof(), "bothost run exited early"
        log = (home / "logs" / "bothost.log").read_text()
        frozen = re.search(r"start-up heap frozen \((\d+) objects\)", log)
        assert frozen and int(frozen.group(1)) > 10_000, log
    finally:
        process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(process.wait(), 30) == 0


async def lines_until_running(process) -> list[str]:
    """The lines ``bothost run`` wrote on stderr before "bothost is running" (bounded)."""
    lines = []
    async with asyncio.timeout(30):
        while b"bothost is running" not in (line := await process.stderr.readline()):
            assert not process.stderr.at_eof(), "bothost run exited early"
            lines.append(line.decode())
    return lines


async def test_run_with_v_shows_the_log_on_stderr_too(tmp_path, home):
    port = free_port()
    config = write_config(
        tmp_path / "c.yaml",
        {"platforms": {"web": {"port": port}}, "mcp": {"servers": {"weather": {"enabled": False}}}},
    )
    process = await bothost_process(home, config, "-v", "run", stdout=asyncio.subprocess.DEVNULL)
    try:
        lines = await lines_until_running(process)
        assert any(
            f"INFO bothost.http.server: listening on http://127.0.0.1:{port}/" in x for x in lines
        )
    finally:
        process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(process.wait(), 30) == 0


async def test_run_with_a_hosted_model_and_no_key_says_so_before_it_serves(tmp_path, home):
    # found from outside (a wheel in a fresh venv): `run` started without a word, and the
    # person learnt of the missing key only from the first reply in the web chat
    port = free_port()
    config = write_config(
        tmp_path / "c.yaml",
        {
            "llm": {"provider": "anthropic"},
            "platforms": {"web": {"port": port}},
            "mcp": {"servers": {"weather": {"enabled": False}}},
        },
    )
    process = await bothost_process(home, config, "run", stdout=asyncio.subprocess.DEVNULL)
    try:
        lines = await lines_until_running(process)
    finally:
        process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(process.wait(), 30) == 0
    assert len(lines) == 1, lines
    assert "anthropic needs an API key" in lines[0] and "ANTHROPIC_API_KEY" in lines[0]
    assert "bothost doctor" in lines[0]


async def test_ctrl_c_stops_run_in_a_terminal_at_once(tmp_path, home):
    """Found from outside: `bothost run` in a terminal (the console platform reads it)
    printed "bothost: stopping" at Ctrl-C and then hung until Enter: the console's prompt
    read stdin in an executor thread, which asyncio.run joins on the way out."""
    import fcntl
    import os
    import pty
    import sys
    import termios

    config = write_config(
        tmp_path / "c.yaml",
        {
            "platforms": {"web": {"port": free_port()}, "console": {"enabled": True}},
            "mcp": {"servers": {"weather": {"enabled": False}}},
        },
    )
    controller, terminal = pty.openpty()

    def own_terminal() -> None:  # the pty as its controlling terminal, as in a shell
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bothost", "--config", str(config), "run",
        stdin=terminal, stdout=terminal, stderr=terminal, preexec_fn=own_terminal,
        env={**os.environ, "BOTHOST_HOME": str(home)},
    )  # fmt: skip
    os.close(terminal)
    seen = b""
    try:
        async with asyncio.timeout(30):
            while b"bothost is running" not in seen or b"you> " not in seen:
                seen += await asyncio.to_thread(os.read, controller, 4096)
        os.write(controller, b"\x03")  # Ctrl-C, typed
        # it ends in < 1 s; 0: Ctrl-C is how `run` stops, not an interruption of its work
        assert await asyncio.wait_for(process.wait(), 15) == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        os.close(controller)


async def test_run_logs_the_migrations_it_applied(tmp_path, home):
    # Found from outside: a home of an older bothost (core:1-9) upgraded by `bothost run`
    # got core:10-12, and logs/bothost.log never said that the database had changed.
    from bothost.hooks.discovery import load_plugins, new_plugin_manager
    from bothost.hooks.startup import build_migrations
    from bothost.store import Store, core_migrations

    older = [m for m in core_migrations() if m.number <= 9]
    Store(home / "bothost.db", older).close()
    # what this build applies to such a database (core's newer ones, then each plugin's),
    # so the next migration does not break this test
    pm = new_plugin_manager()
    load_plugins(pm)
    Store(tmp_path / "older.db", older).close()
    upgrade = Store(tmp_path / "older.db", build_migrations(pm))
    expected = ", ".join(upgrade.applied)
    upgrade.close()
    assert expected.startswith("core:10, ")
    port = free_port()
    config = write_config(
        tmp_path / "c.yaml",
        {"platforms": {"web": {"port": port}}, "mcp": {"servers": {"weather": {"enabled": False}}}},
    )
    process = await bothost_process(home, config, "run", stdout=asyncio.subprocess.DEVNULL)
    try:
        async with asyncio.timeout(30):
            while b"bothost is running" not in await process.stderr.readline():
                assert not process.stderr.at_eof(), "bothost run exited early"
        log = (home / "logs" / "bothost.log").read_text()
        assert f"bothost.db: applied migrations {expected}" in log, log
    finally:
        process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(process.wait(), 30) == 0
