"""The HTTP half of the hosted-model providers: post a JSON body, read the streamed answer.

The vendors' SDKs took most of a second to import (pydantic models for every API type), so
the providers speak HTTP themselves over aiohttp, and this module owns what the SDKs did for
them: one session, made on first use (a command that never asks a model never imports
aiohttp); the deadlines (``llm.timeout`` to connect and between reads, as the SDKs' httpx
did, and :data:`ANSWER_DEADLINE` for the whole call, which a server sending a byte now and
then would otherwise hold open); the SDKs' retries; and failures as one :class:`LlmError`
line. Nothing is retried once any of an answer's stream was read: its text has reached the
person already. An endpoint may be anything (``llm.base_url``), so what is read of it is
bounded: :data:`MAX_ANSWER_BYTES` of an answer, :data:`ERROR_BODY_BYTES` of an error.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
import time
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from bothost import redact
from bothost.llm.answer import whole_characters
from bothost.llm.base import LlmError, StreamCutError, explain, load_json
from bothost.logs import connection
from bothost.sse import SseError, SseEvent, SseParser

if TYPE_CHECKING:
    import aiohttp

# The SDKs' backoff: 0.5 s doubling per attempt, at most 8 s, less up to a quarter at random
# so that clients refused together do not come back together.
INITIAL_DELAY = 0.5
MAX_DELAY = 8.0
# A server's own retry-after is followed up to this; a longer one is a refusal for now.
MAX_RETRY_AFTER = 60.0
RETRIED_STATUSES = {408, 409, 429}  # a timeout, a lock, a rate limit; and every 5xx
ERROR_BODY_BYTES = 64 * 1024  # an error body is read this far for its message
USER_AGENT = "bothost"
# The most of one answer's body that is read (after any gzip): each streamed chunk wraps a
# token in some 200 bytes of JSON, so the longest answers (128k tokens) are some 25 MB.
MAX_ANSWER_BYTES = 32 * 1024 * 1024
# The most of one event (or of an answer sent whole) that is parsed as JSON: parsing takes
# up to 24 times its size ("{}," is a dict of 64 bytes), so 1 MB stays under 25 MB. A chunk
# carries a token or a tool call (Ollama sends one whole); 1 MB is some 250k tokens.
MAX_EVENT_BYTES = 1024 * 1024
# The longest one call may take, from the request to the answer's end: ten minutes is more
# than the slowest reasoning models take to answer; a turn ends sooner (agent.turn_timeout).
ANSWER_DEADLINE = 600.0
# The event name an answer sent whole, as one JSON object (a server that ignored "stream")
WHOLE = "bothost/whole"


class StatusError(Exception):
    """An HTTP error status; ``message`` is the body's ``error.message`` as the SDKs took it."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class Wire:
    """Posts to one endpoint of one provider and yields the answer's Server-Sent Events.

    Args:
        base_url: ``llm.base_url``, which messages name (masked); a user and password in it
            become Basic authentication, as httpx made them, and leave the URL.
        path: the API's endpoint under it (``chat/completions``); its query stays (an
            Azure-style ``api-version``).
        headers: the provider's own (its key, its API version).
        secret: the key in them, which no message we write may show.
        timeout: ``llm.timeout``: to connect, and the longest wait for the next bytes.
        max_retries: further attempts after a connection error, 408, 409, 429 or 5xx.
    """

    def __init__(
        self,
        base_url: str,
        path: str,
        headers: dict[str, str],
        timeout: float,
        max_retries: int,
        secret: str = "",
    ) -> None:
        self.base_url = base_url
        self.url = endpoint(base_url, path)
        self.shown_url = redact.mask_url(base_url)
        self.headers = {"Content-Type": "application/json", "User-Agent": USER_AGENT, **headers}
        self.timeout = timeout
        self.max_retries = max_retries
        # a local server takes any key ("k"); one that short would mask parts of ordinary
        # words ("not ***nown"), so it is not masked, as the logs do not mask it either
        self.secrets = [secret] if len(secret) >= redact.MIN_SECRET_LENGTH else []
        self.deadline = ANSWER_DEADLINE
        self._session: aiohttp.ClientSession | None = None

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def session(self) -> aiohttp.ClientSession:
        if self._session is None:
            import aiohttp

            self._session = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(
                    total=None, sock_connect=self.timeout, sock_read=self.timeout
                ),
            )
        return self._session

    async def events(self, body: dict[str, Any]) -> AsyncGenerator[SseEvent, None]:
        """The answer's events; :class:`LlmError` when no answer began (after the retries),
        :class:`StreamCutError` when its body broke off, passed a limit or the deadline. An
        event the body ended in the middle of is dropped, as the event-stream format says;
        the provider then misses its finish. An ``application/json`` answer (a server that
        ignores ``stream``) is one :data:`WHOLE` event. Read it under ``contextlib.aclosing``
        so that the response is released."""

        ends = asyncio.get_running_loop().time() + self.deadline
        try:
            async with asyncio.timeout_at(ends):
                response = await self.send(json.dumps(body).encode())
        except TimeoutError:
            raise LlmError(
                f"no answer from {self.shown_url} within {self.deadline:.0f} s; check llm.base_url"
            ) from None
        async with response:
            kind = response.headers.get("Content-Type", "text/event-stream")
            kind = kind.partition(";")[0].strip().lower()
            if kind == "application/json":
                yield SseEvent(await self.whole(response, ends), WHOLE)
                return
            if kind != "text/event-stream":
                raise LlmError(await self.no_answer(response, kind, ends))
            parser, size = SseParser(MAX_EVENT_BYTES), 0
            while chunk := await self.read(response, ends):
                size += len(chunk)
                if size > MAX_ANSWER_BYTES:
                    detail = f"longer than the {MAX_ANSWER_BYTES:,} bytes of one answer"
                    raise StreamCutError(self.shown_url, detail)
                try:
                    events = parser.feed(chunk)
                except SseError as exc:
                    raise StreamCutError(self.shown_url, str(exc)) from None
                for event in events:
                    yield event

    async def read(self, response: aiohttp.ClientResponse, ends: float) -> bytes:
        """The next bytes of the body (``b""`` at its end) by the call's deadline;
        :class:`StreamCutError` when it broke off or the deadline passed."""
        import aiohttp

        try:
            async with asyncio.timeout_at(ends):
                return await response.content.readany()
        except (aiohttp.ClientError, TimeoutError) as exc:
            if asyncio.get_running_loop().time() >= ends:
                detail = f"not finished within {self.deadline:.0f} s, the most one answer may take"
                raise StreamCutError(self.shown_url, detail) from None
            raise StreamCutError(self.shown_url, self.describe(exc)) from None

    async def whole(self, response: aiohttp.ClientResponse, ends: float) -> str:
        """An answer sent whole, read up to :data:`MAX_EVENT_BYTES` (it is parsed at once)."""
        body = bytearray()
        while chunk := await self.read(response, ends):
            body += chunk
            if len(body) > MAX_EVENT_BYTES:
                detail = f"a whole answer larger than {MAX_EVENT_BYTES:,} bytes"
                raise StreamCutError(self.shown_url, detail)
        return body.decode("utf-8", "replace")

    async def no_answer(self, response: aiohttp.ClientResponse, kind: str, ends: float) -> str:
        """The line for a success that is no answer: a captive portal's or a proxy's page."""
        try:
            async with asyncio.timeout_at(ends):
                start = await response.content.read(512)
        except Exception:  # what the page says only helps: the line stands without it
            start = b""
        shown = self.describe_text(start.decode("utf-8", "replace"))[:120]
        return (
            f"{response.status} from {self.shown_url} is no model's answer ({kind}: {shown!r});"
            " check llm.base_url"
        )

    async def send(self, data: bytes) -> aiohttp.ClientResponse:
        """The response whose status is a success, once the retries allow no more."""
        import aiohttp
        from yarl import URL

        url, headers = URL(self.url), dict(self.headers)
        if url.user is not None:  # httpx let the URL's credentials win over the key too
            headers["Authorization"] = aiohttp.encode_basic_auth(url.user, url.password or "")
            url = url.with_user(None)
        proxy = env_proxy(url)
        for attempt in range(self.max_retries + 1):
            last = attempt == self.max_retries
            try:
                response = await self.session().post(
                    url, data=data, headers=headers, allow_redirects=False, **proxy
                )
                if response.status < 300:  # a redirect is refused, as the SDKs' httpx did:
                    return response  # the key would follow it elsewhere
                async with response:
                    text = await response.content.read(ERROR_BODY_BYTES)
            except (aiohttp.ClientConnectionError, TimeoutError) as exc:
                if last:
                    raise LlmError(self.unreachable(exc)) from None
                await asyncio.sleep(backoff(attempt))
                continue
            except aiohttp.ClientError as exc:  # a URL aiohttp cannot use: no retry helps
                raise LlmError(self.unreachable(exc)) from None
            wait = retry_after(response.headers)
            if last or not retried(response.status, response.headers, wait):
                error = StatusError(response.status, self.describe_text(error_message(text)))
                raise LlmError(explain(response.status, self.shown_url, error))
            await asyncio.sleep(wait if wait is not None and wait > 0 else backoff(attempt))
        raise AssertionError("unreachable: the last attempt returns or raises")

    def unreachable(self, exc: Exception) -> str:
        return f"cannot reach {self.shown_url}: {self.describe(exc)}; check llm.base_url"

    def describe(self, exc: Exception) -> str:
        return self.describe_text(connection.cause(exc))  # "Connection refused"

    def describe_text(self, text: str) -> str:
        """``text`` on one line, without the key or the URL's password (it came from outside,
        or from a library that may quote the URL whole)."""
        text = " ".join(whole_characters(text).split()).replace(self.url, self.shown_url)
        text = text.replace(self.base_url, self.shown_url)
        return redact.mask_values(text, self.secrets)


def env_proxy(url: Any) -> dict[str, Any]:
    """The proxy ``HTTPS_PROXY``/``HTTP_PROXY`` name for ``url`` unless ``NO_PROXY`` exempts
    it, as the SDKs' httpx read them. Not the session's ``trust_env``: that also takes
    credentials from ``~/.netrc``, which aiohttp then refuses beside our Authorization."""
    from aiohttp.helpers import get_env_proxy_for_url

    try:
        proxy, auth = get_env_proxy_for_url(url)
    except LookupError:
        return {}
    return {"proxy": proxy, "proxy_auth": auth}


def endpoint(base_url: str, path: str) -> str:
    """``path`` under ``base_url``, whose query stays where it was."""
    parts = urlsplit(base_url)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + "/" + path))


def backoff(attempt: int) -> float:
    """Seconds before retry number ``attempt + 1`` when the server named no wait."""
    return min(INITIAL_DELAY * 2.0**attempt, MAX_DELAY) * (1 - 0.25 * random.random())


def retried(status: int, headers: Any, wait: float | None) -> bool:
    """Whether the SDKs would try a request answered ``status`` again."""
    if wait is not None and wait > MAX_RETRY_AFTER:
        return False  # the server asked for longer than a turn may wait
    if (should := headers.get("x-should-retry")) in ("true", "false"):
        return should == "true"  # OpenAI's and Anthropic's servers say it outright
    return status in RETRIED_STATUSES or status >= 500


def retry_after(headers: Any) -> float | None:
    """The wait a response asks for, in seconds: ``retry-after-ms``, else ``retry-after`` as
    seconds or as an HTTP date; ``None`` when it names none we can use (garbage, ``nan``, a
    wait below zero: the backoff's then). An endless one (``inf``) stays, and is refused."""
    for name, divisor in (("retry-after-ms", 1000), ("retry-after", 1)):
        try:
            wait = float(headers[name]) / divisor
        except (KeyError, ValueError):
            continue
        if wait >= 0:  # not nan
            return wait
    try:
        when = email.utils.parsedate_to_datetime(headers.get("retry-after", ""))
    except (TypeError, ValueError, OverflowError):
        return None
    wait = when.timestamp() - time.time()
    return wait if wait >= 0 else None


def error_message(body: bytes) -> str:
    """What an error body says: its ``error.message`` (both APIs), else the body itself."""
    text = body.decode("utf-8", "replace")
    try:
        value = load_json(text)
    except ValueError:
        return text
    error = value.get("error") if isinstance(value, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    return text
