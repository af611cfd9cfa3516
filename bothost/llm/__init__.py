"""LLM providers: a neutral request/response model and the providers that speak it."""

from bothost.llm.base import ChatRequest, ChatResponse, LlmError, ToolCallRequest

__all__ = ["ChatRequest", "ChatResponse", "LlmError", "ToolCallRequest"]
