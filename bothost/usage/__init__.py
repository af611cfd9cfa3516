"""Model usage: what every provider call cost, who it was for, and the daily budgets.

Every call to a model provider goes through :class:`~bothost.usage.meter.Metered`, which
the host wraps around the configured provider: it refuses the call when a budget is spent
(:mod:`bothost.usage.budget`), and records the tokens the provider reported — or, when it
reported none, our estimate, marked as one — in the ``llm_usage`` table. Whose call it was
(a person's turn, the tick agent) comes from :mod:`bothost.usage.attribution`, set by the
turn and the tick around the code that calls the model, so a call made anywhere inside a
turn (compaction included) is that turn's. :mod:`bothost.usage.report` reads it back for
``bothost usage``, ``/metrics`` and the dashboard, turning tokens into cost with the
optional ``usage.prices`` table. Days are UTC days.
"""
