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
