"""One Google API service (Gmail or Calendar) used from asyncio: threads, deadlines, tokens.

`GoogleClient.call(lambda api: api.users().labels().list(userId="me"))` builds the request
with the blocking client library and executes it in a worker thread under `CALL_DEADLINE`.
Every execution gets its own `httplib2.Http` (they are not thread-safe); the credentials
are shared, refreshed when stale, and written back to the token file whenever the access
token changes, so a restart does not refresh again. `GOOGLE_API_ENDPOINT` replaces Google's
base URL (the discovery documents ship with the library, so nothing is fetched).
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .auth import load_credentials, save_credentials, token_path
from .errors import (
    UNREACHABLE,
    AuthRequiredError,
    GoogleError,
    from_http_error,
    retry_after_seconds,
)

if TYPE_CHECKING:
    from google.oauth2.credentials import Credentials

logger = logging.getLogger(__name__)

# Socket timeout of one HTTP exchange; the whole call (retries and waits) gets CALL_DEADLINE.
HTTP_TIMEOUT = 20.0
CALL_DEADLINE = 45.0
# Retries of a call Google refused for now (429, 5xx, a 403 rate limit) or did not answer:
# after its Retry-After when it sent one, else after googleapiclient's own backoff (up to
# 2**n s); two retries stay inside the deadline. googleapiclient's own retrying is off
# (num_retries=0): it sleeps its backoff and never reads Retry-After.
NUM_RETRIES = 2

# 403 reasons meaning "authorized, but not for this": a token made for the other server.
SCOPE_ERRORS = {"insufficientPermissions", "ACCESS_TOKEN_SCOPE_INSUFFICIENT"}

# Where each API lives below a replacement base URL (mirrors the real hosts' paths).
_ENDPOINT_SUFFIX = {"gmail": "", "calendar": "calendar/v3/"}


def api_endpoint(api: str) -> str | None:
    """The `api_endpoint` client option for `api`, or None for Google itself."""
    base = os.environ.get("GOOGLE_API_ENDPOINT")
    if not base:
        return None
    return base.rstrip("/") + "/" + _ENDPOINT_SUFFIX[api]


class GoogleClient:
    """Calls one Google API on behalf of one bundled server (`gmail` or `gcal`)."""

    def __init__(
        self,
        server: str,
        api: str,
        version: str,
        token_file: Path | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.server = server
        self.api = api
        self.version = version
        self.token_file = token_file or token_path(server)
        self.clock, self.sleep = clock, sleep
        self._credentials: Credentials | None = None
        self._service: Any = None
        self._lock = threading.Lock()

    async def call(self, build_request: Callable[[Any], Any]) -> Any:
        """Run `build_request(service).execute()` in a thread; raise `GoogleError` on failure.

        A refusal for now is tried again (see NUM_RETRIES) while the wait it asks for ends
        within the call's deadline; one that asks for longer fails at once, saying so."""
        deadline, retry = self.clock() + CALL_DEADLINE, 0
        while True:
            try:
                async with asyncio.timeout(max(deadline - self.clock(), 0.0)):
                    return await asyncio.to_thread(self._execute, build_request)
            except TimeoutError:
                raise GoogleError(f"Google did not answer within {CALL_DEADLINE:.0f} s") from None
            except GoogleError as error:
                if not error.passing or retry == NUM_RETRIES:
                    raise
                wait = error.retry_after
                if wait is None:
                    wait = random.random() * 2 ** (retry + 1)  # googleapiclient's backoff
                elif self.clock() + wait > deadline:
                    raise GoogleError(
                        f"{error}; Google asks to retry after {wait:.0f} s, past this call's "
                        f"{CALL_DEADLINE:.0f} s: try again later",
                        error.status,
                        error.reason,
                        wait,
                    ) from None
                logger.info("%s; retrying in %.1f s", error, wait)
                await self.sleep(wait)
                retry += 1

    def _execute(self, build_request: Callable[[Any], Any]) -> Any:
        credentials, service = self._ready()
        # The client libraries are imported in the worker thread at the first call that has
        # a token, not at start-up: they are ~0.3 s of CPU the server's start paid even
        # when it was never called or had no token (issue 19). _ready imported them.
        import google_auth_httplib2
        import httplib2
        from google.auth.exceptions import RefreshError, TransportError
        from googleapiclient.errors import HttpError

        before = credentials.token
        transport = httplib2.Http(timeout=HTTP_TIMEOUT)
        http = google_auth_httplib2.AuthorizedHttp(credentials, http=transport)
        # its own refresh on a 401 goes through this too (the library keeps no public hook)
        http._request = refusing_busy(http._request)
        try:
            return build_request(service).execute(http=http, num_retries=0)  # see call()
        except TokenEndpointBusyError as busy:  # call() waits its Retry-After
            raise busy_refresh(busy) from None
        except HttpError as error:
            problem = from_http_error(error)
            if problem.status == 401:
                self._forget()
                raise AuthRequiredError(self.server, "Google rejected the token") from None
            if problem.reason in SCOPE_ERRORS:
                raise AuthRequiredError(
                    self.server, "The Google token does not grant what this tool needs"
                ) from None
            raise problem from None
        except RefreshError as error:
            self._forget()
            raise self._revoked(error) from None
        except (TransportError, httplib2.HttpLib2Error, OSError) as error:
            raise GoogleError(f"Could not reach Google: {error}", reason=UNREACHABLE) from None
        finally:
            transport.close()
            # AuthorizedHttp refreshes on a 401 by itself; keep what it got.
            if credentials.token != before:
                self._save(credentials)

    def _ready(self):
        """Credentials that are valid now, and the service object (both built once)."""
        with self._lock:
            if self._credentials is None:
                self._credentials = load_credentials(self.server, self.token_file)
            credentials = self._credentials
            # Lazily, as in _execute: a server without a token never imports these.
            import requests
            from google.auth.exceptions import RefreshError, TransportError
            from google.auth.transport.requests import Request
            from googleapiclient.discovery import build

            if not credentials.valid:
                try:
                    with requests.Session() as session:
                        credentials.refresh(refusing_busy(Request(session=session)))
                except TokenEndpointBusyError as busy:  # call() waits its Retry-After
                    raise busy_refresh(busy) from None
                except RefreshError as error:
                    self._credentials = None  # see _forget (the lock is already held)
                    raise self._revoked(error) from None
                except TransportError as error:
                    raise GoogleError(
                        f"Could not reach Google to refresh the token: {error}"
                    ) from None
                self._save(credentials)
            if self._service is None:
                self._service = build(
                    self.api,
                    self.version,
                    credentials=credentials,
                    client_options={"api_endpoint": api_endpoint(self.api)},
                    static_discovery=True,
                    cache_discovery=False,
                )
            return credentials, self._service

    def _forget(self) -> None:
        """Re-read the token file at the next call: `auth` may have replaced it by then."""
        with self._lock:
            self._credentials = None

    def _revoked(self, error: Exception) -> AuthRequiredError:
        logger.warning("token refresh failed: %s", error)
        return AuthRequiredError(self.server, "The Google token has expired or was revoked")

    def _save(self, credentials) -> None:
        try:
            save_credentials(credentials, self.token_file)
        except OSError:
            logger.exception("could not save the refreshed token to %s", self.token_file)


class TokenEndpointBusyError(Exception):
    """The token endpoint answered 429 or 5xx: ``status`` and its Retry-After (seconds)."""

    def __init__(self, status: int, retry_after: float | None) -> None:
        super().__init__(f"token endpoint answered {status}")
        self.status, self.retry_after = status, retry_after


def busy_refresh(busy: TokenEndpointBusyError) -> GoogleError:
    return GoogleError(
        f"Google's token endpoint answered {busy.status} (busy) while refreshing the token",
        busy.status,
        "",
        busy.retry_after,
    )


def refusing_busy(request: Any) -> Callable[..., Any]:
    """google-auth's transport ``request`` for a token refresh, ending it at a 429 or 5xx.

    google-auth retries those itself (three tries, 1 s and 2 s of ``time.sleep`` in the
    worker thread) without reading Retry-After, and one still refused then was a
    ``RefreshError`` we took for a revoked token. Raised out of the refresh instead, the
    answer becomes a :class:`GoogleError` that :meth:`GoogleClient.call` retries after the
    Retry-After Google sent, within the call's deadline, like an API call's."""

    def send(*args: Any, **kwargs: Any) -> Any:
        response = request(*args, **kwargs)
        if response.status == 429 or response.status >= 500:
            headers = {k.lower(): v for k, v in (response.headers or {}).items()}
            raise TokenEndpointBusyError(
                response.status, retry_after_seconds(headers.get("retry-after"))
            )
        return response

    return send
