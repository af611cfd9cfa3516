"""Property-based requests against the running host, generated from its /openapi.json.

Schemathesis turns every operation of the document into a Hypothesis strategy (valid
requests, and invalid ones); each request is signed like a real webhook sender signs it,
so it gets past authentication into the handlers. No request may produce a 5xx. The host
runs on its own event loop in a thread because the requests here are blocking.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import threading
import uuid

import pytest
from bothost.plugins.web.signing import new_secret, sign_headers
from hypothesis import HealthCheck, given, settings

from tests.helpers import make_host
from tests.peers import missing
from tests.web.conftest import host_config

try:
    import requests
    import schemathesis
    from schemathesis import GenerationMode
except ImportError:  # like a peer program: skipped locally, required in CI (see `served`)
    schemathesis = None

# per operation and mode: enough to keep CI under half a minute; set BOTHOST_FUZZ_EXAMPLES
# (e.g. 500) for a deeper run
EXAMPLES = int(os.environ.get("BOTHOST_FUZZ_EXAMPLES", "12"))
SKIP = {"/api/events"}  # an endless live stream: nothing to wait for
PRINTABLE = re.compile(r"[!-~]{1,200}")


class HostThread(threading.Thread):
    """A started host on its own event loop, until ``stop()``."""

    def __init__(self, home, data):
        super().__init__(daemon=True)
        self.home, self.data = home, data
        self.ready = threading.Event()
        self.error: BaseException | None = None

    def run(self):
        try:
            asyncio.run(self.serve())
        except BaseException as exc:  # handed to the test thread
            self.error = exc
            self.ready.set()

    async def serve(self):
        self.loop = asyncio.get_running_loop()
        self.done = asyncio.Event()
        self.host = make_host(self.home, self.data)
        await self.host.start(mcp=False, tick=False)
        self.url = f"http://127.0.0.1:{self.host.http.port}"
        self.ready.set()
        try:
            await self.done.wait()
        finally:
            await self.host.stop()

    def stop(self):
        self.loop.call_soon_threadsafe(self.done.set)
        self.join(timeout=30)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    if schemathesis is None:
        missing("schemathesis (pip install schemathesis)")
    root = tmp_path_factory.mktemp("fuzz")
    home = root / "home"
    home.mkdir(mode=0o700)
    secret = new_secret()
    thread = HostThread(home, host_config(root, secret))
    thread.start()
    assert thread.ready.wait(60), "the host did not start"
    if thread.error:
        raise thread.error
    yield thread, secret
    thread.stop()


def operations():
    """(path, method, mode) for each operation; invalid input only where there is input."""
    from bothost.plugins.web.openapi import paths

    out = []
    for path, item in paths().items():
        for method, spec in item.items():
            if path in SKIP:
                continue
            out.append((path, method.upper(), "positive"))
            if spec.get("parameters") or spec.get("requestBody"):
                out.append((path, method.upper(), "negative"))
    return out


def send(case, url, secret, session):
    kwargs = case.as_transport_kwargs(base_url=url)
    headers = {k: str(v) for k, v in kwargs["headers"].items()}
    if "json" in kwargs:
        body = json.dumps(kwargs["json"]).encode()
    else:
        raw = kwargs.get("data", b"")
        body = raw.encode() if isinstance(raw, str) else (raw or b"")
    if case.operation.path.startswith("/webhook/"):
        msg_id = headers.get("webhook-id", "")
        if not PRINTABLE.fullmatch(msg_id):
            msg_id = f"msg_{uuid.uuid4().hex}"
        headers.update(sign_headers(secret, msg_id, body))
    return session.request(
        kwargs["method"],
        kwargs["url"],
        params=kwargs.get("params"),
        headers=headers,
        data=body,
        timeout=30,
    )


@pytest.mark.parametrize(("path", "method", "mode"), operations())
def test_generated_requests_never_get_a_server_error(served, path, method, mode):
    thread, secret = served
    schema = schemathesis.openapi.from_url(thread.url + "/openapi.json")
    operation = schema[path][method]
    failures = []

    with requests.Session() as session:

        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(case=operation.as_strategy(generation_mode=GenerationMode(mode)))
        def check(case):
            response = send(case, thread.url, secret, session)
            if response.status_code >= 500:
                failures.append((case.as_curl_command(), response.status_code, response.text))
            assert response.status_code < 500, response.text

        check()
    assert not failures
