"""Questions with fields (MCP elicitations, e.g. a sudo password) answered in a Slack modal.

A modal can only open in response to a click (``views.open`` needs the click's
``trigger_id``), so the thread gets a short message with an "Answer" button (and "Decline");
the requester or an admin clicks it and fills the modal. The answers go to whoever asked and
nowhere else: never into the channel, never into the log (the SDK logger is kept above
DEBUG, see :mod:`bothost.plugins.slack.app`), never as an initial value of a secret field.
No answer within the timeout means "cancel" (None).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bothost.plugins.slack.approvals import CANCELLED
from bothost.plugins.slack.blocks import clip, context, section
from bothost.plugins.slack.mrkdwn import escape, sanitize

from bothost.models import Address
from bothost.platform import Question

if TYPE_CHECKING:
    from bothost.plugins.slack.platform import SlackPlatform

logger = logging.getLogger(__name__)

OPEN, DECLINE, CALLBACK = "bothost_form_open", "bothost_form_decline", "bothost_form"
FIELD = "value"  # action_id of every input; block_id is the field's name
LABEL_LIMIT = 2000
OPTION_LIMIT = 75  # characters of an option's text
OPTIONS_MAX = 100  # options in one select
SECRET_WORDS = ("password", "passphrase", "secret", "token", "otp", "pin")
SECRET_HINT = "Goes only to the tool that asked; never posted or logged."


@dataclass
class PendingForm:
    future: asyncio.Future[Any]
    requester: str
    question: Question


class Forms:
    def __init__(self, platform: SlackPlatform) -> None:
        self.platform = platform
        self.pending: dict[str, PendingForm] = {}

    def register(self, app: Any) -> None:
        app.action(OPEN)(self.on_open)
        app.action(DECLINE)(self.on_decline)
        app.view(CALLBACK)(self.on_submit)

    async def ask(self, address: Address, question: Question, requester: str) -> Any:
        """Post the Answer button and wait; the values, False (declined) or None."""
        key = uuid.uuid4().hex
        text = clip(escape(sanitize(question.text)), 2900)
        blocks = [
            section(f":lock: {text}"),
            {
                "type": "actions",
                "block_id": "form",
                "elements": [
                    {
                        "type": "button",
                        "action_id": OPEN,
                        "value": key,
                        "style": "primary",
                        "text": {"type": "plain_text", "text": "Answer"},
                    },
                    {
                        "type": "button",
                        "action_id": DECLINE,
                        "value": key,
                        "text": {"type": "plain_text", "text": "Decline"},
                    },
                ],
            },
        ]
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.pending[key] = PendingForm(future, requester, question)
        try:
            ts = await self.platform.post(
                address.channel,
                address.thread,
                f"A question for you: {question.text}"[:2900],
                blocks=blocks,
            )
            try:
                async with asyncio.timeout(question.timeout):
                    answer, by = await future
                note = f"Answered by <@{by}>." if answer is not False else f"Declined by <@{by}>."
            except TimeoutError:
                answer, note = None, f"No answer within {question.timeout:g} s."
            except asyncio.CancelledError:  # the turn was stopped: take the buttons away
                await self.platform.settle(address.channel, ts, text, CANCELLED)
                raise
        finally:
            self.pending.pop(key, None)
        await self.platform.update(address.channel, ts, note, blocks=[section(text), context(note)])
        return answer

    def claim(self, key: str, user: str) -> PendingForm | str:
        """The pending form ``user`` may answer, or why not."""
        pending = self.pending.get(key)
        if pending is None or pending.future.done():
            return "This question is no longer waiting for an answer."
        if not self.platform.access.may_answer(user, pending.requester):
            return "Only the person who asked, or an admin, can answer this."
        return pending

    async def on_open(self, ack: Any, body: dict[str, Any], action: dict[str, Any]) -> None:
        await ack()
        user = body["user"]["id"]
        pending = self.claim(action.get("value") or "", user)
        if isinstance(pending, str):
            await self.platform.ephemeral(
                body["channel"]["id"], user, pending, (body.get("message") or {}).get("thread_ts")
            )
            return
        await self.platform.client.views_open(
            trigger_id=body["trigger_id"], view=modal(action["value"], pending.question)
        )

    async def on_decline(self, ack: Any, body: dict[str, Any], action: dict[str, Any]) -> None:
        await ack()
        user = body["user"]["id"]
        pending = self.claim(action.get("value") or "", user)
        if isinstance(pending, str):
            await self.platform.ephemeral(
                body["channel"]["id"], user, pending, (body.get("message") or {}).get("thread_ts")
            )
            return
        pending.future.set_result((False, user))

    async def on_submit(self, ack: Any, body: dict[str, Any], view: dict[str, Any]) -> None:
        user = body["user"]["id"]
        pending = self.claim(view.get("private_metadata") or "", user)
        if isinstance(pending, str):
            await ack()  # closes the modal; the thread message already says it is over
            return
        values, errors = read_values(
            view.get("state", {}).get("values", {}), pending.question.schema
        )
        if errors:
            await ack(response_action="errors", errors=errors)
            return
        await ack()
        pending.future.set_result((values, user))


def modal(key: str, question: Question) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = [section(clip(escape(sanitize(question.text)), 2900))]
    schema = question.schema or {}
    required = set(schema.get("required") or [])
    for name, prop in (schema.get("properties") or {}).items():
        prop = prop if isinstance(prop, dict) else {}
        secret = question.secret or is_secret(name, prop)
        block: dict[str, Any] = {
            "type": "input",
            "block_id": name,
            "element": element(prop, secret),
            "label": {"type": "plain_text", "text": clip(prop.get("title") or name, LABEL_LIMIT)},
            "optional": name not in required or prop.get("type") == "boolean",
        }
        hint = SECRET_HINT if secret else prop.get("description")
        if hint:
            block["hint"] = {"type": "plain_text", "text": clip(hint, LABEL_LIMIT)}
        blocks.append(block)
    return {
        "type": "modal",
        "callback_id": CALLBACK,
        "private_metadata": key,
        "title": {"type": "plain_text", "text": "A question for you"},
        "submit": {"type": "plain_text", "text": "Send"},
        "close": {"type": "plain_text", "text": "Cancel"},
        "blocks": blocks[:100],
    }


def is_secret(name: str, prop: dict[str, Any]) -> bool:
    return (
        prop.get("format") == "password"
        or prop.get("writeOnly") is True
        or any(word in name.lower() for word in SECRET_WORDS)
    )


def choices(prop: dict[str, Any]) -> list[tuple[str, str]]:
    """(value, label) pairs of an enum field, from ``enum`` or ``oneOf``/``anyOf`` consts."""
    if isinstance(prop.get("enum"), list):
        names = prop.get("enumNames") or []
        return [
            (str(v), str(names[i]) if i < len(names) else str(v))
            for i, v in enumerate(prop["enum"])
        ]
    listed = prop.get("oneOf") or prop.get("anyOf") or []
    return [
        (str(o["const"]), str(o.get("title") or o["const"]))
        for o in listed
        if isinstance(o, dict) and "const" in o
    ]


def element(prop: dict[str, Any], secret: bool) -> dict[str, Any]:
    kind = prop.get("type")
    default = None if secret else prop.get("default")
    items = prop["items"] if isinstance(prop.get("items"), dict) else {}
    if kind == "array" and choices(items):
        return select("multi_static_select", choices(items), default)
    if choices(prop):
        return select("static_select", choices(prop), default)
    if kind == "boolean":
        option = {"text": {"type": "plain_text", "text": "Yes"}, "value": "true"}
        out: dict[str, Any] = {"type": "checkboxes", "action_id": FIELD, "options": [option]}
        if default is True:
            out["initial_options"] = [option]
        return out
    if kind in ("integer", "number"):
        out = {"type": "number_input", "action_id": FIELD, "is_decimal_allowed": kind == "number"}
        for key, slack_key in (("minimum", "min_value"), ("maximum", "max_value")):
            if key in prop:
                out[slack_key] = str(prop[key])
    elif prop.get("format") == "date":
        out = {"type": "datepicker", "action_id": FIELD}
        if default:
            out["initial_date"] = str(default)
        return out
    elif prop.get("format") == "email" and not secret:
        out = {"type": "email_text_input", "action_id": FIELD}
    elif prop.get("format") == "uri" and not secret:
        out = {"type": "url_text_input", "action_id": FIELD}
    else:
        out = {
            "type": "plain_text_input",
            "action_id": FIELD,
            "multiline": not secret and int(prop.get("maxLength") or 0) > 300,
        }
    if default is not None:
        out["initial_value"] = str(default)
    return out


def select(kind: str, options: list[tuple[str, str]], default: Any) -> dict[str, Any]:
    made = [
        {"text": {"type": "plain_text", "text": clip(label, OPTION_LIMIT)}, "value": value[:150]}
        for value, label in options[:OPTIONS_MAX]
    ]
    out: dict[str, Any] = {"type": kind, "action_id": FIELD, "options": made}
    wanted = [
        str(d) for d in (default if isinstance(default, list) else [default]) if d is not None
    ]
    initial = [o for o in made if o["value"] in wanted]
    if initial:
        if kind == "static_select":
            out["initial_option"] = initial[0]
        else:
            out["initial_options"] = initial
    return out


def read_values(
    state: dict[str, Any], schema: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, str]]:
    """The modal's state as typed values, and per-field errors Slack can show."""
    values: dict[str, Any] = {}
    errors: dict[str, str] = {}
    properties = schema.get("properties") or {}
    for name, prop in properties.items():
        prop = prop if isinstance(prop, dict) else {}
        entry = (state.get(name) or {}).get(FIELD) or {}
        kind = prop.get("type")
        if "selected_options" in entry:
            picked = [o["value"] for o in entry.get("selected_options") or []]
            if kind == "boolean":
                values[name] = "true" in picked
            else:
                values[name] = picked
            continue
        raw = entry.get("value")
        if raw is None:
            raw = (entry.get("selected_option") or {}).get("value") or entry.get("selected_date")
        if raw is None or raw == "":
            continue
        try:
            values[name] = (
                int(raw) if kind == "integer" else float(raw) if kind == "number" else raw
            )
        except ValueError:
            errors[name] = "Enter a whole number." if kind == "integer" else "Enter a number."
    return values, errors
