"""The errors of the memgate client: one exception per REST error code.

Every error the server answers is ``{"error": {"code", "message", "field"}}``
with one HTTP status per code; the client raises the subclass of
:class:`MemgateError` for its code. An error raised before a request reached
the server (an invalid argument, a connection that failed) has ``status`` 0.

An error never carries the API key: not in its message, not in its repr.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from email.message import Message
from email.utils import parsedate_to_datetime
from typing import Dict, Mapping, Optional, Type

__all__ = [
    "MemgateError",
    "InvalidArgument",
    "Unauthenticated",
    "Forbidden",
    "NotFound",
    "MethodNotAllowed",
    "Conflict",
    "TooLarge",
    "PolicyViolation",
    "RateLimited",
    "Unavailable",
    "Internal",
    "TransportError",
]


class MemgateError(Exception):
    """An error of the memgate API.

    Attributes:
        status: the HTTP status (0 when no response was received).
        code: the REST error code (``not_found``, ``conflict``…).
        field: the field, header or parameter the error is about, if any.
        message: the server's message, without the ``field: `` prefix.
        request_id: the response's X-Request-Id, to find its log line.
    """

    status: int
    code: str
    field: Optional[str]
    message: str
    request_id: Optional[str]

    def __init__(
        self,
        message: str,
        *,
        status: int = 0,
        code: str = "internal",
        field: Optional[str] = None,
        request_id: Optional[str] = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.field = field or None
        self.message = message
        self.request_id = request_id

    def __str__(self) -> str:
        text = f"{self.code}: {self.field}: {self.message}" if self.field else f"{self.code}: {self.message}"
        if self.status:
            text += f" (HTTP {self.status}"
            text += f", request {self.request_id})" if self.request_id else ")"
        return text

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(status={self.status!r}, code={self.code!r}, "
            f"field={self.field!r}, message={self.message!r}, request_id={self.request_id!r})"
        )


class InvalidArgument(MemgateError):
    """invalid_argument (400): a field, header or parameter is wrong."""


class Unauthenticated(MemgateError):
    """unauthenticated (401): the key is missing, unknown or revoked."""


class Forbidden(MemgateError):
    """forbidden (403): the key may not do this, or not in this scope."""


class NotFound(MemgateError):
    """not_found (404): missing, or outside the key's scope (the server
    answers both alike)."""


class MethodNotAllowed(MemgateError):
    """method_not_allowed (405)."""


class Conflict(MemgateError):
    """conflict (409): a stale version (If-Match), a memory no longer
    active, or an Idempotency-Key sent with another body."""


class TooLarge(MemgateError):
    """too_large (413): a body, a field or a list is over its bound."""


class PolicyViolation(MemgateError):
    """policy_violation (422): the write gate refused the memory."""


class RateLimited(MemgateError):
    """rate_limited (429): the key's token bucket is empty.

    ``retry_after`` is the server's Retry-After in seconds, if it sent one.
    """

    retry_after: Optional[float]

    def __init__(
        self,
        message: str,
        *,
        status: int = 429,
        code: str = "rate_limited",
        field: Optional[str] = None,
        request_id: Optional[str] = None,
        retry_after: Optional[float] = None,
    ) -> None:
        super().__init__(message, status=status, code=code, field=field, request_id=request_id)
        self.retry_after = retry_after

    def __repr__(self) -> str:
        return super().__repr__()[:-1] + f", retry_after={self.retry_after!r})"


class Unavailable(MemgateError):
    """unavailable (503): the store, the embedder or the model cannot
    answer now (a full database, a database away, no chat model)."""


class Internal(MemgateError):
    """internal (500): the server failed; its log has the request id."""


class TransportError(MemgateError):
    """No usable response: the connection failed, timed out or was cut.

    ``status`` is 0 and ``code`` is ``transport``; the cause is chained
    (``__cause__``). A request that is not safe to repeat is never retried
    after one, since it may have been carried out.
    """


_BY_CODE: Dict[str, Type[MemgateError]] = {
    "invalid_argument": InvalidArgument,
    "unauthenticated": Unauthenticated,
    "forbidden": Forbidden,
    "not_found": NotFound,
    "method_not_allowed": MethodNotAllowed,
    "conflict": Conflict,
    "too_large": TooLarge,
    "policy_violation": PolicyViolation,
    "rate_limited": RateLimited,
    "unavailable": Unavailable,
    "internal": Internal,
}

# The code of a response without an API error body (a proxy's page): the
# inverse of the server's table.
_CODE_OF_STATUS: Mapping[int, str] = {
    400: "invalid_argument",
    401: "unauthenticated",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    412: "conflict",
    413: "too_large",
    422: "policy_violation",
    429: "rate_limited",
    502: "unavailable",
    503: "unavailable",
    504: "unavailable",
}


def retry_after_seconds(headers: Message) -> Optional[float]:
    """Returns the Retry-After header in seconds (delta-seconds or an HTTP
    date), or None when it is absent or unreadable."""
    value = headers.get("Retry-After")
    if value is None:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


def error_from_response(status: int, headers: Message, body: bytes) -> MemgateError:
    """Builds the exception of an error response: from its
    ``{"error": {…}}`` body, or from its status when it has none."""
    request_id = headers.get("X-Request-Id")
    code, message, field = "", "", ""
    try:
        doc = json.loads(body.decode("utf-8"))
        err = doc.get("error") if isinstance(doc, dict) else None
        if isinstance(err, dict):
            code = str(err.get("code") or "")
            message = str(err.get("message") or "")
            field = str(err.get("field") or "")
    except (UnicodeDecodeError, ValueError):
        pass
    if not code:
        code = _CODE_OF_STATUS.get(status, "internal")
        message = f"the server answered HTTP {status} without an API error body"
    elif field and message.startswith(field + ": "):
        # The server's message is self-contained ("field: message"); the
        # field is kept apart, as the error it came from had it.
        message = message[len(field) + 2 :]
    cls = _BY_CODE.get(code, MemgateError)
    if cls is RateLimited:
        return RateLimited(
            message, status=status, code=code, field=field, request_id=request_id,
            retry_after=retry_after_seconds(headers),
        )
    return cls(message, status=status, code=code, field=field, request_id=request_id)
