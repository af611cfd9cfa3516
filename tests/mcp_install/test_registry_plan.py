"""What a registry entry means on this machine: names, the package chosen, its arguments,
variables and headers — the rules of bothost.mcp.registry.plan, without a registry."""

from __future__ import annotations

import pytest

from bothost.mcp.registry.entries import is_registry_name, parse_item
from bothost.mcp.registry.plan import PlanError, choose, plan
from tests.fakes.mcp_registry import item
from tests.mcp_install.registry_support import npm_entry, oci_entry, pypi_entry, remote_entry

EVERYWHERE = {"npm": "/usr/bin/npm", "docker": "/usr/bin/docker"}.get


def nowhere(_tool: str) -> None:
    return None


@pytest.mark.parametrize(
    "text, registry",
    [
        ("io.github.owner/server", True),
        ("com.example.mcp/weather-server", True),
        ("io.github.o-w/my_server.v2", True),
        ("@scope/name", False),  # npm
        ("npm:io.github.owner/server", False),  # npm, as written
        ("mcp-server-time", False),  # PyPI
        ("owner/server", False),  # no reverse DNS
        ("io.github.owner/server/extra", False),
        ("io.github.owner/server==1.0", False),
    ],
)
def test_which_names_are_registry_names(text, registry):
    assert is_registry_name(text) is registry


def entry(*packages: dict, remotes: tuple[dict, ...] = ()):
    return parse_item(
        item(
            {
                "name": "io.github.t/x",
                "version": "1",
                "packages": list(packages),
                "remotes": list(remotes),
            }
        )
    )


PYPI = {"registryType": "pypi", "identifier": "x-mcp", "version": "1.0"}
NPM = {"registryType": "npm", "identifier": "@t/x", "version": "1.0"}
OCI = {"registryType": "oci", "identifier": "docker.io/t/x", "version": "1.0"}
REMOTE = {"type": "streamable-http", "url": "https://x.example/mcp"}


def test_pypi_then_npm_then_a_remote_and_never_oci():
    assert choose(entry(OCI, NPM, PYPI, remotes=(REMOTE,)), EVERYWHERE).registry == "pypi"
    assert choose(entry(OCI, NPM, remotes=(REMOTE,)), EVERYWHERE).registry == "npm"
    assert choose(entry(OCI, NPM, remotes=(REMOTE,)), nowhere).url == REMOTE["url"]
    with pytest.raises(PlanError, match="OCI image docker.io/t/x:1.0"):
        choose(entry(OCI), EVERYWHERE)  # docker on PATH or not


def test_an_oci_only_entry_is_refused_in_one_line_naming_the_image():
    with pytest.raises(PlanError) as raised:
        plan(parse_item(oci_entry()), [], {}, which=EVERYWHERE, environ={})
    assert str(raised.value) == (
        "io.github.bothost-tests/boxed is published only as the OCI image "
        "docker.io/bothost-tests/boxed:1.2.3, which bothost does not install; if you trust "
        "the image: bothost mcp add boxed -- docker run -i --rm docker.io/bothost-tests/boxed:1.2.3"
    )


def test_an_oci_refusal_names_the_other_ways_the_entry_installs():
    with pytest.raises(PlanError) as raised:
        choose(entry(OCI, NPM), nowhere)
    assert str(raised.value) == (
        "io.github.t/x cannot be installed here: a npm package needs npm, which is not on "
        "PATH; an OCI image (docker.io/t/x:1.0), which bothost does not install"
    )


def test_what_cannot_run_here_is_said_in_one_line():
    sse = {"type": "sse", "url": "https://x.example/sse"}
    http_package = {
        **PYPI,
        "transport": {"type": "streamable-http", "url": "http://localhost:8080/mcp"},
    }
    nuget = {"registryType": "nuget", "identifier": "X.Mcp", "version": "1"}
    with pytest.raises(PlanError) as raised:
        choose(entry(http_package, NPM, OCI, nuget, remotes=(sse,)), nowhere)
    assert str(raised.value) == (
        "io.github.t/x cannot be installed here: a pypi package served over streamable-http, "
        "not stdio; a npm package needs npm, which is not on PATH; a sse remote (bothost "
        "speaks Streamable HTTP); an OCI image (docker.io/t/x:1.0), which bothost does not "
        "install; a nuget package (not installed by bothost)"
    )
    with pytest.raises(PlanError, match="lists no package and no remote"):
        choose(entry(), EVERYWHERE)


def test_secret_and_required_variables_of_a_pypi_entry():
    done = plan(parse_item(pypi_entry()), [], {}, environ={})
    assert (done.kind, done.spec, done.args) == ("pypi", "bothost-reg-echo==0.1", [])
    assert done.env == {"REG_ECHO_TOKEN": "${env:REG_ECHO_TOKEN}", "REG_ECHO_MODE": "quiet"}
    assert done.unset == ["REG_ECHO_TOKEN"] and done.optional == ["REG_ECHO_DEBUG"]
    # set here: referenced, nothing unset; --env wins over the entry; a terminal is asked
    # for a required variable that is not secret, never for a secret
    given = plan(
        parse_item(pypi_entry()),
        [],
        {"REG_ECHO_MODE": "loud"},
        ask=lambda label, default: pytest.fail(f"asked for {label}"),
        environ={"REG_ECHO_TOKEN": "t"},
    )
    assert given.env == {"REG_ECHO_MODE": "loud", "REG_ECHO_TOKEN": "${env:REG_ECHO_TOKEN}"}
    assert given.unset == [] and given.referenced == ["REG_ECHO_TOKEN"]
    plain = {
        "registryType": "pypi",
        "identifier": "x",
        "environmentVariables": [{"name": "REGION", "isRequired": True, "description": "where"}],
    }
    asked = plan(
        entry(plain),
        [],
        {},
        ask=lambda label, default: f"{label}|{default}|eu",
        environ={"REGION": "us"},
    )
    assert asked.env == {"REGION": "REGION (where)|us|eu"}
    named = plan(entry(plain), [], {}, environ={})
    assert named.env == {"REGION": "${env:REGION}"} and named.unset == ["REGION"]


def test_npm_arguments_and_user_arguments():
    done = plan(parse_item(npm_entry()), [], {}, which=EVERYWHERE, environ={})
    assert (done.kind, done.spec) == ("npm", "npm:@bothost-tests/echo-server@2.0.1")
    assert done.args == ["--stdio", "--level", "info"]
    mine = plan(parse_item(npm_entry()), ["--mine"], {}, which=EVERYWHERE, environ={})
    assert mine.args == ["--mine"]  # the user's --arg replace the entry's
    needs = {
        **PYPI,
        "packageArguments": [
            {
                "type": "positional",
                "valueHint": "directory",
                "isRequired": True,
                "description": "what to serve",
            }
        ],
    }
    with pytest.raises(PlanError) as raised:
        plan(entry(needs), [], {}, environ={})
    assert str(raised.value) == (
        "io.github.t/x needs the argument <directory> (what to serve); "
        "give its arguments with --arg (repeatable)"
    )
    assert plan(entry(needs), [], {}, ask=lambda label, d: "/srv", environ={}).args == ["/srv"]


def test_remote_headers_become_env_references():
    done = plan(parse_item(remote_entry("https://e.example/mcp")), [], {}, environ={})
    assert (done.kind, done.spec) == ("remote", "https://e.example/mcp")
    assert done.headers == {"Authorization": "Bearer ${env:ECHO_TOKEN}", "X-Client": "bothost"}
    assert done.unset == ["ECHO_TOKEN"] and done.optional == ["header X-Trace"]
    secret = {**REMOTE, "headers": [{"name": "X-Api-Key", "isRequired": True, "isSecret": True}]}
    assert plan(entry(remotes=(secret,)), [], {}, environ={}).headers == {
        "X-Api-Key": "${env:X_API_KEY}"
    }
    with pytest.raises(PlanError, match="--arg and --env are for packages"):
        plan(entry(remotes=(REMOTE,)), [], {"A": "1"}, environ={})
    with pytest.raises(PlanError, match="its remote url: expected an http"):
        plan(entry(remotes=({"url": "file:///etc/passwd"},)), [], {}, environ={})


@pytest.mark.parametrize(
    "package, says",
    [
        ({"registryType": "pypi", "identifier": "--index-url=http://evil"}, "its pypi package"),
        ({"registryType": "pypi", "identifier": "x", "version": "1 ; os_name"}, "its pypi package"),
        ({"registryType": "npm", "identifier": "x", "version": "file:../x"}, "its npm package"),
    ],
)
def test_a_hostile_package_is_refused_before_anything_runs(package, says):
    with pytest.raises(PlanError, match=says):
        plan(entry(package), [], {}, which=EVERYWHERE, environ={})
