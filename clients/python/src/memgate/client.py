"""The memgate HTTP client, over urllib from the standard library.

A :class:`Client` has one method per operation of the API (``/openapi.json``),
except ``/mcp``, which MCP clients speak. It is safe to share between
threads: it keeps no state between calls but its settings.
"""

from __future__ import annotations

import http.client
import json
import random
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from datetime import datetime
from email.message import Message
from typing import (
    Any,
    Dict,
    Iterable,
    Iterator,
    List,
    Literal,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Union,
    cast,
    overload,
)

from .errors import (
    InvalidArgument,
    MemgateError,
    TransportError,
    error_from_response,
    retry_after_seconds,
)
from .types import (
    AuditEvent,
    AuditHistogram,
    AuditPage,
    ChatResult,
    CreatedKey,
    ForgetReceipt,
    Health,
    ImportResult,
    IngestMessage,
    IngestResult,
    Key,
    Memory,
    MemoryInput,
    MemoryList,
    RecallResult,
    Remembered,
    Stats,
    Whoami,
)

__all__ = ["Client", "Time", "OPERATIONS"]

__version__ = "0.1.0"

# Time is a time as the API takes it: an RFC 3339 string, or an aware
# datetime (a naive one is refused: its zone would be a guess).
Time = Union[str, datetime]

# One or several values of a repeatable query parameter (kind, source, status).
Values = Union[str, Sequence[str]]

# OPERATIONS maps each operationId of /openapi.json to the Client method
# that performs it (the /mcp endpoint is for MCP clients, not this one).
OPERATIONS: Mapping[str, str] = {
    "remember": "remember",
    "list": "list_memories",
    "get": "get",
    "update": "update",
    "delete": "delete",
    "getByKey": "get_by_key",
    "updateByKey": "update_by_key",
    "deleteByKey": "delete_by_key",
    "revoke": "revoke",
    "approve": "approve",
    "reject": "reject",
    "feedback": "feedback",
    "recall": "recall",
    "forget": "forget",
    "audit": "audit",
    "auditHistogram": "audit_histogram",
    "stats": "stats",
    "import": "import_jsonl",
    "export": "export_jsonl",
    "whoami": "whoami",
    "chat": "chat",
    "ingestMessages": "ingest_messages",
    "healthz": "healthz",
    "readyz": "readyz",
    "metrics": "metrics",
    "openapi": "openapi",
    "createKey": "create_key",
    "listKeys": "list_keys",
    "revokeKey": "revoke_key",
}

# The largest response body read into memory (export streams instead).
MAX_RESPONSE_BYTES = 64 << 20

# First wait between retries when the server names none; it doubles.
_BACKOFF = 0.25

_Query = List[Tuple[str, str]]

# The calls a default principal or agent applies to: memory calls, never
# keys, import or forget.
_PRINCIPAL_PATHS = ("/v1/memories", "/v1/recall", "/v1/chat", "/v1/conversations/", "/v1/stats", "/v1/audit", "/v1/export")
_AGENT_PATHS = ("/v1/memories", "/v1/recall", "/v1/chat", "/v1/conversations/", "/v1/stats")


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Refuses to follow redirects: urllib would resend the Authorization
    header to wherever the Location points. A 3xx surfaces as an error."""

    def redirect_request(self, req: Any, fp: Any, code: Any, msg: Any, headers: Any, newurl: Any) -> None:
        return None


class _Response:
    """A response: its status, headers and, unless streamed, body."""

    def __init__(self, status: int, headers: Message, body: bytes, stream: Optional[http.client.HTTPResponse]) -> None:
        self.status = status
        self.headers = headers
        self.body = body
        self.stream = stream

    def json(self) -> Any:
        try:
            return json.loads(self.body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            raise MemgateError(
                f"the response is not JSON: {e}", status=self.status, code="internal",
                request_id=self.headers.get("X-Request-Id"),
            ) from None


class Client:
    """A client of one memgate server, acting with one API key.

    Args:
        base_url: the server's URL, e.g. ``http://127.0.0.1:7070``.
        api_key: the key (``mgk_…``), sent as ``Authorization: Bearer``. It
            is never part of a repr or an error message.
        timeout: seconds one HTTP attempt may take.
        max_retries: retries after a 429 (any request: the server refused
            it before doing anything) and after a 503 or a failed connection
            (only requests safe to repeat: GET, and a remember with an
            idempotency key).
        max_retry_wait: the most seconds one call spends waiting between
            retries, in all; a Retry-After that would pass it raises at once.

    Errors are :class:`memgate.MemgateError` subclasses carrying the REST
    code, field, status and request id. Calls by id answer
    :class:`memgate.NotFound` for a memory outside the key's scope exactly
    as for a missing one.

    The scope arguments (``principal``, ``agent``, ``conversation``) narrow
    a call within the key's binding; a key bound to no principal (an
    admin's) names the memory's principal in calls by id.

    Defaults set once, as mem0's ``user_id`` is: ``principal`` and
    ``agent`` apply to every memory call that names none (never to keys,
    import or forget, which name whom they act on), ``kind`` and
    ``source`` to every remember::

        mg = memgate.Client(url, key, principal="alice", source="user", kind="fact")
        mg.remember("Alice lives in Porto.")
    """

    def __init__(
        self,
        base_url: str,
        api_key: str,
        timeout: float = 30.0,
        max_retries: int = 3,
        max_retry_wait: float = 20.0,
        user_agent: str = f"memgate-python/{__version__}",
        *,
        principal: Optional[str] = None,
        agent: Optional[str] = None,
        kind: Optional[str] = None,
        source: Optional[str] = None,
    ) -> None:
        parts = urllib.parse.urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
            raise ValueError(f"base_url must be an http:// or https:// URL without a query: {base_url!r}")
        if max_retries < 0 or max_retry_wait < 0 or timeout <= 0:
            raise ValueError("timeout must be positive, max_retries and max_retry_wait not negative")
        self._base = base_url.rstrip("/")
        self.__key = api_key
        self._timeout = timeout
        self._max_retries = max_retries
        self._max_retry_wait = max_retry_wait
        self._user_agent = user_agent
        self._opener = urllib.request.build_opener(_NoRedirect())
        self._sleep = time.sleep  # replaced by tests that count waits
        for name, value in (("principal", principal), ("agent", agent), ("kind", kind), ("source", source)):
            if value is not None and (not isinstance(value, str) or not value):
                raise ValueError(f"{name} must be a non-empty string when given")
        self._principal, self._agent = principal, agent
        self._kind, self._source = kind, source

    @property
    def base_url(self) -> str:
        """The server's URL, without a trailing slash."""
        return self._base

    def __repr__(self) -> str:
        return f"memgate.Client({self._base!r})"

    # ----- memories -------------------------------------------------------

    def remember(
        self,
        content: str,
        *,
        kind: Optional[str] = None,
        source: Optional[str] = None,
        principal: Optional[str] = None,
        agent: Optional[str] = None,
        conversation: Optional[str] = None,
        sensitivity: Optional[str] = None,
        reason: Optional[str] = None,
        metadata: Optional[Mapping[str, Any]] = None,
        expires_at: Optional[Time] = None,
        valid_from: Optional[Time] = None,
        valid_until: Optional[Time] = None,
        ttl: Optional[str] = None,
        supersedes: Optional[str] = None,
        key: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> Remembered:
        """Remembers one memory (POST /v1/memories) and returns it as stored:
        its status (``pending`` when the write gate holds it), or the memory
        it folded into (``deduplicated``).

        With ``idempotency_key`` the call is safe to repeat: a retry of a
        request that was stored stores nothing and returns the same memory
        with ``replayed`` true; the same key with another body is a
        :class:`Conflict` naming Idempotency-Key.

        With ``key`` (your own name for the memory, such as
        ``pref:coffee``) the memory supersedes the active one of the same
        source that has the key at its level, if any: an upsert that keeps
        the old value in the chain. Another source's memory under the key
        (the person's, for an agent key) is never replaced. Read it back
        with :meth:`get_by_key`.

        ``kind`` and ``source`` default to the client's (see the class).
        """
        body = _drop_none(
            {
                "principal": principal,
                "agent": agent,
                "conversation": conversation,
                "kind": kind,
                "source": source,
                "sensitivity": sensitivity,
                "content": content,
                "reason": reason,
                "metadata": dict(metadata) if metadata is not None else None,
                "expires_at": _time(expires_at, "expires_at"),
                "valid_from": _time(valid_from, "valid_from"),
                "valid_until": _time(valid_until, "valid_until"),
                "ttl": ttl,
                "key": key,
                "supersedes": supersedes,
            }
        )
        return self._remember(body, idempotency_key)[0]

    def remember_batch(self, memories: Sequence[MemoryInput], *, idempotency_key: Optional[str] = None) -> List[Remembered]:
        """Remembers up to 500 memories atomically (all or none) and returns
        them in order. With ``idempotency_key``, item i is keyed ``KEY#i``.
        Each item takes the client's defaults for what it leaves out."""
        return self._remember({"memories": [dict(m) for m in memories]}, idempotency_key)

    def _remember(self, body: Dict[str, Any], idempotency_key: Optional[str]) -> List[Remembered]:
        items = body["memories"] if "memories" in body else [body]
        for item in items:
            for name, value in (("kind", self._kind), ("source", self._source), ("principal", self._principal), ("agent", self._agent)):
                if value is not None and item.get(name) is None:
                    item[name] = value
        headers = {}
        if idempotency_key is not None:
            headers["Idempotency-Key"] = idempotency_key
        resp = self._call("POST", "/v1/memories", body=body, headers=headers, safe=idempotency_key is not None)
        return cast(List[Remembered], resp.json()["memories"])

    def list_memories(
        self,
        *,
        principal: Optional[str] = None,
        agent: Optional[str] = None,
        conversation: Optional[str] = None,
        kind: Optional[Values] = None,
        source: Optional[Values] = None,
        status: Optional[Values] = None,
        q: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
        standard_only: bool = False,
    ) -> MemoryList:
        """Returns one page of memories, newest first (GET /v1/memories).

        ``q`` is literal text the content must contain. ``standard_only``
        leaves restricted memories out (an agent key never sees them). Pass
        the page's ``next_cursor`` as ``cursor`` for the next page, or use
        :meth:`iter_memories`.
        """
        query = _scope(principal, agent, conversation)
        query += _repeat("kind", kind) + _repeat("source", source) + _repeat("status", status)
        query += _pairs(q=q, limit=limit, cursor=cursor, sensitivity="standard" if standard_only else None)
        return cast(MemoryList, self._call("GET", "/v1/memories", query=query).json())

    def iter_memories(
        self,
        *,
        principal: Optional[str] = None,
        agent: Optional[str] = None,
        conversation: Optional[str] = None,
        kind: Optional[Values] = None,
        source: Optional[Values] = None,
        status: Optional[Values] = None,
        q: Optional[str] = None,
        limit: Optional[int] = None,
        standard_only: bool = False,
    ) -> Iterator[Memory]:
        """Yields every memory that :meth:`list_memories` would page
        through, following ``next_cursor``; ``limit`` is the page size. A
        page is fetched when the previous one is used up."""
        cursor: Optional[str] = None
        while True:
            page = self.list_memories(
                principal=principal, agent=agent, conversation=conversation, kind=kind, source=source,
                status=status, q=q, limit=limit, cursor=cursor, standard_only=standard_only,
            )
            yield from page["memories"]
            cursor = page.get("next_cursor")
            if not cursor:
                return

    def get(
        self, id: str, *, principal: Optional[str] = None, agent: Optional[str] = None, conversation: Optional[str] = None
    ) -> Memory:
        """Returns one memory with its receipt (GET /v1/memories/{id})."""
        return self._memory("GET", id, "", principal, agent, conversation)

    def update(
        self,
        id: str,
        *,
        version: int,
        principal: Optional[str] = None,
        agent: Optional[str] = None,
        conversation: Optional[str] = None,
        content: Optional[str] = None,
        reason: Optional[str] = None,
        kind: Optional[str] = None,
        sensitivity: Optional[str] = None,
        metadata: Optional[Mapping[str, Any]] = None,
        clear_metadata: bool = False,
        ttl: Optional[str] = None,
        expires_at: Optional[Time] = None,
        clear_expires_at: bool = False,
        valid_from: Optional[Time] = None,
        valid_until: Optional[Time] = None,
    ) -> Memory:
        """Changes the fields given (PATCH /v1/memories/{id}) if the memory
        is still at ``version`` (sent as If-Match); one changed since is a
        :class:`Conflict`. Fields left None are kept; ``clear_metadata``
        and ``clear_expires_at`` remove those. The update passes the write
        gate again, as a new write would."""
        body = _patch_body(content, reason, kind, sensitivity, metadata, clear_metadata, ttl, expires_at, clear_expires_at, valid_from, valid_until)
        return self._memory("PATCH", id, "", principal, agent, conversation, body, _if_match(version))

    def delete(
        self, id: str, *, principal: Optional[str] = None, agent: Optional[str] = None, conversation: Optional[str] = None
    ) -> str:
        """Deletes a memory for good (DELETE /v1/memories/{id}) and returns
        its id."""
        resp = self._call("DELETE", _memory_path(id, ""), query=_scope(principal, agent, conversation))
        return cast(str, resp.json()["deleted"])

    def get_by_key(
        self, key: str, *, principal: Optional[str] = None, agent: Optional[str] = None, conversation: Optional[str] = None
    ) -> Memory:
        """Returns the active memory with ``key`` at exactly the level the
        principal, agent and conversation name (GET /v1/memories/by-key).
        None there, or one the API key may not read, is :class:`NotFound`."""
        resp = self._call("GET", "/v1/memories/by-key", query=_key_query(key, principal, agent, conversation))
        return cast(Memory, resp.json())

    def update_by_key(
        self,
        key: str,
        *,
        version: int,
        principal: Optional[str] = None,
        agent: Optional[str] = None,
        conversation: Optional[str] = None,
        content: Optional[str] = None,
        reason: Optional[str] = None,
        kind: Optional[str] = None,
        sensitivity: Optional[str] = None,
        metadata: Optional[Mapping[str, Any]] = None,
        clear_metadata: bool = False,
        ttl: Optional[str] = None,
        expires_at: Optional[Time] = None,
        clear_expires_at: bool = False,
        valid_from: Optional[Time] = None,
        valid_until: Optional[Time] = None,
    ) -> Memory:
        """:meth:`update` of the memory ``key`` names (PATCH
        /v1/memories/by-key), compare-and-set on ``version``: a memory
        changed or superseded since is a :class:`Conflict`."""
        body = _patch_body(content, reason, kind, sensitivity, metadata, clear_metadata, ttl, expires_at, clear_expires_at, valid_from, valid_until)
        resp = self._call(
            "PATCH", "/v1/memories/by-key", query=_key_query(key, principal, agent, conversation), body=body, headers=_if_match(version)
        )
        return cast(Memory, resp.json())

    def delete_by_key(
        self, key: str, *, principal: Optional[str] = None, agent: Optional[str] = None, conversation: Optional[str] = None
    ) -> str:
        """Deletes for good the memory ``key`` names (DELETE
        /v1/memories/by-key) and returns its id; the versions it superseded
        stay."""
        resp = self._call("DELETE", "/v1/memories/by-key", query=_key_query(key, principal, agent, conversation))
        return cast(str, resp.json()["deleted"])

    def revoke(
        self,
        id: str,
        *,
        reason: Optional[str] = None,
        principal: Optional[str] = None,
        agent: Optional[str] = None,
        conversation: Optional[str] = None,
    ) -> Memory:
        """Revokes a memory: it is never recalled again (POST
        /v1/memories/{id}/revoke)."""
        return self._memory("POST", id, "/revoke", principal, agent, conversation, _drop_none({"reason": reason}))

    def approve(
        self,
        id: str,
        version: int,
        *,
        principal: Optional[str] = None,
        agent: Optional[str] = None,
        conversation: Optional[str] = None,
    ) -> Memory:
        """Approves a pending memory at the ``version`` that was reviewed
        (POST /v1/memories/{id}/approve, an admin key). A memory changed
        since is a :class:`Conflict` and stays pending."""
        return self._memory("POST", id, "/approve", principal, agent, conversation, {}, _if_match(version))

    def reject(
        self,
        id: str,
        version: int,
        reason: Optional[str] = None,
        *,
        principal: Optional[str] = None,
        agent: Optional[str] = None,
        conversation: Optional[str] = None,
    ) -> Memory:
        """Rejects a pending memory at the ``version`` that was reviewed
        (POST /v1/memories/{id}/reject): it becomes revoked."""
        body = _drop_none({"reason": reason})
        return self._memory("POST", id, "/reject", principal, agent, conversation, body, _if_match(version))

    def feedback(
        self,
        id: str,
        value: float,
        *,
        principal: Optional[str] = None,
        agent: Optional[str] = None,
        conversation: Optional[str] = None,
    ) -> Memory:
        """Reports how useful a memory was, in [-1, 1] (POST
        /v1/memories/{id}/feedback)."""
        return self._memory("POST", id, "/feedback", principal, agent, conversation, {"value": value})

    def _memory(
        self,
        method: str,
        id: str,
        suffix: str,
        principal: Optional[str],
        agent: Optional[str],
        conversation: Optional[str],
        body: Optional[Dict[str, Any]] = None,
        headers: Optional[Dict[str, str]] = None,
    ) -> Memory:
        resp = self._call(
            method, _memory_path(id, suffix), query=_scope(principal, agent, conversation), body=body, headers=headers
        )
        return cast(Memory, resp.json())

    # ----- recall, chat, forget ------------------------------------------

    def recall(
        self,
        query: str,
        *,
        principal: Optional[str] = None,
        agent: Optional[str] = None,
        conversation: Optional[str] = None,
        k: Optional[int] = None,
        min_score: Optional[float] = None,
        kinds: Optional[Sequence[str]] = None,
        sources: Optional[Sequence[str]] = None,
        metadata: Optional[Mapping[str, Any]] = None,
        as_of: Optional[Time] = None,
        include_restricted: Optional[bool] = None,
        budget_chars: Optional[int] = None,
        diversify: Optional[bool] = None,
        explain: Optional[bool] = None,
        render: Optional[bool] = None,
        preview: Optional[bool] = None,
    ) -> RecallResult:
        """Recalls the memories that matter for ``query`` (POST /v1/recall).
        Arguments left None take the server's defaults (k 5, and the
        measured relevance floor, which is also the lowest min_score
        allowed: raise it for fewer, surer memories)."""
        body = _drop_none(
            {
                "principal": principal,
                "agent": agent,
                "conversation": conversation,
                "query": query,
                "k": k,
                "min_score": min_score,
                "kinds": list(kinds) if kinds is not None else None,
                "sources": list(sources) if sources is not None else None,
                "metadata": dict(metadata) if metadata is not None else None,
                "as_of": _time(as_of, "as_of"),
                "include_restricted": include_restricted,
                "budget_chars": budget_chars,
                "diversify": diversify,
                "explain": explain,
                "render": render,
                "preview": preview,
            }
        )
        return cast(RecallResult, self._call("POST", "/v1/recall", body=body).json())

    def chat(
        self,
        message: str,
        *,
        principal: Optional[str] = None,
        agent: Optional[str] = None,
        conversation: Optional[str] = None,
    ) -> ChatResult:
        """One turn of the agent middleware (POST /v1/chat): recall, the
        server's model, the exchange remembered. An empty ``conversation``
        starts a new one, named in the result. A server without a model
        answers :class:`Unavailable`."""
        body = _drop_none({"principal": principal, "agent": agent, "conversation": conversation, "message": message})
        return cast(ChatResult, self._call("POST", "/v1/chat", body=body).json())

    def ingest_messages(
        self,
        conversation: str,
        messages: Sequence[IngestMessage],
        *,
        principal: Optional[str] = None,
        agent: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> IngestResult:
        """Stores a conversation the application already had (POST
        /v1/conversations/{id}/messages): each message becomes a message
        memory, its source given by its role, through the write gate (what
        it refuses is an outcome, not an error). With ``idempotency_key`` a
        retry stores nothing twice and answers ``replayed`` true."""
        if not conversation:
            raise InvalidArgument("is required", field="id")
        path = "/v1/conversations/" + urllib.parse.quote(conversation, safe="") + "/messages"
        body = _drop_none({"principal": principal, "agent": agent, "messages": [dict(m) for m in messages]})
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key is not None else {}
        resp = self._call("POST", path, body=body, headers=headers, safe=idempotency_key is not None)
        return cast(IngestResult, resp.json())

    def forget(self, principal: Optional[str] = None) -> ForgetReceipt:
        """Erases every memory of a principal (POST /v1/forget); a key bound
        to a principal may leave it out."""
        return cast(ForgetReceipt, self._call("POST", "/v1/forget", body=_drop_none({"principal": principal})).json())

    # ----- audit and stats -----------------------------------------------

    def audit(
        self,
        *,
        principal: Optional[str] = None,
        memory_id: Optional[str] = None,
        recall_id: Optional[str] = None,
        action: Optional[str] = None,
        from_: Optional[Time] = None,
        to: Optional[Time] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> AuditPage:
        """Returns one page of audit events, newest first (GET /v1/audit);
        ``from_`` <= at < ``to``. See :meth:`iter_audit`."""
        query = _pairs(
            principal=principal, memory_id=memory_id, recall_id=recall_id, action=action,
            limit=limit, cursor=cursor,
        )
        query += _pairs(**{"from": _time(from_, "from"), "to": _time(to, "to")})
        return cast(AuditPage, self._call("GET", "/v1/audit", query=query).json())

    def iter_audit(
        self,
        *,
        principal: Optional[str] = None,
        memory_id: Optional[str] = None,
        recall_id: Optional[str] = None,
        action: Optional[str] = None,
        from_: Optional[Time] = None,
        to: Optional[Time] = None,
        limit: Optional[int] = None,
    ) -> Iterator[AuditEvent]:
        """Yields every audit event :meth:`audit` would page through,
        following ``next_cursor``; ``limit`` is the page size."""
        cursor: Optional[str] = None
        while True:
            page = self.audit(
                principal=principal, memory_id=memory_id, recall_id=recall_id, action=action,
                from_=from_, to=to, limit=limit, cursor=cursor,
            )
            yield from page["events"]
            cursor = page.get("next_cursor")
            if not cursor:
                return

    def audit_histogram(
        self,
        *,
        principal: Optional[str] = None,
        action: Optional[str] = None,
        bucket: Optional[Literal["1h", "1d"]] = None,
        from_: Optional[Time] = None,
        to: Optional[Time] = None,
    ) -> AuditHistogram:
        """Counts audit events of one action (default recall) per UTC hour
        or day (GET /v1/audit/histogram), every bucket present."""
        query = _pairs(principal=principal, action=action, bucket=bucket)
        query += _pairs(**{"from": _time(from_, "from"), "to": _time(to, "to")})
        return cast(AuditHistogram, self._call("GET", "/v1/audit/histogram", query=query).json())

    def stats(
        self, *, principal: Optional[str] = None, agent: Optional[str] = None, conversation: Optional[str] = None
    ) -> Stats:
        """Counts memories by principal, kind and status (GET /v1/stats)."""
        return cast(Stats, self._call("GET", "/v1/stats", query=_scope(principal, agent, conversation)).json())

    # ----- import and export ---------------------------------------------

    def import_jsonl(self, data: Union[str, bytes, Iterable[Union[str, bytes, Mapping[str, Any]]]]) -> ImportResult:
        """Imports memories in the JSONL format of export (POST /v1/import,
        an admin key): a whole document, or lines (str or bytes), or the
        decoded lines themselves. Every line is validated before any is
        written."""
        if isinstance(data, str):
            payload = data.encode("utf-8")
        elif isinstance(data, bytes):
            payload = data
        else:
            lines: List[bytes] = []
            for item in data:
                if isinstance(item, Mapping):
                    lines.append(json.dumps(dict(item), ensure_ascii=False).encode("utf-8"))
                elif isinstance(item, str):
                    lines.append(item.rstrip("\r\n").encode("utf-8"))
                else:
                    lines.append(item.rstrip(b"\r\n"))
            payload = b"".join(line + b"\n" for line in lines)
        resp = self._call("POST", "/v1/import", raw=payload, content_type="application/x-ndjson")
        return cast(ImportResult, resp.json())

    @overload
    def export_jsonl(
        self,
        *,
        principal: Optional[str] = ...,
        agent: Optional[str] = ...,
        conversation: Optional[str] = ...,
        raw: Literal[False] = ...,
    ) -> Iterator[Dict[str, Any]]: ...

    @overload
    def export_jsonl(
        self,
        *,
        principal: Optional[str] = ...,
        agent: Optional[str] = ...,
        conversation: Optional[str] = ...,
        raw: Literal[True],
    ) -> Iterator[str]: ...

    def export_jsonl(
        self,
        *,
        principal: Optional[str] = None,
        agent: Optional[str] = None,
        conversation: Optional[str] = None,
        raw: bool = False,
    ) -> Union[Iterator[Dict[str, Any]], Iterator[str]]:
        """Exports memories as JSONL, oldest first (GET /v1/export). The
        request is sent now (its errors raise here); the iterator then
        streams the lines, decoded, or as text without their newline with
        ``raw=True``, which :meth:`import_jsonl` takes back."""
        resp = self._call("GET", "/v1/export", query=_scope(principal, agent, conversation), stream=True)
        assert resp.stream is not None
        lines = _stream_lines(resp.stream)
        if raw:
            return lines
        return (cast(Dict[str, Any], json.loads(line)) for line in lines)

    # ----- keys and the caller -------------------------------------------

    def whoami(self) -> Whoami:
        """Describes the caller's key (GET /v1/whoami): its binding, the
        operations it may perform, the sources it may claim, and the
        server."""
        return cast(Whoami, self._call("GET", "/v1/whoami").json())

    def create_key(
        self,
        role: str,
        *,
        principal: Optional[str] = None,
        agent: Optional[str] = None,
        name: Optional[str] = None,
        sources: Optional[Sequence[str]] = None,
    ) -> CreatedKey:
        """Creates a key in the caller's tenant (POST /v1/keys, an admin
        key). The secret is in the result this once."""
        body = _drop_none(
            {"role": role, "principal": principal, "agent": agent, "name": name,
             "sources": list(sources) if sources is not None else None}
        )
        return cast(CreatedKey, self._call("POST", "/v1/keys", body=body).json())

    def list_keys(self) -> List[Key]:
        """Returns the tenant's keys, without hashes (GET /v1/keys)."""
        return cast(List[Key], self._call("GET", "/v1/keys").json()["keys"])

    def revoke_key(self, id: str) -> Key:
        """Revokes a key of the tenant (POST /v1/keys/{id}/revoke): it is
        refused from its next request. Another tenant's key id is
        :class:`NotFound`, like a missing one."""
        if not id:
            raise InvalidArgument("is required", field="id")
        path = "/v1/keys/" + urllib.parse.quote(id, safe="") + "/revoke"
        return cast(Key, self._call("POST", path, body={}).json())

    # ----- the server ----------------------------------------------------

    def healthz(self) -> Health:
        """Liveness (GET /healthz): ``status`` ok while the process serves."""
        return cast(Health, self._call("GET", "/healthz").json())

    def readyz(self) -> Health:
        """Readiness (GET /readyz). A server that is not ready answers 503
        with ``checks`` naming the failing part; that is returned, not
        raised, and not retried: the answer is the point."""
        resp = self._call("GET", "/readyz", accept=(503,), retry=False)
        return cast(Health, resp.json())

    def metrics(self) -> str:
        """The Prometheus text exposition (GET /metrics)."""
        return self._call("GET", "/metrics").body.decode("utf-8")

    def openapi(self) -> Dict[str, Any]:
        """The OpenAPI 3.1 document of the server (GET /openapi.json)."""
        return cast(Dict[str, Any], self._call("GET", "/openapi.json").json())

    # ----- the wire ------------------------------------------------------

    def _call(
        self,
        method: str,
        path: str,
        *,
        query: Optional[_Query] = None,
        body: Optional[Dict[str, Any]] = None,
        raw: Optional[bytes] = None,
        content_type: Optional[str] = None,
        headers: Optional[Dict[str, str]] = None,
        safe: bool = False,
        retry: bool = True,
        accept: Tuple[int, ...] = (),
        stream: bool = False,
    ) -> _Response:
        """Sends one call, retrying as the class says, and returns its 2xx
        response (or one of the statuses in ``accept``); anything else
        raises. ``safe`` marks a request that may be repeated after a 503 or
        a failed connection (every GET is)."""
        safe = safe or method == "GET"
        if path != "/v1/memories" or method != "POST":  # remember applies its own, per item
            query, body = self._with_scope(path, query, body)
        url = self._base + path
        if query:
            url += "?" + urllib.parse.urlencode(query)
        data = raw
        request_headers = {
            "Authorization": "Bearer " + self.__key,
            "Accept": "application/json",
            "User-Agent": self._user_agent,
        }
        if body is not None:
            data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
            content_type = "application/json"
        if content_type:
            request_headers["Content-Type"] = content_type
        request_headers.update(headers or {})

        waited = 0.0
        attempt = 0
        while True:
            error: MemgateError
            wait: Optional[float]
            try:
                resp = self._send(method, url, data, request_headers, stream)
            except TransportError as e:
                if not (retry and safe):
                    raise
                error, wait = e, None
            else:
                if 200 <= resp.status < 300 or resp.status in accept:
                    return resp
                error = error_from_response(resp.status, resp.headers, resp.body)
                retryable = resp.status == 429 or (resp.status == 503 and safe)
                if not (retry and retryable):
                    raise error
                wait = retry_after_seconds(resp.headers)
            if attempt >= self._max_retries:
                raise error
            if wait is None:
                # No Retry-After: a doubling wait, jittered so that clients
                # that failed together do not come back together.
                wait = _BACKOFF * (2**attempt) * (0.5 + random.random() / 2)
            if waited + wait > self._max_retry_wait:
                raise error
            self._sleep(wait)
            waited += wait
            attempt += 1

    def _with_scope(
        self, path: str, query: Optional[_Query], body: Optional[Dict[str, Any]]
    ) -> Tuple[Optional[_Query], Optional[Dict[str, Any]]]:
        """Adds the client's default principal and agent to a memory call
        that names none: in the query of a call that has one or no body
        (calls by id scope by query), else in the body."""
        defaults = []
        if path.startswith(_PRINCIPAL_PATHS) and self._principal is not None:
            defaults.append(("principal", self._principal))
        if path.startswith(_AGENT_PATHS) and self._agent is not None:
            defaults.append(("agent", self._agent))
        if not defaults:
            return query, body
        if query is None and body is not None:
            body = dict(body)
            for name, value in defaults:
                if body.get(name) is None:
                    body[name] = value
            return query, body
        query = list(query or [])
        for name, value in defaults:
            if not any(k == name for k, _ in query):
                query.append((name, value))
        return query, body

    def _send(self, method: str, url: str, data: Optional[bytes], headers: Dict[str, str], stream: bool) -> _Response:
        """One HTTP attempt. Any status is returned; a connection that
        fails, times out or is cut is a TransportError."""
        req = urllib.request.Request(url, data=data, headers=headers, method=method)
        what = f"{method} {urllib.parse.urlsplit(url).path}"
        try:
            try:
                resp = self._opener.open(req, timeout=self._timeout)
            except urllib.error.HTTPError as e:
                with e:
                    return _Response(e.code, e.headers, _read(e, what), None)
            if stream:
                return _Response(resp.status, resp.headers, b"", resp)
            with resp:
                return _Response(resp.status, resp.headers, _read(resp, what), None)
        except (urllib.error.URLError, http.client.HTTPException, OSError, socket.timeout) as e:
            reason = e.reason if isinstance(e, urllib.error.URLError) else e
            raise TransportError(f"{what}: the memgate server could not be reached: {reason}", code="transport") from e


def _read(resp: Any, what: str) -> bytes:
    """Reads a response body, refusing one over MAX_RESPONSE_BYTES."""
    body = cast(bytes, resp.read(MAX_RESPONSE_BYTES + 1))
    if len(body) > MAX_RESPONSE_BYTES:
        raise MemgateError(f"{what}: the response is larger than {MAX_RESPONSE_BYTES} bytes", code="too_large")
    return body


def _stream_lines(resp: http.client.HTTPResponse) -> Iterator[str]:
    """Yields the non-empty lines of a streamed JSONL body, then closes it."""
    with resp:
        try:
            for line in resp:
                text = line.decode("utf-8").rstrip("\r\n")
                if text:
                    yield text
        except (http.client.HTTPException, OSError) as e:
            raise TransportError(f"GET /v1/export: the response was cut: {e}", code="transport") from e


def _memory_path(id: str, suffix: str) -> str:
    if not id:
        raise InvalidArgument("is required", field="id")
    return "/v1/memories/" + urllib.parse.quote(id, safe="") + suffix


def _if_match(version: int) -> Dict[str, str]:
    if isinstance(version, bool) or not isinstance(version, int) or version <= 0:
        raise InvalidArgument("is required: the version the change is based on (a positive int)", field="version")
    return {"If-Match": f'"{version}"'}


def _drop_none(fields: Dict[str, Any]) -> Dict[str, Any]:
    """The fields that are set: None means "not given"."""
    return {k: v for k, v in fields.items() if v is not None}


def _patch_body(
    content: Optional[str],
    reason: Optional[str],
    kind: Optional[str],
    sensitivity: Optional[str],
    metadata: Optional[Mapping[str, Any]],
    clear_metadata: bool,
    ttl: Optional[str],
    expires_at: Optional[Time],
    clear_expires_at: bool,
    valid_from: Optional[Time],
    valid_until: Optional[Time],
) -> Dict[str, Any]:
    """The PATCH body of update and update_by_key: the fields given."""
    if metadata is not None and clear_metadata:
        raise InvalidArgument("give metadata or clear_metadata, not both", field="metadata")
    if (expires_at is not None or ttl is not None) and clear_expires_at:
        raise InvalidArgument("give expires_at or ttl, or clear_expires_at, not both", field="expires_at")
    body: Dict[str, Any] = _drop_none(
        {
            "content": content,
            "reason": reason,
            "kind": kind,
            "sensitivity": sensitivity,
            "metadata": dict(metadata) if metadata is not None else None,
            "ttl": ttl,
            "expires_at": _time(expires_at, "expires_at"),
            "valid_from": _time(valid_from, "valid_from"),
            "valid_until": _time(valid_until, "valid_until"),
        }
    )
    if clear_metadata:
        body["metadata"] = None
    if clear_expires_at:
        body["expires_at"] = None
    return body


def _key_query(key: str, principal: Optional[str], agent: Optional[str], conversation: Optional[str]) -> _Query:
    if not key:
        raise InvalidArgument("is required", field="key")
    return [("key", key)] + _scope(principal, agent, conversation)


def _scope(principal: Optional[str], agent: Optional[str], conversation: Optional[str]) -> _Query:
    return _pairs(principal=principal, agent=agent, conversation=conversation)


def _pairs(**params: Union[str, int, None]) -> _Query:
    """Query pairs of the parameters that are set (str, or int)."""
    return [(k, str(v)) for k, v in params.items() if v is not None]


def _repeat(name: str, values: Optional[Values]) -> _Query:
    """A repeated query parameter (kind=a&kind=b)."""
    if values is None:
        return []
    if isinstance(values, str):
        return [(name, values)]
    return [(name, v) for v in values]


def _time(value: Optional[Time], field: str) -> Optional[str]:
    """An RFC 3339 string of a str or an aware datetime."""
    if value is None or isinstance(value, str):
        return value
    if value.tzinfo is None or value.utcoffset() is None:
        raise InvalidArgument("must be an aware datetime (with a zone), or an RFC 3339 string", field=field)
    return value.isoformat()
