package sqlstore

import (
	"context"
	"errors"

	"github.com/memgate/memgate"
)

// The errors a driver's Interpret gives for what every backend can meet.
// Each call makes a new value, so no caller can alter another's error.

// ErrClosed is a call after Close.
func ErrClosed() *memgate.Error {
	return &memgate.Error{Code: memgate.EUNAVAILABLE, Message: "the database is closed"}
}

// ErrBusy is a lock that was not granted in time, or a transaction that
// lost to another one more often than it is retried.
func ErrBusy() *memgate.Error {
	return &memgate.Error{Code: memgate.EUNAVAILABLE, Message: "the database is busy, try again"}
}

// ErrDuplicateID is a unique violation: what a caller can cause is an id
// already used.
func ErrDuplicateID() *memgate.Error {
	return &memgate.Error{Code: memgate.ECONFLICT, Field: "id", Message: "is already used by another memory"}
}

// ErrKeyTaken is a unique violation of the index of memory keys: another
// active memory of the level has the key (an import, or a held memory
// updated into place, meeting one).
func ErrKeyTaken() *memgate.Error {
	return &memgate.Error{Code: memgate.ECONFLICT, Field: "key", Message: "is the key of another active memory at this level"}
}

// ErrInternal is anything else.
func ErrInternal() *memgate.Error {
	return &memgate.Error{Code: memgate.EINTERNAL, Message: "internal error"}
}

// Settled returns err as a driver's Interpret passes it unchanged, and
// true: nil, an application error (*memgate.Error, wrapped or not), or the
// context's own error once ctx is done (a cancelled request is not a
// database failure). Otherwise it returns false, and the driver
// interprets err.
func Settled(ctx context.Context, err error) (error, bool) {
	if err == nil {
		return nil, true
	}
	var appErr *memgate.Error
	if errors.As(err, &appErr) {
		return err, true
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr, true
	}
	return nil, false
}
