"""The upgrade instructions a wheel's user follows really install the new code.

The package's version stays the same between changes, so ``pip install -U`` of a newer wheel
over an older one of that version is a no-op ("already installed with the same version").
Found from outside: the wheel of 7561101 upgraded that way kept its 8 core migrations.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def upgrading_section() -> str:
    text = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
    return text.split("## Upgrading", 1)[1].split("\n## ", 1)[0]


def test_the_upgrade_of_a_wheel_reinstalls_it():
    section = upgrading_section()
    assert "--force-reinstall" in section
    # no instruction to upgrade with a plain -U/--upgrade, which keeps the old code
    for command in re.findall(r"`(pip install [^`]*)`", section):
        if "-U" in command.split() or "--upgrade" in command.split():
            assert "--force-reinstall" in command, command
