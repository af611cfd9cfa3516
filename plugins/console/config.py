"""The ``platforms.console`` config section, declared by this plugin through ``register_config``."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class ConsoleConfig:
    enabled: bool = True  # the platform still starts only when stdin is a terminal
