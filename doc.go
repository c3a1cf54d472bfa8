// Package memgate is governed long-term memory for AI agents.
//
// The root package holds the domain: Memory and its vocabulary (scope, kind,
// source, sensitivity, status), the Embedder port, and the error codes. It
// knows no storage, transport or model technology; those live in sibling
// packages (sqlite, engine, embedder/...) that depend on this one. It
// must never import any of them.
//
// # The callers' contract
//
// The root package is also the contract of the callers: what they ask and
// what they are answered, whether they call the engine in process, the
// HTTP API (package httpapi, whose JSON these types are) or the Go client
// (package client, which imports this package and the standard library
// only). A caller needs no server package to name a request or a result.
//
//   - Requests (requests.go): RememberRequest, RecallRequest and its
//     limits (DefaultRecallK, MaxRecallK, MaxQueryBytes, MaxBudgetChars),
//     ListRequest, Patch, ImportRequest, AuditFilter,
//     AuditHistogramRequest.
//   - Results (results.go): Remembered; RecallResult with RecallHit,
//     HitExplain, RankComponents, RecallStats, RankExplain, Calibration,
//     ProbeBackground and Provenance; Page; Count; ForgetReceipt;
//     ImportResult; ReadyCheck; Grant and Op.
//   - The audit log (audit.go): AuditEvent, AuditPage, AuditHistogram,
//     HistogramBucket.
//   - A chat turn (chat.go): ChatResult, ModelInfo, Outcome (with
//     OutcomeRefused and OutcomeFailed), Extraction, ErrorInfo.
//
// The packages that used to define them keep aliases under their old names
// (engine.RecallRequest, store.Page, store.Filter for ListRequest,
// auth.Grant, agent.Result for ChatResult, rank.Components, ...), so the
// types are the same and code may name either. What is not a caller's
// concern stays where it is: the engine's defaulting, validation and
// gating, the store port and its queries (store.ReadGate,
// store.AuditHistogramQuery), and the permission table (auth.Ops).
package memgate
