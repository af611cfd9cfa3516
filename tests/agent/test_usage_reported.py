"""Usage figures from a model endpoint are data from outside: only token counts are recorded
as reported; anything else is our estimate, marked so, with one warning per provider and day.
Against the fake OpenAI and Anthropic servers sending the figures a broken endpoint would."""

from __future__ import annotations

import logging

import pytest

from bothost.api import Outcome
from bothost.config import UsageConfig
from bothost.llm.base import MAX_CALL_TOKENS, ChatRequest, ChatResponse, Usage
from bothost.usage.meter import Metered
from tests.agent.conftest import llm_config, message, usage_rows

NOON = 1_796_126_400.0  # 2026-12-01 12:00 UTC
LONG = "please " * 1000  # ~1,750 estimated tokens: past the 1,000-token daily budget at once

# each broken figure stands where the input count goes; the output count is a fine 5
BROKEN = {
    "negative": -1_000_000,
    "bool": True,
    "float": 1e30,
    "text": "abc",
    "huge": 10**30,
    "over the bound": MAX_CALL_TOKENS + 1,
    "missing": None,
}


def wire_usage(provider, value):
    key, output = (
        ("prompt_tokens", "completion_tokens")
        if provider == "openai"
        else ("input_tokens", "output_tokens")
    )
    return {output: 5} if value is None else {key: value, output: 5}


def warnings_of(caplog):
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "bothost.usage.meter" and r.levelno == logging.WARNING
    ]


# The providers read the JSON as sent (no SDK's pydantic turns a JSON `true` into the count
# 1 on the way), so every broken figure reaches `usage_of` for both.
CASES = [(p, b) for p in ("openai", "anthropic") for b in BROKEN]


@pytest.mark.parametrize("provider, broken", CASES)
async def test_figures_that_are_not_token_counts_are_estimated(
    started, fake_llm, provider, broken, caplog
):
    caplog.set_level(logging.WARNING, logger="bothost.usage.meter")
    bad = {"text": "fine", "wire_usage": wire_usage(provider, BROKEN[broken])}
    fake_llm.script = [bad, bad, bad]
    host = await started(
        {
            "llm": llm_config(fake_llm, provider),
            "usage": {
                "budgets": {"user_daily": {"tokens": 1000}, "global_daily": {"tokens": 100_000}}
            },
        }
    )
    host.llm.clock = lambda: NOON
    first = await host.handle_message(message(LONG))
    assert first.outcome is Outcome.REPLIED, first.text
    (row,) = usage_rows(host)
    assert row["estimated"] == 1
    for column in ("input_tokens", "output_tokens", "cached_tokens", "cache_write_tokens"):
        assert type(row[column]) is int and 0 <= row[column] <= MAX_CALL_TOKENS, column
    assert row["input_tokens"] > 1000  # counted from the text, not the reported figure

    # ana's budget holds: the broken figure neither pulled it back nor went unrecorded
    second = await host.handle_message(message("again"))
    assert second.outcome is Outcome.REFUSED, second.text
    assert len(fake_llm.requests) == 1
    # and it did not spend everyone's day: another person is still answered
    other = await host.handle_message(message("hi", user="bo", channel="c2"))
    assert other.outcome is Outcome.REPLIED, other.text
    assert len(usage_rows(host)) == 2

    said = warnings_of(caplog)
    assert len(said) == 1, said  # once per provider and day, not once per call
    assert provider in said[0] and "estimated" in said[0]


def test_a_bool_reaching_the_converters_is_no_count():
    from bothost.llm.anthropic import usage_of as anthropic_usage_of
    from bothost.llm.base import UsageReportError
    from bothost.llm.openai import usage_of as openai_usage_of

    built = [
        (openai_usage_of, {"prompt_tokens": True, "completion_tokens": 5}),
        (anthropic_usage_of, {"input_tokens": True, "output_tokens": 5}),
        (openai_usage_of, {"prompt_tokens": 5, "completion_tokens": 2.0}),
        (openai_usage_of, "12 tokens"),  # no usage object at all
    ]
    for convert, usage in built:
        with pytest.raises(UsageReportError):
            convert(usage)


async def test_no_recorded_row_lowers_a_total(started, fake_llm):
    """A store written before figures were checked may hold a negative or textual figure;
    a total counts such a figure as nothing, so it cannot pull a budget back."""
    host = await started(
        {
            "llm": llm_config(fake_llm, "openai"),
            "usage": {"budgets": {"user_daily": {"tokens": 1000}}},
        }
    )
    host.llm.clock = lambda: NOON
    columns = (
        "at, day, kind, provider, model, input_tokens, output_tokens, cached_tokens,"
        " cache_write_tokens, estimated, user_key"
    )
    rows = [
        (NOON, "2026-12-01", "turn", "openai", "fake-model", 1500, 0, 0, 0, 0, "test:ana"),
        (NOON, "2026-12-01", "turn", "openai", "fake-model", -1_000_000, -5, 0, 0, 0, "test:ana"),
        (NOON, "2026-12-01", "turn", "openai", "fake-model", "abc", 0, 0, 0, 0, "test:ana"),
    ]
    host.store.call(
        lambda db: db.executemany(
            f"INSERT INTO llm_usage ({columns}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows
        )
    )
    refused = await host.handle_message(message("hi"))
    assert refused.outcome is Outcome.REFUSED, refused.text
    assert "1,500 of 1,000 tokens" in refused.text
    assert fake_llm.requests == []


class Claiming:
    """A provider plugin whose own converter let a broken figure through."""

    model = "m"

    def __init__(self, usage):
        self.usage = usage

    async def complete(self, request):
        return ChatResponse(text="ok", usage=self.usage)


class Posting:
    """The store's ``post``, run at once on a list of rows."""

    def __init__(self):
        self.rows = []

    def post(self, job, what):
        job(self)

    def execute(self, sql, row):
        self.rows.append(row)


@pytest.mark.parametrize(
    "usage",
    [Usage(input=-3, output=2), Usage(input=10, output=2, cached=50), Usage(input=10**30)],
)
async def test_a_provider_plugins_figures_are_checked_too(usage, caplog):
    store = Posting()
    metered = Metered(Claiming(usage), store, config=UsageConfig())
    await metered.complete(ChatRequest(system="s", messages=[{"role": "user", "content": "hi"}]))
    ((*_, input_tokens, output_tokens, cached, write, estimated, _t, _s, _u, _k, _m),) = store.rows
    assert estimated == 1 and input_tokens > 0 and cached == 0 and write == 0
    assert "not a token count" in caplog.text
