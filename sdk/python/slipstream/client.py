"""Submit, watch and cancel runs from Python: the API of docs/api.md, with the standard library only.

::

    from slipstream import Client

    client = Client()                                   # the CLI's server and token (see Client)
    client.apply(open("team.yaml").read())              # YAML or JSON text, a dict, a list of dicts, or a path
    run = client.submit("team-a", "train", overrides={"nodeGroups.worker.env.LR": "0.01"}, labels={"sweep": "s1"})
    run = client.wait(run.id, timeout=3600)
    print(run.state, "".join(client.logs(run.id)))

Errors are :mod:`slipstream.errors` exceptions carrying the server's problem list (field path and message).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import time
import urllib.parse
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Dict, Generator, Iterable, Iterator, List, Mapping, Optional, Sequence, Union

from ._http import SlipstreamWarning, Transport, json_body
from .errors import SlipstreamError, TooManyRequests, Unreachable, WaitTimeout

__all__ = ["Client", "Run", "Applied", "WatchEvent", "SlipstreamWarning", "FINAL_STATES"]

FINAL_STATES = frozenset({"SUCCEEDED", "FAILED", "CANCELLED", "TIMED_OUT"})
ADMIN_TOKEN_FILE = "admin.token"
MAX_EVENT_CHARS = 4 << 20
FOLLOW_SILENCE_SECONDS = 35 * 60.0
"""How long a followed log may stay silent: the server ends a follow after 30 minutes without output."""

Time = Union[datetime, timedelta, str]
"""A point in time for ``since``/``until``: a datetime (a naive one is local time), a timedelta ago, or the API's text
(``2026-11-29T10:00:00Z`` or a duration ago such as ``2h``)."""

Documents = Union[str, bytes, Mapping[str, Any], Sequence[Mapping[str, Any]], "os.PathLike[str]"]


@dataclass(frozen=True)
class Run:
    """A run as the API shows it; ``raw`` holds every field, including those this client has no attribute for."""

    id: str
    workspace: str
    job: str
    state: str
    reason: str
    attempt: int
    quota: Optional[str]
    real_time_resources: Optional[str]
    labels: Dict[str, str]
    overrides: Dict[str, Any]
    created_at: Optional[datetime]
    started_at: Optional[datetime]
    finished_at: Optional[datetime]
    instances: List[Dict[str, Any]]
    raw: Dict[str, Any] = field(repr=False)
    warnings: List[str] = field(default_factory=list, repr=False)

    @property
    def done(self) -> bool:
        """Whether the run has ended (succeeded, failed, was cancelled or timed out)."""
        return self.state in FINAL_STATES

    @property
    def succeeded(self) -> bool:
        return self.state == "SUCCEEDED"

    @classmethod
    def of(cls, data: Any, warnings: Optional[List[str]] = None) -> "Run":
        try:
            return cls._of(data, warnings)
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise SlipstreamError(502, "NOT_THE_API", f"an answer that is not a run ({type(e).__name__}: {e})") from None

    @classmethod
    def _of(cls, data: Mapping[str, Any], warnings: Optional[List[str]]) -> "Run":
        return cls(id=data["id"], workspace=data.get("workspace", ""), job=data.get("job", ""), state=data.get("state", ""),
                   reason=data.get("reason") or "", attempt=int(data.get("attempt") or 0), quota=data.get("quota"),
                   real_time_resources=data.get("realTimeResources"), labels=dict(data.get("labels") or {}),
                   overrides=dict(data.get("overrides") or {}), created_at=_instant(data.get("createdAt")),
                   started_at=_instant(data.get("startedAt")), finished_at=_instant(data.get("finishedAt")),
                   instances=list(data.get("instances") or []), raw=dict(data), warnings=list(warnings or []))


@dataclass(frozen=True)
class Applied:
    """What ``apply`` did to one document: ``created``, ``updated`` or ``unchanged`` (with ``dry_run``, would do)."""

    kind: str
    workspace: str
    name: str
    action: str
    version: int


@dataclass(frozen=True)
class WatchEvent:
    """One event of a watch stream: ``ready`` (``data["runs"]``: how many match now), ``run`` (a run changed; ``run``),
    ``gone`` (a run left the set; ``id``) and ``end`` (the stream ends; ``data["reason"]``)."""

    type: str
    data: Any
    run: Optional[Run] = None
    id: Optional[str] = None


class Client:
    """A client of one Slipstream server, as one user.

    ``server``: else ``$SLIPSTREAM_SERVER``, else ``http://127.0.0.1:8080``. ``token``: else ``$SLIPSTREAM_TOKEN``,
    else the admin token in the server's data directory (``data_dir``, else ``$SLIPSTREAM_DATA_DIR``, else
    ``./.slipstream``): the places the CLI looks. ``timeout``: seconds to wait for each answer.
    """

    def __init__(self, server: Optional[str] = None, token: Optional[str] = None, *,
                 data_dir: Union[str, "os.PathLike[str]", None] = None, timeout: float = 60.0):
        address = _first(server, os.environ.get("SLIPSTREAM_SERVER"), "http://127.0.0.1:8080").rstrip("/")
        if not re.match(r"^https?://[^/\s?#@]+$", address):
            raise ValueError(f"server: '{address}' is not a URL like http://127.0.0.1:8080 (no path, no user or password)")
        resolved = _token(token, data_dir)
        if resolved is not None and not _VISIBLE.match(resolved):
            raise ValueError("token: must be visible ASCII characters (the token given is not shown)")
        self.server = address
        self._timeout = timeout
        self._http = Transport(address, resolved, timeout)

    def __repr__(self) -> str:
        return f"Client({self.server!r})"

    # Documents

    def apply(self, documents: Documents, *, dry_run: bool = False) -> List[Applied]:
        """Creates or updates workspaces, shapes, quotas, jobs and secrets, all or nothing. ``documents``: YAML or JSON
        text (several YAML documents separated by ``---``), a file's path as a ``pathlib.Path``, a dict, or a list of
        dicts."""
        if isinstance(documents, os.PathLike):
            body, kind = Path(documents).read_bytes(), "application/yaml"
        elif isinstance(documents, (str, bytes, bytearray)):
            body = documents.encode("utf-8") if isinstance(documents, str) else bytes(documents)
            kind = "application/yaml"  # YAML is a superset of JSON: the server reads either
        elif isinstance(documents, Mapping) or isinstance(documents, Sequence):
            body, kind = json_body(documents if isinstance(documents, Mapping) else list(documents)), "application/json"
        else:
            raise TypeError(f"documents: YAML or JSON text, a path, a dict or a list of dicts, not {type(documents).__name__}")
        answer = self._http.request("POST", "/api/v1/apply", {"dryRun": "true" if dry_run else None}, body, kind)
        try:
            return [Applied(str(i["kind"]), str(i.get("workspace") or ""), str(i["name"]), str(i["action"]), int(i.get("version") or 0))
                    for i in _items(answer.body)]
        except (KeyError, TypeError, ValueError) as e:
            raise SlipstreamError(502, "NOT_THE_API", f"an answer to apply that lists no documents ({type(e).__name__}: {e})") from None

    def quotas(self, workspace: Optional[str] = None) -> List[Dict[str, Any]]:
        """Quotas (of one workspace, or every one the caller may see), each with its live ``status``."""
        return _items(self._http.request("GET", "/api/v1/quotas", {"workspace": workspace}).body)

    def usage(self, *, since: Optional[Time] = None, until: Optional[Time] = None, by: str = "workspace",
              workspace: Optional[str] = None) -> Dict[str, Any]:
        """GPU- and CPU-hours in quota, borrowed, lent and lost, and time queued, grouped ``by`` ``workspace``,
        ``quota``, ``user`` or ``job``, over a window that defaults to the 7 days before ``until`` (docs/accounting.md)."""
        answer = self._http.request("GET", "/api/v1/usage", {"since": _time(since), "until": _time(until), "by": by,
                                                             "workspace": workspace})
        return _object(answer.body)

    # Runs

    def submit(self, workspace: str, job: str, *, overrides: Optional[Mapping[str, Any]] = None,
               labels: Optional[Mapping[str, str]] = None, idempotency_key: Optional[str] = None) -> Run:
        """Runs an applied job. ``overrides`` change this run only (``{"nodeGroups.worker.replicas": 8}``,
        ``{"nodeGroups.worker.env.LR": "0.1"}``); ``labels`` label it on top of its job's labels.

        Every submission carries an idempotency key (a new one unless given): when the answer is lost on the way
        (the connection broke), the request is sent again a few times, and the server answers a repeat with the run
        the first one made. If every try fails, the :class:`Unreachable` raised carries the key
        (``idempotency_key``): submitting again with it cannot start a second run. Warnings of the server (a quota that keeps the run from ever starting) are issued as
        :class:`SlipstreamWarning` and kept in ``run.warnings``."""
        request: Dict[str, Any] = {"workspace": workspace, "job": job}
        if overrides:
            request["overrides"] = dict(overrides)
        if labels:
            request["labels"] = dict(labels)
        key = idempotency_key or str(uuid.uuid4())
        if not _VISIBLE.match(key) or len(key) > 255:
            raise ValueError("idempotency_key: must be 1 to 255 visible ASCII characters (a UUID, say)")
        body = json_body(request)
        for attempt in range(4):
            try:
                answer = self._http.request("POST", "/api/v1/runs", None, body, "application/json", {"Idempotency-Key": key})
                return Run.of(answer.body, answer.warnings)
            except Unreachable as e:
                if attempt == 3:
                    e.idempotency_key = key  # submitting again with it cannot start a second run
                    raise
                time.sleep(0.25 * 2 ** attempt)
        raise AssertionError("unreachable")

    def run(self, run_id: str) -> Run:
        """One run, with its instances and effective spec."""
        return Run.of(self._http.request("GET", "/api/v1/runs/" + _segment(run_id)).body)

    def runs(self, *, workspace: Optional[str] = None, job: Optional[str] = None, state: Union[str, Iterable[str], None] = None,
             selector: Optional[str] = None, since: Optional[Time] = None, until: Optional[Time] = None,
             limit: Optional[int] = None, page_size: int = 100) -> Iterator[Run]:
        """Runs, newest first, page after page as the iteration goes on (``limit``: at most that many). ``state``: one
        state or several; ``selector``: a label selector in kubectl's syntax (``sweep=s1,lr in (0.1,0.2)``)."""
        query: Dict[str, Any] = {"workspace": workspace, "job": job, "state": _states(state), "labelSelector": selector,
                                 "since": _time(since), "until": _time(until)}
        left = limit
        before: Optional[str] = None
        while left is None or left > 0:
            size = page_size if left is None else min(page_size, left)
            page = self._http.request("GET", "/api/v1/runs", {**query, "limit": size, "before": before}).body
            items = _items(page)
            for item in items:
                yield Run.of(item)
            if left is not None:
                left -= len(items)
            before = page.get("next")
            if not isinstance(before, str) or not before or not items:
                return

    def cancel(self, run_id: str) -> bool:
        """Cancels a run; returns whether this call started the cancellation (``False``: it was already under way or
        the run had ended). The run ends once its instances have stopped: ``wait`` for it."""
        return bool(_object(self._http.request("POST", "/api/v1/runs/" + _segment(run_id) + "/cancel").body).get("accepted"))

    def events(self, run_id: str) -> List[Dict[str, Any]]:
        """A run's history: state changes, instances' starts and ends, preemptions."""
        return _items(self._http.request("GET", "/api/v1/runs/" + _segment(run_id) + "/events").body)

    def wait(self, run_id: str, timeout: Optional[float] = None) -> Run:
        """Waits until the run has ended and returns it; raises :class:`WaitTimeout` (with the run as last seen) after
        ``timeout`` seconds. Follows the run's watch stream rather than polling; where the server serves no more
        streams, or a stream ends early (a newer stream of this user replaced it), it looks again after a pause."""
        deadline = None if timeout is None else time.monotonic() + timeout
        run = self.run(run_id)
        pause = 1.0
        while not run.done:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise WaitTimeout(run, timeout or 0)
            seconds = 300 if left is None else max(1, min(300, math.ceil(left)))
            opened = time.monotonic()
            try:
                query = {"run": run_id, "timeoutSeconds": seconds}
                with contextlib.closing(self._events(query, heartbeats=True)) as events:
                    for event in events:
                        if event.type in ("ready", "gone"):
                            run = self.run(run_id)  # it may have ended before the stream began
                        elif event.run is not None and event.id == run_id:
                            run = event.run
                        if run.done:
                            return self.run(run_id)  # as ``run`` shows it: the watch's view may leave out the spec
                        if deadline is not None and time.monotonic() >= deadline:
                            break
            except TooManyRequests:
                pass  # the server holds as many streams as it serves: look again after a pause
            if time.monotonic() - opened < seconds:  # ended early: not again at once
                time.sleep(max(0.0, min(pause, deadline - time.monotonic() if deadline is not None else pause)))
                pause = min(pause * 2, 10.0)
                run = self.run(run_id)
        return run

    def watch(self, *, workspace: Optional[str] = None, job: Optional[str] = None, state: Union[str, Iterable[str], None] = None,
              selector: Optional[str] = None, run: Optional[str] = None, timeout: Optional[int] = None) -> Generator[WatchEvent, None, None]:
        """The server-sent event stream of the runs ``runs`` would list with the same filters (or of the one ``run``):
        ``ready``, then ``run`` each time one changes and ``gone`` when one leaves the set, until ``end`` (after
        ``timeout`` seconds, default the server's 1800; when the server stops). Only changes come after ``ready``:
        read the run (``run(id)``) on ``ready`` to start from how it is. Close the iterator to stop early."""
        return self._events({"workspace": workspace, "job": job, "state": _states(state), "labelSelector": selector, "run": run,
                             "timeoutSeconds": timeout}, heartbeats=False)

    def _events(self, query: Mapping[str, Any], heartbeats: bool) -> Generator[WatchEvent, None, None]:
        kind, data = None, []  # type: Optional[str], List[str]
        for raw in self._http.stream("/api/v1/watch", query, self._stream_timeout()):
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            if line.startswith(":"):
                if heartbeats:
                    yield WatchEvent("heartbeat", None)
                continue
            if line:
                name, _, value = line.partition(":")
                value = value[1:] if value.startswith(" ") else value
                if name == "event":
                    kind = value
                elif name == "data":
                    data.append(value)
                    if sum(len(d) for d in data) > MAX_EVENT_CHARS:
                        raise SlipstreamError(502, "NOT_THE_API", f"an event of more than {MAX_EVENT_CHARS} characters")
                continue
            if kind is not None or data:
                event = _event(kind or "message", "\n".join(data))
                kind, data = None, []
                yield event
                if event.type == "end":
                    return

    def logs(self, run_id: str, instance: Optional[str] = None, *, follow: bool = False, attempt: Optional[int] = None,
             stream: Optional[str] = None, prefix: bool = True) -> Iterator[str]:
        """A run's output, line by line: of every instance (each line prefixed with its instance, unless ``prefix`` is
        false) or one ``instance``; of the current attempt or ``attempt``; ``stream``: ``stdout`` or ``stderr``.
        ``follow``: goes on as the run writes, until it ends (or it wrote nothing for 30 minutes: the server's limit)."""
        query = {"instance": instance, "attempt": attempt, "stream": stream, "follow": "true" if follow else None,
                 "prefix": None if prefix else "false"}
        silence = FOLLOW_SILENCE_SECONDS if follow else self._stream_timeout()
        for raw in self._http.stream("/api/v1/runs/" + _segment(run_id) + "/logs", query, silence):
            yield raw.decode("utf-8", "replace").rstrip("\n")

    def whoami(self) -> Dict[str, Any]:
        """The caller as the server sees the token: user, admin or not, workspaces."""
        return _object(self._http.request("GET", "/api/v1/whoami").body)

    def _stream_timeout(self) -> float:
        """How long a stream may stay silent: the watch sends a heartbeat every 2 s, so this is a dead connection."""
        return max(self._timeout, 10.0)


def _first(*values: Optional[str]) -> str:
    return next(v for v in values if v is not None and v.strip())


def _token(explicit: Optional[str], data_dir: Union[str, "os.PathLike[str]", None]) -> Optional[str]:
    for value in (explicit, os.environ.get("SLIPSTREAM_TOKEN")):
        if value and value.strip():
            return value.strip()
    directory = Path(data_dir) if data_dir is not None else Path(os.environ.get("SLIPSTREAM_DATA_DIR") or ".slipstream")
    try:
        return (directory / ADMIN_TOKEN_FILE).read_text("utf-8").strip() or None
    except OSError:
        return None


def _states(state: Union[str, Iterable[str], None]) -> Optional[str]:
    """One state or several, as the API's query takes them (comma-separated)."""
    return state if isinstance(state, str) or state is None else ",".join(state)


def _segment(value: str) -> str:
    """A run id as one path segment: ``/`` is escaped, and ``.``, ``..`` and nothing (which a URL would resolve
    away) are refused."""
    text = str(value)
    if text.strip(".") == "":
        raise ValueError(f"run_id: '{text}' is not a run id")
    return urllib.parse.quote(text, safe="")


def _object(body: Any) -> Dict[str, Any]:
    if not isinstance(body, dict):
        raise SlipstreamError(502, "NOT_THE_API", "an answer without the object the API answers")
    return body


def _items(body: Any) -> List[Dict[str, Any]]:
    items = _object(body).get("items")
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise SlipstreamError(502, "NOT_THE_API", "an answer without the list of items the API answers")
    return items


def _time(value: Optional[Time]) -> Optional[str]:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, timedelta):
        return f"{max(0, int(value.total_seconds()))}s"
    if isinstance(value, datetime):
        return value.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    raise TypeError(f"a time is a datetime, a timedelta ago or the API's text, not {type(value).__name__}")


_FRACTION = re.compile(r"\.(\d+)")
_VISIBLE = re.compile(r"^[!-~]+$")


def _instant(text: Optional[str]) -> Optional[datetime]:
    """An instant as the server writes it (``2026-12-06T10:00:00.123456789Z``); Python 3.9 reads at most microseconds."""
    if not text:
        return None
    normal = _FRACTION.sub(lambda m: "." + (m.group(1) + "000000")[:6], text.replace("Z", "+00:00"), count=1)
    return datetime.fromisoformat(normal)


def _event(kind: str, data: str) -> WatchEvent:
    try:
        parsed: Any = json.loads(data) if data else None
    except ValueError:
        parsed = data
    if kind == "run" and isinstance(parsed, dict) and "id" in parsed:
        return WatchEvent(kind, parsed, Run.of(parsed), parsed["id"])
    if kind == "gone" and isinstance(parsed, dict):
        return WatchEvent(kind, parsed, None, parsed.get("id"))
    return WatchEvent(kind, parsed)
