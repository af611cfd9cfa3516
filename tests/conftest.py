"""Fixtures shared by every test: an isolated BOTHOST_HOME per test."""

from __future__ import annotations

import pytest


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A fresh BOTHOST_HOME; also the HOME of anything the test starts."""
    path = tmp_path / "home"
    path.mkdir(mode=0o700)
    monkeypatch.setenv("BOTHOST_HOME", str(path))
    monkeypatch.delenv("BOTHOST_CONFIG", raising=False)
    return path


# -- the store's two backends -----------------------------------------------------------------

BACKENDS = ("sqlite", "postgresql")
# ``pytestmark = both_backends`` (or on one test) runs each test that opens a store through
# ``store_target`` once per backend: SQLite, then a fresh PostgreSQL database
both_backends = pytest.mark.both_backends


def pytest_generate_tests(metafunc):
    if metafunc.definition.get_closest_marker("both_backends") and (
        "backend" in metafunc.fixturenames
    ):
        metafunc.parametrize("backend", BACKENDS, indirect=True)


@pytest.fixture(scope="session")
def postgres_cluster():
    """One throwaway PostgreSQL server for the session (skipped when not installed)."""
    from tests.postgres import Cluster

    cluster = Cluster()
    try:
        yield cluster.start()
    finally:
        cluster.stop()


@pytest.fixture
def postgres_url(postgres_cluster) -> str:
    """A fresh, empty PostgreSQL database for one test."""
    return postgres_cluster.database()


@pytest.fixture
def backend(request) -> str:
    """The store backend a test runs on: SQLite unless parametrized with ``both_backends``."""
    return getattr(request, "param", "sqlite")


@pytest.fixture
def store_target(backend, tmp_path, request):
    """What ``Store(...)`` opens for this test: a SQLite file, or a PostgreSQL URL."""
    if backend == "sqlite":
        return tmp_path / "bothost.db"
    return request.getfixturevalue("postgres_url")


# -- running on pytest-xdist workers (`make test`: -n 2 --dist loadgroup) ------------------------


def pytest_collection_modifyitems(config, items):
    """Keep each module that shares a module- or session-scoped fixture of its own (a built
    wheel, a Chromium, reference servers) on one worker, so the fixture is made once, and
    start the packaging tests (the longest: venvs and pip) first, so they do not end the run
    on one worker while the other idles. Without xdist the order alone changes."""
    shared = {"module", "package"}
    grouping = bool(getattr(config.option, "loadgroup", False))  # set on xdist's workers
    for item in items:
        defs = getattr(item, "_fixtureinfo", None)
        scopes = {d.scope for ds in (defs.name2fixturedefs.values() if defs else ()) for d in ds}
        module = item.nodeid.split("::", 1)[0]
        if item.get_closest_marker("packaging") or scopes & shared:
            if grouping:
                in_group(item, module)
    items.sort(key=lambda item: item.get_closest_marker("packaging") is None)


def in_group(item, group: str) -> None:
    """Put ``item`` in xdist's loadgroup ``group``: its node id ends in ``@group``, which is
    how the scheduler on the controller, seeing only ids, tells groups. pytest-xdist (3.8)
    writes that id to ``_nodeid`` for an ``xdist_group`` mark, which pytest 9 no longer reads
    (the id is ``_id``, a NodeId), so its marks grouped nothing: both workers built the wheel."""
    grouped = f"{item.nodeid}@{group}"
    try:
        from _pytest.nodeid import NodeId  # pytest >= 9
    except ImportError:
        item._nodeid = grouped
    else:
        item._id = NodeId.parse(grouped)


def _escaped(text: str) -> str:
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Escape lone surrogates in what a report carries: several tests log or fail on text
    with one on purpose (undecodable bytes from a server), and an xdist worker sends its
    reports as UTF-8, which refuses them (the whole run stopped with an internal error)."""
    outcome = yield
    report = outcome.get_result()
    report.sections = [(title, _escaped(text)) for title, text in report.sections]
    if report.longrepr is not None and not isinstance(report.longrepr, tuple):
        text = str(report.longrepr)
        if _escaped(text) != text:
            report.longrepr = _escaped(text)
