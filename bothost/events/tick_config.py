"""The ``tick`` section's check at load: its rules can match and its timetable can be used.

The config package reads ``tick`` into :class:`~bothost.config.TickConfig` and checks each
key's type; what a value means (a match key, a cron, a zone, quiet hours) is this package's,
so it is checked here, with the same code that uses it, and registered with the config's
loader by the host (:data:`bothost.host.config_load.SECTION_CHECKS`). A typo is then a config
error naming the file and key path at load, not an exit of ``run`` or a rule that never fits.
"""

from __future__ import annotations

from bothost.config import Config
from bothost.config.check import source_of
from bothost.config.schema import ConfigError
from bothost.events.schedule import Schedule, ScheduleError
from bothost.events.triage import MatchError, check_match


def check_tick(config: Config) -> None:
    """Refuse a ``tick.rules`` match key no event has, then a timetable the ticker refuses."""
    check_rule_matches(config)
    check_timetable(config)


def check_rule_matches(config: Config) -> None:
    """A rule that can never match is a mistake the user should hear about at load (the
    ticker checks ``unless`` and ``within`` too: :func:`bothost.events.triage.check_rules`)."""
    for i, rule in enumerate(config.tick.rules):
        try:
            check_match(rule.match, f"tick.rules[{i}].match")
        except MatchError as exc:
            raise ConfigError(f"{source_of(config, 'tick', 'rules')}: {exc}") from None


def check_timetable(config: Config) -> None:
    """The cron schedules, zone and quiet hours: the checks the running ticker makes (croniter
    is imported only when schedules are set, as the ticker does)."""
    try:
        Schedule(config.tick)
    except ScheduleError as exc:
        where = source_of(config, "tick", exc.key.split("[")[0])
        raise ConfigError(f"{where}: {exc}") from None
