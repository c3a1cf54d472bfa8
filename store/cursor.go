package store

import (
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/memgate/memgate"
)

// EncodeCursor makes an opaque cursor from a backend's insertion sequence
// number: the last row of a page. Backends share it so a cursor's shape is
// the same everywhere; callers must treat it as opaque.
func EncodeCursor(seq int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte("c1:" + strconv.FormatInt(seq, 10)))
}

// DecodeCursor reverses EncodeCursor; "" decodes to 0 (start from the newest).
// Anything else is invalid_argument naming the cursor field.
func DecodeCursor(c string) (int64, error) {
	if c == "" {
		return 0, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || !strings.HasPrefix(string(b), "c1:") {
		return 0, memgate.FieldError("cursor", "is not a cursor returned by this server")
	}
	n, err := strconv.ParseInt(string(b[3:]), 10, 64)
	if err != nil || n <= 0 {
		return 0, memgate.FieldError("cursor", "is not a cursor returned by this server")
	}
	return n, nil
}
