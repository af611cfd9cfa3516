"""The plugin and config docs name what the code has: each hook with its arguments, each
method of the store's connection, each config key.

Cheap on purpose: names only, looked up in the page that owns them, so rewording a page
never breaks these; adding a hook argument, a `Conn` method or a config key without a word
in the docs does.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import re
import typing
from pathlib import Path

from bothost import config as config_module
from bothost import hookspecs
from bothost.config.schema import hints
from bothost.store.conn import Conn

DOCS = Path(__file__).resolve().parents[2] / "docs"
PLUGINS = (DOCS / "plugins.md").read_text("utf-8")
CONFIGURATION = (DOCS / "configuration.md").read_text("utf-8")
HEADING = re.compile(r"^### `(\w+)\(([^)]*)\)`", re.MULTILINE)


def hook_specs() -> dict[str, inspect.Signature]:
    return {
        name: inspect.signature(obj)
        for name, obj in vars(hookspecs).items()
        if inspect.isfunction(obj) and hasattr(obj, "bothost_spec")
    }


def test_each_hook_heading_names_its_arguments_in_order():
    documented = {
        m.group(1): [a.strip() for a in m.group(2).split(",") if a.strip()]
        for m in HEADING.finditer(PLUGINS)
    }
    wrong = {
        name: (documented.get(name), list(signature.parameters))
        for name, signature in hook_specs().items()
        if documented.get(name) != list(signature.parameters)
    }
    assert wrong == {}


# a hook's heading, then its signature as hookspecs.py types it, in a code span of its own
TYPED = re.compile(r"^### `(\w+)\([^)]*\)`\n`(.+)`$", re.MULTILINE)


def typed(signature: str) -> tuple[list[tuple[str, str]], str]:
    """``name(a: T, …) -> R`` as ([(a, T), …], R), each type in ``ast.unparse``'s spelling."""
    function = ast.parse(f"def {signature}: ...").body[0]
    assert isinstance(function, ast.FunctionDef) and function.returns is not None, signature
    params = [(a.arg, ast.unparse(a.annotation)) for a in function.args.args if a.annotation]
    assert len(params) == len(function.args.args), f"an untyped parameter: {signature}"
    return params, ast.unparse(function.returns)


def spelled(annotation: str) -> str:
    return ast.unparse(ast.parse(annotation, mode="eval"))


def test_each_hook_documents_its_typed_signature():
    """What a plugin author reads under a heading is what the code declares: every
    parameter's type and the return type, as hookspecs.py writes them (datasette's check of
    its documented hook signatures, with the types)."""
    documented = {m.group(1): typed(m.group(2)) for m in TYPED.finditer(PLUGINS)}
    code = {
        name: (
            [(p.name, spelled(p.annotation)) for p in signature.parameters.values()],
            spelled(signature.return_annotation),
        )
        for name, signature in hook_specs().items()
    }
    wrong = {
        name: (documented.get(name), want)
        for name, want in code.items()
        if documented.get(name) != want
    }
    assert wrong == {}


def test_a_wrong_documented_type_is_seen():
    """The check above compares types, not just names."""
    assert typed("startup(host: HostApi) -> None") == ([("host", "HostApi")], "None")
    assert typed("startup(host: Any) -> None") != typed("startup(host: HostApi) -> None")


def test_each_documented_hook_exists():
    """The other way round: a heading for a hook the code has not (renamed, misspelled,
    removed) would send a plugin author to write an implementation nothing calls."""
    documented = {m.group(1) for m in HEADING.finditer(PLUGINS)}
    assert len(documented) >= 10  # the headings are found at all
    assert documented - set(hook_specs()) == set()


def test_each_method_of_the_store_connection_is_documented():
    public = {name for name in dir(Conn) if not name.startswith("_")} | set(Conn.__annotations__)
    missing = sorted(name for name in public if f"db.{name}" not in PLUGINS)
    assert missing == []


def config_keys(cls: type, path: str = "") -> list[str]:
    """Every key of the core config, as dotted paths (a dict's values under NAME)."""
    keys = []
    for name, hint in hints(cls).items():
        key = f"{path}.{name}" if path else name
        keys.append(key)
        for inner in nested(hint):
            keys += config_keys(inner, f"{key}.NAME" if is_mapping(hint) else key)
    return keys


def nested(hint: typing.Any) -> list[type]:
    """The config dataclasses a field's type holds (in a list, dict or union)."""
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return [hint]
    return [inner for arg in typing.get_args(hint) for inner in nested(arg)]


def is_mapping(hint: typing.Any) -> bool:
    return typing.get_origin(hint) is dict or any(is_mapping(a) for a in typing.get_args(hint))


def documented_as(name: str) -> str:
    """A YAML key ``name:`` (in an example or a flow mapping), or code ending in it."""
    return rf"(^|[\s{{,])\s*{re.escape(name)}:|`[\w.]*\b{re.escape(name)}(`|: |\.)"


def test_each_core_config_key_is_in_the_configuration_page():
    """Each key's own name appears in docs/configuration.md as a key (``name:``) or in code
    (```name```): the page is written by section, so the leaf name is what is looked for."""
    keys = config_keys(config_module.Config)
    assert len(keys) > 40  # the walk found the tree
    missing = [
        key for key in keys if not re.search(documented_as(key.rpartition(".")[2]), CONFIGURATION)
    ]
    assert missing == []
