"""The stop notice, and SIGTERM.

Before the platform sends SIGTERM (preemption, cancellation, a restart of the gang, a timeout, a change of an elastic
run's size) it writes SLIPSTREAM_PREEMPTION_NOTICE_FILE with the reason and the deadline, after which the instance is
killed. The workload saves what it must and then acknowledges (SLIPSTREAM_PREEMPTION_ACK_FILE) to be released at once
instead of at the deadline.

Whatever the reason, the workload does the same (save, acknowledge, exit 0); the reason tells it what comes next, for
its logs or for work worth doing only in one case. ``Notice.world_changing``: an elastic run changes size and this
instance stays; the platform starts it again in place, in the new world. ``Notice.shrunk``: a shrink removes this
instance; the survivors' checkpoint is the one that counts. Anything else: the run stops (preempted, cancelled, ...).

Two ways to use it:

1. The training loop checks (recommended for training: the loop saves a consistent state between steps)::

       preemption = slipstream.preemption
       preemption.watch()                       # SIGTERM now only sets preemption.stop_requested
       for step in range(start, steps):
           train_one_step()
           if preemption.stop_requested.is_set():
               checkpoints.save(step + 1, state())
               preemption.acknowledge()
               sys.exit(0)

2. A callback (for state that is consistent at any moment)::

       preemption.on_stop(lambda notice: checkpoints.save(step, state()))

   The callback runs in the SIGTERM handler, that is in the main thread between two bytecodes of whatever it was
   doing (in the middle of an optimizer step, perhaps); then the stop is acknowledged, even if the callback raised or
   called sys.exit(). If the callback returns, the program goes on (stop_requested is set).

Python runs signal handlers in the main thread only, and only the main thread may install them: call watch() and
on_stop() from the main thread (signal.signal raises ValueError otherwise).
"""

import json
import os
import signal
import threading
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Callable, Optional, Union

from ._files import iso_instant, parse_instant
from .progress import Clock, utc_now


WORLD_CHANGE = "WorldChange:"
SHRUNK = "Shrunk:"


@dataclass(frozen=True)
class Notice:
    """Why the instance is being stopped, and when it will be killed (None: unknown, e.g. a plain SIGTERM)."""

    reason: str
    deadline: Optional[datetime]

    @property
    def world_changing(self) -> bool:
        """An elastic run changes size and this instance stays in it: save, acknowledge and exit 0; it is started again
        in place (same attempt, same checkpoint directory) with the new world's variables (SLIPSTREAM_WORLD_VERSION one
        more). Neither a failure nor a preemption."""
        return self.reason.startswith(WORLD_CHANGE)

    @property
    def shrunk(self) -> bool:
        """A shrink removes this instance from its elastic run: exit 0 (saving does no harm; the survivors' checkpoint
        is what counts). It is not started again; the run goes on without it."""
        return self.reason.startswith(SHRUNK)


STOP_REQUESTED = "stop requested"
TERMINATED = "terminated"


def parse_notice(text: str) -> Notice:
    """The notice in the file's text; anything unreadable still counts as a stop request."""
    try:
        node = json.loads(text)
    except ValueError:
        return Notice(STOP_REQUESTED, None)
    if not isinstance(node, dict):
        node = {}
    deadline = None
    if isinstance(node.get("deadline"), str):
        try:
            deadline = parse_instant(node["deadline"])
        except ValueError:
            pass  # an unknown deadline: the caller saves as fast as it can
    reason = node.get("reason")
    return Notice(STOP_REQUESTED if reason is None else str(reason), deadline)


class Preemption:
    """Get it from ``Slipstream.preemption`` (one per Slipstream, so that every caller sees the same event)."""

    def __init__(self, notice_file: Union[str, os.PathLike, None] = None,
                 ack_file: Union[str, os.PathLike, None] = None, clock: Clock = utc_now):
        self._notice_file = Path(notice_file) if notice_file is not None else None
        self._ack_file = Path(ack_file) if ack_file is not None else None
        self._clock = clock
        self.stop_requested = threading.Event()
        """Set on SIGTERM once watch() or on_stop() installed the handler."""

    def notice(self) -> Optional[Notice]:
        """The notice, if the platform has asked this instance to stop."""
        if self._notice_file is None or not self._notice_file.is_file():
            return None
        try:
            text = self._notice_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return Notice(STOP_REQUESTED, None)
        return parse_notice(text)

    @property
    def requested(self) -> bool:
        """Whether this instance has been asked to stop: SIGTERM came (with a handler installed) or the notice is
        there (the platform writes it before the signal)."""
        return self.stop_requested.is_set() or self.notice() is not None

    def acknowledge(self) -> None:
        """Tells the platform that this instance saved its work and may be stopped now."""
        if self._ack_file is None:
            return
        try:
            self._ack_file.write_text(iso_instant(self._clock()) + "\n", encoding="utf-8")
        except OSError:
            pass  # the grace period ends the instance all the same

    def watch(self) -> threading.Event:
        """Installs a SIGTERM handler that only sets ``stop_requested`` (main thread only); returns that event. The
        loop then saves, calls acknowledge() and exits."""
        signal.signal(signal.SIGTERM, self._set)
        return self.stop_requested

    def on_stop(self, callback: Optional[Callable[[Notice], None]] = None) -> threading.Event:
        """Installs a SIGTERM handler (main thread only) that sets ``stop_requested``, calls ``callback`` with the
        notice (Notice("terminated", None) if there is none) and then acknowledges. Without a callback, as watch()."""
        if callback is None:
            return self.watch()

        def handle(signum, frame):
            self.stop_requested.set()
            try:
                callback(self.notice() or Notice(TERMINATED, None))
            finally:
                self.acknowledge()

        signal.signal(signal.SIGTERM, handle)
        return self.stop_requested

    def _set(self, signum, frame) -> None:
        self.stop_requested.set()
