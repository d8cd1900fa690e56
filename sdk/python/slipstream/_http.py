"""The client's HTTP: one request at a time with the standard library, errors mapped to :mod:`slipstream.errors`.

While the server's store cannot be reached (503 ``STORE_UNAVAILABLE``), a request is sent again after the server's
Retry-After for up to two minutes, as the CLI does: such a request changed nothing, so sending it again is safe.
"""

from __future__ import annotations

import http.client
import json
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Iterator, List, Mapping, Optional

from .errors import SlipstreamError, Unavailable, Unreachable, error_of

STORE_WAIT_SECONDS = 120.0
MAX_BODY_BYTES = 64 << 20
"""The most an answer may hold (a page of runs is far smaller): a server that sends more is not this API."""
MAX_LINE_BYTES = 1 << 20
"""The longest line of a stream: the server's log lines and events are far shorter."""
_STORE_UNAVAILABLE = "STORE_UNAVAILABLE"


class SlipstreamWarning(UserWarning):
    """What the server warned about with an answer (a run its quota keeps from ever starting, say)."""


@dataclass(frozen=True)
class Answer:
    status: int
    body: Any
    warnings: List[str]
    headers: Mapping[str, str]


class Transport:
    def __init__(self, server: str, token: Optional[str], timeout: float,
                 sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic):
        self.server = server
        self._token = token
        self._timeout = timeout
        self._sleep = sleep
        self._clock = clock
        # No proxy from the environment (as the CLI's HTTP client): http_proxy would get every request and its token,
        # a local server's too. No redirects: urllib would follow them to any host with the token.
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirects)

    def url(self, path: str, query: Optional[Mapping[str, Any]] = None) -> str:
        present = {k: v for k, v in (query or {}).items() if v is not None}
        return self.server + path + ("?" + urllib.parse.urlencode(present) if present else "")

    def request(self, method: str, path: str, query: Optional[Mapping[str, Any]] = None, body: Optional[bytes] = None,
                content_type: Optional[str] = None, headers: Optional[Mapping[str, str]] = None) -> Answer:
        """Sends until the answer is not the store being away; returns a 2xx answer or raises its error."""
        deadline = self._clock() + STORE_WAIT_SECONDS
        while True:
            try:
                with self._open(method, path, query, body, content_type, headers, self._timeout) as response:
                    data = response.read(MAX_BODY_BYTES + 1)
                    if len(data) > MAX_BODY_BYTES:
                        raise self.not_the_api(f"an answer of more than {MAX_BODY_BYTES >> 20} MiB")
                    parsed = _json(data) if data else None
                    if parsed is not None and not isinstance(parsed, dict):
                        raise self.not_the_api(f"a {type(parsed).__name__} where the API answers an object")
                    said = _warnings(response.headers.get_all("Warning") or [])
                    for text in said:
                        warnings.warn(text, SlipstreamWarning, stacklevel=3)
                    return Answer(response.status, parsed, said, dict(response.headers.items()))
            except _StoreAway as away:
                if self._clock() + away.retry_after > deadline:
                    raise Unavailable(503, away.error.code, f"the server's store is still unavailable after "
                                      f"{STORE_WAIT_SECONDS:g} s: {away.error.message}") from None
                self._sleep(away.retry_after)
            except (OSError, http.client.HTTPException) as e:  # a connection refused, reset or timed out
                raise self.unreachable(e) from None
            except _NotJson as e:
                raise self.not_the_api(str(e)) from None

    def not_the_api(self, what: str) -> SlipstreamError:
        return SlipstreamError(502, "NOT_THE_API", f"{self.server} did not answer as a Slipstream server: {what}")

    def stream(self, path: str, query: Optional[Mapping[str, Any]], silence: float) -> Iterator[bytes]:
        """The lines of a streamed answer (logs, server-sent events) as they come; closed when the caller stops. The
        answer must begin within the client's timeout; after that the stream may stay silent for ``silence`` seconds."""
        deadline = self._clock() + STORE_WAIT_SECONDS
        while True:
            try:
                response = self._open("GET", path, query, None, None, None, self._timeout)
                _read_timeout(response, silence)
                break
            except _StoreAway as away:
                if self._clock() + away.retry_after > deadline:
                    raise Unavailable(503, away.error.code, away.error.message) from None
                self._sleep(away.retry_after)
            except (OSError, http.client.HTTPException) as e:
                raise self.unreachable(e) from None
        with response:
            while True:
                try:
                    line = response.readline(MAX_LINE_BYTES + 1)
                except (OSError, http.client.HTTPException) as e:
                    raise self.unreachable(e) from None
                if len(line) > MAX_LINE_BYTES:
                    raise self.not_the_api(f"a line of more than {MAX_LINE_BYTES >> 20} MiB")
                if not line:
                    return
                yield line

    def unreachable(self, e: BaseException) -> Unreachable:
        reason = getattr(e, "reason", e)
        if isinstance(reason, ConnectionRefusedError):
            why = "nothing listens there (is the server running? start it with: slipstream server)"
        elif isinstance(reason, (socket.timeout, TimeoutError)):
            why = f"no answer within {self._timeout:g} s"
        else:
            why = str(reason) or type(reason).__name__
        return Unreachable(self.server, why)

    def _open(self, method: str, path: str, query: Optional[Mapping[str, Any]], body: Optional[bytes],
              content_type: Optional[str], headers: Optional[Mapping[str, str]], timeout: Optional[float]) -> http.client.HTTPResponse:
        request = urllib.request.Request(self.url(path, query), data=body, method=method)
        if self._token:
            request.add_header("Authorization", "Bearer " + self._token)
        if content_type:
            request.add_header("Content-Type", content_type)
        request.add_header("Accept", "application/json")
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        try:
            response: http.client.HTTPResponse = self._opener.open(request, timeout=timeout)
            return response
        except ValueError:  # http.client refuses a header value with a line break; said without the value (a token)
            raise SlipstreamError(0, "INVALID_REQUEST", "a header of the request holds a control character") from None
        except urllib.error.HTTPError as e:
            with e:
                text = e.read(MAX_BODY_BYTES).decode("utf-8", "replace")
            try:
                parsed: Any = _json(text.encode("utf-8"))
            except _NotJson:
                parsed = None
            error = error_of(e.code, parsed, text)
            if e.code == 401:
                error = type(error)(401, error.code, error.message + " (pass token=, set SLIPSTREAM_TOKEN, or run where the "
                                    "server's data dir is)", error.problems)
            if e.code == 503 and error.code == _STORE_UNAVAILABLE:
                raise _StoreAway(error, _retry_after(e.headers.get("Retry-After"))) from None
            raise error from None


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """The API never redirects; urllib would follow to any host with the token in the request's headers."""

    def redirect_request(self, req: urllib.request.Request, fp: Any, code: int, msg: str, headers: Any,
                         newurl: str) -> Optional[urllib.request.Request]:
        return None


class _NotJson(Exception):
    pass


def _json(data: bytes) -> Any:
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as e:  # RecursionError: JSON nested deeper than Python's stack
        raise _NotJson(f"not JSON ({type(e).__name__})") from None


def _read_timeout(response: http.client.HTTPResponse, seconds: float) -> None:
    """Sets how long a streamed answer may stay silent, now that it has begun (CPython's socket under the response)."""
    sock = getattr(getattr(getattr(response, "fp", None), "raw", None), "_sock", None)
    if sock is not None:
        sock.settimeout(seconds)


class _StoreAway(Exception):
    def __init__(self, error: SlipstreamError, retry_after: float):
        super().__init__(error.message)
        self.error = error
        self.retry_after = retry_after


def _retry_after(value: Optional[str]) -> float:
    """The server's Retry-After in seconds, kept between 1 and 10 (a missing or odd value: 2), as the CLI keeps it."""
    try:
        seconds = int((value or "2").strip())
    except ValueError:
        seconds = 2
    return float(max(1, min(10, seconds)))


def _warnings(values: List[str]) -> List[str]:
    """The texts of ``Warning: 299 slipstream "text"`` headers."""
    texts = []
    for value in values:
        start = value.find('"')
        if start >= 0 and value.endswith('"') and len(value) > start + 1:
            value = value[start + 1:-1].replace('\\"', '"').replace("\\\\", "\\")
        texts.append(value)
    return texts


def json_body(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode("utf-8")

