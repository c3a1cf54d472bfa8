package store_test

import (
	"encoding/base64"
	"math"
	"strings"
	"testing"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

func TestCursorRoundTrip(t *testing.T) {
	t.Parallel()
	for _, seq := range []int64{1, 2, 1 << 40, math.MaxInt64} {
		if got, err := store.DecodeCursor(store.EncodeCursor(seq)); err != nil || got != seq {
			t.Errorf("DecodeCursor(EncodeCursor(%d)) = %d, %v", seq, got, err)
		}
	}
	if got, err := store.DecodeCursor(""); err != nil || got != 0 {
		t.Errorf(`DecodeCursor("") = %d, %v; want 0, nil`, got, err)
	}
}

// FuzzDecodeCursor: whatever a client sends as a cursor, decoding never
// panics; it either fails with invalid_argument naming the cursor field (and
// not echoing the input), or yields a positive sequence number whose own
// cursor decodes to the same number. A cursor holds only a position, not a
// filter, so there is no filter for a forged cursor to slip past: a decoded
// cursor can only narrow a List that the store still scopes and filters.
func FuzzDecodeCursor(f *testing.F) {
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for _, s := range []string{
		"", store.EncodeCursor(1), store.EncodeCursor(42), store.EncodeCursor(math.MaxInt64),
		enc("c1:0"), enc("c1:-5"), enc("c1:"), enc("c1:9223372036854775808"), enc("c2:5"), enc("c1:+5"),
		enc("c1:5\x00"), enc("c1:05"), store.EncodeCursor(7) + "=", "YzE6NQ==", "!!!", "c1:5", "\xff",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, c string) {
		n, err := store.DecodeCursor(c)
		if err != nil {
			if memgate.ErrorCode(err) != memgate.EINVALID || memgate.ErrorField(err) != "cursor" {
				t.Fatalf("DecodeCursor(%q): code %q field %q: %v", c, memgate.ErrorCode(err), memgate.ErrorField(err), err)
			}
			if len(c) >= 4 && strings.Contains(err.Error(), c) {
				t.Fatalf("the error echoes the cursor: %v", err)
			}
			return
		}
		if c == "" {
			if n != 0 {
				t.Fatalf(`"" decoded to %d`, n)
			}
			return
		}
		if n <= 0 {
			t.Fatalf("DecodeCursor(%q) = %d, a non-positive position", c, n)
		}
		if back, err := store.DecodeCursor(store.EncodeCursor(n)); err != nil || back != n {
			t.Fatalf("re-encoded cursor of %d decodes to %d, %v", n, back, err)
		}
	})
}
