package wire

import (
	"net/http"

	"github.com/memgate/memgate"
)

// CodeMethodNotAllowed is the one code of the HTTP edge alone: a known
// path asked with a method it does not serve. Every other code is
// memgate's.
const CodeMethodNotAllowed = "method_not_allowed"

// statusOf is the one table from error codes to HTTP statuses. A code not
// in it is answered as internal.
var statusOf = map[string]int{
	memgate.EINVALID:      http.StatusBadRequest,
	memgate.EUNAUTHORIZED: http.StatusUnauthorized,
	memgate.EFORBIDDEN:    http.StatusForbidden,
	memgate.ENOTFOUND:     http.StatusNotFound,
	CodeMethodNotAllowed:  http.StatusMethodNotAllowed,
	memgate.ECONFLICT:     http.StatusConflict,
	memgate.ETOOLARGE:     http.StatusRequestEntityTooLarge,
	memgate.EPOLICY:       http.StatusUnprocessableEntity,
	memgate.ERATELIMITED:  http.StatusTooManyRequests,
	memgate.EUNAVAILABLE:  http.StatusServiceUnavailable,
	memgate.EINTERNAL:     http.StatusInternalServerError,
}

// Status returns the HTTP status error code is answered with, and whether
// the code is in the table (a code outside it is answered as internal).
func Status(code string) (int, bool) {
	status, ok := statusOf[code]
	return status, ok
}

// ErrorBody is the shape of every error the edge answers: a REST error
// response, and the text of a failed MCP tool call.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is an error as a caller sees it.
type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

// Describe returns what the edge answers for err: its code, message (with
// the field) and field, and the HTTP status. An error that is not a
// *memgate.Error, or has code internal or a code the table does not know,
// is "internal error" and internal is set: its detail is for the log,
// never for the caller.
func Describe(err error) (d ErrorDetail, status int, internal bool) {
	code := memgate.ErrorCode(err)
	status, known := statusOf[code]
	if !known || code == memgate.EINTERNAL {
		return ErrorDetail{Code: memgate.EINTERNAL, Message: "internal error"}, http.StatusInternalServerError, true
	}
	d = ErrorDetail{Code: code, Message: memgate.ErrorMessage(err), Field: memgate.ErrorField(err)}
	if d.Message == "" {
		d.Message = http.StatusText(status)
	}
	return d, status, false
}
