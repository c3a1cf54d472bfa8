"""memgate: a client for the memgate HTTP API, governed long-term memory
for AI agents.

Standard library only. ``Client`` has one method per operation of the
server's ``/openapi.json`` (``memgate.OPERATIONS`` maps them); what it
returns is the decoded JSON, typed by the TypedDicts of ``memgate.types``;
what it raises is a ``MemgateError`` subclass per REST error code.

    import memgate

    c = memgate.Client("http://127.0.0.1:7070", api_key)
    c.remember("Alice drinks green tea.", kind="preference", source="user", principal="alice")
    for hit in c.recall("What does Alice drink?", principal="alice")["results"]:
        print(hit["score"], hit["memory"]["content"])
"""

from .client import OPERATIONS, Client, Time, __version__
from .errors import (
    Conflict,
    Forbidden,
    Internal,
    InvalidArgument,
    MemgateError,
    MethodNotAllowed,
    NotFound,
    PolicyViolation,
    RateLimited,
    TooLarge,
    TransportError,
    Unauthenticated,
    Unavailable,
)
from .types import (
    AuditEvent,
    AuditHistogram,
    AuditPage,
    ChatResult,
    Count,
    CreatedKey,
    ForgetReceipt,
    Grant,
    Health,
    HistogramBucket,
    ImportResult,
    IngestMessage,
    IngestResult,
    Key,
    Memory,
    MemoryInput,
    MemoryList,
    Page,
    RecallHit,
    RecallResult,
    Remembered,
    Stats,
    Whoami,
)

__all__ = [
    "Client",
    "OPERATIONS",
    "Time",
    "__version__",
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
    "AuditEvent",
    "AuditHistogram",
    "AuditPage",
    "ChatResult",
    "Count",
    "CreatedKey",
    "ForgetReceipt",
    "Grant",
    "Health",
    "HistogramBucket",
    "ImportResult",
    "IngestMessage",
    "IngestResult",
    "Key",
    "Memory",
    "MemoryInput",
    "MemoryList",
    "Page",
    "RecallHit",
    "RecallResult",
    "Remembered",
    "Stats",
    "Whoami",
]
