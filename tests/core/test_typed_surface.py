"""The plugin surface is typed: no ``Any`` in a public signature of ``bothost/hookspecs.py``
or ``bothost/api.py`` (or in a type alias they export) except those named here, each with
why ``Any`` is the truth there.

Read from the source (annotations are strings under ``from __future__ import annotations``),
so a string annotation that names ``Any`` counts too.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MODULES = ("bothost/hookspecs.py", "bothost/api.py")
JSON = "JSON by contract"

# (module, where, what) -> why Any is right there
ALLOWED = {
    ("hookspecs", "OfflineCommand", "value"): f"a tool call's arguments: {JSON}",
    ("hookspecs", "RegisterTool.__call__", "schema"): f"a JSON schema: {JSON}",
    ("hookspecs", "RegisterTool.__call__", "egress_of"): f"reads a tool call's arguments: {JSON}",
    ("api", "Answer", "value"): f"a form's fields (MCP elicitation): {JSON}",
    ("api", "Notice", "data"): f"a notice's data: {JSON}",
    ("api", "Respond", "value"): f"an answer between hosts: {JSON}",
    ("api", "CrossHost.publish", "data"): f"a notice's data: {JSON}",
    ("api", "CrossHost.ask", "data"): f"a question to the other hosts: {JSON}",
    ("api", "CrossHost.ask", "return"): f"the other hosts' answers: {JSON}",
    ("api", "HostApi.ingest_event", "payload"): f"an event's payload: {JSON}",
    ("api", "HostApi.ingest_webhook_event", "payload"): f"an event's payload: {JSON}",
    ("api", "HostApi.explain_tool_call", "arguments"): f"a tool call's arguments: {JSON}",
    ("api", "HostApi.explain_tool_call", "return"): f"what `rules test --json` prints: {JSON}",
    ("api", "HostApi.schedules", "return"): f"jobs as `schedule list --json` prints them: {JSON}",
    (
        "api",
        "HostApi.cancel_schedule",
        "return",
    ): f"a job as `schedule list --json` prints it: {JSON}",
    ("api", "HostApi.take_config_live", "apply"): (
        "the plugin's own config section: a dataclass of the plugin's, which core cannot name"
    ),
    ("api", "app_key", "return"): (
        "one of three AppKeys of different value types; HOST, DIRECT_ROUTES and "
        "ANSWER_HEADERS are typed one by one for mypy"
    ),
}


def names_any(node: ast.AST | None) -> bool:
    """Whether an annotation (or alias value) mentions ``Any``, in a string too."""
    if node is None:
        return False
    for inner in ast.walk(node):
        if isinstance(inner, ast.Name) and inner.id == "Any":
            return True
        if isinstance(inner, ast.Attribute) and inner.attr == "Any":
            return True
        if isinstance(inner, ast.Constant) and isinstance(inner.value, str):
            try:
                parsed = ast.parse(inner.value, mode="eval")
            except SyntaxError:
                continue
            if names_any(parsed):
                return True
    return False


def public(name: str) -> bool:
    return not name.startswith("_") or name == "__call__"


def function_uses(where: str, function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple]:
    args = function.args
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    found = [(where, a.arg) for a in every if a is not None and names_any(a.annotation)]
    if names_any(function.returns):
        found.append((where, "return"))
    return found


def uses_of_any(tree: ast.Module) -> list[tuple]:
    """(where, what) of every Any in a public signature, class field or alias."""
    found: list[tuple] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and public(node.name):
            found += function_uses(node.name, node)
        elif isinstance(node, ast.ClassDef) and public(node.name):
            for member in node.body:
                if isinstance(member, ast.FunctionDef | ast.AsyncFunctionDef):
                    if public(member.name):
                        found += function_uses(f"{node.name}.{member.name}", member)
                elif isinstance(member, ast.AnnAssign) and isinstance(member.target, ast.Name):
                    if public(member.target.id) and names_any(member.annotation):
                        found.append((node.name, member.target.id))
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name) and public(target.id) and names_any(node.value):
                found.append((target.id, "value"))
    return found


def surface() -> set[tuple[str, str, str]]:
    found = set()
    for path in MODULES:
        tree = ast.parse((ROOT / path).read_text("utf-8"))
        module = Path(path).stem
        found |= {(module, where, what) for where, what in uses_of_any(tree)}
    return found


def test_no_any_in_the_plugin_surface_but_the_named_ones():
    assert sorted(surface() - set(ALLOWED)) == []


def test_each_allowed_any_is_still_there():
    """An entry whose Any has gone is dropped from the list, so the list stays the truth."""
    assert sorted(set(ALLOWED) - surface()) == []


def test_the_check_sees_an_any_where_it_hides():
    tree = ast.parse(
        "X = Callable[[str], 'dict[str, Any]']\n"
        "class P(Protocol):\n"
        "    field: typing.Any\n"
        "    def __call__(self, *rest: Any) -> None: ...\n"
        "    def _private(self, a: Any) -> Any: ...\n"
        "async def f(a: int, *, b: 'list[Any]') -> int: ...\n"
        "def g() -> Any: ...\n"
    )
    assert uses_of_any(tree) == [
        ("X", "value"),
        ("P", "field"),
        ("P.__call__", "rest"),
        ("f", "b"),
        ("g", "return"),
    ]
