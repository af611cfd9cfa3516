"""The HTTP half of the hosted-model providers: post a JSON body, read the streamed answer.

The vendors' SDKs took most of a second to import (pydantic models for every API type), so
the providers speak HTTP themselves over aiohttp, and this module owns what the SDKs did for
them: one session, made on first use (a command that never asks a model never imports
aiohttp); the deadline (``llm.timeout`` to connect and between reads, as the SDKs' httpx
did); the SDKs' retries; and failures as one :class:`LlmError` line. Nothing is retried once
any of an answer's stream was read: its text has reached the person already.
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
from bothost.llm.base import LlmError, StreamCutError, explain
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
        self.secrets = [secret] if secret else []
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
        :class:`StreamCutError` when its body broke off. An event the body ended in the
        middle of is dropped, as the event-stream format says; the provider then misses its
        finish. Read it under ``contextlib.aclosing`` so that the response is released."""
        import aiohttp

        response = await self.send(json.dumps(body).encode())
        parser = SseParser()
        async with response:
            try:
                async for chunk in response.content.iter_any():
                    for event in parser.feed(chunk):
                        yield event
            except (aiohttp.ClientError, TimeoutError, SseError) as exc:
                raise StreamCutError(self.shown_url, self.describe(exc)) from None

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
        return self.describe_text(str(exc) or type(exc).__name__)

    def describe_text(self, text: str) -> str:
        """``text`` on one line, without the key or the URL's password (it came from outside,
        or from a library that may quote the URL whole)."""
        text = " ".join(text.split()).replace(self.url, self.shown_url)
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
    seconds or as an HTTP date; ``None`` when it names none."""
    for name, divisor in (("retry-after-ms", 1000), ("retry-after", 1)):
        try:
            return float(headers[name]) / divisor
        except (KeyError, ValueError):
            continue
    try:
        when = email.utils.parsedate_to_datetime(headers.get("retry-after", ""))
    except (TypeError, ValueError):
        return None
    return when.timestamp() - time.time()


def error_message(body: bytes) -> str:
    """What an error body says: its ``error.message`` (both APIs), else the body itself."""
    text = body.decode("utf-8", "replace")
    try:
        value = json.loads(text)
    except ValueError:
        return text
    error = value.get("error") if isinstance(value, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    return text
