"""paramiko, imported at its first use rather than when the ssh server starts.

paramiko (with cryptography, nacl and invoke) is most of the server's start-up: ~0.1 s of
CPU that every start paid, though the tools list and the aliases need none of it (issue 19).
Modules write ``from .sshlib import paramiko`` and use ``paramiko.X`` as before; the first
attribute read imports the real module. Python's import lock makes that safe from the
worker threads paramiko runs in. Type checkers see the real module.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING, Any


class _OnFirstUse:
    """Stands in for a module until an attribute of it is read."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attribute: str) -> Any:
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return getattr(self._module, attribute)


if TYPE_CHECKING:
    import paramiko
else:
    paramiko = _OnFirstUse("paramiko")

__all__ = ["paramiko"]
