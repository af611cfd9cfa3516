"""One reply in one thread, shown while the agent works: a status, then streamed text.

The status goes to ``assistant.threads.setStatus``; where Slack refuses it (the app is not
an AI app, a missing scope) a reaction on the person's message stands in. Text streams
through ``chat.startStream`` / ``appendStream`` / ``stopStream``; where that is refused the
reply is posted and then edited with ``chat.update`` as more arrives, split into several
messages when it outgrows one. Calls are spaced (``interval``) so a fast model does not
turn every token into an API call. A feature Slack refuses for good (unknown method,
missing scope) is remembered by the platform, so later replies go straight to the fallback.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any

from bothost.plugins.slack.mrkdwn import StreamCleaner, split, to_mrkdwn, undisguise_markdown

from bothost.api import Outcome, Reply

if TYPE_CHECKING:
    from bothost.plugins.slack.platform import SlackPlatform

logger = logging.getLogger(__name__)

THINKING = "is thinking…"
STATUS_INTERVAL = 1.0  # seconds between status updates (tool progress can be chatty)
STATUS_LIMIT = 250  # characters of a status line worth showing
STREAM_INTERVAL = 0.8  # seconds between appendStream calls
APPEND_LIMIT = 12_000  # markdown_text accepted by one startStream/appendStream call
FALLBACK_REACTION = "hourglass_flowing_sand"


class LiveReply:
    """The Slack messages of one turn's reply as it is being written (not the turn's result,
    :class:`bothost.api.Reply`, which :meth:`finish` receives)."""

    def __init__(
        self,
        platform: SlackPlatform,
        channel: str,
        thread_ts: str,
        user: str,
        team: str,
        message_ts: str,
    ) -> None:
        self.platform = platform
        self.client = platform.client
        self.channel, self.thread_ts = channel, thread_ts
        self.user, self.team, self.message_ts = user, team, message_ts
        self.cleaner = StreamCleaner()
        self.said = ""  # sanitised text received so far
        self.buffer = ""  # part of `said` not yet sent to a stream
        self.stream_ts: str | None = None
        self.streaming = platform.features.get("stream", True)
        self.fallback_from = 0  # where in `said` the posted (non-stream) messages begin
        self.posted: list[tuple[str, str]] = []  # (ts, text) of fallback messages
        self.last_flush = 0.0
        self.last_status = 0.0
        self.next_status: str | None = None
        self.status_timer: asyncio.TimerHandle | None = None
        self.status_set = False
        self.finished = False
        self.reacted = False

    # --- status ------------------------------------------------------------------------------

    async def begin(self) -> None:
        await self.status(THINKING)

    async def status(self, text: str) -> None:
        """Show ``text`` as the thread's status; a burst keeps only its latest line."""
        self.next_status = text
        wait = self.last_status + self.platform.status_interval - time.monotonic()
        if self.last_status and wait > 0:
            if self.status_timer is None:
                self.status_timer = asyncio.get_running_loop().call_later(
                    wait, lambda: self.platform.spawn(self.show_status())
                )
            return
        await self.show_status()

    async def show_status(self) -> None:
        self.status_timer = None
        text, self.next_status = self.next_status, None
        if text is None or self.finished:
            return
        self.last_status = time.monotonic()
        if self.platform.features.get("status", True):
            error = await self.quietly(
                "assistant_threads_setStatus",
                channel_id=self.channel,
                thread_ts=self.thread_ts,
                status=text[:STATUS_LIMIT],
            )
            if error is None:
                self.status_set = True
                return
            self.platform.learn("status", error)
        if not self.reacted:
            self.reacted = True
            await self.quietly(
                "reactions_add",
                channel=self.channel,
                timestamp=self.message_ts,
                name=FALLBACK_REACTION,
            )

    # --- text --------------------------------------------------------------------------------

    async def text(self, delta: str) -> None:
        clean = self.cleaner.feed(delta)
        self.said += clean
        self.buffer += clean
        if self.buffer.strip() and time.monotonic() - self.last_flush >= self.interval():
            await self.flush()

    def interval(self) -> float:
        return self.platform.stream_interval if self.streaming else self.platform.update_interval

    async def flush(self) -> None:
        from slack_sdk.errors import SlackApiError  # here: see the note in .platform

        self.last_flush = time.monotonic()
        if self.streaming:
            try:
                await self.flush_stream()
                return
            except SlackApiError as exc:
                self.platform.learn("stream", str(exc.response.get("error")))
                await self.end_stream()
                self.streaming = False
                self.fallback_from = len(self.said) - len(self.buffer)
        await self.flush_messages()

    async def flush_stream(self) -> None:
        while self.buffer:
            piece = self.buffer[:APPEND_LIMIT]
            if self.stream_ts is None:
                response = await self.client.chat_startStream(
                    channel=self.channel,
                    thread_ts=self.thread_ts,
                    markdown_text=piece,
                    recipient_team_id=self.team or None,
                    recipient_user_id=self.user or None,
                )
                self.stream_ts = str(response["ts"])
            else:
                await self.client.chat_appendStream(
                    channel=self.channel, ts=self.stream_ts, markdown_text=piece
                )
            self.buffer = self.buffer[len(piece) :]

    async def flush_messages(self) -> None:
        self.buffer = ""
        chunks = split(to_mrkdwn(self.said[self.fallback_from :]))
        for i, chunk in enumerate(chunks):
            if i < len(self.posted):
                ts, shown = self.posted[i]
                if shown != chunk:
                    await self.platform.update(self.channel, ts, chunk)
                    self.posted[i] = (ts, chunk)
            elif chunk.strip():
                ts = await self.platform.post(self.channel, self.thread_ts, chunk)
                self.posted.append((ts, chunk))

    async def end_stream(self) -> None:
        if self.stream_ts is not None:
            await self.quietly("chat_stopStream", channel=self.channel, ts=self.stream_ts)
            self.stream_ts = None

    # --- the end -----------------------------------------------------------------------------

    async def finish(self, reply: Reply) -> None:
        """Send what is left, close the stream, and post the reply if it was not streamed.

        A stopped turn posts nothing more: the answer to the ``stop`` message says so.
        """
        self.finished = True
        if self.status_timer is not None:
            self.status_timer.cancel()
        tail = self.cleaner.flush()
        self.said += tail
        self.buffer += tail
        if self.buffer.strip() or (not self.streaming and self.said.strip()):
            await self.flush()
        await self.end_stream()
        final = reply.text.strip()
        stopped = reply.outcome is Outcome.STOPPED
        if final and not stopped and undisguise_markdown(final) not in self.said:
            await self.platform.send_text(self.channel, self.thread_ts, final)
        elif self.status_set and not self.said.strip():
            await self.quietly(
                "assistant_threads_setStatus",
                channel_id=self.channel,
                thread_ts=self.thread_ts,
                status="",
            )
        if self.reacted:
            await self.quietly(
                "reactions_remove",
                channel=self.channel,
                timestamp=self.message_ts,
                name=FALLBACK_REACTION,
            )

    async def quietly(self, method: str, **kwargs: Any) -> str | None:
        """A cosmetic call: None if it worked, else the error (logged, never raised)."""
        import aiohttp
        from slack_sdk.errors import SlackApiError

        try:
            await getattr(self.client, method)(**kwargs)
        except SlackApiError as exc:
            error = str(exc.response.get("error"))
        except (aiohttp.ClientError, TimeoutError) as exc:
            error = type(exc).__name__
        else:
            return None
        logger.info("slack %s failed: %s", method, error)
        return error
