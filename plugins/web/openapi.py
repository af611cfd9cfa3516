"""``GET /openapi.json``: an OpenAPI 3.1 description of the web and webhook routes.

Written by hand next to the handlers it describes (they validate their own input), so the
document states exactly what each route accepts, including the three Standard Webhooks
headers every webhook request must carry. Property-based tests load it and fire generated
requests at the running host.
"""

from __future__ import annotations

from typing import Any

from bothost.plugins.web.config import NAME_PATTERN

from bothost.api import Outcome

SESSION = {
    "type": "string",
    "pattern": "^(?!\\.+$)[A-Za-z0-9_.-]{1,64}$",
    "default": "default",
    "description": "1-64 characters of A-Z a-z 0-9 _ . -, not only dots",
}
ERROR = {"type": "object", "properties": {"error": {"type": "string"}}}
SIGNATURE_HEADERS = [
    {
        "name": "webhook-id",
        "in": "header",
        "required": True,
        "description": 'Unique message id; a repeated id is answered {"duplicate": true}.',
        "schema": {"type": "string", "minLength": 1, "maxLength": 256},
    },
    {
        "name": "webhook-timestamp",
        "in": "header",
        "required": True,
        "description": "Seconds since the epoch; must be within 5 minutes of the server clock.",
        "schema": {"type": "string", "pattern": "^[0-9]+$"},
    },
    {
        "name": "webhook-signature",
        "in": "header",
        "required": True,
        "description": "Space-separated `v1,<base64 HMAC-SHA256 of id.timestamp.body>`, keyed "
        "with the bytes of platforms.webhook.secret (base64 after `whsec_`).",
        "schema": {"type": "string"},
    },
]


def json_body(schema: dict[str, Any], required: bool = True) -> dict[str, Any]:
    return {"required": required, "content": {"application/json": {"schema": schema}}}


def answer(
    description: str, schema: dict[str, Any] | None = None, media: str = "application/json"
) -> dict[str, Any]:
    out: dict[str, Any] = {"description": description}
    if schema is not None:
        out["content"] = {media: {"schema": schema}}
    return out


CHAT_BODY = {
    "type": "object",
    "required": ["text"],
    "properties": {"session": SESSION, "text": {"type": "string", "minLength": 1}},
}
OUTCOME = {"enum": [outcome.value for outcome in Outcome]}
REPLY = {
    "type": "object",
    "properties": {"session": {"type": "string"}, "reply": {"type": "string"}, "outcome": OUTCOME},
}
# every route: a body that stops arriving, and a store that cannot write (retry later)
LISTENER_ERRORS = {
    "408": answer("The body did not arrive in time", ERROR),
    "503": answer("The store cannot write now; retry after Retry-After seconds", ERROR),
}
WEB_ERRORS = {
    "400": answer(
        "Bad input, or JSON that is not valid, too deep or holds a lone surrogate", ERROR
    ),
    "401": answer("Token required"),
    "403": answer("Refused: Host, Origin, CSRF or non-loopback client"),
    "413": answer("Body over the listener's 4 MiB (4194304 bytes)", ERROR),
    "415": answer("Not JSON"),
    **LISTENER_ERRORS,
}
HOOK_ERRORS = {
    "400": answer(
        "Stale timestamp, a signature header given twice, webhook-id over 256 characters, "
        "or JSON that is not valid, too deep or holds a lone surrogate",
        ERROR,
    ),
    "401": answer("Bad or missing signature", ERROR),
    "404": answer("Webhooks are off (platforms.webhook.secret unset)"),
    "413": answer("Body over platforms.webhook.max_body", ERROR),
    **LISTENER_ERRORS,
}
DUPLICATE = {"type": "object", "properties": {"duplicate": {"const": True}}}


def by_id(summary: str, done: str, missing: str) -> dict[str, Any]:
    """A POST that acts on one stored row named by its integer ``id`` (an admin's action)."""
    return {
        "summary": summary,
        "security": [{}, {"token": []}],
        "requestBody": json_body(
            {"type": "object", "required": ["id"], "properties": {"id": {"type": "integer"}}}
        ),
        "responses": {
            "200": answer(done, {"type": "object"}),
            "404": answer(missing, ERROR),
            **WEB_ERRORS,
        },
    }


def paths() -> dict[str, Any]:
    return {
        "/api/chat": {
            "post": {
                "summary": "Send a message to the agent; the whole reply as JSON.",
                "security": [{}, {"token": []}],
                "requestBody": json_body(CHAT_BODY),
                "responses": {"200": answer("The reply", REPLY), **WEB_ERRORS},
            }
        },
        "/api/chat/stream": {
            "post": {
                "summary": "Send a message; the reply streams as Server-Sent Events "
                "(`delta`, `status`, then `done` with the reply).",
                "security": [{}, {"token": []}],
                "requestBody": json_body(CHAT_BODY),
                "responses": {
                    "200": answer("Event stream", {"type": "string"}, "text/event-stream"),
                    **WEB_ERRORS,
                },
            }
        },
        "/api/answer": {
            "post": {
                "summary": "Answer a question (approval: true/false; form: an object of values, "
                "false to decline, null to cancel).",
                "security": [{}, {"token": []}],
                "requestBody": json_body(
                    {
                        "type": "object",
                        "required": ["id"],
                        "properties": {"session": SESSION, "id": {"type": "string"}, "answer": {}},
                    }
                ),
                "responses": {
                    "200": answer("Answered", {"type": "object"}),
                    "404": answer("No such open question", ERROR),
                    **WEB_ERRORS,
                },
            }
        },
        "/api/feedback": {
            "post": {
                "summary": "Acknowledge or snooze the events of a briefing item; propose the "
                "triage rule that would have made it less or more important (`less`, `more`: "
                'nothing is stored; the answer\'s `proposal` is the key to apply, `""` when '
                "there is none and `text` says why), or apply a proposal (`apply` with "
                "`proposal`, no `event_ids`).",
                "security": [{}, {"token": []}],
                "requestBody": json_body(
                    {
                        "type": "object",
                        "required": ["action"],
                        "properties": {
                            "action": {"enum": ["ack", "snooze", "less", "more", "apply"]},
                            "proposal": {"type": "string", "minLength": 1, "maxLength": 100},
                            "event_ids": {
                                "type": "array",
                                "minItems": 1,
                                "maxItems": 1000,
                                "items": {"type": "integer"},
                            },
                            "minutes": {"type": "number", "exclusiveMinimum": 0, "maximum": 10080},
                        },
                    }
                ),
                "responses": {"200": answer("Done", {"type": "object"}), **WEB_ERRORS},
            }
        },
        "/api/rules": {
            "get": {
                "summary": "Permission rules in the order checked (stored, then config), how "
                "that order decides (`precedence`: the first match, but a deny beats an ask "
                "above it), and the remembered answers.",
                "responses": {"200": answer("Rules", {"type": "object"}), **WEB_ERRORS},
            },
            "post": {
                "summary": "Add a stored rule (the keys of a `permissions` entry; `first: true` "
                "puts it before the other stored rules).",
                "security": [{}, {"token": []}],
                "requestBody": json_body(
                    {
                        "type": "object",
                        "required": ["tool", "action"],
                        "properties": {
                            "tool": {"type": "string", "maxLength": 1000},
                            "action": {"enum": ["allow", "ask", "deny"]},
                            "args": {
                                "type": "object",
                                "maxProperties": 100,
                                "additionalProperties": {"type": "string", "maxLength": 1000},
                            },
                            "exact": {"type": "boolean"},
                            "who": {"type": "object"},
                            "note": {"type": "string"},
                            "first": {"type": "boolean"},
                        },
                    }
                ),
                "responses": {"200": answer("Added", {"type": "object"}), **WEB_ERRORS},
            },
        },
        "/api/rules/remove": {
            "post": by_id(
                "Remove a stored rule or a remembered answer by its id.",
                "Removed",
                "No such stored rule",
            )
        },
        "/api/schedules": {
            "get": {
                "summary": "Every person's scheduled and failed jobs (reminders and checks), "
                "oldest first, as `bothost schedule list --json` shows them.",
                "responses": {"200": answer("Jobs", {"type": "object"}), **WEB_ERRORS},
            }
        },
        "/api/schedules/cancel": {
            "post": by_id(
                "Cancel a scheduled job by its id.", "Cancelled", "No such job, or it is over"
            )
        },
        "/api/mcp/{name}/login": {
            "post": {
                "summary": "Begin an OAuth login to a remote MCP server: the authorization URL "
                "to open. The redirect comes back to this listener's /oauth/callback.",
                "security": [{}, {"token": []}],
                "parameters": [
                    {
                        "name": "name",
                        "in": "path",
                        "required": True,
                        "schema": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"},
                    }
                ],
                "requestBody": json_body({"type": "object"}),
                "responses": {
                    "200": answer("Open this URL", {"type": "object"}),
                    "409": answer("No such remote server, or it cannot be reached", ERROR),
                    **WEB_ERRORS,
                },
            }
        },
        "/api/rules/test": {
            "post": {
                "summary": "Which rule decides a call, and why (nothing runs).",
                "security": [{}, {"token": []}],
                "requestBody": json_body(
                    {
                        "type": "object",
                        "required": ["tool"],
                        "properties": {
                            "tool": {"type": "string"},
                            "arguments": {"type": "object"},
                            "user": {"type": "string"},
                            "channel": {"type": "string"},
                            "admin": {"type": "boolean"},
                        },
                    }
                ),
                "responses": {"200": answer("The decision", {"type": "object"}), **WEB_ERRORS},
            }
        },
        "/api/history": {
            "get": {
                "summary": "The session's transcript (latest messages), or with start an"
                " earlier conversation's.",
                "parameters": [
                    {"name": "session", "in": "query", "schema": SESSION},
                    {
                        "name": "start",
                        "in": "query",
                        "schema": {"type": "string", "pattern": "^[0-9]{1,18}$"},
                    },
                ],
                "responses": {"200": answer("Messages", {"type": "object"}), **WEB_ERRORS},
            }
        },
        "/api/conversations": {
            "get": {
                "summary": "The web sessions' conversations, newest first.",
                "responses": {"200": answer("Conversations", {"type": "object"}), **WEB_ERRORS},
            }
        },
        "/api/prompt/complete": {
            "get": {
                "summary": "Completions of a partly typed /prompt line (names, a server's values).",
                "parameters": [{"name": "text", "in": "query", "schema": {"type": "string"}}],
                "responses": {"200": answer("Values", {"type": "object"}), **WEB_ERRORS},
            }
        },
        "/api/dashboard": {
            "get": {
                "summary": "MCP servers, event queue, briefings, recent tool calls.",
                "responses": {"200": answer("Dashboard data", {"type": "object"}), **WEB_ERRORS},
            }
        },
        "/api/events": {
            "get": {
                "summary": "The page's live stream (questions, messages, briefings) as SSE.",
                "parameters": [{"name": "session", "in": "query", "schema": SESSION}],
                "responses": {
                    "200": answer("Event stream", {"type": "string"}, "text/event-stream"),
                    **WEB_ERRORS,
                },
            }
        },
        "/webhook/message": {
            "post": {
                "summary": "A message from another system; the reply in the response, or "
                "POSTed (signed the same way) to callback_url, which must reach a public "
                "address unless platforms.webhook.callback_allow lists its network. "
                "Not an admin.",
                "parameters": SIGNATURE_HEADERS,
                "requestBody": json_body(
                    {
                        "type": "object",
                        "required": ["text", "user"],
                        "properties": {
                            "text": {"type": "string", "minLength": 1},
                            "user": {"type": "string", "minLength": 1, "maxLength": 200},
                            "channel": {"type": "string", "minLength": 1, "maxLength": 200},
                            "callback_url": {"type": "string", "format": "uri"},
                        },
                    }
                ),
                "responses": {
                    "200": answer(
                        "Reply, or a duplicate id",
                        {
                            "oneOf": [
                                {
                                    "type": "object",
                                    "properties": {
                                        "id": {"type": "string"},
                                        "reply": {"type": "string"},
                                        "outcome": OUTCOME,
                                    },
                                },
                                DUPLICATE,
                            ]
                        },
                    ),
                    "202": answer("Accepted; the reply goes to callback_url"),
                    **HOOK_ERRORS,
                },
            }
        },
        "/webhook/events/{source}": {
            "post": {
                "summary": "Push an event into the queue. `type` (default `webhook`) is the "
                "event type, `payload` (default the whole body) its payload; the "
                "dedupe key is the webhook-id. 2xx only once durably queued.",
                "parameters": [
                    {
                        "name": "source",
                        "in": "path",
                        "required": True,
                        "schema": {"type": "string", "pattern": f"^{NAME_PATTERN.pattern}$"},
                    },
                    *SIGNATURE_HEADERS,
                ],
                "requestBody": json_body(
                    {
                        "type": "object",
                        "properties": {
                            "type": {"type": "string", "minLength": 1, "maxLength": 200},
                            "payload": {"type": "object"},
                        },
                    }
                ),
                "responses": {
                    "200": answer(
                        "Queued, dropped by a plugin, or a duplicate id", {"type": "object"}
                    ),
                    **HOOK_ERRORS,
                },
            }
        },
        "/healthz": {
            "get": {
                "summary": "Status per component.",
                "responses": {
                    "200": answer("Health", {"type": "object"}),
                    "503": answer("The store cannot write", {"type": "object"}),
                },
            }
        },
        "/metrics": {
            "get": {
                "summary": "Prometheus text format.",
                "responses": {"200": answer("Metrics", {"type": "string"}, "text/plain")},
            }
        },
        "/media/{file}": {
            "get": {
                "summary": "A file from $BOTHOST_HOME/media (flat names only).",
                "parameters": [
                    {
                        "name": "file",
                        "in": "path",
                        "required": True,
                        "schema": {
                            "type": "string",
                            "pattern": "^[A-Za-z0-9_][A-Za-z0-9_.-]{0,254}$",
                        },
                    }
                ],
                "responses": {
                    "200": answer("The file"),
                    "404": answer("No such file"),
                    **WEB_ERRORS,
                },
            }
        },
        "/openapi.json": {
            "get": {
                "summary": "This document.",
                "responses": {"200": answer("OpenAPI", {"type": "object"})},
            }
        },
    }


def document(version: str = "0") -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "bothost",
            "version": version,
            "description": "Web chat API, signed webhooks and operations endpoints. "
            "`bothost docs web` and `bothost docs webhooks` describe them.",
        },
        "paths": paths(),
        "components": {
            "securitySchemes": {
                "token": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "http.token, when set",
                }
            }
        },
    }
