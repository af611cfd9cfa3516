"""The first-party plugin that registers the LLM providers: offline, openai, anthropic."""

from __future__ import annotations

from bothost.hookspecs import hookimpl


@hookimpl
def register_llm_providers(register):
    from bothost.llm.offline import OfflineProvider

    register("offline", OfflineProvider)
    try:
        from bothost.llm.openai import OpenAIProvider
        register("openai", OpenAIProvider)
    except ImportError:
        pass
    try:
        from bothost.llm.anthropic import AnthropicProvider
        register("anthropic", AnthropicProvider)
    except ImportError:
        pass
