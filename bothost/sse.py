"""An incremental Server-Sent Events parser with a size bound, for every stream bothost reads:
MCP's Streamable HTTP transport and the hosted models' streamed answers (bothost.llm.wire).

Written here rather than relying on aiohttp's ``readline`` because MCP messages ride in a
single ``data:`` line and can be megabytes long (base64 images), past aiohttp's line limit;
our bound is the same one the stdio reader enforces. Follows the WHATWG event-stream rules
MCP relies on: a line ends at CRLF, LF or a lone CR, ``data`` lines joined with newlines,
``id`` remembered for ``Last-Event-ID`` once its event is whole (dispatched), ``retry`` in
milliseconds, comment lines ignored, an event dispatched on a blank line. One parser reads
a stream and the streams that resume it: :meth:`SseParser.end` forgets what a broken
stream left unfinished (a line, an event), so the resumed stream starts clean and is
resumed from the last event that arrived whole.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_EVENT_BYTES = 16 * 1024 * 1024  # same bound as a stdio line
# The event-stream grammar ends a line at CRLF, a lone LF or a lone CR; CRLF first, so that
# the pair is one line end and not a line end followed by a blank line.
LINE_END = re.compile(rb"\r\n|\r|\n")


class SseError(ValueError):
    """The stream broke the format or the size bound."""


@dataclass
class SseEvent:
    data: str
    event: str = "message"
    id: str | None = None  # the last event id in force when this event was dispatched
    retry: int | None = None  # milliseconds, when this event carried a retry field


class SseParser:
    def __init__(self, max_bytes: int = MAX_EVENT_BYTES) -> None:
        self.max_bytes = max_bytes
        self.last_id: str | None = None  # the id of the last event dispatched whole
        self._id: str | None = None  # the id in force for the event being read
        self.retry_ms: int | None = None
        self._pending = bytearray()
        self._after_cr = False  # the last chunk ended in a CR that ended a line
        self._data: list[str] = []
        self._size = 0
        self._event = ""
        self._retry: int | None = None
        self._saw_field = False

    def feed(self, chunk: bytes) -> list[SseEvent]:
        if self._after_cr and chunk.startswith(b"\n"):
            chunk = chunk[1:]  # the LF of a CRLF split across two chunks: one line end
        self._after_cr = False
        # what is pending holds no line end (each one was consumed), so only the new chunk
        # is searched: a 16 MB line arriving in many chunks is scanned once, not per chunk
        searched = len(self._pending)
        self._pending += chunk
        events: list[SseEvent] = []
        start = 0
        while (end := LINE_END.search(self._pending, searched)) is not None:
            line = bytes(self._pending[start : end.start()])
            start = searched = end.end()
            if end.group() == b"\r" and start == len(self._pending):
                self._after_cr = True  # the next chunk may begin with this CR's LF
            event = self._line(line.decode("utf-8", "replace"))
            if event is not None:
                events.append(event)
        del self._pending[:start]
        if len(self._pending) + self._size > self.max_bytes:
            raise SseError(f"event larger than {self.max_bytes} bytes")
        return events

    def _line(self, line: str) -> SseEvent | None:
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        self._saw_field = True
        if name == "data":
            self._data.append(value)
            self._size += len(value) + 1
        elif name == "id":
            if "\0" not in value:
                self._id = value
        elif name == "retry":
            if value.isdigit():
                self.retry_ms = self._retry = int(value)
        elif name == "event":
            self._event = value
        return None

    def resume_from(self, event_id: str | None) -> None:
        """Take `event_id` as the last event received (another stream's, to resume after)."""
        self.last_id = self._id = event_id

    def end(self) -> None:
        """The stream ended: drop its unfinished line and event (never received whole); the
        last whole event's id and the retry delay stay, for resuming."""
        self._pending.clear()
        self._after_cr = False
        self._data, self._size, self._event, self._retry = [], 0, "", None
        self._saw_field = False
        self._id = self.last_id

    def _dispatch(self) -> SseEvent | None:
        self.last_id = self._id
        if not self._saw_field:
            return None
        event = SseEvent("\n".join(self._data), self._event or "message", self.last_id, self._retry)
        self._data, self._size, self._event, self._retry = [], 0, "", None
        self._saw_field = False
        return event
