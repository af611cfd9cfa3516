"""The metered provider: every model call checked against the budgets and recorded.

:class:`Metered` wraps the configured provider (the host builds it so; the offline agent,
which calls no model, is left bare). Before a call it asks :mod:`bothost.usage.budget`
whether the call may be made and raises :class:`~bothost.llm.base.BudgetSpentError` if not,
so nothing is sent; after it, it writes one ``llm_usage`` row with the provider's figures,
or our estimate marked ``estimated`` when the provider reported none (some OpenAI-compatible
servers ignore ``stream_options.include_usage``; :mod:`bothost.usage.estimate` counts only
what a session's request added since its last). A call that fails or is cancelled records
nothing: no figures came back. Anything else a provider has (``wants_catalog``, ``close``,
``model``) is passed through.

Reported figures come from outside, so only token counts are taken as reported
(:func:`~bothost.llm.base.checked`: non-negative integers within
:data:`~bothost.llm.base.MAX_CALL_TOKENS`): a negative, fractional, textual, huge or missing
figure would move a budget backwards, spend everyone's day, or fail the recording and leave
the call uncounted. Such a call is estimated like one with no usage, and the log says so
once per provider and UTC day. No row can hold a negative figure, so no row lowers a total.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from bothost.config import UsageConfig
from bothost.llm.base import ChatRequest, ChatResponse, Usage, UsageReportError, checked
from bothost.usage import budget
from bothost.usage.attribution import Attribution, current
from bothost.usage.estimate import Estimator, estimate
from bothost.usage.report import utc_day

logger = logging.getLogger(__name__)

Clock = Callable[[], float]


class Metered:
    """A provider whose calls are budgeted and recorded in ``llm_usage``."""

    def __init__(
        self,
        provider: Any,
        store: Any,
        config: UsageConfig,
        model: str | None = None,
        clock: Clock = time.time,
        name: str | None = None,
    ) -> None:
        self.provider = provider
        self.store = store
        self.usage_config = config
        # the name it was registered under (`llm.provider`): the docs ask a provider plugin
        # for `complete` only, so its own `name` attribute is a fallback, not a requirement
        self.provider_name = name or getattr(provider, "name", None) or type(provider).__name__
        # the model we ask for is the one the price table names (responses may add a date)
        self.model_name = getattr(provider, "model", None) or model or self.provider_name
        self.clock = clock
        self.estimator = Estimator()
        self.warned_day = ""  # the UTC day the log last said this provider's figures are bad

    def __getattr__(self, name: str) -> Any:
        return getattr(self.provider, name)

    async def complete(self, request: ChatRequest) -> ChatResponse:
        who = current()
        now = self.clock()
        if budget.scopes(self.usage_config, who):  # no budget set: nothing to read
            refused = await self.store.run(
                lambda db: budget.refusal(db, self.usage_config, who, now)
            )
            if refused is not None:
                raise refused
        response = await self.provider.complete(request)
        usage = self.reported(response)
        if usage is None:
            usage = self.estimator.estimate(request, response, who.session)
        self.record(who, usage)
        return response

    def reported(self, response: ChatResponse) -> Usage | None:
        """The provider's figures if they are token counts; None (to be estimated) if it
        reported none or something else, which the log says once a day."""
        refused = response.usage_refused
        if response.usage is not None:
            try:
                return checked(response.usage)
            except UsageReportError as exc:
                refused = str(exc)
        if refused:
            day = utc_day(self.clock())
            if day != self.warned_day:
                self.warned_day = day
                logger.warning(
                    "%s reported usage that is not a token count (%s): its calls are counted "
                    "by our estimate and marked estimated (said once a day, UTC)",
                    self.provider_name,
                    refused,
                )
        return None

    def record(self, who: Attribution, usage: Usage) -> None:
        at = self.clock()
        row = (
            at,
            utc_day(at),
            who.kind,
            self.provider_name,
            self.model_name,
            usage.input,
            usage.output,
            usage.cached,
            usage.cache_write,
            int(usage.estimated),
            who.turn,
            who.session,
            who.user,
            who.tick,
            who.server,
        )
        # queued, not awaited: the reply need not wait on bookkeeping, and the store runs
        # jobs in order, so the next budget check (or any later read) sees this row
        self.store.post(
            lambda db: db.execute(
                "INSERT INTO llm_usage (at, day, kind, provider, model, input_tokens,"
                " output_tokens, cached_tokens, cache_write_tokens, estimated, turn_id,"
                " session_id, user_key, tick_id, mcp_server) VALUES"
                " (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                row,
            ),
            f"recording model usage ({self.model_name})",
        )


__all__ = ["Metered", "estimate"]  # estimate: the whole-request count, kept here too
