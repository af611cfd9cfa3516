"""Running the host: ``bothost run`` (until a signal) and ``bothost chat`` (the terminal).

``bothost chat`` talks through the console platform the console plugin registers (found by
name, like any platform: the core imports no plugin), attached to the host without being
started, since this command reads the terminal itself.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from collections.abc import Awaitable
from typing import Any

from bothost.agent import history
from bothost.api import Outcome
from bothost.config.schema import ConfigError
from bothost.hooks.startup import RegistrationError
from bothost.host import chat_completion, heap
from bothost.host.logs import chat_terminal, log_file
from bothost.host.logs import setup as setup_logging
from bothost.host.reload import ConfigWatcher, unpublish
from bothost.models import Address
from bothost.platform import in_daemon_thread, terminal_input

logger = logging.getLogger(__name__)
PLUGIN_ERROR_EXIT = 2  # bothost --help: 2 for config, plugin or usage errors
CONFIG_ERROR_EXIT = 2


async def serve(host: Any, verbose: int = 0) -> int:
    """Start everything configured and stay up until SIGINT or SIGTERM; the exit status."""
    setup_logging(host.config, host.home, verbose)
    if host.store.applied:  # an upgrade: the log says when the database changed, and by what
        logger.info("%s: applied migrations %s", host.store.label, ", ".join(host.store.applied))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await host.start()
    except RegistrationError as exc:  # a plugin's register_routes: a plugin error, as at load
        print(f"bothost: plugin error: {exc}", file=sys.stderr)
        await host.stop()
        return PLUGIN_ERROR_EXIT
    except ConfigError as exc:  # the listener's check (configcheck.check_serving): as at load
        print(f"bothost: config error: {exc}", file=sys.stderr)
        await host.stop()
        return CONFIG_ERROR_EXIT
    except Exception as exc:
        print(f"bothost: {exc}", file=sys.stderr)
        await host.stop()
        return 1
    heap.settle()  # what start-up left lives as long as the process (bothost/host/heap.py)
    port = host.http.port
    if port:  # listening means the web platform is on
        print(
            f"bothost is running: http://{host.config.http.host}:{port}/  (Ctrl-C to stop)",
            file=sys.stderr,
            flush=True,
        )
    else:
        print("bothost is running (Ctrl-C to stop)", file=sys.stderr, flush=True)
    watcher = ConfigWatcher(host)  # a saved edit of the config reaches the running host
    host.supervise("config watch", watcher.run)
    loop.add_signal_handler(signal.SIGHUP, watcher.poke)
    await stop.wait()
    print("bothost: stopping", file=sys.stderr, flush=True)
    await host.stop()
    unpublish(host)  # a stopped host needs no restart
    return 0


# The turns whose one-message chat is a failure for the caller's exit status: the model
# was not reached or gave no answer (configuration.md: "a model or server error" is 1).
FAILED_TURNS = frozenset({Outcome.FAILED, Outcome.REFUSED})
PROMPT = "you> "  # the terminal chat's, shown only to a person typing (chat_prompt)


async def chat(host: Any, message: str | None, verbose: int = 0, fresh: bool = False) -> int:
    """One message (``-m``) or an interactive conversation in the terminal; the exit status
    (1 when the one message's turn failed or was refused). ``fresh`` (``--new``): the
    conversation starts afresh, as after ``/new``.

    The log goes to ``logs/bothost.log`` as ``bothost run``'s does; the terminal shows each
    warning or error there as one line, once (:func:`bothost.host.logs.chat_terminal`), and of
    the MCP runner only a server a turn needed and could not have, not its retries."""
    console = host.platforms.get("console")
    if console is None:
        raise ConfigError(
            "plugins.disabled: bothost chat talks through the console plugin; "
            "enable it to chat in the terminal"
        )
    setup_logging(host.config, host.home, verbose)
    with chat_terminal(verbose, log_file(host.home)):
        return await converse(host, console, message, fresh)


async def converse(host: Any, console: Any, message: str | None, fresh: bool = False) -> int:
    """The chat itself, on a host not yet started; the exit status."""
    # Each MCP server starts when a turn first needs its tools (`chat -m help` starts none);
    # the turn waits for it, and a server not ready then is said once on stderr.
    await host.start(serve_http=False, platforms=False, tick=False, mcp_on_demand=True)
    console.bind(host)
    try:
        if fresh:  # said on stderr: stdout holds the replies alone
            await history.start_fresh(host.store, str(Address("console", "")))
            print("bothost: started a new conversation", file=sys.stderr, flush=True)
        if message is not None:
            reply = await console.converse(message)
            return 1 if reply.outcome in FAILED_TURNS else 0
        prompt, to_stderr = chat_prompt()
        if prompt and not to_stderr:  # input() edits the line: Tab completes /prompt lines
            chat_completion.install(host, asyncio.get_running_loop())
        while True:
            try:
                line = await read_line(prompt, to_stderr)
            except EOFError:
                if prompt:  # Ctrl-D at a terminal: end the prompt's line, as a shell does
                    print(file=sys.stderr if to_stderr else sys.stdout, flush=True)
                break
            if line.strip() in ("exit", "quit"):
                break
            if line.strip():
                await interruptible(host, console.converse(line))
    finally:
        await host.stop()
    return 0


async def interruptible(host: Any, turn: Awaitable[Any]) -> None:
    """Run one turn of the terminal chat; Ctrl-C stops the turn, not the chat.

    Typed text is read only between turns, so ``stop`` cannot reach a running one; SIGINT
    can. While the turn runs it cancels the console session's turns, and the handler in
    place before (asyncio's, which ends the chat) comes back for the prompt.
    """
    loop = asyncio.get_running_loop()
    previous = signal.getsignal(signal.SIGINT)

    def stop_turn() -> None:
        print("\nbothost: stopping the turn (Ctrl-C at the prompt quits)", file=sys.stderr)
        host.cancel(Address("console", ""))

    loop.add_signal_handler(signal.SIGINT, stop_turn)
    try:
        await turn
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        signal.signal(signal.SIGINT, previous)


def chat_prompt() -> tuple[str, bool]:
    """The chat's prompt, and whether it goes to stderr.

    None when stdin is not a terminal: nobody is typing, and ``echo hi | bothost chat``
    printed ``you> `` into the replies a script reads. On stderr when stdout is not a
    terminal (``bothost chat > replies.txt``): the person sees it, the file does not.
    """
    try:
        typed, shown = sys.stdin.isatty(), sys.stdout.isatty()
    except (AttributeError, ValueError):  # no stdin, or a closed one: nobody types
        return "", False
    if not typed:
        return "", False
    return PROMPT, not shown


async def read_line(prompt: str, to_stderr: bool = False) -> str:
    """``input(prompt)`` without holding the process: see :func:`in_daemon_thread`."""
    return await in_daemon_thread(lambda: terminal_input(prompt, err=to_stderr), "chat-input")
