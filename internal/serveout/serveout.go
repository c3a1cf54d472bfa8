// Package serveout is what `memgate serve` prints on stdout as it starts,
// written by the server and read back by the processes that run it as a
// child (the crash, load and fault harnesses), so the two sides share one
// definition.
package serveout

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// The lines Print* write and Scan recognises.
const (
	bannerServing = "memgate: serving on "
	bannerKey     = "memgate: created the admin key"
	// bannerKeysExist starts the line of a start over a database with keys.
	bannerKeysExist = "memgate: the database has API keys already (the admin key was shown once, at its first start)"
)

// Banner is what a starting `memgate serve` prints on stdout: the URL it
// serves on (http://ADDR, no trailing slash) and, on the first start over a
// new database only, the bootstrap admin key (else empty).
type Banner struct {
	URL string
	Key string
}

// PrintAdminKey prints the bootstrap admin key, shown only this once.
func PrintAdminKey(w io.Writer, tenant, secret string) {
	fmt.Fprintf(w, "%s of tenant %q, shown only this once (only its hash is stored); "+
		"send it as \"Authorization: Bearer <key>\" and make more with \"memgate keys create\":\n%s\n", bannerKey, tenant, secret)
}

// PrintKeysExist says, on a start over a database that has keys already
// (so no key is printed), how to make a new admin key should the first be
// lost: newKey is the command.
func PrintKeysExist(w io.Writer, newKey string) {
	fmt.Fprintf(w, "%s; if its admin key is lost, make a new one (while it serves, too) with:\n  %s\n", bannerKeysExist, newKey)
}

// PrintServing prints the line that says the server is listening.
func PrintServing(w io.Writer, addr string) {
	PrintServingURL(w, "http://"+addr)
}

// PrintServingURL writes the serving line with the server's base URL
// (https:// when it serves TLS).
func PrintServingURL(w io.Writer, url string) {
	fmt.Fprintf(w, "%s%s\n", bannerServing, url)
}

// Scan reads out, the stdout of a `memgate serve` child, to its end.
// When the line with the address comes, it calls started once with the
// banner (the admin key, if one was printed before it). It reports whether
// started was called: false when the child's output ended before it served.
// Reading to the end keeps the child from blocking on a full pipe, so a
// caller runs it in a goroutine and reaps the child after it returns.
func Scan(out io.Reader, started func(Banner)) bool {
	sc := bufio.NewScanner(out)
	var b Banner
	keyNext, sent := false, false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case keyNext:
			b.Key, keyNext = strings.TrimSpace(line), false
		case strings.HasPrefix(line, bannerKey):
			keyNext = true
		case strings.HasPrefix(line, bannerServing) && !sent:
			b.URL, sent = strings.TrimRight(strings.TrimPrefix(line, bannerServing), "/"), true
			started(b)
		}
	}
	io.Copy(io.Discard, out) // a line too long for the scanner ends it early
	return sent
}
