"""Fixtures shared by every test: an isolated BOTHOST_HOME per test, a fake model."""

from __future__ import annotations

import time

import pytest

from tests.fakes.llm import FakeLlm


@pytest.fixture
async def fake_llm():
    """The fake OpenAI-and-Anthropic server of tests/fakes/llm.py on 127.0.0.1, started."""
    fake = await FakeLlm().start()
    yield fake
    await fake.stop()


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
def postgres_url(postgres_cluster):
    """A fresh, empty PostgreSQL database for one test, dropped when the test ends. Kept to
    the session's end, a worker's ~80 databases (22,000 files, 600 MB) made the cluster's
    removal take 18-32 s after its last test; dropped as each test ends, the cluster stays at
    ~1,000 files and its removal took 2-3 s."""
    url = postgres_cluster.database()
    yield url
    postgres_cluster.drop(url)


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


def pytest_configure(config):
    """Keep the order given below on `make test`'s workers. pytest-xdist hands out the work
    units (a group, or one ungrouped test) in collection order only with
    --no-loadscope-reorder; by default it sorts them by their number of tests, so the wheel's
    14 tests started after the 29 generated requests of tests/web/test_fuzz.py and the 26 of
    tests/interop/test_interop_agent.py, and `make run` in a fresh copy (one test, the longest)
    after every group. The controller schedules; a worker (whose `dist` xdist has set to
    "no" by now) is told too, so that its tests see what the run does. No-op without xdist."""
    option = config.option
    if getattr(option, "dist", "no") == "loadgroup" or getattr(option, "loadgroup", False):
        option.loadscopereorder = False


def pytest_collection_modifyitems(config, items):
    """Keep what shares an expensive fixture on one worker, so the fixture is made once: a
    module using a module- or package-scoped fixture (a built wheel, a Chromium), and a folder
    using a session-scoped fixture of its own conftest (the reference servers of
    tests/interop, started once, not once per worker). Order the work longest first, so that
    no long unit starts late and ends the run on one worker while the other idles: the
    packaging tests (venvs and pip), then the other groups, then the single tests. Without
    xdist the order alone changes."""
    grouping = bool(getattr(config.option, "loadgroup", False))  # set on xdist's workers
    grouped: set[int] = set()
    for item in items:
        group = shared_group(item)
        if group is not None:
            grouped.add(id(item))
            if grouping:
                in_group(item, group)
    items.sort(
        key=lambda item: (
            item.get_closest_marker("packaging") is None,
            id(item) not in grouped,
        )
    )


def shared_group(item) -> str | None:
    """The group ``item`` must run in (a folder of tests/, or a module), or None."""
    defs = getattr(item, "_fixtureinfo", None)
    fixtures = [d for ds in (defs.name2fixturedefs.values() if defs else ()) for d in ds]
    # a session fixture of a sub-folder's conftest; tests/conftest.py's own (the PostgreSQL
    # cluster) is used all over and made once per worker
    folders = sorted(
        d.baseid
        for d in fixtures
        if d.scope == "session"
        and d.baseid not in ("", "tests")
        and "::" not in d.baseid
        and not d.baseid.endswith(".py")
    )
    if folders:
        return folders[0]
    if item.get_closest_marker("packaging") or {"module", "package"} & {d.scope for d in fixtures}:
        return item.nodeid.split("::", 1)[0]
    return None


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


# -- how the work ended on each worker (printed after `make test`'s summary) ------------------

WORKER_ENDS: dict[str, float] = {}  # worker id -> when its last test ended (monotonic)
SESSION_START: list[float] = []


def pytest_sessionstart(session):
    SESSION_START.append(time.monotonic())


def pytest_runtest_logreport(report):
    """On xdist's controller each report names the worker that ran it."""
    node = getattr(report, "node", None)
    if node is not None and report.when == "teardown":
        WORKER_ENDS[node.gateway.id] = time.monotonic()


def worker_ends_line(ends: dict[str, float], start: float) -> str:
    """One line: when each worker ran out of work, and how long the first then idled (a
    long tail says a long test or group started late: see pytest_collection_modifyitems)."""
    if len(ends) < 2:
        return ""
    times = {worker: end - start for worker, end in sorted(ends.items())}
    each = ", ".join(f"{worker} +{seconds:.0f} s" for worker, seconds in times.items())
    tail = max(times.values()) - min(times.values())
    return f"workers' last tests ended at {each} after the start: {tail:.0f} s of tail"


def pytest_terminal_summary(terminalreporter):
    line = worker_ends_line(WORKER_ENDS, SESSION_START[0] if SESSION_START else 0.0)
    if line:
        terminalreporter.write_line(line)
