import inspect
from pathlib import Path

from bothost import hookspecs

DOCS = Path(__file__).resolve().parents[2] / "docs" / "plugins.md"


def specs():
    return [
        name
        for name, obj in vars(hookspecs).items()
        if inspect.isfunction(obj) and hasattr(obj, "bothost_spec")
    ]


def test_every_hook_is_documented_in_docs():
    text = DOCS.read_text()
    missing = [name for name in specs() if f"### `{name}(" not in text]
    assert missing == []


def test_every_hook_has_a_docstring_saying_sync_or_async():
    for name in specs():
        doc = inspect.getdoc(getattr(hookspecs, name)) or ""
        assert "ync" in doc, name  # "Sync." or "May be async."


def test_the_contract_hooks_exist():
    assert {
        "register_platforms",
        "register_llm_providers",
        "register_tools",
        "register_routes",
        "register_commands",
        "register_migrations",
        "startup",
        "shutdown",
        "on_message",
        "event_received",
        "on_briefing",
        "system_prompt",
        "approve_tool_call",
    } <= set(specs())
