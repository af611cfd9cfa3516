"""`bothost install` / `uninstall`: one line per package, pip's output only when it fails.

The package is a wheel written here (no build, no index: PIP_NO_INDEX) and pip installs it
into a folder of this test (PIP_TARGET, which pip reads from the environment) put on
sys.path, so the test's own venv is left as it was. The command runs in-process (pip is the
subprocess it always is): four pip runs are most of these tests' time.
"""

from __future__ import annotations

import shutil
import sys
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from bothost.cli import cli

MODULE = """
from bothost.hookspecs import hookimpl


@hookimpl
def register_tools(register):
    def shout(text: str) -> str:
        "Upper-case the text."
        return text.upper()

    register(shout)
"""


def wheel(folder: Path, name: str = "bothost_demo", plugin: bool = True) -> Path:
    path = folder / f"{name}-0.1-py3-none-any.whl"
    info = f"{name}-0.1.dist-info"
    files = {
        f"{name}/__init__.py": MODULE,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name.replace('_', '-')}\nVersion: 0.1\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    if plugin:
        files[f"{info}/entry_points.txt"] = f"[bothost]\ndemo = {name}\n"
    files[f"{info}/RECORD"] = "".join(f"{n},,\n" for n in [*files, f"{info}/RECORD"])
    with zipfile.ZipFile(path, "w") as archive:
        for member, text in files.items():
            archive.writestr(member, text)
    return path


@pytest.fixture
def target(tmp_path, home, monkeypatch) -> Path:
    path = tmp_path / "site"
    path.mkdir()
    monkeypatch.setenv("PIP_TARGET", str(path))
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.syspath_prepend(str(path))
    return path


def bothost(*argv: str):
    return CliRunner().invoke(cli, list(argv), catch_exceptions=False)


def test_install_says_what_it_installed_in_one_line(target, tmp_path, capfd):
    result = bothost("install", str(wheel(tmp_path)))
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        f"installed bothost-demo 0.1 (bothost plugin: demo) in {target.resolve()}"
    ]
    assert result.stderr == ""
    assert capfd.readouterr() == ("", "")  # pip's own lines stay back
    # with -v pip speaks; a package without a bothost entry point is pointed out
    plain = bothost("install", "-v", str(wheel(tmp_path, "plain_pkg", plugin=False)))
    assert plain.exit_code == 0, plain.output
    assert plain.stdout.splitlines() == [f"installed plain-pkg 0.1 in {target.resolve()}"]
    assert "plain-pkg brings no bothost plugin" in plain.stderr
    assert "Successfully installed plain-pkg" in capfd.readouterr().out


def test_a_failed_install_shows_pips_output_and_the_command_to_rerun(target, tmp_path):
    missing = tmp_path / "nowhere" / "missing-0.1-py3-none-any.whl"
    result = bothost("install", str(missing))
    assert result.exit_code != 0
    assert result.stdout == ""
    assert "does not exist" in result.stderr  # pip's own reason
    last = result.stderr.splitlines()[-1]
    assert last.startswith("bothost: pip failed (exit status ")
    assert last.endswith(
        f"to retry: {sys.executable} -m pip --disable-pip-version-check install {missing}"
    )


def test_uninstall_of_a_package_not_installed_says_so(target):
    result = bothost("uninstall", "bothost-never-installed")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        f"bothost-never-installed is not installed in {sys.prefix}"
    ]


def test_uninstall_names_the_package_it_removed(target, tmp_path, monkeypatch):
    # found from outside, following docs/plugins.md: `bothost uninstall myplugin-package`
    # printed "removed None None from …": the package was described after pip had deleted
    # the metadata it is described from
    installed = bothost("install", str(wheel(tmp_path)))
    assert installed.exit_code == 0, installed.output

    def pip_uninstalls(command, verbose):
        # what `pip uninstall -y bothost-demo` does; pip itself refuses a PIP_TARGET folder
        # ("outside environment"), and this test must not touch the suite's own venv
        assert command[-1] == "bothost-demo"
        for folder in (target / "bothost_demo", *target.glob("bothost_demo-*.dist-info")):
            shutil.rmtree(folder)
        return 0, ""

    monkeypatch.setattr("bothost.hooks.packages.run_pip", pip_uninstalls)
    result = bothost("uninstall", "bothost-demo")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        f"removed bothost-demo 0.1 (bothost plugin: demo) from {target.resolve()}"
    ]
