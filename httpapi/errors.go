package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/memgate/memgate"
)

// codeMethodNotAllowed is the one code of this layer alone: a known path
// asked with a method it does not serve. Every other code is memgate's.
const codeMethodNotAllowed = "method_not_allowed"

// statusOf is the one table from error codes to HTTP statuses. A code not
// in it is answered as internal.
var statusOf = map[string]int{
	memgate.EINVALID:      http.StatusBadRequest,
	memgate.EUNAUTHORIZED: http.StatusUnauthorized,
	memgate.EFORBIDDEN:    http.StatusForbidden,
	memgate.ENOTFOUND:     http.StatusNotFound,
	codeMethodNotAllowed:  http.StatusMethodNotAllowed,
	memgate.ECONFLICT:     http.StatusConflict,
	memgate.ETOOLARGE:     http.StatusRequestEntityTooLarge,
	memgate.EPOLICY:       http.StatusUnprocessableEntity,
	memgate.ERATELIMITED:  http.StatusTooManyRequests,
	memgate.EUNAVAILABLE:  http.StatusServiceUnavailable,
	memgate.EINTERNAL:     http.StatusInternalServerError,
}

// Status returns the HTTP status the API answers error code with, and
// whether the code is in its table (a code outside it is answered as
// internal). The MCP endpoint answers with the same table.
func Status(code string) (int, bool) {
	status, ok := statusOf[code]
	return status, ok
}

// errorBody is the shape of every error response.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

// writeError answers err in the API's error shape. An internal error (any
// error that is not a *memgate.Error, or one with code internal or a code
// the table does not know) is answered "internal error" and its detail is
// kept for the request's log line, with the request id.
func (s *server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.DeadlineExceeded) && errors.Is(r.Context().Err(), context.DeadlineExceeded) {
		// The request's own deadline (guard.Config.RequestTimeout), not a
		// driver's: the store or the embedder did not answer in time.
		err = &memgate.Error{Code: memgate.EUNAVAILABLE, Message: fmt.Sprintf("the request did not finish within %s (a database or embedder not answering); try again", s.guard.RequestTimeout())}
	}
	code := memgate.ErrorCode(err)
	status, known := statusOf[code]
	d := errorDetail{Code: code, Message: memgate.ErrorMessage(err), Field: memgate.ErrorField(err)}
	if !known || code == memgate.EINTERNAL {
		status = http.StatusInternalServerError
		d = errorDetail{Code: memgate.EINTERNAL, Message: "internal error"}
	}
	if info := infoOf(r.Context()); info != nil {
		info.errCode = d.Code
		if d.Code == memgate.EUNAVAILABLE {
			// Which fault (a full disk, an unreachable database, a down
			// embedder) is what an operator needs from the log; the
			// message is the one the caller sees, which never holds content.
			info.cause = d.Message
		}
		if d.Code == memgate.EINTERNAL && info.internal == nil {
			info.internal = err
		}
	}
	if d.Message == "" {
		d.Message = http.StatusText(status)
	}
	writeJSON(w, status, errorBody{Error: d})
}

// writeJSON writes v as the response body.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		// Every response type marshals; a failure here is a bug, answered
		// without detail.
		status = http.StatusInternalServerError
		b = []byte(`{"error":{"code":"internal","message":"internal error"}}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}
