"""Tab at ``bothost chat``'s prompt completes a ``/prompt`` line (readline, on a terminal).

The chat runs on a pseudo-terminal (stdin and stdout both, so ``input()`` edits the line);
what Tab completed is read back from what the terminal echoes."""

import asyncio
import os
import pty
import sys
from pathlib import Path

from tests.helpers import bothost_process

STEP_SECONDS = 60  # starting the host and an MCP server, on a loaded machine
COMPLETING = Path(__file__).resolve().parents[1] / "mcp" / "servers" / "completing_server.py"


async def read_until(controller: int, needle: bytes) -> bytes:
    """What the terminal shows, up to `needle`, waiting at most STEP_SECONDS for it."""
    loop = asyncio.get_running_loop()
    seen = bytearray()
    found = asyncio.Event()

    def readable() -> None:
        try:
            chunk = os.read(controller, 4096)
        except OSError:  # the child closed the terminal
            chunk = b""
        seen.extend(chunk.replace(b"\x07", b""))  # the bell (several matches) shows nothing
        if needle in seen or not chunk:
            found.set()

    loop.add_reader(controller, readable)
    try:
        await asyncio.wait_for(found.wait(), STEP_SECONDS)
    except TimeoutError:
        raise AssertionError(f"no {needle!r} in {bytes(seen[-2000:])!r}") from None
    finally:
        loop.remove_reader(controller)
    assert needle in seen, f"output ended before {needle!r}: {bytes(seen[-2000:])!r}"
    return bytes(seen)


async def test_tab_completes_prompt_names_and_a_servers_values(tmp_path, home):
    config = tmp_path / "c.yaml"
    config.write_text(
        "mcp: {servers: {weather: {enabled: false}, "
        f"wx: {{command: '{sys.executable}', args: ['{COMPLETING}']}}}}}}\n"
    )
    controller, end = pty.openpty()
    process = await bothost_process(home, config, "chat", stdin=end, stdout=end, stderr=end)
    os.close(end)
    try:
        await read_until(controller, b"you> ")
        os.write(controller, b"/prompt wx/fo\t")
        await read_until(controller, b"wx/forecast")
        # Zurich and Zug: Tab rings (the bell); 'Zurich West' (quoted) is not offered for Zu
        os.write(controller, b" city=Zu\t")
        os.write(controller, b"r\t")
        await read_until(controller, b"city=Zurich")
        os.write(controller, b"\x15exit\n")  # Ctrl-U clears the line; exit ends the chat
        assert await asyncio.wait_for(process.wait(), STEP_SECONDS) == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        os.close(controller)
