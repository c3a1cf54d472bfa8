package analysis

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

// TestTermsVersionGolden pins what Terms returns under each TermsVersion:
// stores keep the terms of every memory's content under the version they
// were made with (store.ContentTerms) and reuse them while it is current,
// so a change to Terms without a new TermsVersion would serve stale terms.
// If this fails, bump TermsVersion and add the new digest.
func TestTermsVersionGolden(t *testing.T) {
	t.Parallel()
	digests := map[string]string{
		"analysis-v1": "8844a402b50d5037396a2f468faa6f00eddda7107e82e0cd4e7f01e2dd346693",
	}
	h := sha256.New()
	for _, text := range []string{
		"Caroline: I went to a LGBTQ support group yesterday.",
		"東京 café, don't! Straße ÅNGSTRÖM łódź naïve",
		"The runners were running; she ran, they run — generously, generational, 3.5 km/h.",
		"https://example.com/a_b?c=d#e foo_bar x@y.z \xff\xfe invalid",
		"",
	} {
		h.Write([]byte(strings.Join(Terms(text), "\x00")))
		h.Write([]byte{0xff})
	}
	got := hex.EncodeToString(h.Sum(nil))
	want, ok := digests[TermsVersion]
	if !ok || want != got {
		t.Fatalf("Terms under %s hash to %s, golden %q: bump TermsVersion if Terms changed, and record the digest", TermsVersion, got, want)
	}
}
