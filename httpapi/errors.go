package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/internal/wire"
)

// writeError answers err in the edge's error shape, with the status of its
// code (wire.Describe). An internal error (any error that is not a
// *memgate.Error, or one with code internal or a code the table does not
// know) is answered "internal error" and its detail is kept for the
// request's log line, with the request id.
func (s *server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.DeadlineExceeded) && errors.Is(r.Context().Err(), context.DeadlineExceeded) {
		// The request's own deadline (guard.Config.RequestTimeout), not a
		// driver's: the store or the embedder did not answer in time.
		err = &memgate.Error{Code: memgate.EUNAVAILABLE, Message: fmt.Sprintf("the request did not finish within %s (a database or embedder not answering); try again", s.guard.RequestTimeout())}
	}
	d, status, internal := wire.Describe(err)
	if info := infoOf(r.Context()); info != nil {
		info.errCode = d.Code
		if d.Code == memgate.EUNAVAILABLE {
			// Which fault (a full disk, an unreachable database, a down
			// embedder) is what an operator needs from the log; the
			// message is the one the caller sees, which never holds content.
			info.cause = d.Message
		}
		if internal && info.internal == nil {
			info.internal = err
		}
	}
	writeJSON(w, status, wire.ErrorBody{Error: d})
}

// writeJSON writes v as the response body.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var b []byte
	ok := false
	if a, is := v.(jsonAppender); is { // the same bytes, without reflection (memjson.go)
		b, ok = a.appendJSON(make([]byte, 0, 4096))
	}
	if !ok {
		var err error
		if b, err = json.Marshal(v); err != nil {
			// Every response type marshals; a failure here is a bug,
			// answered without detail.
			status = http.StatusInternalServerError
			b = []byte(`{"error":{"code":"internal","message":"internal error"}}`)
		}
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}
