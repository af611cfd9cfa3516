"""The console platform: talk to the bot in the terminal that runs ``bothost run``."""

from bothost.hookspecs import hookimpl
from bothost.plugins.console.platform import ConsolePlatform


@hookimpl
def register_platforms(register):
    register(ConsolePlatform())
