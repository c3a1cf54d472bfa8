package memgate

import (
	"strconv"
	"strings"
	"time"
)

// ParseTTL parses a time to live: a Go duration ("90m", "12h") or a number
// of days ("30d"). It must be positive.
func ParseTTL(s string) (time.Duration, error) {
	var d time.Duration
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseFloat(days, 64)
		if err != nil || n <= 0 || n > 365*1000 {
			return 0, FieldError("ttl", "must be a positive duration such as 30d, 12h or 90m")
		}
		d = time.Duration(n * float64(24*time.Hour))
	} else {
		var err error
		d, err = time.ParseDuration(s)
		if err != nil {
			return 0, FieldError("ttl", "must be a positive duration such as 30d, 12h or 90m")
		}
	}
	if d <= 0 {
		return 0, FieldError("ttl", "must be positive")
	}
	return d, nil
}
