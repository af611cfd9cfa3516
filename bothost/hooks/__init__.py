"""The plugin machinery: finding plugins (``discovery``), installing plugin packages
(``packages``), calling runtime hooks (``call``) and collecting what plugins register at
startup (``startup``). The hook specifications stay public in :mod:`bothost.hookspecs`.
"""
