"""Input schemas from function signatures and docstrings, and argument checks."""

from __future__ import annotations

from typing import Annotated, Literal

from bothost.mcp_servers.kit import Context
from bothost.mcp_servers.kit.schema import check_arguments, input_schema, parse_docstring


async def sample(
    path: str,
    lines: list[int],
    mode: Literal["fast", "safe"] = "safe",
    limit: int | None = None,
    ratio: float = 0.5,
    tags: dict[str, str] | None = None,
    note: Annotated[str, "A free note."] = "",
    ctx: Context | None = None,
) -> str:
    """Read part of a file.

    Longer explanation that spans
    two lines.

    Args:
        path: Absolute path of the file.
        lines (list[int]): Line numbers to read,
            one-based.
        mode: How careful to be.

    Returns:
        The text.
    """
    return ""


def test_schema_from_hints_defaults_and_docstring():
    description, params = parse_docstring(sample.__doc__)
    assert description == "Read part of a file.\n\nLonger explanation that spans two lines."
    assert params["lines"] == "Line numbers to read, one-based."
    schema = input_schema(sample, params)
    assert schema["required"] == ["path", "lines"]
    props = schema["properties"]
    assert "ctx" not in props
    assert props["path"] == {"type": "string", "description": "Absolute path of the file."}
    assert props["lines"]["items"] == {"type": "integer"}
    assert props["mode"] == {
        "enum": ["fast", "safe"],
        "type": "string",
        "description": "How careful to be.",
        "default": "safe",
    }
    assert props["limit"] == {"type": "integer"}
    assert props["ratio"] == {"type": "number", "default": 0.5}
    assert props["tags"] == {"type": "object", "additionalProperties": {"type": "string"}}
    assert props["note"] == {"type": "string", "description": "A free note.", "default": ""}


def test_argument_checks_explain_the_problem():
    schema = input_schema(sample, {})
    assert check_arguments(schema, {"path": "/a", "lines": [1, 2]}) is None
    assert check_arguments(schema, {"path": "/a", "lines": [1], "limit": None}) is None
    assert check_arguments(schema, {"path": "/a", "lines": [1], "ratio": 2}) is None
    assert check_arguments(schema, {"lines": [1]}) == "missing required argument 'path'"
    assert "unexpected argument 'colour'" in check_arguments(
        schema, {"path": "/a", "lines": [], "colour": "red"}
    )
    assert check_arguments(schema, {"path": "/a", "lines": ["x"]}) == (
        "argument 'lines': item 0: expected integer, got str 'x'"
    )
    assert "must be one of 'fast', 'safe'" in check_arguments(
        schema, {"path": "/a", "lines": [], "mode": "reckless"}
    )
    assert "expected integer" in check_arguments(schema, {"path": "/a", "lines": [], "limit": True})


def test_unresolvable_hint_costs_only_that_parameter():
    def tool(name: str, ctx: NotImportedContext = None, extra: Unknown = None):  # noqa: F821
        """Tool."""

    schema = input_schema(tool, {})
    assert schema["properties"] == {"name": {"type": "string"}, "extra": {}}
