"""A server's tool input schema as the model gets it: its structure kept, its words marked.

A JSON schema carries two kinds of content. Structure — types, property names, ``required``,
``enum``, bounds, ``$ref`` — is what the model must follow to call the tool, and what the
turn checks the arguments against (:mod:`bothost.mcp.validate`). Prose — ``description``,
``title``, ``$comment``, ``examples``, enum names — is a server's writing, as able to carry
instructions as its tool description. Prose has no place inside the schema that could be
marked (a schema keyword is read as a plain string by both providers), so :func:`split`
takes it out: the schema keeps only keywords it knows to be structure, at every depth
(properties, items, ``anyOf``/``oneOf``/``allOf``, ``$defs``, …), and each piece of prose
becomes one line, named by where it was, that the tool's description carries inside its
untrusted-content wrapper (:mod:`bothost.agent.mcp_tools`). A keyword the walk does not
know is dropped, not kept: what a server might write there is unbounded.

What stays unmarked is what the model has to send back as written: property names, enum and
``const`` values, defaults and patterns.
"""

from __future__ import annotations

import json
from typing import Any

# keywords whose value is data the model needs as written (no schema inside)
VALUES = frozenset(
    {
        "type", "required", "enum", "const", "default", "format", "pattern",
        "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
        "minLength", "maxLength", "minItems", "maxItems", "uniqueItems",
        "minProperties", "maxProperties", "minContains", "maxContains",
        "dependentRequired", "$ref", "nullable", "readOnly", "writeOnly", "deprecated",
        "contentEncoding", "contentMediaType",
    }
)  # fmt: skip
# keywords whose value is one schema, a list of schemas, or a map of name -> schema
ONE = frozenset(
    {
        "items", "additionalProperties", "not", "if", "then", "else", "contains",
        "propertyNames", "unevaluatedProperties", "unevaluatedItems", "additionalItems",
    }
)  # fmt: skip
LISTS = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})
MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})
# keywords that are prose for a reader: moved out of the schema into the marked notes
PROSE = (
    "title", "description", "markdownDescription", "$comment", "examples",
    "enumNames", "x-enumNames", "enumDescriptions", "x-enumDescriptions",
)  # fmt: skip
MAX_DEPTH = 24  # schema nesting walked; real tool schemas are under 6 deep, deeper is "any"
MAX_NOTE = 300  # characters of one parameter's note; real ones are under 200
MAX_NOTES = 3000  # characters of all of a tool's parameter notes together


def flat(value: Any) -> str:
    """One line of prose: a string as written, anything else (examples, names) as JSON."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= MAX_NOTE else text[: MAX_NOTE - 1] + "…"


def split(schema: Any) -> tuple[Any, list[str]]:
    """`schema` with its prose taken out, and that prose as ``where: text`` lines."""
    notes: list[str] = []
    return walk(schema, "", notes, 0), notes


def walk(schema: Any, where: str, notes: list[str], depth: int) -> Any:
    if not isinstance(schema, dict):
        return schema if isinstance(schema, bool) else {}  # a boolean schema is structure
    if depth > MAX_DEPTH:
        return {}
    for keyword in PROSE:
        if keyword in schema:
            label = "" if keyword in ("title", "description") else f"{keyword} "
            notes.append(f"{where or '(arguments)'}: {label}{flat(schema[keyword])}")
    out: dict[str, Any] = {}
    for keyword, value in schema.items():
        if keyword in VALUES:
            out[keyword] = value
        elif keyword in LISTS | {"items"} and isinstance(value, list):  # old tuple "items"
            out[keyword] = [
                walk(v, join(where, f"{keyword}[{i}]"), notes, depth + 1)
                for i, v in enumerate(value)
            ]
        elif keyword in ONE:
            inner = f"{where}[]" if keyword in ("items", "contains") else join(where, keyword)
            out[keyword] = walk(value, inner, notes, depth + 1)
        elif keyword in MAPS and isinstance(value, dict):
            prefix = "" if keyword == "properties" else f"{keyword}."
            out[keyword] = {
                str(name): walk(v, join(where, prefix + str(name)), notes, depth + 1)
                for name, v in value.items()
            }
    return out


def join(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name


def notes_text(notes: list[str]) -> str:
    """The notes as the description's ``Parameters:`` section, bounded; "" for none."""
    if not notes:
        return ""
    lines: list[str] = []
    used = 0
    for note in notes:
        if used + len(note) > MAX_NOTES:
            lines.append(f"({len(notes) - len(lines)} more parameter notes cut)")
            break
        lines.append(f"- {note}")
        used += len(note)
    return "Parameters:\n" + "\n".join(lines)
