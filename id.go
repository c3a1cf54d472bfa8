package memgate

import (
	"crypto/rand"
	"encoding/binary"
	"time"
)

const crockford = "0123456789abcdefghjkmnpqrstvwxyz"

// NewID returns a new memory id: "m_" followed by 26 Crockford base32
// characters, 48 bits of millisecond time then 80 random bits, so ids sort
// roughly by creation and never collide in practice.
func NewID(t time.Time) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(t.UnixMilli())<<16)
	if _, err := rand.Read(b[6:]); err != nil {
		panic("memgate: crypto/rand failed: " + err.Error())
	}
	// 128 bits → 26 base32 characters (130 bits, top 2 zero).
	var out [28]byte
	out[0], out[1] = 'm', '_'
	hi := binary.BigEndian.Uint64(b[:8])
	lo := binary.BigEndian.Uint64(b[8:])
	for i := 27; i >= 2; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out[:])
}

// Now returns t in UTC truncated to microseconds, the precision every
// backend keeps, so what is stored is what is read back.
func Now(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }
