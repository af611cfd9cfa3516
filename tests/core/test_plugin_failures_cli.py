"""A plugin's runtime hook failing in a one-shot command: one line naming the plugin on
stderr, the command's own work still done; the traceback only with ``-v``."""

from __future__ import annotations

from tests.helpers import ONLY_WEB, plugin_config, run_bothost

FAILING = """\
from bothost.hookspecs import hookimpl


@hookimpl
def event_received(event):
    raise RuntimeError("boom in event_received")
"""


def test_a_failing_event_hook_is_one_line_naming_the_plugin(home, tmp_path):
    # found from outside, as a plugin author: `bothost events push` printed the whole
    # traceback of a plugin's failing event_received hook, where `bothost chat` shows one line
    config = plugin_config(tmp_path, {"faulty.py": FAILING})

    pushed = run_bothost("events", "push", "test", "ping", config=config)
    assert pushed.returncode == 0, pushed.stderr
    assert pushed.stdout == "Queued event 1.\n"
    lines = pushed.stderr.splitlines()
    assert len(lines) == 1, pushed.stderr
    assert "plugin faulty failed in hook event_received" in lines[0]
    assert "RuntimeError: boom in event_received" in lines[0]
    assert "bothost -v" in lines[0]  # where the traceback is

    verbose = run_bothost("-v", "events", "push", "test", "pong", config=config)
    assert verbose.returncode == 0, verbose.stderr
    assert "Traceback" in verbose.stderr and "faulty.py" in verbose.stderr


ROUTES_FAIL = """\
from bothost.hookspecs import hookimpl


@hookimpl
def register_routes(app):
    raise RuntimeError("boom in register_routes")
"""


def test_a_failing_register_routes_stops_run_as_a_plugin_error(home, tmp_path):
    # found from outside: a plugin whose register_routes raised stopped `bothost run` with
    # exit status 1 and no "plugin error" label, where a failing register_platforms (or any
    # other registration hook) stops it with 2, as `bothost --help` says of plugin errors
    config = plugin_config(tmp_path, {"routes.py": ROUTES_FAIL}, ONLY_WEB)
    result = run_bothost("run", config=config)
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == [
        "bothost: plugin error: plugin routes failed in register_routes: boom in register_routes"
    ]
