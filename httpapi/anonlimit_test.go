package httpapi_test

import (
	"net/http"
	"net/netip"
	"testing"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/guard"
)

// TestAnonymousRateLimit: requests without a valid key (a wrong key, no
// key, the public routes but /healthz, unknown paths) are limited per
// client address: within the burst they get their answer, past it 429
// with Retry-After. The controls: a valid key from the same address is
// not limited by it, another address has its own bucket, and /healthz
// always answers. X-Forwarded-For names the client only from a trusted
// proxy (here the loopback the test connects from); without one it is
// ignored.
func TestAnonymousRateLimit(t *testing.T) {
	t.Parallel()
	const burst = 3
	limited := func(trusted bool) *harness {
		return newHarness(t, func(s *setup) {
			s.guard.AnonRateLimit = guard.RateLimit{PerSecond: 0.001, Burst: burst}
			if trusted {
				s.guard.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("::1/128")}
			}
		})
	}
	h := limited(true)
	admin := h.key("acme", memgate.RoleAdmin, "", "")
	from := func(addr string) []string { return []string{"X-Forwarded-For", addr} }

	for range burst {
		h.do("GET", "/v1/whoami", "mgk_wrong", nil, from("198.51.100.7")...).want(t, http.StatusUnauthorized)
	}
	for _, c := range []struct {
		name   string
		method string
		path   string
		key    string
	}{
		{"wrong key", "GET", "/v1/whoami", "mgk_wrong"},
		{"no key", "POST", "/v1/recall", ""},
		{"openapi", "GET", "/openapi.json", ""},
		{"readyz", "GET", "/readyz", ""},
		{"unknown path", "GET", "/v1/nothing", ""},
	} {
		r := h.do(c.method, c.path, c.key, nil, from("198.51.100.7")...)
		if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" {
			t.Errorf("%s past the burst: %d (Retry-After %q), want 429 with Retry-After: %s", c.name, r.status, r.header.Get("Retry-After"), r.body)
		}
	}
	// Controls.
	h.do("GET", "/v1/whoami", admin, nil, from("198.51.100.7")...).want(t, http.StatusOK)
	h.do("GET", "/healthz", "", nil, from("198.51.100.7")...).want(t, http.StatusOK)
	h.do("GET", "/v1/whoami", "mgk_wrong", nil, from("198.51.100.8")...).want(t, http.StatusUnauthorized)
	h.do("GET", "/openapi.json", "", nil, from("2001:db8:7::1")...).want(t, http.StatusOK)

	// Without a trusted proxy, a client's X-Forwarded-For does not buy it
	// a fresh bucket.
	u := limited(false)
	for range burst {
		u.do("GET", "/v1/whoami", "mgk_wrong", nil, from("198.51.100.1")...).want(t, http.StatusUnauthorized)
	}
	if r := u.do("GET", "/v1/whoami", "mgk_wrong", nil, from("198.51.100.2")...); r.status != http.StatusTooManyRequests {
		t.Fatalf("a spoofed X-Forwarded-For escaped the limit: %d", r.status)
	}
}
