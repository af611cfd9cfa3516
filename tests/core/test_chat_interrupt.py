"""``bothost chat`` in the terminal: Ctrl-C stops the running turn, not the conversation.

Typed text is read only between turns, so a person at the terminal stops a turn the way a
terminal program is stopped: SIGINT. The chat says the turn stopped and asks for the next
line; the conversation ends on ``exit``, or on Ctrl-C at the prompt (exit status 130).
"""

import asyncio
import os
import pty
import signal
import textwrap
from asyncio.subprocess import PIPE, STDOUT

from tests.helpers import bothost_process

# Starting a Python process that imports the host and loads a plugin, on a loaded machine.
STEP_SECONDS = 60

SLOW_TOOL = textwrap.dedent("""
    import asyncio
    import os
    from pathlib import Path

    from bothost.hookspecs import hookimpl

    async def slow(seconds: int = 600) -> str:
        \"\"\"Wait a long time (a test tool).\"\"\"
        Path(os.environ["SLOW_MARKER"]).write_text("started")
        await asyncio.sleep(seconds)
        return "finished"

    @hookimpl
    def register_tools(register):
        register(slow)
""")


async def read_until(stream: asyncio.StreamReader, needle: bytes) -> bytes:
    seen = b""
    while needle not in seen:
        chunk = await asyncio.wait_for(stream.read(4096), STEP_SECONDS)
        assert chunk, f"output ended before {needle!r}: {seen[-2000:]!r}"
        seen += chunk
    return seen


async def test_ctrl_c_stops_the_turn_and_the_chat_goes_on(tmp_path, home):
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "slow.py").write_text(SLOW_TOOL)
    marker = tmp_path / "started"
    config = tmp_path / "c.yaml"
    config.write_text(
        f"plugins: {{dirs: ['{plugins}']}}\nmcp: {{servers: {{weather: {{enabled: false}}}}}}\n"
    )
    process = await bothost_process(
        home, config, "chat", stdin=PIPE, stderr=STDOUT, SLOW_MARKER=str(marker)
    )
    assert process.stdin and process.stdout
    try:
        process.stdin.write(b"call slow {}\n")
        await process.stdin.drain()
        async with asyncio.timeout(STEP_SECONDS):
            while not marker.exists():
                assert process.returncode is None
                await asyncio.sleep(0.05)
        process.send_signal(signal.SIGINT)
        said = await read_until(process.stdout, b"Stopped")
        assert b"finished" not in said
        process.stdin.write(b"exit\n")
        await process.stdin.drain()
        assert await asyncio.wait_for(process.wait(), STEP_SECONDS) == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def test_ctrl_c_at_the_prompt_ends_the_chat_at_once(tmp_path, home):
    """Before, the thread reading the prompt was joined at exit: the chat hung until Enter.

    Stdin is a terminal and stdout a pipe, so the prompt is shown (on stderr) and says the
    chat waits for a line; a piped stdin gets no prompt, and is read the same way (from its
    descriptor, :func:`bothost.platform.terminal_input`)."""
    config = tmp_path / "c.yaml"
    config.write_text("mcp: {servers: {weather: {enabled: false}}}\n")
    controller, end = pty.openpty()
    process = await bothost_process(home, config, "chat", stdin=end, stderr=STDOUT)
    os.close(end)
    assert process.stdout
    try:
        await read_until(process.stdout, b"you> ")
        process.send_signal(signal.SIGINT)
        # 130, as a Unix tool interrupted by SIGINT ends (it was 1 with click's "Aborted!",
        # as for a failure); before that, the thread left waiting in input() on the piped
        # stdin held its buffer's lock, and the process aborted at shutdown (-SIGABRT,
        # "Fatal Python error: _enter_buffered_busy")
        assert await asyncio.wait_for(process.wait(), STEP_SECONDS) == 130
        said = await process.stdout.read()
        assert b"Traceback" not in said and b"Fatal Python error" not in said
        assert said.rstrip().endswith(b"bothost: interrupted"), said[-500:]
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        os.close(controller)


async def test_ctrl_d_at_the_prompt_ends_the_line_and_the_chat(tmp_path, home):
    """Found from outside: Ctrl-D ended the chat with the shell's prompt after ``you> ``."""
    config = tmp_path / "c.yaml"
    config.write_text("mcp: {servers: {weather: {enabled: false}}}\n")
    controller, end = pty.openpty()
    process = await bothost_process(home, config, "chat", stdin=end, stderr=STDOUT)
    os.close(end)
    assert process.stdout
    try:
        await read_until(process.stdout, b"you> ")
        os.write(controller, b"\x04")  # the terminal's end of input, as Ctrl-D types it
        assert await asyncio.wait_for(process.wait(), STEP_SECONDS) == 0
        assert await process.stdout.read() == b"\n"  # the line ended, nothing else said
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        os.close(controller)
