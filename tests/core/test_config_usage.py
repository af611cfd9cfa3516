"""usage: prices and budgets are checked at load, with errors that name the key path."""

from __future__ import annotations

import pytest

from bothost.config import ConfigError, load


def write(path, text):
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "usage: {prices: {m: {input: 1}}}",
            "usage.prices.m.output: expected a price per million tokens",
        ),
        (
            "usage: {prices: {m: {input: 1, output: 2, cached: -1}}}",
            "usage.prices.m.cached: expected a price of 0 or more, got -1",
        ),
        (
            "usage: {budgets: {user_daily: {tokens: 0}}}",
            "usage.budgets.user_daily.tokens: expected more than 0, got 0",
        ),
        (
            "usage: {budgets: {global_daily: {tokens: lots}}}",
            "usage.budgets.global_daily.tokens: expected an integer, got 'lots'",
        ),
        (
            "usage: {budgets: {tick_dayly: {tokens: 5}}}",
            "usage.budgets.tick_dayly: unknown key; did you mean 'tick_daily'?",
        ),
        (
            "llm: {provider: openai, model: gpt-x}\n"
            "usage: {prices: {gpt-y: {input: 1, output: 2}}, budgets: {global_daily: {cost: 5}}}",
            "usage.budgets.global_daily.cost: a cost budget needs a price for llm.model "
            "'gpt-x' in usage.prices; did you mean 'gpt-y'? (known: gpt-y)",
        ),
    ],
)
def test_usage_errors_name_the_key_path(home, tmp_path, text, expected):
    path = write(tmp_path / "c.yaml", text + "\n")
    with pytest.raises(ConfigError) as caught:
        load(path, home)
    assert str(caught.value) == f"{path}: {expected}"


def test_prices_and_budgets_load(home, tmp_path):
    config = load(
        write(
            tmp_path / "c.yaml",
            "llm: {provider: openai, model: m}\n"
            "usage: {prices: {m: {input: 1, output: 2}}, budgets: "
            "{user_daily: {tokens: 100, cost: 0.5}}}\n",
        ),
        home,
    )
    assert config.usage.prices["m"].output == 2.0 and config.usage.prices["m"].cached is None
    assert config.usage.budgets.user_daily.tokens == 100
    assert not config.usage.budgets.tick_daily.set
