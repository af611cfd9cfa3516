"""What a chat platform is to the host: a name, a lifecycle, ``send`` and ``ask``.

Platforms are registered through the ``register_platforms`` hook. The host starts the
enabled ones, routes each :class:`~bothost.models.IncomingMessage` they hand it to an agent
turn, and delivers replies and briefings through ``send``. Asking a person (an approval, an
elicitation) is the platform's job: ``ask`` returns the answer, or ``None`` when nobody is
there to answer, which callers treat as "no".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from bothost.models import Address, Briefing


@dataclass
class Question:
    """Something to ask a person: a yes/no approval or a small form (elicitation)."""

    text: str
    kind: str = "approval"  # "approval" (yes/no) or "form" (fields of `schema`)
    schema: dict[str, Any] = field(default_factory=dict)
    secret: bool = False  # never echo the answer (passwords)
    user: str = ""  # who may answer (the requester); admins may too
    timeout: float = 300.0


@runtime_checkable
class Platform(Protocol):
    name: str

    def enabled(self, host: Any) -> bool:
        """Whether to start this platform with the current config."""

    async def start(self, host: Any) -> None:
        """Connect and begin handing messages to ``host.handle_message``; return promptly."""

    async def stop(self) -> None: ...

    async def send(self, address: Address, text: str, **kwargs: Any) -> Any:
        """Post ``text`` to ``address``; return a platform reference (e.g. a message ts)."""

    async def send_briefing(self, address: Address, briefing: Briefing) -> Any:
        """Deliver a briefing; raise on failure so the delivery is retried."""

    async def ask(self, address: Address, question: Question) -> Any:
        """Ask a person; ``True``/``False`` for approvals, a dict for forms, ``None`` if nobody."""
