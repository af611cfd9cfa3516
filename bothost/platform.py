"""What a chat platform is to the host: a name, a lifecycle, ``send``, and optional parts.

Platforms are registered through the ``register_platforms`` hook. The host starts the
enabled ones with its :class:`~bothost.api.HostApi`, routes each
:class:`~bothost.models.IncomingMessage` they hand it to an agent turn, and delivers replies
and briefings through ``send``. Asking a person (an approval, an elicitation) is the
platform's job: ``ask`` returns the answer, or ``None`` when nobody is there to answer,
which callers treat as "no". ``ask``, ``bind``, ``health``, ``required``,
``notify_login_needed`` and ``timezone`` are optional, each declared as its own small
protocol so code that uses one can check for it. A plugin whose platform module is costly
to import registers a :class:`Deferred` instead: the platform is made when something first
uses it.
"""

from __future__ import annotations

import asyncio
import email.utils
import inspect
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

from bothost.models import Address, Briefing

if TYPE_CHECKING:
    from bothost.api import HostApi

T = TypeVar("T")


# The choices an approval may offer besides yes and no (core writes the rule they stand for)
ALLOW_CONVERSATION = "conversation"  # allow this tool for the rest of the conversation
ALLOW_ALWAYS = "always"  # always allow this exact call

# The longest the host waits for one ``send`` of a briefing: a platform slower than this is
# failing, and a later tick retries the delivery (a platform that waits out a peer's rate
# limit must stay well within it)
SEND_DEADLINE = 60.0


def terminal_input(prompt: str, *, err: bool = False) -> str:
    """``input(prompt)`` that a daemon thread may be left waiting in when the process ends.

    On a terminal whose output is a terminal too this is ``input()`` itself (line editing;
    CPython then reads the terminal directly, not through ``sys.stdin``'s buffer). Otherwise
    — stdin a pipe or a file, or output redirected (``bothost chat > out.txt``, ``mcp call
    … | jq``) — ``input()`` reads through that buffer and holds its lock while it waits, and
    a process that ended with a thread waiting there (Ctrl-C at the prompt) aborted at
    shutdown: "Fatal Python error: _enter_buffered_busy", SIGABRT. So stdin is then read
    from its file descriptor, a byte at a time up to the newline: no lock, and nothing read
    past the line, so the next prompt starts where this one ended (a terminal still edits
    the line itself). ``err``: the prompt goes to stderr (a command whose stdout is its
    result). ``EOFError`` at the end of the input, as ``input()``.
    """
    stdin = sys.stdin
    out = sys.stderr if err else sys.stdout
    try:
        fd = stdin.fileno() if stdin is not None else -1
        readline = not err and stdin.isatty() and sys.stdout.isatty()
    except (OSError, ValueError, AttributeError):  # not a real file (a test's StringIO), or closed
        fd, readline = -1, False
    if fd < 0 or readline:
        if err:
            out.write(prompt)
            out.flush()
            return input()
        return input(prompt)
    out.write(prompt)
    out.flush()
    line = bytearray()
    while (byte := os.read(fd, 1)) and byte != b"\n":
        line += byte
    if not byte and not line:
        raise EOFError
    encoding = getattr(stdin, "encoding", None) or "utf-8"
    return line.decode(encoding, errors="replace").removesuffix("\r")


async def in_daemon_thread(read: Callable[[], T], name: str = "terminal-input") -> T:
    """``read()`` (a blocking read of the terminal) in a daemon thread; its result or error.

    An executor thread blocked in ``input()`` is joined at exit (``asyncio.run`` shuts the
    default executor down), so Ctrl-C at a prompt used to leave the command hanging until
    a line was typed; a daemon thread is not joined.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(value: Any, error: BaseException | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(value)

    def run() -> None:
        try:
            value, error = read(), None
        except Exception as exc:  # the caller's to handle, on its loop
            value, error = None, exc
        try:
            loop.call_soon_threadsafe(settle, value, error)
        except RuntimeError:
            pass  # the command ended (its loop closed) while this was being read

    threading.Thread(target=run, name=name, daemon=True).start()
    return await future


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """Seconds a peer's ``Retry-After`` asks for (delta-seconds or an HTTP date), or None;
    a date is counted from ``now`` (epoch seconds; the wall clock's when not given)."""
    if not value:
        return None
    text = value.strip()
    if text.isdigit():
        return float(text)
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    return max(when.timestamp() - (time.time() if now is None else now), 0.0)


@dataclass(frozen=True)
class Choice:
    """A further "yes" an approval offers: ``value`` is the answer, ``label`` what to show."""

    value: str
    label: str


@dataclass
class Question:
    """Something to ask a person: a yes/no approval or a small form (elicitation).

    An approval may list ``choices``: further ways to say yes ("allow for this
    conversation"). A platform that can show them offers each as its own button and answers
    with the choice's ``value``; one that cannot simply offers yes and no.
    """

    text: str
    kind: str = "approval"  # "approval" (yes/no) or "form" (fields of `schema`)
    schema: dict[str, Any] = field(default_factory=dict)
    secret: bool = False  # never echo the answer (passwords)
    user: str = ""  # who may answer (the requester); admins may too
    timeout: float = 300.0
    choices: list[Choice] = field(default_factory=list)


@runtime_checkable
class Platform(Protocol):
    """What every platform has. The optional members below it are looked up when used.

    Optional members (a platform defines those it can provide; leaving one out is normal):

    - ``ask(address, question)`` (:class:`Asking`): ask a person; without it, nobody is there
      to ask on this platform, which approvals and elicitations treat as "no".
    - ``bind(host)`` (:class:`Binding`): attach to the host without being started, so a
      process that does not run the platform (``bothost tick``) can still deliver through it.
    - ``health()`` (:class:`Reporting`): a small JSON-able dict for ``GET /healthz``.
    - ``required`` (:class:`Requiring`): ``True`` makes a failed ``start`` stop the host;
      by default a platform that fails to start is logged and left out.
    - ``notify_login_needed(notice)`` (:class:`Notifying`): tell the platform's admins that
      a remote MCP server waits for a login.
    - ``target_problem(channel)`` (:class:`Checking`): why ``tick.deliver_to: name:channel``
      cannot work (a config error at load), or None.
    - ``timezone(user)`` (:class:`Zoned`): a person's time zone, for their scheduled jobs.
    """

    name: str  # the address prefix it serves: "slack" for "slack:C0123:…"

    def enabled(self, host: HostApi) -> bool:
        """Whether to start this platform with the current config."""

    async def start(self, host: HostApi) -> None:
        """Connect and begin handing messages to ``host.handle_message``; return promptly."""

    async def stop(self) -> None:
        """Disconnect; the host gives it a few seconds."""

    async def send(self, address: Address, text: str, **kwargs: Any) -> Any:
        """Post ``text`` to ``address``; return a platform reference (e.g. a message ts)."""

    async def send_briefing(self, address: Address, briefing: Briefing) -> Any:
        """Deliver a briefing; raise on failure so the delivery is retried."""


@runtime_checkable
class Asking(Protocol):
    """A platform that can ask a person (approvals, MCP elicitation forms)."""

    async def ask(self, address: Address, question: Question) -> Any:
        """Ask a person; ``True``/``False`` (or a choice's ``value``) for approvals, a dict for
        forms, ``None`` if nobody answered (or nobody can) before ``question.timeout``.
        An approval's answer may come as ``(answer, who answered)``."""


@runtime_checkable
class Binding(Protocol):
    """A platform that can deliver without being started."""

    def bind(self, host: HostApi) -> None:
        """Attach to ``host`` (no connection of its own); a no-op if it cannot deliver so."""


@runtime_checkable
class Reporting(Protocol):
    """A platform with its own part of ``GET /healthz``."""

    def health(self) -> dict[str, Any]:
        """Its state, JSON-able; ``"ok": False`` marks it unhealthy. Must not raise or block."""


@runtime_checkable
class Requiring(Protocol):
    """A platform that can say the host must not run without it."""

    required: bool


@runtime_checkable
class Serial(Protocol):
    """A platform whose conversations take one message at a time (Slack: a thread's
    messages are answered in order). With ``serial`` true the host queues a session's
    messages behind its running turn; a stop word still goes straight through."""

    serial: bool


@runtime_checkable
class Zoned(Protocol):
    """A platform that knows its people's time zones (Slack's user ``tz``)."""

    async def timezone(self, user: str) -> str | None:
        """``user``'s IANA zone name (``Europe/Zurich``), or None when it is not known.
        Scheduled jobs read a person's "at 9" in it (:mod:`bothost.schedules.tools`)."""


@dataclass(frozen=True)
class LoginNotice:
    """A remote MCP server waits for an admin to log in (just added, or its login ended)."""

    server: str
    why: str  # what the server's OAuth said, for the admin
    command: str  # what an admin runs on the host instead: ``bothost mcp login NAME``


@runtime_checkable
class Notifying(Protocol):
    """A platform that can tell its admins, privately, that a server needs a login."""

    async def notify_login_needed(self, notice: LoginNotice) -> None:
        """Tell each admin once per spell: ``host.mcp_login_link(server, admin)`` gives the
        admin's one-time link ("" when the host has no public address: say ``command``
        instead), or None when that admin was told already. Raise on failure (logged)."""


@runtime_checkable
class Checking(Protocol):
    """A platform that judges its own ``tick.deliver_to`` targets when the config loads."""

    def target_problem(self, channel: str) -> str | None:
        """Why ``name:channel`` cannot be delivered to (one phrase, shown after the key
        path as a config error), or None when it can. Pure: no I/O, no network. A check
        that needs the config (the platform's own section) takes it as a second, required
        parameter, ``target_problem(channel, config)``: :func:`target_check` passes it then."""


class Deferred:
    """A platform registered by its name and made on first use.

    ``register(Deferred("slack", make))``: ``make()`` (which imports the platform's module
    and returns the platform) runs the first time anything but ``name`` is read — the host
    starting or binding it, a delivery to it, a check for an optional member. A command that
    never touches the platform (``bothost chat`` and Slack) never imports it: the first-party
    platforms' modules were a tenth of ``bothost chat -m help``'s start (issue 19). The
    host, hooks and tools see the platform's own members and behaviour through it; what
    ``make()`` returns must carry the same ``name``, and its failure is the platform's.

    ``target_problem`` (:class:`Checking`), when given, answers the config's check of
    ``tick.deliver_to`` targets without making the platform (see :func:`target_check`):
    every command loads the config, and most never use the platform.
    """

    def __init__(
        self,
        name: str,
        make: Callable[[], Any],
        *,
        target_problem: Callable[..., str | None] | None = None,
    ) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "_make", make)
        object.__setattr__(self, "_made", None)
        if target_problem is not None:  # found before __getattr__, so nothing is made
            object.__setattr__(self, "target_problem", target_problem)

    @property
    def made(self) -> bool:
        """Whether the platform has been made (its module imported)."""
        return self._made is not None

    def platform(self) -> Any:
        """The platform itself, made now if it was not yet."""
        if self._made is None:
            made = self._make()
            if getattr(made, "name", None) != self.name:
                raise ValueError(
                    f"platform {self.name!r}: its factory made one named "
                    f"{getattr(made, 'name', None)!r}"
                )
            object.__setattr__(self, "_made", made)
        return self._made

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("__"):  # copy, pickle and the like: not the platform's
            raise AttributeError(attribute)
        return getattr(self.platform(), attribute)

    def __setattr__(self, attribute: str, value: Any) -> None:
        setattr(self.platform(), attribute, value)

    def __repr__(self) -> str:
        return f"Deferred({self.name!r}, made={self.made})"


def target_check(platform: Any) -> Callable[[str, Any], str | None] | None:
    """``platform``'s ``target_problem`` (:class:`Checking`) for the config's check of
    ``tick.deliver_to``, as ``check(channel, config)``, or None. A :class:`Deferred` platform
    not yet made is not made for it (every command loads the config): it answers with the
    check it was given, if any. A check with a second *required* positional parameter gets
    the loaded config too (the webhook platform's reads its ``platforms.webhook.targets``);
    any other is asked with the channel alone, so a defaulted ``strict=False`` keeps its
    default."""
    if isinstance(platform, Deferred) and not platform.made:
        judge = vars(platform).get("target_problem")
    else:
        judge = getattr(platform, "target_problem", None)
    if not callable(judge):
        return None
    if _takes_config(judge):
        return judge
    return lambda channel, _config: judge(channel)


def _takes_config(check: Callable[..., Any]) -> bool:
    try:
        parameters = inspect.signature(check).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: the channel alone
        return False
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in parameters):
        return True
    # only a required second parameter is the config: one with a default (``strict=False``)
    # is the plugin's own option, and the config handed in its place would overwrite it
    required = [p for p in parameters if p.kind in positional and p.default is p.empty]
    return len(required) >= 2


def actual(platform: Any) -> Any:
    """The platform itself: a :class:`Deferred`'s, made now; anything else as it is."""
    return platform.platform() if isinstance(platform, Deferred) else platform
