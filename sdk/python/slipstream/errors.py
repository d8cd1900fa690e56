"""What the client raises: the API's error answers as typed exceptions, each with the server's problem list.

Every error the server answers carries a status, a stable code (``INVALID_INPUT``, ``NOT_FOUND``, ...), a sentence
and, for rejected input, one problem per field (docs/api.md, "Errors"). The client never lets a bare HTTP or socket
error through: a server it cannot reach is :class:`Unreachable`, an answer that is not the API's is a
:class:`SlipstreamError` with the code ``HTTP_<status>``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Type


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the input: the field's path (``labels.team``, ``documents[1].spec.quota``) and why."""

    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"


class SlipstreamError(Exception):
    """An error answer of the API (or no answer at all, for :class:`Unreachable`)."""

    def __init__(self, status: int, code: str, message: str, problems: Optional[List[Problem]] = None):
        self.status = status
        self.code = code
        self.message = message
        self.problems: List[Problem] = list(problems or [])
        super().__init__(self._text())

    def _text(self) -> str:
        if not self.problems:
            return self.message
        return self.message + "".join(f"\n  {problem}" for problem in self.problems)

    def problem(self, field: str) -> Optional[Problem]:
        """The problem with this field, if the server named one."""
        return next((p for p in self.problems if p.field == field), None)


class InvalidInput(SlipstreamError):
    """400: the request (a document, an override, a label, a query) is wrong; ``problems`` says where."""


class Unauthorized(SlipstreamError):
    """401: no token, or one the server does not accept (revoked, expired, mistyped)."""


class Forbidden(SlipstreamError):
    """403: the token is good but may not do this (another team's workspace, an admin's call)."""


class NotFound(SlipstreamError):
    """404: no such run, workspace, job or quota, or none this caller may see."""


class Conflict(SlipstreamError):
    """409 or 422: the thing changed meanwhile, or an idempotency key was used for another request."""


class TooManyRequests(SlipstreamError):
    """429: the server holds as many streams as it serves."""


class ServerError(SlipstreamError):
    """5xx other than the store being away for longer than the client waits."""


class Unavailable(ServerError):
    """503: the server cannot serve now (not the leader, too busy, stopping), or its store stayed unreachable for
    longer than the client waits for it (two minutes)."""


class Unreachable(SlipstreamError):
    """No answer: the server is not running there, the connection broke, or it did not answer in time."""

    def __init__(self, server: str, why: str):
        super().__init__(0, "UNREACHABLE", f"cannot reach the Slipstream server at {server}: {why}")
        self.idempotency_key: Optional[str] = None
        """For a submission: the key it was sent with; submitting again with it cannot start a second run."""


class WaitTimeout(TimeoutError):
    """A run did not end within the time :meth:`slipstream.Client.wait` was given; ``run`` is how it was last seen."""

    def __init__(self, run: Any, timeout: float):
        self.run = run
        super().__init__(f"run {run.id} is still {run.state} after {timeout:g} s")


_BY_STATUS: Dict[int, Type[SlipstreamError]] = {400: InvalidInput, 401: Unauthorized, 403: Forbidden, 404: NotFound,
                                               409: Conflict, 422: Conflict, 429: TooManyRequests, 503: Unavailable}


def error_of(status: int, body: Any, text: str) -> SlipstreamError:
    """The exception for an error answer: its JSON body (``ErrorView``) if it is one, else the text as the message."""
    kind = _BY_STATUS.get(status, ServerError if status >= 500 else SlipstreamError)
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        listed = body.get("problems")
        problems = [Problem(str(p.get("field", "")), str(p.get("message", ""))) for p in listed
                    if isinstance(p, dict)] if isinstance(listed, list) else []
        return kind(status, str(body.get("code") or f"HTTP_{status}"), body["message"], problems)
    text = text.strip()
    return kind(status, f"HTTP_{status}", (text[:500] + "...") if len(text) > 500 else text or f"HTTP {status}")
