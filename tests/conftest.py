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
