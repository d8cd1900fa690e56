"""Progress reports: the step reached, the newest checkpoint and a few metrics.

To SLIPSTREAM_PROGRESS_FILE, or where there is none, to the API with the run's token (SLIPSTREAM_SERVER,
SLIPSTREAM_RUN_TOKEN). The platform reads them for hang detection (progress counts as a sign of life) and to tell how
much work a preemption or failure throws away. Writes are atomic and at most one a second, except checkpoints, which
are always written at once. Outside Slipstream (no such variable) reports go nowhere.
"""

import json
import math
import os
import sys
import threading
import urllib.error
import urllib.request
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Callable, Mapping, Optional, Union

from ._files import iso_instant, write_atomically

MIN_INTERVAL = timedelta(seconds=1)
TIMEOUT_SECONDS = 5.0

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


class ProgressApi:
    """Sends reports to the API where no progress file is given (Kubernetes: the control plane cannot read files in
    pods). A report that cannot be delivered is dropped, with one line on stderr the first time: progress is advice to
    the platform, never a reason for a workload to fail."""

    def __init__(self, server: str, run_id: str, rank: int, token: str):
        self.url = f"{server.rstrip('/')}/api/v1/runs/{run_id}/instances/{rank}/progress"
        self._token = token
        # As the Java SDK's HttpClient: no proxy from the environment (http_proxy would send the run's token elsewhere).
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        self._warned = False
        self._lock = threading.RLock()

    def send(self, body: str) -> None:
        request = urllib.request.Request(self.url, data=body.encode("utf-8"), method="POST", headers={
            "Authorization": f"Bearer {self._token}", "Content-Type": "application/json"})
        try:
            with self._opener.open(request, timeout=TIMEOUT_SECONDS) as response:
                if response.status >= 300:
                    self._warn_once(f"the server refused a progress report ({response.status})")
        except urllib.error.HTTPError as e:
            detail = e.read(500).decode("utf-8", "replace") if e.fp is not None else ""
            self._warn_once(f"the server refused a progress report ({e.code}): {detail}")
        except Exception as e:  # URLError, timeouts, a reset connection: never the workload's failure
            self._warn_once(f"cannot reach the server to report progress: {e!r}")

    def _warn_once(self, message: str) -> None:
        with self._lock:
            if self._warned:
                return
            self._warned = True
        print(f"slipstream sdk: {message} (further failures are not shown)", file=sys.stderr, flush=True)


class Progress:
    """Get it from ``Slipstream.progress``; ``file`` and ``api`` both None: reports go nowhere."""

    def __init__(self, file: Union[str, os.PathLike, None] = None, api: Optional[ProgressApi] = None,
                 clock: Clock = utc_now):
        self._file = Path(file) if file is not None else None
        self._api = api
        self._clock = clock
        # Reentrant: an on_stop callback runs in the main thread, perhaps while that thread is inside report(),
        # and a checkpoint it saves reports here again. A Lock would deadlock there.
        self._lock = threading.RLock()
        self._step = -1
        self._checkpoint_step: Optional[int] = None
        self._checkpoint_time: Optional[datetime] = None
        self._last_write: Optional[datetime] = None

    @property
    def file(self) -> Optional[Path]:
        return self._file

    def report(self, step: int, metrics: Optional[Mapping[str, float]] = None) -> None:
        """The step reached, with metrics (name to number, e.g. loss); skipped if the last write was under a second
        ago. Metrics that are not finite (NaN, infinity) or None are left out; values go through float(), so a
        one-element tensor will do."""
        with self._lock:
            self._step = int(step)
            now = self._clock()
            if self._last_write is None or now - self._last_write >= MIN_INTERVAL:
                self._write(now, metrics or {})

    def checkpointed(self, step: int) -> None:
        """A checkpoint of ``step`` is complete: written at once, as the platform counts lost work from it."""
        with self._lock:
            now = self._clock()
            self._checkpoint_step = int(step)
            self._checkpoint_time = now
            self._step = max(self._step, int(step))
            self._write(now, {})

    def _write(self, now: datetime, metrics: Mapping[str, float]) -> None:
        self._last_write = now
        if self._file is None and self._api is None:
            return
        body = render(max(self._step, 0), now, self._checkpoint_step, self._checkpoint_time, metrics)
        if self._file is None:
            self._api.send(body)
            return
        try:
            write_atomically(self._file, (body + "\n").encode("utf-8"))
        except OSError as e:
            raise OSError(f"cannot write the progress file {self._file}: {e}") from e


def render(step: int, now: datetime, checkpoint_step: Optional[int], checkpoint_time: Optional[datetime],
           metrics: Mapping[str, float]) -> str:
    """The report as the platform reads it (the same JSON the Java SDK writes)."""
    node = {"step": step, "time": iso_instant(now)}
    if checkpoint_step is not None:
        node["checkpointStep"] = checkpoint_step
        node["checkpointTime"] = iso_instant(checkpoint_time)
    values = {}
    for name, value in dict(metrics).items():
        if value is None:
            continue
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise TypeError(f"metric {name!r} is not a number: {value!r}") from None
        if math.isfinite(number):
            values[str(name)] = number
    node["metrics"] = values
    return json.dumps(node, separators=(",", ":"), allow_nan=False)
