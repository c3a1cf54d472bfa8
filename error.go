package memgate

import (
	"errors"
	"fmt"
)

// Error codes. Every error that leaves the engine carries one of them; the HTTP
// layer maps them to statuses in one table and the CLI prints the message.
const (
	EINVALID      = "invalid_argument"
	ENOTFOUND     = "not_found"
	ECONFLICT     = "conflict"
	EPOLICY       = "policy_violation"
	EUNAUTHORIZED = "unauthenticated"
	EFORBIDDEN    = "forbidden"
	ETOOLARGE     = "too_large"
	ERATELIMITED  = "rate_limited"
	EUNAVAILABLE  = "unavailable"
	EINTERNAL     = "internal"
)

// Error is an application error: a code from the list above, the field it is
// about (empty when it concerns the whole request) and a message that is safe
// to show to the caller. It never carries memory content or query text.
type Error struct {
	Code    string
	Field   string
	Message string
}

func (e *Error) Error() string {
	if e.Field != "" {
		return e.Field + ": " + e.Message
	}
	return e.Message
}

// Errorf returns an *Error with the given code and formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// FieldError returns an invalid_argument error naming the field.
func FieldError(field, format string, args ...any) *Error {
	return &Error{Code: EINVALID, Field: field, Message: fmt.Sprintf(format, args...)}
}

// ErrNotFound is the one error for a memory that does not exist and for a
// memory that exists outside the caller's scope: the two must be
// indistinguishable, in code and in message.
func ErrNotFound() *Error { return &Error{Code: ENOTFOUND, Message: "memory not found"} }

// ErrorCode returns the code of err, EINTERNAL for an error without one and ""
// for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the message of an application error, and "internal
// error" for anything else, so that driver errors never reach a caller.
func ErrorMessage(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Error()
	}
	return "internal error"
}

// ErrorField returns the field an application error names, or "".
func ErrorField(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Field
	}
	return ""
}
