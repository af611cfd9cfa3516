"""The first-party plugin that registers the LLM providers: offline, openai, anthropic."""

from __future__ import annotations

from bothost.hookspecs import hookimpl
from bothost.llm.anthropic import AnthropicProvider
from bothost.llm.offline import OfflineProvider
from bothost.llm.openai import OpenAIProvider


@hookimpl
def register_llm_providers(register):
    register("offline", OfflineProvider)
    register("openai", OpenAIProvider)
    register("anthropic", AnthropicProvider)
