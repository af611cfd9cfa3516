"""The provider-neutral shape of one model call, and the errors a provider may raise.

Messages use one internal form for every provider: ``{"role": "user"|"assistant"|"tool",
"content": str}``; assistant messages may carry ``tool_calls`` (``[{"id", "name",
"arguments"}]``) and tool messages a ``tool_call_id``. Providers translate to their wire
format. A provider streams text through ``request.on_text`` as it arrives.
"""

from __future__ import annotations

import json
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

CHARS_PER_TOKEN = 4  # a rough, download-free estimate; providers' reported usage wins
# The most tokens one call may be reported to have used in any one figure: the largest
# context windows are a few million tokens, so a figure past this is no count but a broken
# or hostile endpoint, and would spend every budget for the day (issue 34: 1e30).
MAX_CALL_TOKENS = 10_000_000


class LlmError(Exception):
    """A model call failed in a way the user must fix (key, model, URL); one clear line."""


class StreamCutError(LlmError):
    """The answer's stream ended before the model finished it: a dropped connection, a
    proxy's idle timeout, a server that crashed mid-answer. What arrived is a fragment (text
    cut mid-sentence, tool arguments cut mid-JSON), so none of it is kept or acted on."""

    def __init__(self, url: str, detail: str) -> None:
        super().__init__(
            f"The model's answer stopped mid-way ({detail}, from {url}); none of it was kept."
            " Send your message again."
        )


class UsageReportError(ValueError):
    """A provider's usage figure that is no token count: negative, not an integer (a bool, a
    float, a string), missing where the API always sends it, or over
    :data:`MAX_CALL_TOKENS`. The call is then counted by our estimate."""


def token_count(name: str, value: Any) -> int:
    """``value`` as reported for the figure ``name`` if it is a token count, else
    :class:`UsageReportError` naming it (its value clipped: it came from outside)."""
    if type(value) is int and 0 <= value <= MAX_CALL_TOKENS:  # not bool: a subclass of int
        return value
    if value is None:
        shown = "missing"
    elif isinstance(value, str):  # not its words: cut short, a key it quoted would show
        shown = f"str of {len(value)} characters"
    else:
        shown = f"{type(value).__name__} {repr(value)[:40]}"
    raise UsageReportError(f"{name}: {shown}")


class BudgetSpentError(LlmError):
    """A model call refused before it was made: a daily usage budget is spent.

    The message is for the person whose turn was refused; ``scope`` names the budget
    (``user``, ``global`` or ``tick``) and ``footer`` is the short line a briefing shows.
    """

    def __init__(self, message: str, scope: str, footer: str = "") -> None:
        super().__init__(message)
        self.scope = scope
        self.footer = footer


@dataclass
class ToolCallRequest:
    id: str
    name: str
    arguments: dict[str, Any]
    raw_arguments: str = ""  # what the model sent, when it was not valid JSON


@dataclass
class ChatRequest:
    system: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] = field(default_factory=list)  # {"name","description","parameters"}
    # Every tool known, active or not, for a provider with `wants_catalog` (the offline
    # agent's `tools` and `call`). Pulled rather than filled in: listing it waits for MCP
    # servers still starting, which most commands (`help`) never need (issue 19).
    # ``load_catalog(tool=NAME)`` starts and waits for only the group that could hold NAME
    # (`call`): the others are listed as they are, unstarted ones without their tools.
    load_catalog: Callable[..., Awaitable[list[dict[str, Any]]]] | None = None
    on_text: Callable[[str], Awaitable[None]] | None = None
    max_tokens: int = 4096


@dataclass(frozen=True)
class Usage:
    """The tokens one model call used, normalised across providers.

    ``input`` counts every prompt token, the cached ones included (OpenAI reports it that
    way; Anthropic's three input figures are added up), so ``input + output`` is what the
    call moved; ``cached`` is the part of ``input`` read from the provider's prompt cache
    and ``cache_write`` the part written to it, both billed at their own rates.
    ``estimated`` marks figures we counted ourselves because the provider reported none.
    """

    input: int = 0
    output: int = 0
    cached: int = 0
    cache_write: int = 0
    estimated: bool = False

    @property
    def total(self) -> int:
        return self.input + self.output


def checked(usage: Usage) -> Usage:
    """``usage`` if every figure is a token count and the cached parts fit in the input;
    :class:`UsageReportError` otherwise (a provider plugin's figures are checked too)."""
    for name in ("input", "output", "cached", "cache_write"):
        token_count(name, getattr(usage, name))
    if usage.cached + usage.cache_write > usage.input:
        raise UsageReportError(
            f"cached {usage.cached} and cache_write {usage.cache_write} exceed input {usage.input}"
        )
    return usage


@dataclass
class ChatResponse:
    text: str = ""
    tool_calls: list[ToolCallRequest] = field(default_factory=list)
    usage: Usage | None = None  # None: the provider reported nothing, or no counts
    # what the provider reported instead of token counts (``UsageReportError``'s text)
    usage_refused: str = ""
    stop_reason: str = ""


class Provider(Protocol):
    name: str

    async def complete(self, request: ChatRequest) -> ChatResponse: ...


def estimate_tokens(value: Any) -> int:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return len(text) // CHARS_PER_TOKEN + 1


def parse_arguments(raw: str) -> tuple[dict[str, Any], str]:
    """Tool-call arguments from the model's JSON text; ``({}, raw)`` when unparsable."""
    if not raw or not raw.strip():
        return {}, ""
    try:
        value = load_json(raw)
    except ValueError:
        return {}, raw
    return (value, "") if isinstance(value, dict) else ({}, raw)


def load_json(text: str | bytes) -> Any:
    """``json.loads`` for what an endpoint sent: :class:`ValueError` also for JSON nested
    too deep for the parser (100,000 ``[``) and for numbers no JSON writer can send on
    (``1e999``, ``NaN``), where ``json.loads`` raises ``RecursionError`` or gives ``inf``."""
    try:
        return json.loads(text, parse_float=finite, parse_constant=no_constant)
    except RecursionError:
        raise ValueError("JSON nested too deep") from None


def finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"a number out of range: {text[:20]}")
    return value


def no_constant(text: str) -> float:
    raise ValueError(f"{text} is no JSON number")


# The hosted APIs that refuse a call without a key: the variable to set, and another way
LOCAL_HINT = " (a local server such as Ollama needs llm.base_url instead)"
KEYS = {"openai": ("OPENAI_API_KEY", LOCAL_HINT), "anthropic": ("ANTHROPIC_API_KEY", "")}


def key_problem(config: Any) -> LlmError | None:
    """:func:`missing_key` for the ``llm`` section's provider, if it is a hosted one known
    here: ``bothost chat`` says it before it loads the provider or opens the home."""
    known = KEYS.get(config.provider or "")
    return missing_key(config, config.provider, *known) if known else None


def missing_key(config: Any, provider: str, variable: str, local_hint: str = "") -> LlmError | None:
    """The error for a call to a provider's hosted API with no key (``None`` if there is a key
    or another ``base_url``, which may need none): the API would answer only 401, or, with
    no network, "cannot reach", which sends people to the wrong setting."""
    if config.api_key or config.base_url:
        return None
    return LlmError(
        f"{provider} needs an API key: set llm.api_key: ${{env:{variable}}} in bothost.yaml "
        f"and export {variable}{local_hint}"
    )


def explain(status: int, url: str, exc: Exception) -> str:
    """One line for an HTTP error from a provider, naming the setting to check."""
    hint = {
        401: "check llm.api_key",
        403: "check llm.api_key and its permissions",
        404: "check llm.model and llm.base_url",
        429: "rate limited; try again later",
        400: "the request was refused",
    }.get(status, "the provider failed")
    detail = getattr(exc, "message", "") or str(exc)
    return f"{status} from {url}: {hint} ({detail[:200]})"
