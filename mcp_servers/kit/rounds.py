"""A 2026-07-28 tool call that asks the person mid-call: ``input_required`` rounds (SEP-2322).

At 2026-07-28 a server may send the client no request mid-call. A tool that asks
(``ctx.elicit``) keeps running as it does at 2025-11-25, but its question becomes the
call's answer instead: ``resultType: "input_required"`` with the question under
``inputRequests`` and an opaque ``requestState``. The running call is parked under that
state; the client sends ``tools/call`` again with the state and its answer under
``inputResponses``, which resumes the call where it waits. What the call returns (or asks
next) answers that follow-up. A state the kit did not give, or gave and has finished with,
is refused (-32602): a tampered or replayed state reaches no call. A parked call waits no
longer than its question's own timeout, as at 2025-11-25, and then goes on without an
answer, so nothing waits for a client that never came back.
"""

from __future__ import annotations

import asyncio
import itertools
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

INPUT_REQUIRED = "input_required"


class Asking:
    """One call's questions, as the tool asks them and the client answers them."""

    def __init__(self) -> None:
        self._keys = itertools.count(1)
        self.question: asyncio.Future[tuple[str, dict[str, Any]]] = _future()
        self._answer: asyncio.Future[dict[str, Any]] | None = None

    async def ask(self, request: dict[str, Any], timeout: float) -> Any:
        """The client's answer to `request` (a JSON-RPC request without id); None when none
        came within `timeout`."""
        key = f"q{next(self._keys)}"
        self._answer = _future()
        if not self.question.done():
            self.question.set_result((key, request))
        try:
            async with asyncio.timeout(timeout):
                responses = await self._answer
        except TimeoutError:
            return None
        finally:
            self.question, self._answer = _future(), None
        return responses.get(key)

    def answered(self, responses: dict[str, Any]) -> None:
        if self._answer is not None and not self._answer.done():
            self._answer.set_result(responses)


class Rounds:
    """A session's parked calls, by the state their last answer gave."""

    def __init__(self) -> None:
        self.parked: dict[str, tuple[asyncio.Future[Any], Asking]] = {}

    async def start(self, run: Callable[[Asking], Awaitable[Any]]) -> Any:
        """Run a call (`run` gets the call's Asking); its result, or its first question."""
        asking = Asking()
        return await self._next(asyncio.ensure_future(run(asking)), asking)

    async def resume(self, state: Any, responses: Any) -> Any:
        """Answer a parked call; its result, or its next question. KeyError: no such call."""
        if not isinstance(state, str) or state not in self.parked:
            raise KeyError(state)
        job, asking = self.parked.pop(state)
        asking.answered(responses if isinstance(responses, dict) else {})
        return await self._next(job, asking)

    async def _next(self, job: asyncio.Future[Any], asking: Asking) -> Any:
        question = asking.question
        try:
            await asyncio.wait([job, question], return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            job.cancel()  # the client gave the call up
            raise
        if job.done():
            return job.result()
        key, request = question.result()
        state = secrets.token_urlsafe(24)
        self.parked[state] = (job, asking)
        job.add_done_callback(lambda _: self.parked.pop(state, None))
        asked = {key: request}
        return {"resultType": INPUT_REQUIRED, "inputRequests": asked, "requestState": state}


def _future() -> asyncio.Future[Any]:
    return asyncio.get_running_loop().create_future()
