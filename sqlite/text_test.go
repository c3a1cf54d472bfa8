package sqlite

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

// textCorpus is content that a pattern-matching search would get wrong:
// LIKE, GLOB and FTS metacharacters, quotes, backslashes, and letters whose
// case folding is not ASCII (Kelvin sign, dotted I, sharp s, final sigma).
var textCorpus = []string{
	"Alice keeps BEES on the roof.",
	"100% sure_thing: a*b?c [x] {y} (z)",
	`she said "don't" and 'won't' \ back\slash`,
	"İstanbul and ISTANBUL",
	"Straße STRASSE",
	"ΣΟΦΟΣ σοφος",
	"the \u212a sign and k",
	"ǅemal Ǆ ǆ",
	"emoji 🐝 bee",
	"NEAR(a b) OR c AND NOT d * ^e -f \"g h\"",
	"tab\tnew\nline",
	"\uFFFD replacement",
	"",
}

// FuzzListText: List's text filter is a literal, case-insensitive substring
// test. For any needle, List never errors and returns exactly the memories
// whose lower-cased content contains the lower-cased needle (the empty
// needle filters nothing), so no character is read as pattern syntax.
func FuzzListText(f *testing.F) {
	for _, s := range []string{
		"", "bee", "BEE", "%", "_", "%%", "a_b", "*", "?", "[x]", "\\", "\\\\", "'", "\"", "''", "' OR 1=1 --",
		"NEAR", "OR", "\"g h\"", "^e", "-f", "k", "\u212a", "İ", "i̇", "ß", "ss", "σ", "ς", "Σ", "ǆ", "Ǆ",
		"🐝", "\t", "\n", " ", "\x00", "\xff", "\uFFFD", "100% sure", "keeps bees",
	} {
		f.Add(s)
	}
	db, err := Open(f.Context(), filepath.Join(f.TempDir(), "memgate.db"))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { db.Close() })
	var ms []*memgate.Memory
	for i, c := range textCorpus {
		if c == "" {
			continue // content is required
		}
		ms = append(ms, testMemory(fmt.Sprintf("m-%03d", i), c))
	}
	if err := db.Insert(f.Context(), ms); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, needle string) {
		page, err := db.List(t.Context(), alice, store.Filter{Text: needle, Limit: store.MaxPageSize})
		if err != nil {
			t.Fatalf("List(text %q): %v", needle, err)
		}
		var got, want []string
		for _, m := range page.Memories {
			got = append(got, m.ID)
		}
		lower := strings.ToLower(needle)
		for _, m := range ms {
			if strings.Contains(strings.ToLower(m.Content), lower) {
				want = append(want, m.ID)
			}
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("List(text %q) = %v, want %v", needle, got, want)
		}
	})
}

// TestRememberAnswersFlagsAsStored: SQLite keeps flags as JSON text, which
// turns bytes that are not UTF-8 into U+FFFD, so Remember's answer for a
// memory with such a flag must be what a read returns, not the flag it
// was given (sqlstore answers a fresh insert from what it bound). The
// control, flags that are valid UTF-8, comes back as given.
func TestRememberAnswersFlagsAsStored(t *testing.T) {
	t.Parallel()
	db := openTest(t, filepath.Join(t.TempDir(), "memgate.db"))
	bad := testMemory("m-bad", "a flag that is not UTF-8")
	bad.Flags = []string{"ok", "bad \xff\xfe"}
	good := testMemory("m-good", "flags that are UTF-8")
	good.Flags = []string{"ok", "ünïcödé"}
	res, err := db.Remember(t.Context(), []*memgate.Memory{bad, good}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range []*memgate.Memory{bad, good} {
		got, err := db.Get(t.Context(), alice, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(res.Memories[i].Flags, got.Flags) {
			t.Errorf("%s: Remember answered flags %q, a read returns %q", m.ID, res.Memories[i].Flags, got.Flags)
		}
	}
	if !slices.Equal(res.Memories[1].Flags, good.Flags) {
		t.Errorf("valid flags answered as %q, want %q", res.Memories[1].Flags, good.Flags)
	}
	if slices.Equal(res.Memories[0].Flags, bad.Flags) {
		t.Errorf("flags that are not UTF-8 answered as given, %q: SQLite stores them as JSON", bad.Flags)
	}
}
