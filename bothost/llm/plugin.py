"""The first-party plugin that registers the LLM providers: offline, openai, anthropic.

Each provider module is imported only when its provider is actually used, and makes its
HTTP session only when it first asks the model: every command that does not talk to a
model starts without an HTTP library (the providers speak HTTP themselves, bothost.llm.wire).
"""

from __future__ import annotations

from typing import Any

from bothost.hookspecs import hookimpl
from bothost.llm.offline import OfflineProvider


def openai_provider(config: Any) -> Any:
    from bothost.llm.openai import OpenAIProvider

    return OpenAIProvider(config)


def anthropic_provider(config: Any) -> Any:
    from bothost.llm.anthropic import AnthropicProvider

    return AnthropicProvider(config)


@hookimpl
def register_llm_providers(register):
    register("offline", OfflineProvider)
    register("openai", openai_provider)
    register("anthropic", anthropic_provider)
