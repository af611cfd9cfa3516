"""What a permission rule is and how it matches one tool call.

A rule names a tool (a glob over the name the model sees, or, for a stored row, the tool's
origin: see :func:`match_tool`), optionally arguments (each a glob,
or a regular expression written ``re:PATTERN``; both must match the whole value) and whose
calls it covers (``who``: users and channels by platform-qualified ids such as
``slack:U0123``, admins, one conversation: :mod:`~bothost.rules.who`); the first rule that
matches decides ``allow``, ``ask`` or ``deny``, except that a ``deny`` further down that
matches too beats an ``ask`` (:func:`deciding_match`). Argument values that are not strings are
matched as their JSON text. A match says which fields matched, so ``bothost rules test``
can show why.

Fields and patterns are matched by :mod:`bothost.rules.fields`, as triage rules' are.
Regular expressions run on RE2, a linear-time engine: the arguments come from the model,
which may be steered by what it read, and a backtracking engine takes 2**n steps for a
pattern such as ``(a+)+$`` on n characters, holding the event loop. RE2 has no
backreferences or lookaround; a rule using them is refused when it is added or loaded.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
import unicodedata
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

import re2  # type: ignore[import-untyped]

from bothost.config import PermissionRule, RuleWho
from bothost.config.schema import ConfigError, build
from bothost.models import Session
from bothost.rules import overlap
from bothost.rules import who as rule_who
from bothost.rules.fields import MISSING, fits, lookup
from bothost.rules.origin import UNKNOWN, Origin, covers
from bothost.rules.overlap import REGEX

ACTIONS = ("allow", "ask", "deny")
USER_PAIRS = 100  # who.users patterns compared pairwise for a note; more are taken to meet
CONFIG, STORED, REMEMBERED = "config", "stored", "remembered"
# how the listed order is read (`bothost rules list`, /api/rules, the dashboard)
PRECEDENCE = (
    "checked top to bottom: the first rule that matches decides, "
    "but a deny that matches too beats an ask above it"
)


class RuleError(ValueError):
    """A rule that cannot be used; the message names the key that is wrong."""


@dataclass
class Rule:
    """A rule with where it came from: ``permissions[i]`` in config, or a row of the table."""

    spec: PermissionRule
    origin: str  # config | stored | remembered
    id: int | None = None  # the table row of a stored or remembered rule
    index: int | None = None  # the position in `permissions` of a config rule
    created_by: str = ""
    created_at: float | None = None
    # the tool a stored row is about, whatever it is called now (bothost.rules.origin)
    tool_origin: Origin | None = None

    @property
    def ref(self) -> str:
        """How people name it: ``permissions[2]`` (config) or ``#7`` (``rules remove 7``)."""
        return f"permissions[{self.index}]" if self.origin == CONFIG else f"#{self.id}"

    @property
    def action(self) -> str:
        return self.spec.action

    def to_dict(self) -> dict[str, Any]:
        return {
            "ref": self.ref,
            "origin": self.origin,
            "id": self.id,
            **spec_data(self.spec),
            "tool_origin": self.tool_origin.to_dict() if self.tool_origin else None,
            "created_by": self.created_by,
            "created_at": self.created_at,
        }


@dataclass
class Match:
    """A rule that matched a call, and what matched (``tool 'mcp__gmail__*'``…)."""

    rule: Rule
    fields: list[str] = field(default_factory=list)
    over: Rule | None = None  # an `ask` rule that matched first and this `deny` beat


def text_of(value: Any) -> str:
    """An argument value as patterns see it: a string as is, anything else as JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


class PatternError(ValueError):
    """A ``re:`` pattern RE2 cannot compile; the message says why."""


def linear_options() -> Any:
    options = re2.Options()
    options.log_errors = False  # RE2 would print each refused pattern to stderr itself
    options.never_capture = True  # a rule asks only whether the whole value matches
    return options


LINEAR = linear_options()


@functools.lru_cache(maxsize=512)  # rules are few and re-read per call: compile each once
def compiled(pattern: str) -> Any:
    """``pattern`` compiled by RE2 (linear time in the value); PatternError."""
    try:
        return re2.compile(pattern, LINEAR)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else "not accepted"
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise PatternError(str(reason)) from None


def matches(pattern: str, value: str) -> bool:
    """Whether an argument's pattern (a glob, or ``re:`` on RE2) matches all of ``value``."""
    return fits(pattern, (value,), regex=compiled)


def literal(value: str) -> str:
    """A pattern that matches exactly ``value`` (glob characters escaped)."""
    escaped = re.sub(r"([*?\[])", r"[\1]", value)
    return "[r]" + escaped[1:] if escaped.startswith(REGEX) else escaped


def match_tool(rule: Rule, tool: str, origin: Origin | None) -> str | None:
    """What of the rule named the tool (called ``tool`` now, from ``origin``), or None.

    A rule without an origin names tools by its pattern over the name the model sees now. A
    rule with one is about the tool of that origin under any name; an ``allow`` rule is
    about nothing else, so no renaming can hand it to another tool, while ``deny`` and
    ``ask`` rules still cover any tool their pattern names (as written they asked for that,
    and covering more only refuses or asks more).
    """
    spec, pinned = rule.spec, rule.tool_origin
    if pinned is not None:
        if origin is not None and covers(pinned, spec.tool, origin, tool):
            return f"tool {spec.tool!r} ({pinned.label()}) is {tool!r}"
        if rule.action == "allow":
            return None
    if fnmatchcase(tool, spec.tool):
        return f"tool {spec.tool!r} matched {tool!r}"
    return None


def match(
    rule: Rule,
    tool: str,
    arguments: dict[str, Any],
    session: Session,
    origin: Origin | None = None,
) -> Match | None:
    """Whether ``rule`` covers this call of ``tool`` (from ``origin``; None: not known)."""
    spec = rule.spec
    named = match_tool(rule, tool, origin)
    if named is None:
        return None
    found = [named]
    for name, pattern in spec.args.items():
        value = lookup(arguments, (name,))
        if value is MISSING or not matches(pattern, text_of(value)):
            return None
        found.append(f"args.{name} {pattern!r} matched {short(text_of(value))!r}")
    if spec.exact:
        if set(arguments) - set(spec.args):
            return None
        found.append("exact: no other arguments")
    if spec.who is not None:
        covered = rule_who.match_who(spec.who, session)
        if covered is None:
            return None
        found += covered
    return Match(rule, found)


def first_match(
    rules: list[Rule],
    tool: str,
    arguments: dict[str, Any],
    session: Session,
    origin: Origin | None = None,
) -> Match | None:
    """The first rule that matches the call, or None."""
    for rule in rules:
        found = match(rule, tool, arguments, session, origin)
        if found is not None:
            return found
    return None


def deciding_match(
    rules: list[Rule],
    tool: str,
    arguments: dict[str, Any],
    session: Session,
    origin: Origin | None = None,
) -> Match | None:
    """The rule that decides the call: the first that matches, except that an ``ask`` never
    shadows a ``deny``. When the first match asks, a later rule that denies the call
    decides instead (its ``over`` names the ask). An ``allow`` that comes first still
    decides: written above a deny it is an exception to it, which is what ordering is for.

    Why deny beats ask but not allow: an ``ask`` is never a permission, only more caution,
    so where a deny covers the call too the more cautious rule is the deny. Someone who adds
    ``deny mcp__ssh__*`` (``rules add`` puts it last) after an old ``ask mcp__ssh__exec``
    means every ssh call refused; first match alone only asked.
    """
    first: Match | None = None
    for rule in rules:
        if first is not None and rule.action != "deny":
            continue
        found = match(rule, tool, arguments, session, origin)
        if found is None:
            continue
        if first is None and rule.action == "ask":
            first = found
            continue
        if first is not None:
            found.over = first.rule
        return found
    return first


def allows_before(rules: list[Rule], added: Rule) -> list[Rule]:
    """The ``allow`` rules before the ``deny`` rule ``added`` (in ``rules``, the order
    checked) that may decide some of its calls first (:func:`deciding_match`: an allow
    above a deny is an exception to it): those some call could match as well as it
    (:func:`may_meet`); a guess that leans to naming one, never a refusal."""
    if added.action != "deny" or added not in rules:
        return []
    return [
        rule
        for rule in rules[: rules.index(added)]
        if rule.action == "allow" and may_meet(rule, added)
    ]


def may_meet(above: Rule, below: Rule) -> bool:
    """Whether one call may match both rules: tool patterns that meet (:mod:`overlap`, as
    names: a pinned rule by the name it was added for), argument patterns that meet where
    both name the argument, neither ``exact`` while the other needs an argument it lacks,
    and ``who`` fields that can hold for one person (channels are taken to meet)."""
    one, two = above.spec, below.spec
    for rule in (above, below):
        pinned = rule.tool_origin
        if rule.action == "allow" and pinned is not None and pinned.kind == UNKNOWN:
            return False  # it matches no tool (match_tool)
    if not overlap.globs_meet(one.tool, two.tool):
        return False
    if one.exact and set(two.args) - set(one.args):
        return False
    if two.exact and set(one.args) - set(two.args):
        return False
    shared = set(one.args) & set(two.args)
    if not all(overlap.patterns_meet(one.args[k], two.args[k], matches) for k in shared):
        return False
    return one.who is None or two.who is None or who_may_meet(one.who, two.who)


def who_may_meet(one: RuleWho, two: RuleWho) -> bool:
    if one.admins is not None and two.admins is not None and one.admins != two.admins:
        return False
    if one.conversation is not None and two.conversation is not None:
        if one.conversation != two.conversation:
            return False
    if one.users and two.users and len(one.users) * len(two.users) <= USER_PAIRS:
        return any(overlap.globs_meet(a, b) for a in one.users for b in two.users)
    return True


def summary(rule: Rule) -> str:
    """``rule #1 (allow mcp__ssh__exec, with arguments)``: a rule named in a note."""
    more = ", with arguments" if rule.spec.args else ""
    more += ", for some people" if rule.spec.who is not None else ""
    return f"rule {rule.ref} ({rule.action} {rule.spec.tool}{more})"


def allow_above(rule: Rule) -> str:
    """How a note names an allow that decides before a new deny (:func:`allows_before`)."""
    return f"{summary(rule)} comes before it and still decides the calls it matches"


def asks_beaten(rules: list[Rule]) -> list[tuple[Rule, Rule]]:
    """Each ``ask`` in ``rules`` (the order checked) with the first ``deny`` below it that
    some call may match as well (:func:`may_meet`): for such calls the deny decides
    (:func:`deciding_match`), so the ask never asks about them. A guess that leans to
    naming one, as :func:`allows_before`."""
    out = []
    for place, ask in enumerate(rules):
        if ask.action != "ask":
            continue
        deny = next(
            (r for r in rules[place + 1 :] if r.action == "deny" and may_meet(ask, r)), None
        )
        if deny is not None:
            out.append((ask, deny))
    return out


def ask_beaten(ask: Rule, deny: Rule) -> str:
    """How doctor names an ask that a deny below it beats (:func:`asks_beaten`)."""
    return (
        f"{summary(ask)} never asks about the calls {summary(deny)} matches too: the deny"
        " below it decides them (bothost rules list)"
    )


def short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


# --- checking rules ---------------------------------------------------------------------------


# A pattern is written by a person (a tool name is at most 128 characters by MCP); a longer
# one is pasted data, and every pattern matched is compiled and kept in a cache.
MAX_PATTERN_CHARS = 1000
# Patterns in one list of a rule (args, who.users, who.channels): a tool takes a handful of
# arguments; more is a flood from a script, each checked on every call the rule sees.
MAX_PATTERNS = 100
MAX_NOTE_CHARS = 1000  # a note is a line saying why, shown in listings


def text_problem(text: str, limit: int) -> str | None:
    """What is wrong with one text of a rule: too long, or a control character (a NUL cuts
    it short in C code and logs; a tab or newline hides in a listing)."""
    if len(text) > limit:
        return f"at most {limit} characters, got {len(text)}"
    bad = next((c for c in text if unicodedata.category(c) == "Cc"), None)
    if bad is not None:
        return f"a control character ({bad!r}) in {short(text, 40)!r}"
    return None


def size_problems(spec: PermissionRule) -> list[tuple[str, str]]:
    """Texts too long or with control characters, and lists too long."""
    texts: list[tuple[str, str, int]] = [
        ("tool", spec.tool, MAX_PATTERN_CHARS),
        ("note", spec.note, MAX_NOTE_CHARS),
    ]
    lists: dict[str, list[str]] = {"args": list(spec.args)}
    for name, pattern in spec.args.items():
        texts += [(f"args.{name}", name, MAX_PATTERN_CHARS)]
        texts += [(f"args.{name}", pattern, MAX_PATTERN_CHARS)]
    if spec.who is not None:
        lists |= {"who.users": spec.who.users, "who.channels": spec.who.channels}
        for key, values in (("who.users", spec.who.users), ("who.channels", spec.who.channels)):
            texts += [(f"{key}[{i}]", v, MAX_PATTERN_CHARS) for i, v in enumerate(values)]
        if spec.who.conversation is not None:
            texts += [("who.conversation", spec.who.conversation, MAX_PATTERN_CHARS)]
    found = [
        (key, f"at most {MAX_PATTERNS} patterns, got {len(values)}")
        for key, values in lists.items()
        if len(values) > MAX_PATTERNS
    ]
    if found:
        return found  # the texts of a flood are not worth a message each
    for key, text, limit in texts:
        problem = text_problem(text, limit)
        if problem is not None:
            found.append((key, problem))
    return found


def problems(spec: PermissionRule) -> list[tuple[str, str]]:
    """What is wrong with a rule: (key path inside the rule, what was expected)."""
    found = size_problems(spec)
    if found:
        return found  # a pattern too long or with a NUL is not compiled
    if not spec.tool:
        found.append(("tool", "expected a tool name or glob, such as mcp__gmail__*"))
    if spec.action not in ACTIONS:
        found.append(("action", f"expected one of {', '.join(ACTIONS)}, got {spec.action!r}"))
    for name, pattern in spec.args.items():
        if pattern.startswith(REGEX):
            try:
                compiled(pattern[len(REGEX) :])
            except PatternError as exc:
                found.append(
                    (f"args.{name}", f"not a regular expression RE2 runs ({exc}): {pattern!r}")
                )
    if spec.who is not None:
        found += rule_who.problems(spec.who)
    return found


def spec_from_data(data: dict[str, Any]) -> PermissionRule:
    """A checked rule from plain data (the CLI, the dashboard, a table row); RuleError."""
    try:
        spec: PermissionRule = build(PermissionRule, data, "", "rule")
    except ConfigError as exc:
        raise RuleError(str(exc).removeprefix("rule: ")) from None
    for key, problem in problems(spec):
        raise RuleError(f"{key}: {problem}")
    return qualified(spec)


def qualified(spec: PermissionRule) -> PermissionRule:
    """``spec`` with its people and channels platform-qualified (:mod:`bothost.rules.who`)."""
    if spec.who is None:
        return spec
    return dataclasses.replace(spec, who=rule_who.qualified(spec.who))


def spec_data(spec: PermissionRule) -> dict[str, Any]:
    """A rule as plain data, without the keys it leaves at their defaults."""
    data: dict[str, Any] = {"tool": spec.tool, "action": spec.action}
    if spec.args:
        data["args"] = dict(spec.args)
    if spec.exact:
        data["exact"] = True
    if spec.who is not None:
        who = {k: v for k, v in dataclasses.asdict(spec.who).items() if v not in (None, [])}
        if who:
            data["who"] = who
    if spec.note:
        data["note"] = spec.note
    return data


def config_rules(permissions: list[PermissionRule]) -> list[Rule]:
    """The config's rules, their bare Slack ids written ``slack:ID`` (others were refused
    at load)."""
    return [Rule(qualified(spec), CONFIG, index=i) for i, spec in enumerate(permissions)]


def describe(rule: Rule) -> str:
    """One line for listings: ``deny mcp__ssh__exec args command=re:rm .* who users=U1``."""
    spec = rule.spec
    parts = [f"{spec.action:5} {spec.tool}"]
    pinned = rule.tool_origin
    if pinned is not None and pinned.kind == UNKNOWN and spec.action == "allow":
        parts.append("(origin unknown: matches no tool; add it again by its name now)")
    elif pinned is not None and pinned.kind == UNKNOWN:
        parts.append("(origin unknown: matches by name only)")
    elif pinned is not None:
        parts.append(f"({pinned.label()})")
    if spec.args:
        args = ", ".join(f"{k}={short(v, 60)}" for k, v in spec.args.items())
        parts.append(f"args {args}{' (exact)' if spec.exact else ''}")
    elif spec.exact:
        parts.append("no arguments")
    for key, value in spec_data(spec).get("who", {}).items():
        shown = ",".join(value) if isinstance(value, list) else str(value).lower()
        parts.append(f"who.{key}={shown}")
    if spec.note:
        parts.append(f"— {spec.note}")
    return "  ".join(parts)
