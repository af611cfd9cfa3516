"""Where a webhook sender may have its reply POSTed: public addresses, unless allowlisted.

``/webhook/message`` with ``callback_url`` makes the host send an HTTP request to a place the
sender chose. Holding the webhook secret is not a licence to reach what only the host can
reach — loopback services, the cloud metadata service at 169.254.169.254, the LAN — so an
internal address is refused unless ``platforms.webhook.callback_allow`` lists a network
holding it. Internal means anything but a global unicast address (:func:`internal`); an
IPv6 address that carries an IPv4 one (mapped, compatible, NAT64, 6to4, Teredo) is judged by
the IPv4 address it reaches too.

The check is made twice, for two reasons. At the request (:func:`problem`) every address
the name resolves to must pass, so the sender gets a 400 at once and nothing runs. At
delivery, the check that counts is made on the very address each socket connects to
(:func:`session`'s connector builds its sockets through :func:`guarded_socket`): a name
that resolves anew (DNS rebinding) or an address literal (aiohttp resolves none) cannot get
past it, and no proxy from the environment is used. Redirects are not followed
(:data:`FOLLOW_REDIRECTS`): a 3xx is the receiver's answer, and a failed delivery.
"""

from __future__ import annotations

import asyncio
import errno
import ipaddress
import socket
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    import aiohttp

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

RESOLVE_TIMEOUT = 5.0  # seconds for the name lookup at the request; a sender waits on it
FOLLOW_REDIRECTS = False  # a redirect target was never checked at the request
NAT64 = ipaddress.ip_network("64:ff9b::/96")  # RFC 6052's well-known prefix


class CallbackRefusedError(OSError):
    """The callback's address is internal and not allowlisted."""


def networks(values: Sequence[str]) -> list[Network]:
    """``platforms.webhook.callback_allow`` as networks; ValueError names a bad entry."""
    out = []
    for i, value in enumerate(values):
        try:
            out.append(ipaddress.ip_network(str(value).strip()))
        except ValueError as exc:
            raise ValueError(
                f"callback_allow[{i}]: expected a network such as 10.0.0.0/8 or fd00::/8 "
                f"(host bits zero), got {value!r}: {exc}"
            ) from None
    return out


def carried(address: Address) -> list[Address]:
    """``address`` and any IPv4 address it stands for."""
    found: list[Address] = [address]
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            found.append(address.ipv4_mapped)
        if address.sixtofour is not None:
            found.append(address.sixtofour)
        if address.teredo is not None:
            found.extend(address.teredo)
        packed = address.packed
        if address in NAT64 or packed[:12] == bytes(12):  # NAT64; IPv4-compatible (::a.b.c.d)
            found.append(ipaddress.IPv4Address(packed[12:]))
    return found


def internal(address: Address) -> bool:
    """Anything but a global unicast address, judged on every address it carries."""
    return any(not a.is_global or a.is_multicast for a in carried(address))


def refusal(address: Address, allow: Sequence[Network]) -> str | None:
    """Why ``address`` may not be called back, or None."""
    if internal(address) and not any(address in network for network in allow):
        return (
            f"callback_url reaches {address}, an internal address "
            "(allowlist its network in platforms.webhook.callback_allow)"
        )
    return None


def literal(host: str) -> Address | None:
    try:
        return ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return None


async def problem(url: str, allow: Sequence[Network]) -> str | None:
    """Why ``url`` may not be called back, checked on every address its host resolves to."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    found = literal(host)
    if found is not None:
        return refusal(found, allow)
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        async with asyncio.timeout(RESOLVE_TIMEOUT):
            infos = await asyncio.get_running_loop().getaddrinfo(
                host, port, type=socket.SOCK_STREAM
            )
    except (OSError, ValueError, TimeoutError) as exc:
        return f"callback_url's host {host!r} does not resolve: {type(exc).__name__}"
    for info in infos:
        address = literal(str(info[4][0]))
        if address is None or refusal(address, allow):
            # not which address: the sender need not learn what our resolver knows
            return (
                f"callback_url's host {host!r} resolves to an internal address "
                "(allowlist its network in platforms.webhook.callback_allow)"
            )
    return None


def guarded_socket(allow: Sequence[Network]) -> Callable[[Any], socket.socket]:
    """A socket factory for aiohttp's connector that refuses to make a socket for an
    internal address: the one place every connection's real address passes through."""

    def make(addr_info: Any) -> socket.socket:
        family, type_, proto, _, sockaddr = addr_info
        address = literal(str(sockaddr[0]))
        wrong = refusal(address, allow) if address is not None else "not an IP address"
        if wrong:
            raise CallbackRefusedError(errno.EACCES, wrong)  # strerror: what aiohttp shows
        return socket.socket(family=family, type=type_, proto=proto)

    return make


def session(allow: Sequence[Network]) -> aiohttp.ClientSession:
    """A client session that connects to allowed addresses only and reads no proxy settings."""
    import aiohttp  # here, not at the top: every CLI command loads this plugin

    connector = aiohttp.TCPConnector(socket_factory=guarded_socket(allow))
    return aiohttp.ClientSession(connector=connector, trust_env=False)
