"""`bothost mcp search` against a fake registry on 127.0.0.1: listing, paging by cursor,
the API version fallback, and registries that are down, broken or hostile."""

from __future__ import annotations

import json

import pytest
from aiohttp import web

from tests.fakes.mcp_registry import FakeRegistry
from tests.helpers import free_port
from tests.mcp_install.registry_support import bothost, filler, pypi_entry, remote_entry


@pytest.fixture
async def registry():
    fake = await FakeRegistry(
        [
            pypi_entry("0.0.9", latest=False),
            pypi_entry(),
            *filler(7),
            remote_entry("https://e.example/mcp"),
        ],
        page_size=3,
    ).start()
    yield fake
    await fake.close()


async def test_search_lists_name_version_kinds_and_description(home, registry):
    code, out, err = await bothost("mcp", "search", "echo", "--registry", registry.url)
    assert code == 0, err
    assert out.splitlines() == [
        "io.github.bothost-tests/reg-echo  0.1  (pypi)",
        "    Echoes things back (from the registry)",
        "io.github.bothost-tests/remote-echo  1.0.0  (remote)",
        "    Echo, hosted",
    ]
    assert err.strip() == (
        f"2 servers in {registry.url}; install one with `bothost mcp install NAME`"
    )
    # the older version of reg-echo (isLatest false) is not listed beside the latest
    assert all(path == "/v0.1/servers" for path, _query in registry.requests)


async def test_search_follows_the_cursor_and_stops_at_the_limit(home, registry):
    code, out, err = await bothost("mcp", "search", "weather", "--registry", registry.url, "--json")
    assert code == 0, err
    found = json.loads(out)
    assert [s["name"] for s in found["servers"]] == [
        f"io.github.example{i:02d}/weather-{i:02d}" for i in range(7)
    ]
    assert found["more"] is False
    assert found["servers"][1]["kinds"] == ["npm"] and found["servers"][0]["kinds"] == ["pypi"]
    cursors = [query.get("cursor") for _path, query in registry.requests]
    assert len(cursors) == 3 and cursors[0] is None and None not in cursors[1:]

    registry.requests.clear()
    code, out, err = await bothost(
        "mcp", "search", "weather", "--registry", registry.url, "--limit", "4"
    )
    assert code == 0, err
    assert out.count("io.github.example") == 4
    assert "4 servers" in err and "more match: narrow QUERY or raise --limit" in err
    assert len(registry.requests) == 2  # 6 read, 4 shown: no third page


async def test_config_names_the_registry_and_v0_is_used_when_v01_is_missing(home):
    fake = await FakeRegistry([pypi_entry()], versions=("v0",)).start()
    try:
        (home / "bothost.yaml").write_text(f"mcp:\n  registry: {fake.url}/\n")
        code, out, err = await bothost("mcp", "search", "reg-echo")
        assert code == 0, err
        assert out.startswith("io.github.bothost-tests/reg-echo  0.1")
        assert [path for path, _q in fake.requests] == ["/v0.1/servers", "/v0/servers"]
    finally:
        await fake.close()


async def test_an_unreachable_registry_is_one_line_naming_it_in_plain_words(home):
    # found from outside: "cannot reach the MCP registry at http://127.0.0.1:9: Cannot connect
    # to host 127.0.0.1:9 ssl:default [Connect call failed ('127.0.0.1', 9)]"
    url = f"http://127.0.0.1:{free_port()}"
    code, out, err = await bothost("mcp", "search", "x", "--registry", url)
    assert code == 1 and out == ""
    assert err == f"bothost: cannot reach the MCP registry at {url}: Connection refused\n"


async def test_a_bad_registry_url_in_config_is_a_config_error(home):
    (home / "bothost.yaml").write_text("mcp:\n  registry: ftp://registry.example\n")
    code, _out, err = await bothost("mcp", "search", "x")
    assert code == 2
    assert "mcp.registry: expected an http:// or https:// URL" in err


async def hostile(answer):
    fake = await FakeRegistry([]).start()

    async def respond(request: web.Request) -> web.StreamResponse:
        return await answer(request)

    fake.answer = respond
    return fake


async def no_json(_request):
    return web.Response(text="<html>Service Unavailable</html>", content_type="text/html")


async def no_servers(_request):
    return web.json_response({"servers": "all of them"})


async def failing(_request):
    return web.json_response({"title": "Internal Server Error"}, status=500)


async def enormous(request):
    response = web.StreamResponse(headers={"Content-Type": "application/json"})
    await response.prepare(request)
    await response.write(b'{"servers": [' + b'{"server": {"name": "x"}},' * 20000)
    for _ in range(100):  # 5 MiB more and no end: the client stops reading at its bound
        await response.write(b" " * (1 << 16))
    return response


@pytest.mark.parametrize(
    "answer, says",
    [
        (no_json, "answered with no JSON"),
        (no_servers, "answered with no list of servers"),
        (failing, "answered HTTP 500"),
        (enormous, "sent more than 4 MiB for one page"),
    ],
)
async def test_a_broken_answer_is_one_line(home, answer, says):
    fake = await hostile(answer)
    try:
        code, out, err = await bothost("mcp", "search", "x", "--registry", fake.url)
        assert code == 1 and out == ""
        assert err.strip() == f"bothost: the MCP registry at {fake.url} {says}"
    finally:
        await fake.close()


async def test_hostile_entries_are_bounded_and_cleaned(home):
    async def answer(request):
        entries = [
            {
                "server": {
                    "name": "io.evil.x/escape",
                    "version": "1\x1b[2J",
                    "description": "\x1b]0;owned\x07 " + "A" * 5000,
                    "packages": "not a list",
                    "remotes": [{"url": 7}, "x"],
                }
            },
            {"server": {"description": "no name"}},
            "not an object",
            {"server": {"name": "io.evil.x/loop", "packages": [{"registryType": "pypi"}] * 1000}},
        ]
        # the same cursor again and again: read once, then the paging stops
        return web.json_response({"servers": entries, "metadata": {"nextCursor": "again"}})

    fake = await hostile(answer)
    try:
        code, out, err = await bothost("mcp", "search", "x", "--registry", fake.url, "--json")
        assert code == 0, err
        found = json.loads(out)["servers"]
        assert [s["name"] for s in found] == ["io.evil.x/escape", "io.evil.x/loop"]
        assert "\x1b" not in out and found[0]["version"] == "1 [2J"
        assert len(found[0]["description"]) == 300
        assert found[0]["kinds"] == [] and found[1]["kinds"] == []  # nothing usable
        assert len(fake.requests) == 2  # the first page, the cursor once; not again
    finally:
        await fake.close()
