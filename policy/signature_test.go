package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"unicode/utf8"
)

func TestSignature(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		a, b string
		same bool
	}{
		{"case, spaces and full stop", "Alice likes tea.", "  alice likes TEA. ", true},
		{"inner white space and line breaks", "Alice\tlikes\n\n tea", "alice likes tea", true},
		{"exclamation and ellipsis", "Alice likes tea!!!", "alice likes tea…", true},
		{"curly apostrophe", "Alice’s cat", "alice's cat", true},
		{"fullwidth", "ＡＢＣ１２３", "abc123", true},
		{"zero width", "Alice li\u200bkes tea", "alice likes tea", true},
		{"unicode case", "ÉCOLE ÖSTERREICH", "école österreich", true},
		{"greek final sigma", "ΟΔΟΣ", "οδος", true},
		{"different object", "Alice likes tea", "Alice likes coffee", false},
		{"question is not a statement", "Alice is vegan?", "Alice is vegan.", false},
		{"inner punctuation kept", "Alice, likes tea", "Alice likes tea", false},
		{"numbers kept", "Meeting at 10", "Meeting at 11", false},
		{"no canonical normalization", "caf\u00e9", "cafe\u0301", false},
		{"accents kept", "résumé", "resume", false},
		{"punctuation only stays distinct", "...", "!!!", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sa, sb := Signature(tc.a), Signature(tc.b)
			if (sa == sb) != tc.same {
				t.Errorf("Signature(%q) == Signature(%q) is %v, want %v (%q vs %q)", tc.a, tc.b, sa == sb, tc.same, signatureText(tc.a), signatureText(tc.b))
			}
		})
	}
	if got, want := signatureText("  Alice likes TEA. "), "alice likes tea"; got != want {
		t.Errorf("signatureText = %q, want %q", got, want)
	}
	// Pinned: the signature is the plain SHA-256 of the normalized text.
	sum := sha256.Sum256([]byte("alice likes tea"))
	if got := Signature("Alice likes tea."); got != hex.EncodeToString(sum[:]) {
		t.Errorf("Signature = %s, want sha256(%q)", got, "alice likes tea")
	}
}

func FuzzSignature(f *testing.F) {
	for _, s := range []string{"Alice likes tea.", "  alice likes TEA. ", "...", "\xff\xfe", "Ａ\u200b ς…?", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sig := Signature(s)
		if len(sig) != 64 {
			t.Fatalf("signature %q is not 64 hex digits", sig)
		}
		if _, err := hex.DecodeString(sig); err != nil {
			t.Fatalf("signature %q is not hex", sig)
		}
		n := signatureText(s)
		if !utf8.ValidString(n) {
			t.Fatalf("normalized text is not valid UTF-8: %q", n)
		}
		// Normalization is idempotent: normalized text has its own signature.
		if Signature(n) != sig {
			t.Fatalf("not idempotent: %q normalizes to %q, which normalizes to %q", s, n, signatureText(n))
		}
	})
}
