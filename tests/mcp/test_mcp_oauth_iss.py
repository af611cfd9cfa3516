"""The authorization response's issuer (RFC 9207) and what dynamic registration says of us.

A code is sent to the token endpoint only when the response's ``iss`` is the issuer of the
authorization server's metadata, compared as strings; a server that advertises ``iss`` must
send it. Against tests/mcp/oauth_server.py, which approves logins at once.
"""

from __future__ import annotations

import logging
from urllib.parse import parse_qsl, urlsplit

import aiohttp
import pytest
from oauth_server import OAuthMcpServer

from bothost.config import McpAuthConfig
from bothost.mcp.oauth.auth import OAuth
from bothost.mcp.oauth.errors import OAuthError
from bothost.mcp.oauth.tokens import MemoryTokens


@pytest.fixture
async def protected():
    server = OAuthMcpServer()
    await server.start()
    yield server
    await server.stop()


class FollowRedirect:
    def __init__(self, redirect_uri: str = "http://127.0.0.1:9/oauth/callback") -> None:
        self.redirect_uri = redirect_uri  # read from the Location, never visited

    async def authorize(self, url: str) -> dict[str, str]:
        async with aiohttp.ClientSession() as http, http.get(url, allow_redirects=False) as resp:
            return dict(parse_qsl(urlsplit(resp.headers["Location"]).query))


def oauth(protected: OAuthMcpServer, **kwargs) -> OAuth:
    log = logging.getLogger("test.oauth")
    authorizer = kwargs.pop("authorizer", FollowRedirect())
    return OAuth("notes", protected.url, MemoryTokens(), log=log, authorizer=authorizer, **kwargs)


@pytest.mark.parametrize(
    "supported, sent",
    [
        (True, "issuer"),
        (None, "issuer"),
        (None, None),  # a server that does not know RFC 9207
        (False, None),
    ],
)
async def test_a_response_from_the_expected_issuer_is_taken(protected, supported, sent):
    protected.iss_supported = supported
    protected.redirect_iss = protected.base if sent == "issuer" else None
    await oauth(protected).login()
    assert protected.grants == ["authorization_code"]


@pytest.mark.parametrize(
    "supported, sent, why",
    [
        (True, None, "carries no iss"),  # advertised, then left out
        (True, "https://evil.example.com", "from issuer 'https://evil.example.com'"),
        (
            None,
            "https://evil.example.com",
            "from issuer 'https://evil.example.com'",
        ),  # unadvertised
        (False, "https://evil.example.com", "from issuer 'https://evil.example.com'"),
        (True, "{base}/", "from issuer '{base}/'"),  # no normalisation: a trailing slash is another
        (True, "{upper}", "from issuer '{upper}'"),  # nor case folding of scheme and host
    ],
)
async def test_a_response_from_another_issuer_is_refused_before_the_token_request(
    protected, supported, sent, why
):
    upper = protected.base.replace("http://127.0.0.1", "HTTP://127.0.0.1")
    protected.iss_supported = supported
    protected.redirect_iss = sent.format(base=protected.base, upper=upper) if sent else None
    with pytest.raises(OAuthError, match="issuer") as refused:
        await oauth(protected).login()
    assert why.format(base=protected.base, upper=upper) in str(refused.value)
    assert protected.grants == []  # the code never reached the token endpoint


@pytest.mark.parametrize(
    "redirect_uri, kind",
    [
        ("http://127.0.0.1:8765/oauth/callback", "native"),
        ("http://localhost:8765/oauth/callback", "native"),
        ("http://[::1]:8765/oauth/callback", "native"),
        ("https://bot.example.com/oauth/callback", "web"),
    ],
)
async def test_dynamic_registration_names_the_application_type(protected, redirect_uri, kind):
    await oauth(protected, authorizer=FollowRedirect(redirect_uri)).login()
    assert [r.get("application_type") for r in protected.registrations] == [kind]


async def test_a_configured_client_is_not_registered(protected):
    await oauth(protected, config=McpAuthConfig(client_id="pre-registered")).login()
    assert protected.registrations == []
