"""Plugin config sections a running plugin takes live, for :mod:`bothost.host.reload`.

Plugins own their sections (``register_config``), so only the plugin knows which of its keys
it can change while running and what follows from them (Slack's access lists become sets it
checks each message against). A running plugin says so through
:meth:`bothost.api.HostApi.take_config_live`: the section's path, the top-level keys it
takes, and a callback. On an edit that changes any of those keys, the running config's
section becomes the old one with those keys from the file, and the callback gets it; the
other changed keys of the section stay as they started and are "restart needed". A
callback that raises leaves the section as it was, so its keys are reported as waiting.
"""

from __future__ import annotations

import dataclasses
import inspect
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bothost.config.sections import PLATFORMS, Platforms

if TYPE_CHECKING:
    from bothost.config import Config

logger = logging.getLogger(__name__)

Apply = Callable[[Any], Any]  # the new section → None, or an awaitable of it


@dataclass(frozen=True)
class LiveSection:
    keys: frozenset[str]
    apply: Apply


class LiveSections:
    """What the running plugins take live, by section path."""

    def __init__(self) -> None:
        self.by_path: dict[str, LiveSection] = {}

    def add(self, path: str, keys: Iterable[str], apply: Apply) -> None:
        """Take ``keys`` of the section at ``path`` live (a second call for it replaces it)."""
        self.by_path[path] = LiveSection(frozenset(keys), apply)

    async def apply(self, running: Config, new: Config) -> list[str]:
        """Bring the live keys of each changed section from ``new`` into ``running`` (a
        config the host already runs: its sections are replaced, never changed in place);
        the paths of the sections applied."""
        applied = []
        for path, live in self.by_path.items():
            try:
                old_section: Any = running.section(path)
                new_section: Any = new.section(path)
            except KeyError:
                continue  # its plugin's section is not loaded (a test's host, say)
            taken = {
                f.name: getattr(new_section, f.name)
                for f in dataclasses.fields(old_section)
                if f.name in live.keys
                and getattr(old_section, f.name) != getattr(new_section, f.name)
            }
            if not taken:
                continue
            section = dataclasses.replace(old_section, **taken)
            try:
                done = live.apply(section)
                if inspect.isawaitable(done):
                    await done
            except Exception:  # boundary: the plugin keeps its section; the keys wait
                logger.exception("%s did not take its new %s", path, ", ".join(sorted(taken)))
                continue
            put(running, path, section)
            applied.append(path)
        return applied


def put(config: Config, path: str, section: Any) -> None:
    """Make ``section`` the one at ``path``, in copies of the section tables (the running
    config shares them with the one it replaced)."""
    keys = path.split(".")
    if keys[0] == PLATFORMS:
        config.platforms = Platforms(config.platforms)
        config.platforms[keys[1]] = section
    else:
        config.sections = dict(config.sections)
        config.sections[path] = section
