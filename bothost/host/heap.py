"""The garbage collector's settings for a long-running host (``bothost run``).

CPython's cyclic collector scans every container object it tracks. A host's start-up
leaves tens of thousands of them that live as long as the process (modules, functions,
config, plugins, routes), and a burst of events keeps a dozen per event alive until its
commit (the producer's task and coroutine, the future it awaits, the row). With Python's
defaults a 10,000-event burst ran ~190 young collections that promoted the whole burst to
the old generation and set off one or two full collections, each walking the start-up heap
too: profiled, the collector took a quarter of the burst's CPU time, and whether one or two
full collections fell inside it is why the same bench swung between 29k and 43k events/s.

So once start-up is done, :func:`settle` moves what start-up left into the permanent
generation (``gc.freeze``: never scanned again, never freed, as none of it would be) and
lets the young generation grow to :data:`YOUNG_THRESHOLD` objects before a collection, so a
burst's objects are mostly freed by reference counting before the collector looks at them.
Tests and one-shot commands keep Python's defaults: freezing a test process's heap would
keep every test's garbage forever.
"""

from __future__ import annotations

import gc
import logging

logger = logging.getLogger(__name__)

# Container allocations (net of frees) between young collections; Python's default is 700
# (2,000 from 3.13). 5,000 young objects waiting for a collection is a megabyte or so at
# most; with the freeze it took a 10,000-event burst from 166 young, 15 middle and 1-2 full
# collections to 21, 2 and none, and the collector's CPU from ~9 to ~2 µs per event.
YOUNG_THRESHOLD = 5_000


def settle() -> int:
    """Freeze what start-up left and raise the young threshold; the objects frozen."""
    gc.collect()  # start-up's own garbage is freed, not frozen
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
    frozen = gc.get_freeze_count()
    logger.info(
        "start-up heap frozen (%d objects); young collections every %d allocations",
        frozen,
        YOUNG_THRESHOLD,
    )
    return frozen
