"""The ``permissions`` section's check at load: each rule names a tool and an action, and
its patterns compile.

The config package reads ``permissions`` into :class:`~bothost.config.PermissionRule` values
and checks each key's type; whether a rule can work (its regexes on RE2, its ``who``) is this
package's, so :func:`~bothost.rules.match.problems` decides it, as for a rule added at run
time, and the host registers :func:`check_permissions` with the config's loader
(:data:`bothost.host.config_load.SECTION_CHECKS`).
"""

from __future__ import annotations

from bothost.config import Config
from bothost.config.check import source_of
from bothost.config.schema import ConfigError
from bothost.rules.match import problems


def check_permissions(config: Config) -> None:
    """Refuse the first rule that cannot work, naming the file and ``permissions[i].KEY``."""
    for i, rule in enumerate(config.permissions):
        for key, problem in problems(rule):
            raise ConfigError(
                f"{source_of(config, 'permissions')}: permissions[{i}].{key}: {problem}"
            )
