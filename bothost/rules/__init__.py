"""Permission rules: which tool calls run, ask or are refused, before the default applies.

Rules come from config (``permissions``) and from the ``permission_rules`` table (added by
admins at run time, and the answers people asked to remember). :mod:`~bothost.rules.match`
holds what a rule is and how it matches a call, :mod:`~bothost.rules.store` the table, and
:mod:`~bothost.agent.explain` what ``bothost rules test`` prints. The decision itself, with the
policy hook and the capability-based default, is :mod:`bothost.agent.approvals`.
"""
