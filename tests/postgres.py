"""A throwaway PostgreSQL cluster for the tests that run on both store backends.

The binaries come from Debian's ``postgresql`` package (``/usr/lib/postgresql/*/bin``, the
newest version) or from PATH; missing, the test is skipped — or fails under
``BOTHOST_REQUIRE_PEERS=1`` (:func:`tests.peers.missing`). The cluster lives in a fresh
directory under the system's temp dir, listens on a unix socket there only (no TCP port to
collide on), trusts local connections and skips fsync: it holds test data for one session.
initdb refuses to run as root, so under root (CI) the cluster belongs to the ``postgres``
user and its commands run through ``runuser``.
"""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

import psycopg

from tests.peers import missing

SUPERUSER = "bothost"  # the cluster's superuser, whoever owns its files
START_TIMEOUT = 60  # seconds for pg_ctl to see the server accept connections
COMMAND_TIMEOUT = 120  # seconds for initdb / pg_ctl stop on a loaded machine
# test data need no durability: a crash of the test machine loses nothing that matters
SERVER_OPTIONS = "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"


def bindir() -> Path:
    """The directory holding initdb and pg_ctl."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: (
            int(Path(p).parent.parent.name) if Path(p).parent.parent.name.isdigit() else 0
        ),
    )
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    if initdb:
        return Path(initdb).parent
    missing("PostgreSQL server binaries (Debian: apt-get install postgresql)")
    raise AssertionError("unreachable")


class Cluster:
    """One running server; :meth:`database` makes a fresh, empty database for a test."""

    def __init__(self, options: str = SERVER_OPTIONS) -> None:
        self.options = options  # the server's -c settings (bench/events.py keeps fsync on)
        self.bin = bindir()
        self.root = Path(tempfile.mkdtemp(prefix="bothost-pg-"))
        self.data = self.root / "data"
        self.socket = self.root / "socket"
        self.port = 5432  # only names the socket file: the server listens on no TCP port
        self.owner = "postgres" if os.geteuid() == 0 else None
        self._names = itertools.count(1)

    def run(self, *args: str) -> None:
        command = [str(self.bin / args[0]), *args[1:]]
        if self.owner:
            command = ["runuser", "-u", self.owner, "--", *command]
        subprocess.run(
            command, check=True, capture_output=True, timeout=COMMAND_TIMEOUT, cwd=self.root
        )

    def start(self) -> Cluster:
        self.socket.mkdir()
        if self.owner:
            try:
                user = pwd.getpwnam(self.owner)
            except KeyError:
                missing("the postgres system user (Debian's postgresql package creates it)")
            for path in (self.root, self.socket):
                os.chown(path, user.pw_uid, user.pw_gid)
        self.run("initdb", "-D", str(self.data), "-U", SUPERUSER, "-A", "trust", "-E", "UTF8")
        options = f"-k {self.socket} -p {self.port} -c listen_addresses='' {self.options}"
        self.run(
            "pg_ctl", "start", "-D", str(self.data), "-w", "-t", str(START_TIMEOUT),
            "-l", str(self.root / "server.log"), "-o", options,
        )  # fmt: skip
        return self

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@/{database}?host={self.socket}&port={self.port}"

    def database(self) -> str:
        """A new empty database; its URL."""
        name = f"test_{os.getpid()}_{next(self._names)}"
        with psycopg.connect(self.url(), autocommit=True, connect_timeout=10) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def drop(self, url: str) -> None:
        """Remove the database :meth:`database` made at ``url``, ending any session still
        connected to it (a host or process the test left running)."""
        name = urlsplit(url).path.lstrip("/")
        assert name.startswith("test_"), f"not a database this cluster made: {url}"
        with psycopg.connect(self.url(), autocommit=True, connect_timeout=10) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def stop(self) -> None:
        try:
            self.run("pg_ctl", "stop", "-D", str(self.data), "-m", "immediate")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
