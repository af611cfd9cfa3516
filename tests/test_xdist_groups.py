"""`make test`'s worker groups take effect: a module sharing a module-scoped fixture (a built
wheel, a Chromium, reference servers) runs on one pytest-xdist worker, which makes the
fixture once.

The scheduler tells groups by a test id ending in ``@group``. pytest-xdist 3.8 writes that id
where pytest 9 no longer reads it, so no test was grouped and both workers built and
installed the wheel; tests/conftest.py sets the id itself.
"""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def shared() -> object:
    return object()


def test_a_module_sharing_a_fixture_is_one_worker_group(request, shared):
    if not getattr(request.config.option, "loadgroup", False):
        pytest.skip("checks the groups of `make test` (-n 2 --dist loadgroup) only")
    assert request.node.nodeid.endswith("@tests/test_xdist_groups.py"), request.node.nodeid


def test_work_is_handed_out_longest_first(request):
    """The scheduler keeps conftest's order (packaging, the other groups, the single tests):
    by default pytest-xdist sorts the units by their number of tests, which started
    `make run` in a fresh copy, one test and the longest, after every group."""
    if not getattr(request.config.option, "loadgroup", False):
        pytest.skip("checks the order of `make test` (-n 2 --dist loadgroup) only")
    assert request.config.option.loadscopereorder is False
    items = request.session.items
    packaging = [bool(item.get_closest_marker("packaging")) for item in items]
    assert packaging == sorted(packaging, reverse=True)  # every packaging test first
    grouped = [item.nodeid.rfind("@") > item.nodeid.rfind("]") for item in items]
    assert grouped == sorted(grouped, reverse=True)  # then the other groups, then the rest


def test_the_interop_tests_share_their_reference_servers(request):
    """tests/interop's two modules share session-scoped servers (server-everything, the SDK's
    HTTP server): one group, so they start once, not on both workers."""
    if not getattr(request.config.option, "loadgroup", False):
        pytest.skip("checks the groups of `make test` (-n 2 --dist loadgroup) only")
    sharing = ("tests/interop/test_interop_agent.py", "tests/interop/test_interop_cli.py")
    groups = {
        item.nodeid.split("@")[-1]
        for item in request.session.items
        if item.nodeid.startswith(sharing)
    }
    if not groups:
        pytest.skip("no test of tests/interop collected in this run")
    assert groups == {"tests/interop"}, groups


def test_the_summary_says_when_each_worker_ran_out_of_work():
    from tests.conftest import worker_ends_line

    line = worker_ends_line({"gw1": 100.0 + 530.4, "gw0": 100.0 + 512.2}, 100.0)
    assert line == (
        "workers' last tests ended at gw0 +512 s, gw1 +530 s after the start: 18 s of tail"
    )
    assert worker_ends_line({"gw0": 5.0}, 0.0) == ""  # one process: nothing to compare
