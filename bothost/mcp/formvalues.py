"""A person's answer to an elicitation form, checked against the server's requested schema.

Platforms collect what a person typed, mostly as text (a web form, a terminal prompt);
the spec's requested schema is flat, of primitives: ``string`` (``enum`` or ``oneOf``
``const`` choices, ``minLength``/``maxLength``), ``number``/``integer``
(``minimum``/``maximum``), ``boolean``, and multi-select ``array`` of strings (``items``
``enum`` or ``anyOf`` ``const``, ``minItems``/``maxItems``), plus ``required``. Text is
turned into the type a field asks for ("42" → 42, "yes" → true); what cannot be, or breaks
a bound, is a problem naming the field, so the server is never sent an answer its schema
refuses. An empty text for a field that is not text means the field was left out.
"""

from __future__ import annotations

import math
from typing import Any

TRUE = ("true", "yes", "y", "1", "on")
FALSE = ("false", "no", "n", "0", "off")


def checked(
    schema: dict[str, Any], values: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, str]]:
    """`values` turned into the types `schema` asks for, and the problem of each field that
    does not fit ({"age": "expected a whole number"}); fields the schema does not name are kept."""
    properties = schema.get("properties") or {}
    result: dict[str, Any] = {}
    problems: dict[str, str] = {}
    for name, value in values.items():
        prop = properties.get(name)
        if not isinstance(prop, dict):
            result[name] = value
            continue
        if value is None or (value == "" and prop.get("type") not in (None, "string")):
            continue  # left out: a default or the required check decides
        typed, problem = field(prop, value)
        if problem:
            problems[name] = problem
        else:
            result[name] = typed
    return result, problems


def missing(schema: dict[str, Any], values: dict[str, Any]) -> dict[str, str]:
    """The required fields `values` lacks, as problems."""
    required = schema.get("required") or []
    return {name: "required" for name in required if isinstance(name, str) and name not in values}


def field(prop: dict[str, Any], value: Any) -> tuple[Any, str | None]:
    """One value as the type `prop` asks for, or why it cannot be."""
    kind = prop.get("type")
    if kind == "boolean":
        return boolean(value)
    if kind in ("integer", "number"):
        return number(prop, value, whole=kind == "integer")
    if kind == "array":
        return choices(prop, value)
    if kind == "string":
        return text(prop, value)
    return value, None  # a type the spec does not define: the server's to judge


def boolean(value: Any) -> tuple[Any, str | None]:
    if isinstance(value, bool):
        return value, None
    said = str(value).strip().lower()
    if said in TRUE or said in FALSE:
        return said in TRUE, None
    return None, "expected yes or no"


def number(prop: dict[str, Any], value: Any, whole: bool) -> tuple[Any, str | None]:
    wanted = "a whole number" if whole else "a number"
    got: float | int | None = None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        got = value
    elif isinstance(value, str):
        try:
            got = int(value.strip()) if whole else float(value.strip())
        except ValueError:
            got = None
    if got is None or not math.isfinite(got) or (whole and got != int(got)):
        return None, f"expected {wanted}"
    got = int(got) if whole else got
    low, high = prop.get("minimum"), prop.get("maximum")
    if isinstance(low, (int, float)) and got < low:
        return None, f"at least {low}"
    if isinstance(high, (int, float)) and got > high:
        return None, f"at most {high}"
    return got, None


def text(prop: dict[str, Any], value: Any) -> tuple[Any, str | None]:
    if not isinstance(value, str):
        return None, "expected text"
    allowed = options(prop)
    if allowed is not None and value not in allowed:
        return None, f"expected one of {', '.join(map(shown, allowed))}"
    low, high = prop.get("minLength"), prop.get("maxLength")
    if isinstance(low, int) and len(value) < low:
        return None, f"at least {low} characters"
    if isinstance(high, int) and len(value) > high:
        return None, f"at most {high} characters"
    return value, None


def choices(prop: dict[str, Any], value: Any) -> tuple[Any, str | None]:
    picked = [value] if isinstance(value, str) else value
    if not isinstance(picked, list) or not all(isinstance(item, str) for item in picked):
        return None, "expected a list of choices"
    items = prop.get("items")
    allowed = options(items) if isinstance(items, dict) else None
    wrong = [item for item in picked if allowed is not None and item not in allowed]
    if wrong:
        return (
            None,
            f"expected choices of {', '.join(map(shown, allowed or []))}",
        )
    low, high = prop.get("minItems"), prop.get("maxItems")
    if isinstance(low, int) and len(picked) < low:
        return None, f"choose at least {low}"
    if isinstance(high, int) and len(picked) > high:
        return None, f"choose at most {high}"
    return picked, None


def options(prop: dict[str, Any]) -> list[str] | None:
    """The values a string may take (``enum``, or the ``const`` of each ``oneOf``/``anyOf``
    entry, the titled form); None when any text will do."""
    if isinstance(prop.get("enum"), list):
        return [str(item) for item in prop["enum"]]
    for key in ("oneOf", "anyOf"):
        entries = prop.get(key)
        if isinstance(entries, list):
            return [str(e["const"]) for e in entries if isinstance(e, dict) and "const" in e]
    return None


def shown(value: str) -> str:
    """A choice the server offered, quoted and short, in a problem. What the person typed is
    never quoted back: it may be a secret, and problems are logged and shown in a channel."""
    said = repr(value)
    return said if len(said) <= 40 else said[:37] + "..."
