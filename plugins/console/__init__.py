"""The console platform: talk to the bot in the terminal that runs ``bothost run``."""

from bothost.plugins.console.config import ConsoleConfig
from bothost.plugins.console.platform import ConsolePlatform

from bothost.hookspecs import hookimpl


@hookimpl
def register_config(register):
    register("platforms.console", ConsoleConfig)


@hookimpl
def register_platforms(register):
    register(ConsolePlatform())
