"""One request's deadline, moved by news of it: progress extends it, a question pauses it.

A request waits at most ``timeout`` for news: its answer, or progress the server reports
under the request's token, each of which gives it a fresh ``timeout``. Progress proves the
server is working, not that it will ever finish, so it extends the request only until the
request has run ``longest`` seconds (a server's ``max_timeout``). While the server waits
for a person to answer its question (``elicitation/create``), the clock stands still — a
password typed after a minute must not fail the call that asked for it — and the time spent
waiting does not count towards ``longest``; the question has its own bound
(:data:`bothost.mcp.elicitation.ASK_TIMEOUT`). When the answer is sent, the request has a
fresh ``timeout`` again.

The deadline drives an :func:`asyncio.timeout` scope the request waits in (see
:meth:`CallDeadline.attach`), so a cancelled caller (``stop``) still ends the wait at once.

The clock stands still too while the transport logs in for the request it is sending
(:func:`held`: the server's 401 was an answer, and the login is talk with the authorization
server, bounded on its own by ``bothost.mcp.oauth``). Counted, a login outlasting a short
bound — ``server/discover``'s probe on a loaded machine — made a 2026-07-28 server look
silent, hence older, and its login start again for ``initialize``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar, Token

# How long progress may keep a call going when the server's config sets no `max_timeout`:
# long enough for a build, a crawl or a research query that reports as it goes, short enough
# that a server stuck in a loop that keeps reporting progress does not hold a caller for good.
DEFAULT_MAX_TIMEOUT = 600.0


class CallDeadline:
    """See module docstring. Times are the event loop's clock."""

    def __init__(self, timeout: float, longest: float | None = None) -> None:
        self.timeout = timeout
        self.longest = max(timeout, longest if longest is not None else timeout)
        self._loop = asyncio.get_running_loop()
        now = self._loop.time()
        self._news = now  # the fresh `timeout` counts from here
        self._ran = 0.0  # running time before `_since` (the pauses left out)
        self._since: float | None = now  # None while paused
        self._holds = 0  # questions open now
        self._scope: asyncio.Timeout | None = None
        self._token: Token[CallDeadline | None] | None = None

    def when(self) -> float | None:
        """When the request runs out (loop time), or None while it is paused."""
        if self._since is None:
            return None
        return min(self._news + self.timeout, self._cap())

    def _cap(self) -> float:
        assert self._since is not None
        return self._since + self.longest - self._ran

    @property
    def capped(self) -> bool:
        """Whether `longest`, not a lack of news, is what ends (or ended) the request (a
        tie is a lack of news: without progress or pauses the two are the same moment)."""
        return self._since is not None and self._cap() < self._news + self.timeout

    def attach(self, scope: asyncio.Timeout) -> CallDeadline:
        """Drive `scope` (an entered :func:`asyncio.timeout`) for as long as the ``with``
        block this opens runs (``with deadline.attach(scope):``). A class's ``__exit__``,
        not a generator's: every request opens one (issue 19)."""
        self._scope = scope
        self._move()
        return self

    def __enter__(self) -> None:
        self._token = _sending.set(self)

    def __exit__(self, *exc_info: object) -> None:
        self._scope = None
        if self._token is not None:
            _sending.reset(self._token)
            self._token = None

    def progressed(self) -> None:
        """The server reported progress: a fresh `timeout`, within `longest`."""
        if self._since is not None:
            self._news = self._loop.time()
            self._move()

    @contextmanager
    def hold(self) -> Iterator[None]:
        """Stop the clock while the block runs (a person is being asked)."""
        self._holds += 1
        if self._holds == 1 and self._since is not None:
            self._ran += self._loop.time() - self._since
            self._since = None
            self._move()
        try:
            yield
        finally:
            self._holds -= 1
            if self._holds == 0:
                self._since = self._news = self._loop.time()
                self._move()

    def _move(self) -> None:
        scope = self._scope
        # a scope already set to the moment is left alone: re-arming it makes a timer
        if scope is not None and not scope.expired() and scope.when() != (when := self.when()):
            scope.reschedule(when)


# The deadline of the request the running task is sending: the transport sends in the
# requester's task, and only it knows when it is logging in rather than waiting.
_sending: ContextVar[CallDeadline | None] = ContextVar("bothost_mcp_sending", default=None)


@contextmanager
def held() -> Iterator[None]:
    """Stop the clock of the request this task is sending, if any, while the block runs."""
    deadline = _sending.get()
    if deadline is None:
        yield
        return
    with deadline.hold():
        yield
