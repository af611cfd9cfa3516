"""Built-in tools every session has: ``activate_tools`` and ``read_output``."""

from bothost.plugins.builtin_tools.tools import activate_tools, read_output

from bothost.hookspecs import hookimpl


@hookimpl
def register_tools(register):
    register(activate_tools)
    register(read_output)
