"""A test hook: kill this process at one named step of the tick (fault-injection tests).

``BOTHOST_FAULT_KILL_AT=<step>`` in the environment makes :func:`kill_point` SIGKILL the
process when the tick (or the scheduler) reaches that step, so
``tests/faults/test_tick_kill.py`` can kill ``bothost tick`` at every step of the delivery
path, not only at random moments, and check that the next tick loses nothing. It is read
once at import; unset (always, outside those tests) a kill point is one comparison with
None. Not a feature: never set it in production.
"""

from __future__ import annotations

import os
import signal

KILL_ENV = "BOTHOST_FAULT_KILL_AT"

# The steps, in the order a tick passes them; each comes right after the work it names
# is committed (or, for ``sending`` and ``sent``, around the platform's part).
STEPS = (
    "leased",  # the tick lease is taken
    "started",  # the ``ticks`` row is written
    "claimed",  # pending events are claimed
    "recorded",  # triage, the briefing and its ``deliveries`` rows are stored
    "sending",  # a target is about to be tried
    "sent",  # the target accepted it (printed and flushed, stored, posted)
    "delivery-recorded",  # that delivery is recorded as delivered
    "settled",  # the briefing and its events are settled (events ``done``)
    "ended",  # the ``ticks`` row is finished; the lease is not yet released
)
# the steps of a scheduled job's fire (bothost.schedules.runner), in order
JOB_STEPS = (
    "job-sending",  # a due job's text is about to be sent
    "job-sent",  # its target accepted it
    "job-recorded",  # the fire is recorded (the job done or moved on)
)

_kill_at = os.environ.get(KILL_ENV) or None
if _kill_at is not None and _kill_at not in STEPS + JOB_STEPS:
    known = ", ".join(STEPS + JOB_STEPS)
    raise RuntimeError(f"{KILL_ENV}={_kill_at!r}: not a step; steps: {known}")


def kill_point(step: str) -> None:
    """SIGKILL this process if ``BOTHOST_FAULT_KILL_AT`` names ``step``; else nothing."""
    if _kill_at is not None and _kill_at == step:
        os.kill(os.getpid(), signal.SIGKILL)
