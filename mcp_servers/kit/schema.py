"""JSON Schema for a tool's input, derived from a Python function's signature.

The kit's one source of truth for a tool's parameters is the function itself: type hints
give each property's schema, defaults make a parameter optional, and the Google-style
`Args:` section of the docstring gives each property's description. The same module checks
incoming arguments against that signature, so a model that sends a wrong type gets a
readable tool error instead of a Python traceback.
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, get_args, get_origin

CONTEXT_PARAM = "ctx"

_SCALARS: dict[type, str] = {str: "string", bool: "boolean", int: "integer", float: "number"}
_ARGS_HEADER = re.compile(r"^\s*(Args|Arguments|Parameters):\s*$")
_SECTION_HEADER = re.compile(r"^\s*[A-Z][A-Za-z ]*:\s*$")
_ARG_LINE = re.compile(r"^\s*\*{0,2}(\w+)\s*(\([^)]*\))?\s*:\s*(.*)$")


def _strip_optional(hint: Any) -> tuple[Any, bool]:
    """`X | None` -> (X, True); anything else -> (hint, False)."""
    origin = get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        members = [a for a in get_args(hint) if a is not type(None)]
        if len(members) < len(get_args(hint)):
            if len(members) == 1:
                return members[0], True
            return typing.Union[tuple(members)], True  # noqa: UP007 - built at run time
    return hint, False


def schema_for(hint: Any) -> dict[str, Any]:
    """The JSON Schema of one Python type hint (unknown hints give the empty schema)."""
    hint, _ = _strip_optional(hint)
    origin = get_origin(hint)
    if origin is typing.Annotated:
        base, *extra = get_args(hint)
        described = schema_for(base)
        for item in extra:
            if isinstance(item, str):
                described["description"] = item
        return described
    if hint in _SCALARS:
        return {"type": _SCALARS[hint]}
    if origin is Literal:
        values = list(get_args(hint))
        schema: dict[str, Any] = {"enum": values}
        kinds = {_SCALARS.get(type(v)) for v in values}
        if len(kinds) == 1 and None not in kinds:
            schema["type"] = kinds.pop()
        return schema
    if hint in (list, tuple, set) or origin in (list, tuple, set):
        item_args = get_args(hint)
        schema = {"type": "array"}
        if item_args and item_args[0] is not Ellipsis:
            schema["items"] = schema_for(item_args[0])
        return schema
    if hint is dict or origin is dict:
        schema = {"type": "object"}
        dict_args = get_args(hint)
        if len(dict_args) == 2 and dict_args[1] is not Any:
            schema["additionalProperties"] = schema_for(dict_args[1])
        return schema
    if origin in (typing.Union, types.UnionType):
        return {"anyOf": [schema_for(member) for member in get_args(hint)]}
    return {}


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """(description, {param: description}) from a Google-style docstring.

    The description is everything before the first section header (`Args:`, `Returns:`…),
    joined into paragraphs; `Args:` entries may continue on more-indented lines.
    """
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    description: list[str] = []
    params: dict[str, str] = {}
    current: str | None = None
    in_args = False
    seen_section = False
    for line in lines:
        if _ARGS_HEADER.match(line):
            in_args, seen_section, current = True, True, None
            continue
        if _SECTION_HEADER.match(line) and not line.startswith((" ", "\t")):
            in_args, seen_section, current = False, True, None
            continue
        if in_args:
            match = _ARG_LINE.match(line)
            if match and len(line) - len(line.lstrip()) <= 4:
                current = match.group(1)
                params[current] = match.group(3).strip()
            elif current and line.strip():
                params[current] = f"{params[current]} {line.strip()}".strip()
        elif not seen_section:
            description.append(line)
    text = "\n".join(description).strip()
    paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text) if p.strip()]
    return "\n\n".join(paragraphs), params


def input_schema(fn: Callable[..., Any], param_docs: dict[str, str]) -> dict[str, Any]:
    """The `inputSchema` object of a tool function; `ctx` is injected, never a property."""
    hints = _type_hints(fn)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, param in inspect.signature(fn).parameters.items():
        if name == CONTEXT_PARAM or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        prop = schema_for(hints.get(name, Any))
        if name in param_docs and "description" not in prop:
            prop["description"] = param_docs[name]
        if param.default is inspect.Parameter.empty:
            required.append(name)
        elif param.default is not None and _is_json(param.default):
            prop["default"] = param.default
        properties[name] = prop
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def _type_hints(fn: Callable[..., Any]) -> dict[str, Any]:
    """Resolved hints; a name that cannot be resolved (a TYPE_CHECKING-only import,
    typically of `Context`) costs only that parameter's schema, not the whole tool."""
    try:
        return typing.get_type_hints(fn, include_extras=True)
    except (NameError, TypeError):
        pass
    hints: dict[str, Any] = {}
    namespace = getattr(fn, "__globals__", {})
    for name, annotation in getattr(fn, "__annotations__", {}).items():
        if isinstance(annotation, str):
            try:
                annotation = eval(annotation, namespace)  # noqa: S307 - the function's own hint
            except Exception:
                continue
        hints[name] = annotation
    return hints


def _is_json(value: Any) -> bool:
    return isinstance(value, str | int | float | bool | list | dict)


def check_arguments(schema: dict[str, Any], arguments: dict[str, Any]) -> str | None:
    """A one-line complaint when `arguments` do not fit `schema`, else None."""
    properties = schema.get("properties", {})
    for name in schema.get("required", []):
        if arguments.get(name) is None:
            return f"missing required argument '{name}'"
    for name, value in arguments.items():
        if name not in properties:
            expected = ", ".join(properties) or "none"
            return f"unexpected argument '{name}' (arguments: {expected})"
        problem = _check_value(properties[name], value)
        if problem:
            return f"argument '{name}': {problem}"
    return None


def _check_value(schema: dict[str, Any], value: Any) -> str | None:
    if value is None:
        return None
    if "enum" in schema and value not in schema["enum"]:
        return f"must be one of {', '.join(map(repr, schema['enum']))}, not {value!r}"
    if "anyOf" in schema:
        if all(_check_value(option, value) for option in schema["anyOf"]):
            return f"unexpected value {value!r}"
        return None
    kind = schema.get("type")
    ok = {
        None: True,
        "string": isinstance(value, str),
        "boolean": isinstance(value, bool),
        "integer": isinstance(value, int) and not isinstance(value, bool),
        "number": isinstance(value, int | float) and not isinstance(value, bool),
        "array": isinstance(value, list),
        "object": isinstance(value, dict),
    }.get(kind, True)
    if not ok:
        return f"expected {kind}, got {type(value).__name__} {value!r:.40}"
    if kind == "array" and "items" in schema:
        for index, item in enumerate(value):
            problem = _check_value(schema["items"], item)
            if problem:
                return f"item {index}: {problem}"
    return None
