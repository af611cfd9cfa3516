"""Checking a model's tool arguments against the tool's JSON schema, before the tool runs.

A deliberately small subset of JSON Schema — the parts tool schemas use: ``type``,
``required``, ``properties``, ``additionalProperties: false``, ``enum``, ``items``,
``anyOf`` — so the model gets a precise message ("groups: expected an array") instead of a
tool crashing on a bad value.
"""

from __future__ import annotations

from typing import Any

TYPES: dict[str, type | tuple[type, ...]] = {
    "string": str,
    "integer": int,
    "number": (int, float),
    "boolean": bool,
    "array": list,
    "object": dict,
    "null": type(None),
}


def validate(schema: dict[str, Any], value: Any, path: str = "") -> str | None:
    """The first problem found, or None."""
    if not isinstance(schema, dict):
        return None
    if "anyOf" in schema:
        if all(validate(s, value, path) for s in schema["anyOf"]):
            return f"{path or 'value'}: matches none of the allowed shapes"
        return None
    expected = schema.get("type")
    if expected:
        kinds = expected if isinstance(expected, list) else [expected]
        if not any(type_ok(k, value) for k in kinds):
            return f"{path or 'arguments'}: expected {' or '.join(kinds)}, got {kind(value)}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{path or 'value'}: expected one of {schema['enum']}, got {value!r}"
    if isinstance(value, dict):
        for name in schema.get("required", []):
            if name not in value:
                return f"{join(path, name)}: required"
        known = schema.get("properties") or {}
        if schema.get("additionalProperties") is False:
            for name in value:
                if name not in known:
                    expected = ", ".join(known) or "no arguments"
                    return f"{join(path, name)}: not a parameter (expected {expected})"
        for name, sub in known.items():
            if name in value:
                problem = validate(sub, value[name], join(path, name))
                if problem:
                    return problem
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            problem = validate(schema["items"], item, f"{path}[{i}]")
            if problem:
                return problem
    return None


def type_ok(name: str, value: Any) -> bool:
    py = TYPES.get(name)
    if py is None:
        return True
    if name in ("integer", "number") and isinstance(value, bool):
        return False
    if name == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, py)


def kind(value: Any) -> str:
    for name, py in TYPES.items():
        if (
            name not in ("number",)
            and isinstance(value, py)
            and not (name == "integer" and isinstance(value, bool))
        ):
            return name
    return type(value).__name__


def join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name
