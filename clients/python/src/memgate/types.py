"""The shapes of the memgate API, as TypedDicts: what the client returns
is the decoded JSON itself, typed.

Keys the server always sends are required; the others (``total=False``
classes) may be absent. Times are RFC 3339 strings, as on the wire. The
names follow the schemas of ``/openapi.json``.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, TypedDict

__all__ = [
    "Memory",
    "Remembered",
    "MemoryInput",
    "MemoryList",
    "Page",
    "RecallHit",
    "RecallResult",
    "ForgetReceipt",
    "AuditEvent",
    "AuditPage",
    "HistogramBucket",
    "AuditHistogram",
    "Count",
    "Stats",
    "ImportResult",
    "ServerInfo",
    "Whoami",
    "Grant",
    "ChatError",
    "ChatOutcome",
    "ChatExtraction",
    "ChatResult",
    "IngestMessage",
    "IngestResult",
    "Key",
    "CreatedKey",
    "ReadyCheck",
    "Health",
]


class _MemoryRequired(TypedDict):
    id: str
    tenant: str
    principal: str
    kind: str
    source: str
    sensitivity: str
    status: str
    content: str
    created_at: str
    updated_at: str
    version: int
    content_sha256: str
    seen_count: int
    feedback: Dict[str, Any]


class Memory(_MemoryRequired, total=False):
    """A stored memory with its receipt. ``version`` is what If-Match takes
    (update, approve, reject)."""

    agent: str
    conversation: str
    status_reason: str
    reason: str
    metadata: Dict[str, Any]
    expires_at: str
    valid_from: str
    valid_until: str
    key: str
    supersedes: str
    superseded_by: str
    embedding: Dict[str, Any]
    flags: List[str]
    expired: bool
    created_by: str
    updated_by: str
    imported_status: str
    imported_created_by: str
    imported_updated_by: str


class Remembered(Memory, total=False):
    """A memory as remember answers it: ``deduplicated`` when it folded
    into an existing one, ``replayed`` when an earlier request with the same
    Idempotency-Key stored it."""

    deduplicated: bool
    replayed: bool


class _MemoryInputRequired(TypedDict):
    kind: str
    source: str
    content: str


class MemoryInput(_MemoryInputRequired, total=False):
    """One memory to remember (an item of :meth:`Client.remember_batch`).
    ``ttl`` ("12h", "30d") and ``expires_at`` are exclusive."""

    principal: str
    agent: str
    conversation: str
    sensitivity: str
    reason: str
    metadata: Dict[str, Any]
    expires_at: str
    valid_from: str
    valid_until: str
    ttl: str
    key: str
    supersedes: str


class _MemoryListRequired(TypedDict):
    memories: List[Memory]
    limit: int
    clamped: bool


class MemoryList(_MemoryListRequired, total=False):
    """A page of memories, newest first; ``next_cursor`` is absent on the
    last page."""

    next_cursor: str


Page = MemoryList


class _RecallHitRequired(TypedDict):
    memory: Memory
    score: float


class RecallHit(_RecallHitRequired, total=False):
    """One recalled memory with its score (and its ``explain`` when asked)."""

    explain: Dict[str, Any]


class _RecallResultRequired(TypedDict):
    recall_id: str
    results: List[RecallHit]
    below_floor: int
    min_score: float


class RecallResult(_RecallResultRequired, total=False):
    """What a recall returned: ``context`` with ``render``, ``explain``
    with ``explain``, ``below_floor_results`` with ``preview``."""

    context: str
    explain: Dict[str, Any]
    below_floor_results: List[RecallHit]


class _ForgetReceiptRequired(TypedDict):
    tenant: str
    principal: str
    forgotten: int
    audit_principal: str


class ForgetReceipt(_ForgetReceiptRequired, total=False):
    """The receipt of forgetting a principal: counts, and the pseudonym the
    audit log now uses for them."""

    by_kind: Optional[Dict[str, int]]
    by_status: Optional[Dict[str, int]]


class _AuditEventRequired(TypedDict):
    seq: int
    tenant: str
    actor: str
    action: str
    at: str


class AuditEvent(_AuditEventRequired, total=False):
    """One audit event (never content nor query text: their hashes)."""

    principal: str
    agent: str
    memory_ids: List[str]
    scores: List[float]
    recall_id: str
    query_sha256: str
    counts: Dict[str, Any]
    reason: str
    content_sha256: str


class _AuditPageRequired(TypedDict):
    events: List[AuditEvent]
    limit: int


class AuditPage(_AuditPageRequired, total=False):
    """A page of audit events, newest first."""

    next_cursor: str
    clamped: bool


class HistogramBucket(TypedDict):
    start: str
    count: int


# Events of one action per UTC hour or day, every bucket present, oldest
# first; "from" and "to" are Python keywords, hence the functional form.
AuditHistogram = TypedDict(
    "AuditHistogram",
    {"action": str, "bucket_seconds": int, "from": str, "to": str, "buckets": List[HistogramBucket]},
)


class Count(TypedDict):
    principal: str
    kind: str
    status: str
    n: int


class _StatsRequired(TypedDict):
    tenant: str
    total: int
    pending: int
    by_status: Dict[str, int]
    by_kind: Dict[str, int]
    by_principal: Dict[str, int]
    counts: List[Count]


class Stats(_StatsRequired, total=False):
    """Memory counts by principal, kind and status."""

    principal: str


class ImportResult(TypedDict):
    lines: int
    imported: int
    deduplicated: int
    pending: int
    evicted: int
    batches: int
    trusted_status: int


class _ServerInfoRequired(TypedDict):
    version: str
    chat: bool


class ServerInfo(_ServerInfoRequired, total=False):
    revision: str


class _WhoamiRequired(TypedDict):
    key_id: str
    tenant: str
    role: str
    operations: List[str]
    tenant_wide: bool
    may_include_restricted: bool
    may_preview: bool
    sources: List[str]
    server: ServerInfo


class Whoami(_WhoamiRequired, total=False):
    """What the caller's key is and grants (never its hash or secret)."""

    principal: str
    agent: str
    name: str


Grant = Whoami


class _ChatErrorRequired(TypedDict):
    code: str
    message: str


class ChatError(_ChatErrorRequired, total=False):
    field: str


class _ChatOutcomeRequired(TypedDict):
    kind: str
    source: str
    status: str
    deduplicated: bool


class ChatOutcome(_ChatOutcomeRequired, total=False):
    """What became of one memory a chat turn wrote (``status`` refused or
    failed when it was not stored)."""

    id: str
    status_reason: str
    supersedes: str
    content: str
    reason: str
    error: ChatError


class _ChatExtractionRequired(TypedDict):
    proposed: int
    dropped: int
    malformed: int
    stored: int
    deduplicated: int
    refused: int
    pending_ids: List[str]
    memories: List[ChatOutcome]


class ChatExtraction(_ChatExtractionRequired, total=False):
    error: ChatError


class _ChatResultRequired(TypedDict):
    conversation: str
    reply: str
    model: Dict[str, Any]
    recall: RecallResult
    remembered: List[ChatOutcome]


class ChatResult(_ChatResultRequired, total=False):
    """One chat turn: the reply, the recall behind it and what was
    remembered (the user's message, then the reply)."""

    extraction: ChatExtraction


class _IngestMessageRequired(TypedDict):
    role: str
    content: str


class IngestMessage(_IngestMessageRequired, total=False):
    """One message of a conversation to store (role user, assistant, tool
    or system); ``at`` is when it was said (RFC 3339)."""

    at: str


class _IngestResultRequired(TypedDict):
    conversation: str
    remembered: List[ChatOutcome]
    replayed: bool


class IngestResult(_IngestResultRequired, total=False):
    """What became of each message of an ingested conversation, in order."""

    extraction: ChatExtraction


class _KeyRequired(TypedDict):
    id: str
    tenant: str
    role: str
    created_at: str


class Key(_KeyRequired, total=False):
    """An API key's record (never its hash or secret)."""

    principal: str
    agent: str
    name: str
    sources: List[str]
    revoked_at: str


class CreatedKey(TypedDict):
    """A new key: its record and its secret, shown only this once."""

    key: Key
    secret: str


class _ReadyCheckRequired(TypedDict):
    part: str
    ok: bool


class ReadyCheck(_ReadyCheckRequired, total=False):
    error: str


class _HealthRequired(TypedDict):
    status: str
    version: str


class Health(_HealthRequired, total=False):
    """The answer of /healthz and /readyz (``checks`` names a failing
    part)."""

    revision: str
    checks: Optional[List[ReadyCheck]]
