"""Reading Gmail's MessagePart trees and writing replies, without a server."""

from __future__ import annotations

import base64
from email import message_from_bytes

from bothost.mcp_servers.gmail.message import compose, html_to_text, read_message


def b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def test_html_only_mail_is_read_as_text_without_scripts():
    message = {
        "id": "m1",
        "threadId": "t1",
        "internalDate": "1764662400000",
        "payload": {
            "mimeType": "multipart/alternative",
            "headers": [{"name": "Subject", "value": "Hi"}, {"name": "from", "value": "a@b"}],
            "parts": [
                {
                    "mimeType": "text/html",
                    "body": {
                        "data": b64(
                            "<style>p{}</style><p>Hello&nbsp;<b>there</b></p>"
                            "<script>alert(1)</script><p>Bye</p>"
                        )
                    },
                },
            ],
        },
    }
    read = read_message(message)
    assert read["body"] == "Hello\xa0there\nBye"
    assert read["headers"] == {"Subject": "Hi", "From": "a@b"}
    assert read["received_at"] == "2025-12-02T08:00:00Z"


def test_plain_part_wins_and_attachments_are_listed_not_inlined():
    message = {
        "id": "m1",
        "payload": {
            "mimeType": "multipart/mixed",
            "parts": [
                {
                    "mimeType": "multipart/alternative",
                    "parts": [
                        {"mimeType": "text/plain", "body": {"data": b64("plain")}},
                        {"mimeType": "text/html", "body": {"data": b64("<p>html</p>")}},
                    ],
                },
                {
                    "mimeType": "application/pdf",
                    "filename": "a.pdf",
                    "body": {"size": 9, "attachmentId": "att1"},
                },
            ],
        },
    }
    read = read_message(message)
    assert read["body"] == "plain"
    assert read["attachments"] == [
        {"filename": "a.pdf", "mime_type": "application/pdf", "size": 9, "attachment_id": "att1"}
    ]


def test_reply_subject_is_not_prefixed_twice():
    original = {"payload": {"headers": [{"name": "Subject", "value": "Re: Plan"}]}}
    raw = compose(sender=None, to=["a@b"], cc=[], subject="", body="ok", reply_to=original)
    sent = message_from_bytes(base64.urlsafe_b64decode(raw))
    assert sent["Subject"] == "Re: Plan" and "In-Reply-To" not in sent


def test_html_to_text_collapses_blank_runs():
    assert html_to_text("<div>a</div><br><br><br><div>b</div>") == "a\n\nb"
