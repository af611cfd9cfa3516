"""The running host: the :class:`~bothost.host.host.Host` (``host``), what connects it to its
subsystems (``wiring``), runs it (``serve``, ``supervisor``, ``heap``, ``logs``), reloads its config
(``reload``, ``reload_request``), checks a home (``doctor``, ``probes``) and dry-runs a tick
(``dryrun``).
"""
