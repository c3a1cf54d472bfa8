package storetest

import (
	"encoding/base64"
	"fmt"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

var listTests = []test{
	{"Filters", testListFilters},
	{"LiteralText", testListLiteralText},
	{"DefaultLimit", testListDefaultLimit},
	{"ClampLimit", testListClampLimit},
	{"CursorWalk", testListCursorWalk},
	{"StableUnderInserts", testListStableUnderInserts},
	{"StableUnderDeletesThenInserts", testListStableUnderDeletes},
	{"BadCursor", testListBadCursor},
}

func testListFilters(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	type row struct {
		kind    memgate.Kind
		source  memgate.Source
		status  memgate.Status
		expires time.Duration // relative to now; 0 means never
	}
	rows := []row{
		1: {memgate.KindFact, memgate.SourceUser, memgate.StatusActive, 0},
		2: {memgate.KindPreference, memgate.SourceAssistant, memgate.StatusActive, -time.Hour},    // expired
		3: {memgate.KindMessage, memgate.SourceTool, memgate.StatusActive, -1},                    // expires exactly at now: expired
		4: {memgate.KindTask, memgate.SourceVerifiedTool, memgate.StatusActive, time.Microsecond}, // expires just after now: active
		5: {memgate.KindSummary, memgate.SourceSystem, memgate.StatusPending, 0},                  //
		6: {memgate.KindFact, memgate.SourceImport, memgate.StatusRevoked, -time.Hour},            // revoked, not "expired"
		7: {memgate.KindFact, memgate.SourceUser, memgate.StatusSuperseded, 0},                    //
		8: {memgate.KindPreference, memgate.SourceUser, memgate.StatusPending, -time.Hour},        // pending, not "expired"
		9: {memgate.KindFact, memgate.SourceUser, memgate.StatusActive, 365 * 24 * time.Hour},     // active
	}
	for i := 1; i < len(rows); i++ {
		r := rows[i]
		m := newMemory(alice, id(i), fmt.Sprintf("filter row %d", i))
		m.Kind, m.Source, m.Status = r.kind, r.source, r.status
		switch r.expires {
		case 0:
		case -1:
			m.ExpiresAt = ptr(now)
		default:
			m.ExpiresAt = ptr(now.Add(r.expires))
		}
		mustInsert(t, s, m)
	}
	// Bob's memory matches every filter below that has no status: it must
	// never show up for alice.
	theirs := newMemory(bob, id(100), "bob's fact")
	mustInsert(t, s, theirs)

	ids := func(is ...int) []string {
		out := make([]string, len(is))
		for i, n := range is {
			out[i] = id(n)
		}
		return newestFirst(out...)
	}
	st := func(ss ...memgate.Status) []memgate.Status { return ss }
	cases := []struct {
		name string
		f    store.Filter
		want []string
	}{
		{"no filter", store.Filter{}, ids(1, 2, 3, 4, 5, 6, 7, 8, 9)},
		{"kind fact", store.Filter{Kinds: []memgate.Kind{memgate.KindFact}}, ids(1, 6, 7, 9)},
		{"kinds fact and preference", store.Filter{Kinds: []memgate.Kind{memgate.KindFact, memgate.KindPreference}}, ids(1, 2, 6, 7, 8, 9)},
		{"kind with no memory", store.Filter{Kinds: []memgate.Kind{"no-such-kind"}}, ids()},
		{"source user", store.Filter{Sources: []memgate.Source{memgate.SourceUser}}, ids(1, 7, 8, 9)},
		{"sources tool and verified_tool", store.Filter{Sources: []memgate.Source{memgate.SourceTool, memgate.SourceVerifiedTool}}, ids(3, 4)},
		{"status active means not expired", store.Filter{Statuses: st(memgate.StatusActive), Now: now}, ids(1, 4, 9)},
		{"status expired means active and expired", store.Filter{Statuses: st(memgate.StatusExpired), Now: now}, ids(2, 3)},
		{"active and expired", store.Filter{Statuses: st(memgate.StatusActive, memgate.StatusExpired), Now: now}, ids(1, 2, 3, 4, 9)},
		{"expiry judged at Now: a day earlier nothing has expired", store.Filter{Statuses: st(memgate.StatusActive), Now: now.Add(-24 * time.Hour)}, ids(1, 2, 3, 4, 9)},
		{"expired a day earlier: none", store.Filter{Statuses: st(memgate.StatusExpired), Now: now.Add(-24 * time.Hour)}, ids()},
		{"pending, whatever the expiry", store.Filter{Statuses: st(memgate.StatusPending), Now: now}, ids(5, 8)},
		{"revoked, whatever the expiry", store.Filter{Statuses: st(memgate.StatusRevoked), Now: now}, ids(6)},
		{"superseded", store.Filter{Statuses: st(memgate.StatusSuperseded), Now: now}, ids(7)},
		{"kind, source and status combined", store.Filter{
			Kinds: []memgate.Kind{memgate.KindFact}, Sources: []memgate.Source{memgate.SourceUser},
			Statuses: st(memgate.StatusActive), Now: now,
		}, ids(1, 9)},
		{"kind summary alone", store.Filter{Kinds: []memgate.Kind{memgate.KindSummary}}, ids(5)},
		{"kind summary and active: none", store.Filter{Kinds: []memgate.Kind{memgate.KindSummary}, Statuses: st(memgate.StatusActive), Now: now}, ids()},
		{"filters across pages", store.Filter{Kinds: []memgate.Kind{memgate.KindFact, memgate.KindPreference}, Limit: 2}, ids(1, 2, 6, 7, 8, 9)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			requireIDs(t, "List", listIDs(t, s, alice, tc.f), tc.want)
		})
	}
	requireIDs(t, "List of bob", listIDs(t, s, bob, store.Filter{}), []string{theirs.ID})

	t.Run("statuses without now", func(t *testing.T) {
		_, err := s.List(t.Context(), alice, store.Filter{Statuses: st(memgate.StatusActive)})
		requireCode(t, "List", err, memgate.EINVALID, "now")
	})
}

// testListLiteralText checks that Filter.Text is a case-insensitive literal
// substring: LIKE wildcards, regex and FTS syntax, quotes and backslashes
// match only themselves.
func testListLiteralText(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	contents := []string{
		1:  "Budget is 100% approved",
		2:  "file_name_v2.txt was uploaded",
		3:  "Likes C++ and (parentheses)",
		4:  `She said "hello" loudly`,
		5:  "price $5.00 [approx] ^start end$ a|b a.b* done",
		6:  "NEAR AND OR NOT -minus col:on",
		7:  "Grüße aus MÜNCHEN, Ελληνικά",
		8:  `path C:\Users\back\slash`,
		9:  "it's a plain sentence",
		10: "axb and 1000 items",
	}
	for i := 1; i < len(contents); i++ {
		m := newMemory(alice, id(i), contents[i])
		if i == 3 {
			m.Kind = memgate.KindPreference
		}
		mustInsert(t, s, m)
	}
	mustInsert(t, s, newMemory(bob, id(100), "bob is 100% sure and it's NEAR"))

	ids := func(is ...int) []string {
		out := make([]string, len(is))
		for i, n := range is {
			out[i] = id(n)
		}
		return newestFirst(out...)
	}
	cases := []struct {
		name  string
		text  string
		kinds []memgate.Kind
		want  []string
	}{
		{"empty text is no filter", "", nil, ids(1, 2, 3, 4, 5, 6, 7, 8, 9, 10)},
		{"percent sign literal", "100%", nil, ids(1)},
		{"percent alone does not match everything", "%", nil, ids(1)},
		{"underscore literal", "_", nil, ids(2)},
		{"underscore is not a single-character wildcard", "a_b", nil, ids()},
		{"asterisk literal", "*", nil, ids(5)},
		{"regex-looking text matches itself", "a.b*", nil, ids(5)},
		{"dot-star is not a regex", ".*", nil, ids()},
		{"plus signs", "C++", nil, ids(3)},
		{"parentheses", "(parentheses)", nil, ids(3)},
		{"double quotes", `"hello"`, nil, ids(4)},
		{"brackets", "[approx]", nil, ids(5)},
		{"caret and dollar", "^start end$", nil, ids(5)},
		{"pipe", "a|b", nil, ids(5)},
		{"FTS column syntax", "col:on", nil, ids(6)},
		{"FTS operators", "NEAR AND", nil, ids(6)},
		{"FTS negation", "-minus", nil, ids(6)},
		{"case-insensitive", "and", nil, ids(3, 6, 10)},
		{"mixed case", "BUDGET is 100", nil, ids(1)},
		{"non-ASCII case-insensitive", "grüße aus münchen", nil, ids(7)},
		{"Greek case-insensitive", "ΕΛΛΗΝΙΚΆ", nil, ids(7)},
		{"backslash alone", `\`, nil, ids(8)},
		{"backslash in text", `back\slash`, nil, ids(8)},
		{"apostrophe", "'", nil, ids(9)},
		{"SQL injection attempt", "x' OR '1'='1", nil, ids()},
		{"no match", "nothing like this", nil, ids()},
		{"text and kind combined", "and", []memgate.Kind{memgate.KindPreference}, ids(3)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			requireIDs(t, fmt.Sprintf("List text %q", tc.text), listIDs(t, s, alice, store.Filter{Text: tc.text, Kinds: tc.kinds}), tc.want)
		})
	}
}

func testListDefaultLimit(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	ms := newMemories(alice, 1, store.DefaultPageSize+10)
	mustInsert(t, s, ms...)

	p, err := s.List(t.Context(), alice, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Memories) != store.DefaultPageSize || p.Limit != store.DefaultPageSize || p.Clamped || p.NextCursor == "" {
		t.Fatalf("first page: %d memories, limit %d, clamped %v, cursor %q; want %d, %d, false, a cursor",
			len(p.Memories), p.Limit, p.Clamped, p.NextCursor, store.DefaultPageSize, store.DefaultPageSize)
	}
	p2, err := s.List(t.Context(), alice, store.Filter{Cursor: p.NextCursor})
	if err != nil {
		t.Fatal(err)
	}
	if len(p2.Memories) != 10 || p2.NextCursor != "" {
		t.Fatalf("second page: %d memories, cursor %q; want 10 and no cursor", len(p2.Memories), p2.NextCursor)
	}
	requireIDs(t, "both pages", idsOf(append(p.Memories, p2.Memories...)), newestFirst(idsOf(ms)...))
}

func testListClampLimit(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	mustInsert(t, s, newMemories(alice, 1, store.MaxPageSize+1)...)

	cases := []struct {
		name        string
		limit       int
		wantLen     int
		wantLimit   int
		wantClamped bool
	}{
		{"exactly the maximum", store.MaxPageSize, store.MaxPageSize, store.MaxPageSize, false},
		{"one over the maximum", store.MaxPageSize + 1, store.MaxPageSize, store.MaxPageSize, true},
		{"far over the maximum", 1 << 30, store.MaxPageSize, store.MaxPageSize, true},
		{"negative means default", -1, store.DefaultPageSize, store.DefaultPageSize, false},
		{"small", 3, 3, 3, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := s.List(t.Context(), alice, store.Filter{Limit: tc.limit})
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Memories) != tc.wantLen || p.Limit != tc.wantLimit || p.Clamped != tc.wantClamped || p.NextCursor == "" {
				t.Fatalf("got %d memories, limit %d, clamped %v, cursor %q; want %d, %d, %v, a cursor",
					len(p.Memories), p.Limit, p.Clamped, p.NextCursor, tc.wantLen, tc.wantLimit, tc.wantClamped)
			}
		})
	}
}

// testListCursorWalk pages through a partition mixed with other partitions'
// rows and checks every row is visited once, newest first.
func testListCursorWalk(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	var want []string
	n := 0
	for batch := range 5 {
		var ms []*memgate.Memory
		for range batch + 2 {
			n++
			ms = append(ms, newMemory(alice, id(n), fmt.Sprintf("row %d", n)))
			want = append(want, id(n))
		}
		mustInsert(t, s, ms...)
		mustInsert(t, s, newMemory(bob, fmt.Sprintf("bob-%d", batch), "interleaved"))
		mustInsert(t, s, newMemory(aliceGlobex, fmt.Sprintf("globex-%d", batch), "interleaved"))
	}
	want = newestFirst(want...)

	for _, limit := range []int{1, 2, 3, 5, len(want) - 1, len(want), len(want) + 1} {
		t.Run(fmt.Sprintf("limit %d", limit), func(t *testing.T) {
			var got []string
			f := store.Filter{Limit: limit}
			for pages := 1; ; pages++ {
				p, err := s.List(t.Context(), alice, f)
				if err != nil {
					t.Fatal(err)
				}
				if len(p.Memories) > limit {
					t.Fatalf("page %d has %d memories, limit %d", pages, len(p.Memories), limit)
				}
				got = append(got, idsOf(p.Memories)...)
				if p.NextCursor == "" {
					if len(got) < len(want) {
						t.Fatalf("no cursor after page %d, %d of %d rows", pages, len(got), len(want))
					}
					break
				}
				if len(p.Memories) != limit {
					t.Fatalf("page %d has %d memories and a cursor; a full page of %d is expected before the last", pages, len(p.Memories), limit)
				}
				if pages > len(want)+1 {
					t.Fatal("cursor does not advance")
				}
				f.Cursor = p.NextCursor
			}
			requireIDs(t, "walk", got, want)
		})
	}
}

// testListStableUnderInserts inserts rows between pages: later pages neither
// repeat nor skip rows that existed when paging began, nor show new rows.
func testListStableUnderInserts(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	before := newMemories(alice, 1, 12)
	mustInsert(t, s, before...)

	var got []string
	f := store.Filter{Limit: 5}
	next := 100
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatal("cursor does not advance")
		}
		p, err := s.List(t.Context(), alice, f)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, idsOf(p.Memories)...)
		if p.NextCursor == "" {
			break
		}
		f.Cursor = p.NextCursor
		// New rows, in the partition and beside it, while paging.
		mustInsert(t, s, newMemories(alice, next, 3)...)
		mustInsert(t, s, newMemory(bob, id(next+50), "bob's new row"))
		next += 3
	}
	requireIDs(t, "pages", got, newestFirst(idsOf(before)...))

	// Control: a fresh walk sees the new rows too.
	if n := len(listIDs(t, s, alice, store.Filter{})); n != len(before)+next-100 {
		t.Fatalf("fresh walk: %d rows, want %d", n, len(before)+next-100)
	}
}

// testListStableUnderDeletes deletes the newest rows, the cursor's own row
// among them, then inserts: a backend that reuses insertion sequence numbers
// would slot the new rows behind the cursor.
func testListStableUnderDeletes(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	before := newMemories(alice, 1, 6)
	mustInsert(t, s, before...)

	p, err := s.List(t.Context(), alice, store.Filter{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	requireIDs(t, "first page", idsOf(p.Memories), newestFirst(id(5), id(6)))
	for _, gone := range []string{id(6), id(5), id(4)} {
		if err := s.Delete(t.Context(), alice, gone); err != nil {
			t.Fatalf("Delete %s: %v", gone, err)
		}
	}
	mustInsert(t, s, newMemories(alice, 100, 3)...)

	rest := listIDs(t, s, alice, store.Filter{Limit: 2, Cursor: p.NextCursor})
	requireIDs(t, "later pages", rest, newestFirst(id(1), id(2), id(3)))
	// Control: a fresh walk sees the new rows first.
	requireIDs(t, "fresh walk", listIDs(t, s, alice, store.Filter{}), newestFirst(id(1), id(2), id(3), id(100), id(101), id(102)))
}

func testListBadCursor(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	mustInsert(t, s, newMemories(alice, 1, 3)...)
	p, err := s.List(t.Context(), alice, store.Filter{Limit: 1})
	if err != nil || p.NextCursor == "" {
		t.Fatalf("control: first page: %v, cursor %q", err, p.NextCursor)
	}
	good, err := s.List(t.Context(), alice, store.Filter{Limit: 1, Cursor: p.NextCursor})
	if err != nil || len(good.Memories) != 1 {
		t.Fatalf("control: second page: %v", err)
	}

	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	cases := []struct {
		name   string
		cursor string
	}{
		{"not base64", "!!not a cursor!!"},
		{"wrong prefix", enc("c2:5")},
		{"not a number", enc("c1:five")},
		{"zero", enc("c1:0")},
		{"negative", enc("c1:-5")},
		{"SQL", enc("c1:1 OR 1=1")},
		{"truncated", p.NextCursor[:len(p.NextCursor)-1] + "*"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			page, err := s.List(t.Context(), alice, store.Filter{Cursor: tc.cursor})
			requireCode(t, "List", err, memgate.EINVALID, "cursor")
			if page != nil && len(page.Memories) > 0 {
				t.Fatal("List returned memories with the error")
			}
		})
	}
}
