import os

import pytest
from yarl import URL

from tests.helpers import make_host
from tests.web.conftest import base_url, host_config

CHAT = {"session": "sec", "text": "help"}


async def page_cookies(client, host):
    """Load the page like a browser; its CSRF token (the meta tag equals the cookie)."""
    async with client.get(base_url(host) + "/") as response:
        assert response.status == 200
        html = await response.text()
    token = html.split('name="csrf-token" content="')[1].split('"')[0]
    assert client.cookie_jar.filter_cookies(URL(base_url(host)))["bothost_csrf"].value == token
    return token


async def test_the_page_has_headers_against_framing_and_foreign_scripts(web_host, client):
    async with client.get(base_url(web_host) + "/") as response:
        assert response.headers["X-Frame-Options"] == "DENY"
        assert "frame-ancestors 'none'" in response.headers["Content-Security-Policy"]
    async with client.get(base_url(web_host) + "/static/app.js") as response:
        assert response.status == 200 and "EventSource" in await response.text()


async def test_a_foreign_host_header_is_refused(web_host, client):
    for path in ("/", "/api/dashboard"):
        async with client.get(
            base_url(web_host) + path, headers={"Host": "evil.example:8765"}
        ) as response:
            assert response.status == 403
    async with client.get(base_url(web_host) + "/", headers={"Host": "localhost:1"}) as response:
        assert response.status == 200


async def test_a_host_header_with_a_name_after_loopback_brackets_is_refused(web_host, client):
    """Only "[addr]" or "[addr]:port" is an IPv6 Host; text after the bracket names
    another host, not the loopback address inside it."""
    for host in ("[::1].evil.example", "[::1]evil.example:8765", "[::1]:8765.evil.example"):
        async with client.get(
            base_url(web_host) + "/api/dashboard", headers={"Host": host}
        ) as response:
            assert response.status == 403, host
    async with client.get(base_url(web_host) + "/", headers={"Host": "[::1]:1"}) as response:
        assert response.status == 200


async def test_a_foreign_origin_is_refused(web_host, client):
    csrf = await page_cookies(client, web_host)
    headers = {"Origin": "http://evil.example", "X-CSRF-Token": csrf}
    async with client.post(
        base_url(web_host) + "/api/chat", json=CHAT, headers=headers
    ) as response:
        assert response.status == 403 and "cross-origin" in await response.text()
    async with client.post(
        base_url(web_host) + "/api/chat", json=CHAT, headers={"Sec-Fetch-Site": "cross-site"}
    ) as response:
        assert response.status == 403


async def test_a_tossed_csrf_cookie_is_not_written_into_the_page(web_host, client):
    # Found from outside: cookies are not kept apart by port, so any page served from
    # localhost (another port) can set bothost_csrf for this listener too; its value went
    # into the page's HTML unescaped. Only a value of the shape we mint is taken back.
    tossed = 'x"><b id="tossed">hi</b><meta name="x" content="'
    async with client.get(
        base_url(web_host) + "/", headers={"Cookie": f"bothost_csrf={tossed}"}
    ) as response:
        assert response.status == 200
        html = await response.text()
        fresh = response.cookies["bothost_csrf"].value
    assert 'id="tossed"' not in html and tossed not in html
    assert f'name="csrf-token" content="{fresh}"' in html and len(fresh) >= 32


async def test_a_cross_origin_page_cannot_open_the_event_stream(web_host, client):
    # Found from outside: a page on any site could hold GET /api/events open for a
    # session (the browser sends its Origin, the host answered 200 and streamed), and the
    # hub then counted a page as there to answer: a question that nobody can answer
    # waited its whole timeout instead of being refused at once.
    stream = base_url(web_host) + "/api/events?session=sec"
    async with client.get(stream, headers={"Origin": "http://evil.example"}) as response:
        assert response.status == 403 and "cross-origin" in await response.text()
    assert not web_host.platform("web").hub.connected("sec")
    async with client.get(stream, headers={"Origin": base_url(web_host)}) as response:
        assert response.status == 200


async def test_browser_requests_need_the_csrf_token(web_host, client):
    csrf = await page_cookies(client, web_host)
    origin = {"Origin": base_url(web_host)}
    async with client.post(base_url(web_host) + "/api/chat", json=CHAT, headers=origin) as response:
        assert response.status == 403 and "CSRF" in await response.text()
    async with client.post(
        base_url(web_host) + "/api/chat", json=CHAT, headers={**origin, "X-CSRF-Token": "guess"}
    ) as response:
        assert response.status == 403
    async with client.post(
        base_url(web_host) + "/api/chat", json=CHAT, headers={**origin, "X-CSRF-Token": csrf}
    ) as response:
        assert response.status == 200 and "offline agent" in (await response.json())["reply"]


async def test_state_changes_must_be_json(web_host, client):
    async with client.post(
        base_url(web_host) + "/api/chat",
        data="text=help",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    ) as response:
        assert response.status == 415


async def test_non_browser_clients_on_loopback_need_no_csrf(web_host, client):
    async with client.post(base_url(web_host) + "/api/chat", json=CHAT) as response:
        assert response.status == 200


@pytest.fixture
async def token_host(home, tmp_path, secret):
    host = make_host(
        home,
        host_config(
            tmp_path,
            secret,
            platforms={"web": {"port": 0, "token": "s3cret-token"}, "webhook": {"secret": secret}},
        ),
    )
    await host.start(mcp=False, tick=False)
    yield host
    await host.stop()


async def test_with_a_token_every_request_must_hold_it(token_host, client):
    url = base_url(token_host)
    for path in ("/", "/api/dashboard", "/metrics"):
        async with client.get(url + path) as response:
            assert response.status == 401
    async with client.get(url + "/?token=wrong") as response:
        assert response.status == 401
    async with client.post(
        url + "/api/chat", json=CHAT, headers={"Authorization": "Bearer s3cret-token"}
    ) as response:
        assert response.status == 200
    async with client.get(url + "/healthz") as response:
        assert response.status == 200  # probes need no token


async def test_without_the_token_healthz_says_only_what_is_up(token_host, client):
    url = base_url(token_host)
    async with client.get(url + "/healthz") as response:
        assert response.status == 200
        public = await response.json()
    # a probe learns whether each part is up, not where the database is, who leads, or a
    # server's error (which can name internal hosts and users)
    assert public["ok"] is True and public["store"] == {"ok": True}
    parts = [public["store"], public["tick"], public["events"], *public["platforms"].values()]
    parts.append(public["config"])  # an edit's error names the file and its key path
    assert all(set(part) <= {"ok", "state"} for part in parts)
    assert str(token_host.home) not in await response.text()
    bearer = {"Authorization": "Bearer s3cret-token"}
    async with client.get(url + "/healthz", headers=bearer) as response:
        full = await response.json()
    assert full["store"]["backend"] == "sqlite" and "leader" in full["tick"]


async def test_static_files_carry_the_page_headers(web_host, client):
    for path in ("/static/index.html", "/static/app.js", "/openapi.json", "/healthz"):
        async with client.get(base_url(web_host) + path) as response:
            assert response.status == 200
            # the page's template, opened as a file, is still no frame and runs no other script
            assert "frame-ancestors 'none'" in response.headers["Content-Security-Policy"], path
            assert response.headers["X-Content-Type-Options"] == "nosniff", path


async def test_opening_the_page_with_the_token_sets_a_cookie(token_host, client):
    url = base_url(token_host)
    async with client.get(url + "/?token=s3cret-token", allow_redirects=False) as response:
        assert response.status == 303 and response.headers["Location"] == "/"
    async with client.get(url + "/") as response:
        assert response.status == 200
    # with the token, a proxy's host name is fine
    async with client.get(url + "/api/dashboard", headers={"Host": "bot.example"}) as response:
        assert response.status == 200


async def test_media_serves_flat_names_only(web_host, client, tmp_path):
    media = web_host.home / "media"
    media.mkdir(exist_ok=True)
    (media / "chart.png").write_bytes(b"\x89PNG fake")
    (media / "page.html").write_text("<script>alert(1)</script>")
    outside = tmp_path / "secret.txt"
    outside.write_text("private")
    os.symlink(outside, media / "link.txt")
    url = base_url(web_host) + "/media/"
    async with client.get(url + "chart.png") as response:
        assert response.status == 200 and await response.read() == b"\x89PNG fake"
        assert response.headers["Content-Type"] == "image/png"
        assert "sandbox" in response.headers["Content-Security-Policy"]
    async with client.get(url + "page.html") as response:
        assert response.headers["Content-Disposition"].startswith("attachment")
    for bad in ("link.txt", "..%2Fbothost.db", ".hidden", "nope.png", "%2E%2E%2Fbothost.db"):
        async with client.get(URL(url + bad, encoded=True)) as response:
            assert response.status == 404, bad
    async with client.get(url + "../bothost.db") as response:
        assert response.status == 404


async def test_behind_an_https_proxy_the_cookies_are_secure(home, tmp_path, secret, client):
    # TLS ends at the proxy, so the host sees plain http; public_url says where people are
    web = {"port": 0, "token": "s3cret-token", "public_url": "https://bot.example"}
    host = make_host(
        home, host_config(tmp_path, secret, platforms={"web": web, "webhook": {"secret": secret}})
    )
    await host.start(mcp=False, tick=False)
    try:
        url = base_url(host) + "/?token=s3cret-token"
        async with client.get(url, allow_redirects=False) as response:
            cookies = response.headers.getall("Set-Cookie")
    finally:
        await host.stop()
    assert len(cookies) == 2
    for cookie in cookies:
        flags = {flag.strip().lower() for flag in cookie.split(";")[1:]}
        assert {"secure", "httponly", "samesite=strict"} <= flags, cookie
