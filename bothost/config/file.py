"""Reading one config file into plain data, with bounds on what a file can make us do.

A config file is small and written by hand, so anything else is refused with one line
naming the file: more than :data:`MAX_CONFIG_BYTES` (``--config /dev/zero`` would otherwise
fill memory), bytes that are not UTF-8, YAML that is not valid, nesting deeper than the
parser can follow, and aliases that expand to more than :data:`MAX_VALUES` values or into
themselves. The alias bound is checked on the composed node graph before any Python object
is built, so a "billion laughs" file is refused in milliseconds instead of expanding in
every later walk over the config.

The packaged defaults (``config/bothost.yaml``, read by every command) have a parsed twin,
``config/bothost.yaml.json``: the file's data with the SHA-256 of the bytes it was parsed
from. While the hash matches, the twin is read instead of the YAML, and PyYAML is not even
imported (its import and the parse were a tenth of ``bothost chat -m help``'s
instructions, issue 19); a YAML edited since is parsed as before. ``python -m
bothost.config.file FILE.yaml`` writes a file's twin (tests/core/test_config.py checks that
the packaged one is current).
"""

from __future__ import annotations

import functools
import hashlib
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bothost.config.schema import ConfigError

if TYPE_CHECKING:
    import yaml

MAX_CONFIG_BYTES = 1_000_000  # real configs are a few KB; this bounds a wrong file's cost
MAX_VALUES = 100_000  # values after alias expansion: far above real configs, far below a bomb


class ExpansionError(Exception):
    """The YAML's aliases expand too far, or into themselves, or a mapping repeats a key."""


def twin_path(path: Path) -> Path:
    """Where the parsed twin of the YAML file ``path`` is (see the module docstring)."""
    return path.with_name(path.name + ".json")


def twin_data(path: Path, raw: bytes) -> dict[str, Any] | None:
    """The data of the twin at ``path`` if it was parsed from exactly ``raw``; else None."""
    try:
        twin = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None  # none, or unreadable: the YAML is parsed
    if not isinstance(twin, dict) or twin.get("sha256") != hashlib.sha256(raw).hexdigest():
        return None
    data = twin.get("data")
    return data if isinstance(data, dict) else None


def make_twin(path: Path) -> dict[str, Any]:
    """The parsed twin of the YAML file ``path``; ValueError when its data is not JSON's."""
    raw = path.read_bytes()
    data = read_yaml(path)
    if json.loads(json.dumps(data)) != data:  # dates, non-string keys: only YAML has them
        raise ValueError(f"{path}: its data does not survive JSON; it gets no twin")
    return {"sha256": hashlib.sha256(raw).hexdigest(), "data": data}


# A top-level key that only holds a YAML anchor for `<<: *name` elsewhere starts with this
# (docker compose's convention); it is dropped once read, as no part of bothost owns it
HOLDER_PREFIX = "x-"


def without_holders(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` without its top-level ``x-…`` keys (their anchors are expanded already)."""
    return {k: v for k, v in data.items() if not str(k).startswith(HOLDER_PREFIX)}


def read_yaml(path: Path, twin: bool = False) -> dict[str, Any]:
    """The mapping in ``path``; :class:`ConfigError` naming the file for anything else.
    With ``twin``, its parsed twin's data when that was made from the same bytes."""
    try:
        with path.open("rb") as f:
            raw = f.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(
            f"{path}: larger than {MAX_CONFIG_BYTES} bytes; "
            "a config file is a few KB (is it the right file?)"
        )
    if twin:
        known = twin_data(twin_path(path), raw)
        if known is not None:
            return known
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path}: not valid UTF-8 (byte {exc.start}); save the file as UTF-8"
        ) from exc
    data = parse(text, path)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: (top level): expected a mapping, got {type(data).__name__}")
    return data


def parse(text: str, path: Path) -> Any:
    import yaml  # here: a command whose config is the packaged defaults alone never needs it

    try:
        return yaml.load(text, Loader=bounded_loader())  # noqa: S506 (a SafeLoader subclass)
    except yaml.MarkedYAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {yaml_problem(exc, text)}") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from exc
    except ExpansionError as exc:
        raise ConfigError(f"{path}: {exc}") from exc
    except RecursionError as exc:  # the composer recurses once per nesting level
        raise ConfigError(f"{path}: nested too deeply to be a config file") from exc


def yaml_problem(exc: yaml.MarkedYAMLError, text: str = "") -> str:
    """The parser's complaint as ``line L, column C: problem (context)``; its own text names
    the stream (``in "<unicode string>"``), which means nothing to the person reading. A tab
    where the parser stopped is named: its own words for one ("found character that cannot
    start any token") do not say which character."""
    mark = exc.problem_mark or exc.context_mark
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
    if mark is not None and text:
        lines = text.splitlines()
        line = lines[mark.line] if mark.line < len(lines) else ""
        if line[mark.column : mark.column + 1] == "\t":
            return f"{where}a tab, which YAML does not allow for indenting; indent with spaces"
    context = ""
    if exc.context:
        start = exc.context_mark
        begun = ""
        if start is not None and (
            mark is None or (start.line, start.column) != (mark.line, mark.column)
        ):
            begun = f" that starts on line {start.line + 1}, column {start.column + 1}"
        context = f" ({exc.context}{begun})"
    return f"{where}{exc.problem or 'cannot be parsed'}{context}"


@functools.cache
def bounded_loader() -> Any:
    """PyYAML's safe loader that refuses a document whose aliases expand too far: libyaml's
    parser when PyYAML was built with it (the wheels are), ten times the pure-Python one,
    whose parse of the packaged config alone was a tenth of `bothost chat`'s start (issue
    19). Both are the safe loader; libyaml bounds nesting itself (depth 1000)."""
    import yaml

    base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class BoundedLoader(base):
        def get_single_node(self) -> Any:
            # get_single_node, not compose_document: libyaml's parser composes in C and
            # would never call an override of the latter
            node = super().get_single_node()
            if node is not None:
                check_expansion(node)
            return node

    return BoundedLoader


def children(node: yaml.Node) -> list[yaml.Node]:
    import yaml

    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def check_expansion(root: yaml.Node) -> None:
    """Count values as if every alias were copied out; refuse too many, or a loop.

    Each node's expanded size is computed once (memoised by identity), so the walk is linear
    in the file even when the expansion it measures is exponential.
    """
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()  # on the current path: meeting one again is a loop
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        if finished:
            open_nodes.discard(key)
            size = 1 + sum(sizes[id(child)] for child in children(node))
            if size > MAX_VALUES:
                raise ExpansionError(
                    f"too many values once aliases are expanded (over "
                    f"{MAX_VALUES}); a config needs far fewer"
                )
            sizes[key] = size
            continue
        if key in sizes:
            continue
        if key in open_nodes:
            raise ExpansionError(
                f"line {node.start_mark.line + 1}: an alias refers to a value that contains it"
            )
        open_nodes.add(key)
        check_unique_keys(node)
        stack.append((node, True))
        stack.extend((child, False) for child in children(node) if id(child) not in sizes)


MERGE_TAG = "tag:yaml.org,2002:merge"  # `<<: *anchor` may repeat; it is not a key


def check_unique_keys(node: yaml.Node) -> None:
    """Refuse a mapping that names one key twice: YAML loaders keep the last value silently,
    so the block written first (a whole `llm:` section, say) would be ignored unseen."""
    import yaml

    if not isinstance(node, yaml.MappingNode):
        return
    seen: dict[str, int] = {}
    for key, _ in node.value:
        if not isinstance(key, yaml.ScalarNode) or key.tag == MERGE_TAG:
            continue
        line = key.start_mark.line + 1
        if key.value in seen:
            raise ExpansionError(
                f"line {line}: key {key.value!r} is written twice (first on line "
                f"{seen[key.value]}); YAML would keep only the last, so merge the two"
            )
        seen[key.value] = line


def main(argv: list[str]) -> int:
    """``python -m bothost.config.file FILE.yaml…``: write each file's parsed twin."""
    for name in argv:
        path = Path(name)
        twin_path(path).write_text(json.dumps(make_twin(path), indent=1) + "\n", "utf-8")
        print(f"wrote {twin_path(path)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
