package httpapi

import (
	"encoding/json"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/memgate/memgate"
)

// The responses made of memories (recall, list, remember) write their JSON
// without reflection: encoding/json's walk of a recall's memories (two
// times, a feedback and some thirty fields each) was 4 % of the server's
// CPU under recall load. What they write is byte for byte what
// json.Marshal writes for them (TestMemoryJSONIsMarshal, over memories
// whose every field is drawn at random, strings of every kind included);
// a response this code does not cover (an explanation, a preview's
// candidates below the floor) or cannot write (a time outside years
// 0–9999, a score that is not finite) goes through json.Marshal, which
// then gives its answer, error included.

// jsonAppender is a response that appends its JSON to b, or reports that
// json.Marshal must write it (ok false).
type jsonAppender interface {
	appendJSON(b []byte) (out []byte, ok bool)
}

func (r recallResponse) appendJSON(b []byte) ([]byte, bool) {
	res := r.RecallResult
	if res == nil || res.Explain != nil || len(res.BelowFloorResults) > 0 {
		return nil, false
	}
	b = append(b, `{"recall_id":`...)
	b = appendString(b, res.RecallID)
	b = append(b, `,"results":`...)
	b, ok := appendList(b, res.Results, func(b []byte, h memgate.RecallHit) ([]byte, bool) {
		if h.Explain != nil {
			return nil, false
		}
		b = append(b, `{"memory":`...)
		b, ok := appendMemory(b, h.Memory)
		if !ok {
			return nil, false
		}
		b = append(b, `,"score":`...)
		if b, ok = appendFloat(b, h.Score); !ok {
			return nil, false
		}
		return append(b, '}'), true
	})
	if !ok {
		return nil, false
	}
	b = append(b, `,"below_floor":`...)
	b = strconv.AppendInt(b, int64(res.BelowFloor), 10)
	b = append(b, `,"min_score":`...)
	if b, ok = appendFloat(b, res.MinScore); !ok {
		return nil, false
	}
	if r.Context != nil {
		b = append(b, `,"context":`...)
		b = appendString(b, *r.Context)
	}
	return append(b, '}'), true
}

func (l memoryList) appendJSON(b []byte) ([]byte, bool) {
	b = append(b, `{"memories":`...)
	b, ok := appendList(b, l.Memories, appendMemory)
	if !ok {
		return nil, false
	}
	if l.NextCursor != "" {
		b = append(b, `,"next_cursor":`...)
		b = appendString(b, l.NextCursor)
	}
	b = append(b, `,"limit":`...)
	b = strconv.AppendInt(b, int64(l.Limit), 10)
	b = append(b, `,"clamped":`...)
	b = strconv.AppendBool(b, l.Clamped)
	return append(b, '}'), true
}

func (l rememberedList) appendJSON(b []byte) ([]byte, bool) {
	b = append(b, `{"memories":`...)
	b, ok := appendList(b, l.Memories, func(b []byte, r *memgate.Remembered) ([]byte, bool) {
		if r == nil {
			return append(b, "null"...), true
		}
		// The memory's fields, then Remembered's own, in one object (the
		// memory is embedded). A nil memory has none of its fields.
		b = append(b, '{')
		if r.Memory != nil {
			var ok bool
			if b, ok = appendMemoryFields(b, r.Memory); !ok {
				return nil, false
			}
			b = append(b, ',')
		}
		b = append(b, `"deduplicated":`...)
		b = strconv.AppendBool(b, r.Deduplicated)
		if r.Replayed {
			b = append(b, `,"replayed":true`...)
		}
		return append(b, '}'), true
	})
	if !ok {
		return nil, false
	}
	return append(b, '}'), true
}

// appendList appends xs as json.Marshal writes a slice: null when nil,
// else each element as each appends it; ok is false as soon as each's is.
func appendList[T any](b []byte, xs []T, each func([]byte, T) ([]byte, bool)) ([]byte, bool) {
	if xs == nil {
		return append(b, "null"...), true
	}
	b = append(b, '[')
	for i, x := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		var ok bool
		if b, ok = each(b, x); !ok {
			return nil, false
		}
	}
	return append(b, ']'), true
}

// appendMemory appends m as json.Marshal writes it.
func appendMemory(b []byte, m *memgate.Memory) ([]byte, bool) {
	if m == nil {
		return append(b, "null"...), true
	}
	b = append(b, '{')
	b, ok := appendMemoryFields(b, m)
	return append(b, '}'), ok
}

// appendMemoryFields appends m's members, without the braces, in the
// order and with the omissions of memgate.Memory's field tags.
func appendMemoryFields(b []byte, m *memgate.Memory) ([]byte, bool) {
	ok := true
	str := func(name, v string, omitEmpty bool) {
		if omitEmpty && v == "" {
			return
		}
		b = append(b, name...)
		b = appendString(b, v)
	}
	tm := func(name string, t *time.Time) {
		if t == nil || !ok {
			return
		}
		b = append(b, name...)
		b, ok = appendTime(b, *t)
	}
	str(`"id":`, m.ID, false)
	str(`,"tenant":`, m.Tenant, false)
	str(`,"principal":`, m.Principal, false)
	str(`,"agent":`, m.Agent, true)
	str(`,"conversation":`, m.Conversation, true)
	str(`,"kind":`, string(m.Kind), false)
	str(`,"source":`, string(m.Source), false)
	str(`,"sensitivity":`, string(m.Sensitivity), false)
	str(`,"status":`, string(m.Status), false)
	str(`,"status_reason":`, m.StatusReason, true)
	str(`,"content":`, m.Content, false)
	str(`,"reason":`, m.Reason, true)
	if len(m.Metadata) > 0 {
		md, err := json.Marshal(m.Metadata)
		if err != nil {
			return nil, false
		}
		b = append(b, `,"metadata":`...)
		b = append(b, md...)
	}
	tm(`,"created_at":`, &m.CreatedAt)
	tm(`,"updated_at":`, &m.UpdatedAt)
	tm(`,"expires_at":`, m.ExpiresAt)
	tm(`,"valid_from":`, m.ValidFrom)
	tm(`,"valid_until":`, m.ValidUntil)
	if !ok {
		return nil, false
	}
	b = append(b, `,"version":`...)
	b = strconv.AppendInt(b, m.Version, 10)
	str(`,"key":`, m.Key, true)
	str(`,"supersedes":`, m.Supersedes, true)
	str(`,"superseded_by":`, m.SupersededBy, true)
	if e := m.Embedding; e != nil {
		str(`,"embedding":{"provider":`, e.Provider, false)
		str(`,"model":`, e.Model, false)
		b = append(b, `,"dim":`...)
		b = strconv.AppendInt(b, int64(e.Dim), 10)
		b = append(b, '}')
	}
	str(`,"content_sha256":`, m.ContentSHA256, false)
	b = append(b, `,"seen_count":`...)
	b = strconv.AppendInt(b, m.SeenCount, 10)
	if len(m.Flags) > 0 {
		b = append(b, `,"flags":[`...)
		for i, f := range m.Flags {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, f)
		}
		b = append(b, ']')
	}
	// Feedback's MarshalJSON: its count, sum and mean.
	b = append(b, `,"feedback":{"count":`...)
	b = strconv.AppendInt(b, m.Feedback.Count, 10)
	b = append(b, `,"sum":`...)
	if b, ok = appendFloat(b, m.Feedback.Sum); !ok {
		return nil, false
	}
	b = append(b, `,"mean":`...)
	if b, ok = appendFloat(b, m.Feedback.Mean()); !ok {
		return nil, false
	}
	b = append(b, '}')
	str(`,"created_by":`, m.CreatedBy, true)
	str(`,"updated_by":`, m.UpdatedBy, true)
	str(`,"imported_status":`, string(m.ImportedStatus), true)
	str(`,"imported_created_by":`, m.ImportedCreatedBy, true)
	str(`,"imported_updated_by":`, m.ImportedUpdatedBy, true)
	if m.Expired {
		b = append(b, `,"expired":true`...)
	}
	return b, true
}

// appendTime appends t as its MarshalJSON does (RFC 3339 with the
// nanoseconds it has), for a UTC time of years 0–9999; ok is false for any
// other, which MarshalJSON checks (and may refuse).
func appendTime(b []byte, t time.Time) ([]byte, bool) {
	if t.Location() != time.UTC || t.Year() < 0 || t.Year() > 9999 {
		return nil, false
	}
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"'), true
}

// appendFloat appends f as encoding/json writes a float64 (ES6 number
// form); ok is false when f is not finite, which it refuses.
func appendFloat(b []byte, f float64) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, false
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 to e-9, as encoding/json cleans it up.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string as json.Marshal writes it: <, >
// and & escaped (HTML-safe), control characters as \b, \f, \n, \r, \t or
// \u00XX, each invalid UTF-8 byte as \ufffd, and U+2028 and U+2029 escaped.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= ' ' && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
