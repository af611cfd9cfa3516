"""Why a connection failed, in the operating system's plain words: "Connection refused",
"Name or service not known", "Network is unreachable".

aiohttp's connector errors repeat the host and add "ssl:default" even to an http:// URL
("Cannot connect to host h:9 ssl:default [Connect call failed ('h', 9)]"), and the line
that carries one already names the URL. The LLM client, the MCP HTTP transport, its OAuth
requests and the MCP registry say the cause the same way through :func:`cause`. Stdlib
only, as the rest of ``logs``: aiohttp's errors are matched through the OS error they keep
(``os_error``) or are (its connection errors are ``OSError`` subclasses), never by their
aiohttp types.
"""

from __future__ import annotations

import errno
import os
import socket

# errnos of a connect that no server answered: the OS names them plainly. Not every errno:
# an ssl.SSLError carries the library's own number (1 for a bad certificate), which
# os.strerror would call "Operation not permitted", so its own text stays.
UNREACHED = frozenset(
    {errno.ENETUNREACH, errno.EHOSTUNREACH, errno.ENETDOWN, errno.EHOSTDOWN, errno.ETIMEDOUT}
)


def cause(exc: BaseException) -> str:
    """``exc``'s cause in the OS's words when it is one the OS names (a refused, reset or
    unroutable connection, a name that does not resolve), else ``str(exc)``, else its type's
    name (a bare ``TimeoutError`` says nothing)."""
    error = getattr(exc, "os_error", None) or exc
    if isinstance(error, socket.gaierror) and error.strerror:
        return error.strerror  # "Name or service not known"; its errno is the resolver's
    if isinstance(error, OSError) and error.errno:
        if isinstance(error, ConnectionError) or error.errno in UNREACHED:
            return os.strerror(error.errno)  # "Connection refused"
    return str(exc) or type(exc).__name__
