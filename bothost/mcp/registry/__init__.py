"""The MCP Registry: searching it and installing its entries (``bothost mcp search`` and
``bothost mcp install REGISTRY_NAME``).

:mod:`~bothost.mcp.registry.client` reads the registry's HTTP API, :mod:`.entries` reads
its ``server.json`` entries leniently and bounded, :mod:`.plan` decides what an entry means
on this machine and :mod:`.installer` installs it through the ordinary ``mcp install``.
"""
