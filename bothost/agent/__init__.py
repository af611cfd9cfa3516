"""Agent turns: one message in, LLM rounds with tool calls, one reply out.

The turn loop (``turn``) asks the provider, runs the tools it calls through the
``registry`` (native tools and MCP tool sources), and applies the safety rules on the way:
``approvals`` for destructive or chosen-egress tools and the lethal-trifecta ``interlock``.
Modules are imported by name (``bothost.agent.turn``…); this package re-exports nothing.
"""
