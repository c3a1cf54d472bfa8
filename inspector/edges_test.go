package inspector_test

// The inspector's rough edges (issue 18, item 9), each reproduced in
// Chromium: chrome left on screen when signed out, a playground offered by
// a server that cannot chat, a filtered list counted against the
// unfiltered total, an agent key landing on a page it may not read, gate
// codes broken mid-word, a header wider than a phone, and the server's
// version shown nowhere. Each test has its populated control beside it.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/agent/agenttest"
	"github.com/memgate/memgate/client"
	"github.com/memgate/memgate/server"
)

// visible reports whether the element sel names is on screen: it exists,
// takes up room and is not hidden by style. An element with the hidden
// attribute that a style displays anyway counts as visible: that is what
// a person sees.
func (b *browser) visible(sel string) bool {
	b.t.Helper()
	return evalJS[bool](b, fmt.Sprintf(`(() => {
		const e = document.querySelector(%q);
		if (!e) return false;
		const r = e.getBoundingClientRect();
		return r.width > 0 && r.height > 0 && getComputedStyle(e).visibility !== 'hidden';
	})()`, sel))
}

// signInTo signs in with key and waits for the view the inspector lands
// on, which must be view.
func (b *browser) signInTo(base, key, view string) {
	b.t.Helper()
	b.do(chromedp.Navigate(base+"/#/signin"), chromedp.WaitVisible(chromedp.CSS("#key")))
	n := b.renders()
	evalJS[chromedp.Void](b, `document.querySelector('#key').value = ''`)
	b.do(chromedp.SendKeys(chromedp.CSS("#key"), key), chromedp.Click(chromedp.CSS("#signin button[type=submit]")))
	b.wait(fmt.Sprintf(`Number(document.documentElement.dataset.renders || 0) > %d && document.querySelector('section.view[data-ready]:not([data-view="signin"])')`, n))
	if got := evalJS[string](b, `document.querySelector('section.view[data-ready]').dataset.view`); got != view {
		b.t.Fatalf("landed on %q, want %q; page text: %s", got, view, b.text("#main"))
	}
}

// signOut clicks Sign out and waits for the sign-in page.
func (b *browser) signOut() {
	b.t.Helper()
	n := b.renders()
	b.do(chromedp.Click(chromedp.CSS("#signout")))
	b.rendered(n)
	b.wait(`document.querySelector('section.view[data-view="signin"] #key')`)
}

// tabs lists the navigation tabs a person sees, by view.
func (b *browser) tabs() []string {
	b.t.Helper()
	return evalJS[[]string](b, `Array.from(document.querySelectorAll('#nav a'))
		.filter(a => { const r = a.getBoundingClientRect(); return r.width > 0 && r.height > 0; })
		.map(a => a.dataset.view)`)
}

// serverInfo is the server object of GET /v1/whoami, read with key.
type serverInfo struct {
	Version  string `json:"version"`
	Revision string `json:"revision"`
	Chat     bool   `json:"chat"`
}

func (l *live) serverInfo(t testing.TB, key string) serverInfo {
	t.Helper()
	req, err := http.NewRequest("GET", l.base+"/v1/whoami", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Server *serverInfo `json:"server"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /v1/whoami: %d, %v", resp.StatusCode, err)
	}
	if body.Server == nil {
		t.Fatal("GET /v1/whoami answers no server object")
	}
	return *body.Server
}

// Item 1: signed out, the navigation, "Sign out" and who the key was are
// not on screen (a display rule once overrode the hidden attribute);
// signed in, they are. The footer names the server's version from whoami.
func TestSignedOutShowsNoChrome(t *testing.T) {
	t.Parallel()
	l := startServer(t)
	b := newBrowser(t)
	chrome := []string{"#nav", "#who", "#signout", "#who-text"}
	absent := func(when string) {
		t.Helper()
		for _, sel := range chrome {
			if b.visible(sel) {
				t.Errorf("%s: %s is on screen", when, sel)
			}
		}
		text := evalJS[string](b, `document.body.innerText`)
		for _, s := range []string{"Sign out", "tenant default", "Overview", "Playground"} {
			if strings.Contains(text, s) {
				t.Errorf("%s: the page reads %q", when, s)
			}
		}
		if b.visible("#version") {
			t.Errorf("%s: the server version is shown without a key", when)
		}
	}

	b.do(chromedp.Navigate(l.base+"/#/signin"), chromedp.WaitVisible(chromedp.CSS("#key")))
	absent("on the sign-in page")

	// The control: signed in, every piece is there.
	b.signInTo(l.base, l.admin, "overview")
	for _, sel := range chrome {
		if !b.visible(sel) {
			t.Errorf("signed in: %s is not on screen", sel)
		}
	}
	if got := b.text("#who-text"); !strings.Contains(got, "tenant default") || !strings.Contains(got, "admin") {
		t.Errorf("who = %q", got)
	}

	b.signOut()
	absent("after sign-out")
	b.healthy()
}

// The footer shows the version of the server the key reached, as whoami
// tells it, and only to a signed-in person.
func TestFooterShowsServerVersion(t *testing.T) {
	t.Parallel()
	l := startServer(t)
	info := l.serverInfo(t, l.admin)
	if info.Version == "" {
		t.Fatal("whoami answers no server version")
	}
	b := newBrowser(t)
	b.signInTo(l.base, l.admin, "overview")
	if !b.visible("#version") {
		t.Fatal("the server version is not on screen")
	}
	if got, want := b.text("#version"), "memgate "+info.Version; got != want {
		t.Errorf("footer = %q, want %q", got, want)
	}
	// Unobtrusive: below the page's content, not in its way.
	if below := evalJS[bool](b, `document.querySelector('#version').getBoundingClientRect().top >= document.querySelector('#main').getBoundingClientRect().bottom`); !below {
		t.Error("the version is not below the page's content")
	}
	b.healthy()
}

// Item 2: the playground is offered only by a server that can chat (one
// started with a model, --llm); without one its address explains why
// instead of failing after Send.
func TestPlaygroundOnlyWithAModel(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		model bool
	}{
		{"no model", false},
		{"a model (the control)", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var configure []func(*server.Config)
			if tc.model {
				model := agenttest.NewServer(t)
				configure = append(configure, func(c *server.Config) { c.LLM = model.Model(t) })
			}
			l := startServer(t, configure...)
			if got := l.serverInfo(t, l.admin).Chat; got != tc.model {
				t.Fatalf("whoami server.chat = %v, want %v", got, tc.model)
			}
			b := newBrowser(t)
			b.signInTo(l.base, l.admin, "overview")
			if got := slices.Contains(b.tabs(), "playground"); got != tc.model {
				t.Errorf("playground tab offered = %v, want %v (tabs %v)", got, tc.model, b.tabs())
			}
			b.navigate("#/playground?principal=alice")
			if got := b.count("#send"); got != map[bool]int{true: 1, false: 0}[tc.model] {
				t.Errorf("%d Send buttons on the playground", got)
			}
			if !tc.model {
				if got := b.text("#main"); !strings.Contains(got, "--llm") {
					t.Errorf("the playground's address does not explain that the server has no model: %q", got)
				}
			}
			b.healthy()
		})
	}
}

// Item 3: a filtered list never counts against the unfiltered total. Each
// case is a filter, a page size, how many pages to step through, the rows
// expected there and the total "of N" may name (0: any "of N" is wrong,
// the page cannot know it).
func TestListCountsWhatTheFilterMatches(t *testing.T) {
	t.Parallel()
	l := startServer(t)
	ctx := context.Background()
	c := l.client(t, l.admin)
	// 66 memories of carol: 65 notes and one fact.
	ms := make([]client.Memory, 65)
	for i := range ms {
		ms[i] = client.Memory{Principal: "carol", Kind: memgate.KindMessage, Source: memgate.SourceUser, Content: fmt.Sprintf("Standup note %d: the roadmap slipped by %d days.", i, i%5)}
	}
	if _, err := c.RememberBatch(ctx, ms); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Remember(ctx, client.Memory{Principal: "carol", Kind: memgate.KindFact, Source: memgate.SourceUser, Content: "Carol collects antique barometers."}); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t)
	b.signInTo(l.base, l.admin, "overview")
	ofRE := regexp.MustCompile(`\bof ([0-9,]+)`)
	for _, tc := range []struct {
		name   string
		query  string
		next   int
		from   int
		rows   int
		total  int
		exact  bool // the count must be named (the page can know it)
		suffix string
	}{
		{name: "unfiltered (the control)", query: "", from: 1, rows: 50, total: 66, exact: true},
		{name: "text matching one", query: "q=barometers", from: 1, rows: 1, total: 1},
		{name: "kind matching one", query: "kind=fact", from: 1, rows: 1, total: 1, exact: true},
		{name: "kind matching 65", query: "kind=message&limit=25", from: 1, rows: 25, total: 65, exact: true},
		{name: "text matching 65, first page", query: "q=Standup&limit=25", from: 1, rows: 25, total: 65},
		{name: "text matching 65, last page", query: "limit=25&q=Standup", next: 2, from: 51, rows: 15, total: 65, exact: true},
		{name: "status matching none", query: "status=pending", rows: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b.t = t
			hash := "#/memories?principal=carol"
			if tc.query != "" {
				hash += "&" + tc.query
			}
			b.navigate(hash)
			for range tc.next {
				b.clickAndRender("#next")
			}
			got := b.text("#list-summary")
			if n := b.count("#memories tbody tr"); n != tc.rows {
				t.Fatalf("rows = %d, want %d (summary %q)", n, tc.rows, got)
			}
			if tc.rows == 0 {
				if strings.Contains(got, "66") {
					t.Errorf("summary %q names the unfiltered total", got)
				}
				return
			}
			want := fmt.Sprintf("Showing %d–%d", tc.from, tc.from+tc.rows-1)
			if !strings.HasPrefix(got, want) {
				t.Errorf("summary = %q, want it to start %q", got, want)
			}
			m := ofRE.FindStringSubmatch(got)
			switch {
			case m == nil && tc.exact:
				t.Errorf("summary = %q, want it to say of %d", got, tc.total)
			case m != nil:
				n, err := strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
				if err != nil || n != tc.total {
					t.Errorf("summary = %q: of %s, but the filter matches %d", got, m[1], tc.total)
				}
			}
		})
	}
	b.t = t
	b.healthy()
}

// Item 4: an agent key (which may not read stats or the audit log, nor
// preview a recall) lands on a view it can use and is offered only the
// tabs its role allows; an admin key, the control, lands on the overview
// with every tab (but the playground: this server has no model).
func TestKeyLandsOnAViewItMayUse(t *testing.T) {
	t.Parallel()
	l := startServer(t)
	ctx := context.Background()
	if _, err := l.client(t, l.admin).Remember(ctx, client.Memory{Principal: "alice", Agent: "planner", Kind: memgate.KindFact, Source: memgate.SourceUser, Content: "Alice plans her week on Sunday evenings."}); err != nil {
		t.Fatal(err)
	}
	agentKey := l.key(t, memgate.Key{Tenant: l.tenant, Role: memgate.RoleAgent, Principal: "alice", Agent: "planner", Name: "planner"})
	for _, tc := range []struct {
		name, key, lands string
		tabs             []string
	}{
		{"agent key", agentKey, "memories", []string{"memories"}},
		{"admin key (the control)", l.admin, "overview", []string{"overview", "memories", "recall"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := newBrowser(t)
			b.signInTo(l.base, tc.key, tc.lands)
			if got := b.tabs(); !slices.Equal(got, tc.tabs) {
				t.Errorf("tabs = %v, want %v", got, tc.tabs)
			}
			if got := evalJS[string](b, `document.querySelector('#nav a[aria-current="page"]') ? document.querySelector('#nav a[aria-current="page"]').dataset.view : ''`); got != tc.lands {
				t.Errorf("current tab = %q, want %q", got, tc.lands)
			}
			if tc.lands == "memories" {
				if n := b.count("#memories tbody tr"); n != 1 {
					t.Errorf("the agent key's memories: %d rows, want 1 (summary %q)", n, b.text("#list-summary"))
				}
				// The brand link goes home, which is not the overview.
				b.navigate("#/recall")
				n := b.renders()
				b.do(chromedp.Click(chromedp.CSS(".top .brand")))
				b.rendered(n)
				if got := evalJS[string](b, `document.querySelector('section.view[data-ready]').dataset.view`); got != "memories" {
					t.Errorf("the brand link leads an agent key to %q", got)
				}
				// An address it may not use says so, and asks nothing of
				// the API the role may not have.
				for _, hash := range []string{"#/overview", "#/recall?principal=alice&q=Sunday"} {
					b.navigate(hash)
					if got := b.text("#unavailable"); !strings.Contains(got, "(agent) may not") || !strings.Contains(got, "Go to Memories") {
						t.Errorf("%s, to an agent key: %q", hash, b.text("#main"))
					}
				}
				for _, r := range b.requested() {
					if strings.Contains(r, "/v1/stats") || strings.Contains(r, "/v1/audit") || strings.Contains(r, "/v1/recall") {
						t.Errorf("an agent key's page asked for %s", r)
					}
				}
			}
			b.healthy()
		})
	}
}

// lineBreaks is where the text of an element wraps: for each visual line
// after the first, the two characters around the break.
type lineBreaks struct {
	Lines  int      `json:"lines"`
	Breaks []string `json:"breaks"`
	Text   string   `json:"text"`
}

// breaksJS finds an element's line breaks by the client rectangle of each
// of its characters: a character whose rectangle starts below the one
// before it begins a new line.
const breaksJS = `(el) => {
	const out = { lines: 0, breaks: [], text: el.textContent };
	let prev = null;
	const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
	for (let n = walk.nextNode(); n; n = walk.nextNode()) {
		for (let i = 0; i < n.data.length; i++) {
			const r = document.createRange();
			r.setStart(n, i);
			r.setEnd(n, i + 1);
			const rect = r.getClientRects()[0];
			// A space a line ends at has no width: it is remembered, so a
			// break between words reads "t s", not "ts".
			if (/\s/.test(n.data[i])) { if (prev) prev.space = true; continue; }
			if (!rect || rect.width === 0) continue;
			if (!prev || rect.top > prev.top + rect.height / 2) {
				out.lines++;
				if (prev) out.breaks.push(prev.ch + (prev.space ? ' ' : '') + n.data[i]);
			}
			prev = { ch: n.data[i], top: rect.top, space: false };
		}
	}
	return out;
}`

func (b *browser) lineBreaks(elementExpr string) lineBreaks {
	b.t.Helper()
	return evalJS[lineBreaks](b, "("+breaksJS+")("+elementExpr+")")
}

var wordChar = regexp.MustCompile(`^[A-Za-z0-9]{2}$`)

// midWord lists the breaks that fall between two letters or digits.
func (lb lineBreaks) midWord() []string {
	var out []string
	for _, br := range lb.Breaks {
		if wordChar.MatchString(br) {
			out = append(out, br)
		}
	}
	return out
}

// Item 5: a write-gate code, said in words since issue 28, wraps between
// words, never inside one: in the narrow status cell of the list and in
// the receipt on a narrow screen.
func TestGateCodesWrapAtUnderscores(t *testing.T) {
	t.Parallel()
	l := startServer(t)
	ctx := context.Background()
	r, err := l.client(t, l.admin).Remember(ctx, client.Memory{Principal: "alice", Kind: memgate.KindFact, Source: memgate.SourceAssistant, Content: "Alice's favourite colour is ultramarine blue.", Reason: "inferred by the assistant"})
	if err != nil {
		t.Fatal(err)
	}
	held := r.Memory
	if held.Status != memgate.StatusPending || len(held.StatusReason) < 20 || !strings.Contains(held.StatusReason, "_") {
		t.Fatalf("the planted memory: status %s, reason %q; want pending with a long code", held.Status, held.StatusReason)
	}
	b := newBrowser(t)
	b.signInTo(l.base, l.admin, "overview")

	// The control of the measure itself: a word forced to break anywhere
	// is seen breaking mid-word.
	forced := b.lineBreaks(`(() => {
		const d = document.createElement('div');
		d.id = 'forced-break';
		d.textContent = 'supercalifragilistic_expialidocious';
		d.style.width = '40px';
		d.style.overflowWrap = 'anywhere';
		document.body.append(d);
		return d;
	})()`)
	if forced.Lines < 2 || len(forced.midWord()) == 0 {
		t.Fatalf("the measure does not see a forced mid-word break: %+v", forced)
	}
	evalJS[chromedp.Void](b, `document.querySelector('#forced-break').remove()`)

	check := func(where, elementExpr string) {
		t.Helper()
		lb := b.lineBreaks(elementExpr)
		// Said in words (issue 28), the code kept as data-code.
		if !strings.Contains(lb.Text, "waits for approval") || strings.Contains(lb.Text, "_") {
			t.Fatalf("%s: text %q does not say the code %q in words", where, lb.Text, held.StatusReason)
		}
		if code := evalJS[string](b, `(`+elementExpr+`).querySelector('.gate-code').dataset.code`); code != held.StatusReason {
			t.Fatalf("%s: data-code = %q, want %q", where, code, held.StatusReason)
		}
		if lb.Lines < 2 {
			// The case is a code too long for its box; if it fits on one
			// line the test measures nothing.
			t.Fatalf("%s: %q fits on one line; the test needs it to wrap", where, lb.Text)
		}
		if mid := lb.midWord(); len(mid) > 0 {
			t.Errorf("%s: %q breaks inside a word at %q (all breaks %q)", where, lb.Text, mid, lb.Breaks)
		}
	}
	b.navigate("#/memories?principal=alice&status=pending")
	check("list status cell", fmt.Sprintf(`document.querySelector('#memories tr[data-id=%q] td .muted.small')`, held.ID))

	b.do(chromedp.EmulateViewport(420, 900))
	b.navigate(fmt.Sprintf("#/memory/%s?principal=alice", held.ID))
	dd := func(label string) string {
		return fmt.Sprintf(`Array.from(document.querySelectorAll('#receipt dt')).find(d => d.textContent === %q).nextElementSibling`, label)
	}
	check("receipt status", dd("Status"))
	check("receipt flags", dd("Write-gate flags"))
	b.healthy()
}

// Item 6: at 420 px the header wraps inside the screen and no view is
// wider than it; at 1280 px (the control) the header is one row, as
// before: brand, tabs, and who is signed in at the right.
func TestHeaderFitsANarrowScreen(t *testing.T) {
	t.Parallel()
	l := startServer(t)
	ctx := context.Background()
	r, err := l.client(t, l.admin).Remember(ctx, client.Memory{Principal: "alice", Kind: memgate.KindFact, Source: memgate.SourceUser, Content: lisbonFact, Reason: "she said so"})
	if err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t)
	b.signInTo(l.base, l.admin, "overview")
	type box struct {
		Right, ScrollWidth, HeaderHeight, BrandTop, NavTop, WhoTop, WhoRight, LineHeight float64
	}
	measure := func() box {
		return evalJS[box](b, `(() => {
			const rect = (sel) => document.querySelector(sel).getBoundingClientRect();
			let right = 0;
			for (const e of document.querySelectorAll('header.top, header.top *')) {
				const r = e.getBoundingClientRect();
				if (r.width > 0 && r.height > 0) right = Math.max(right, r.right);
			}
			return {
				Right: right, ScrollWidth: document.documentElement.scrollWidth,
				HeaderHeight: rect('header.top').height,
				BrandTop: rect('.top .brand').top, NavTop: rect('#nav').top, WhoTop: rect('#who').top,
				WhoRight: rect('#who').right, LineHeight: rect('#nav a').height,
			};
		})()`)
	}
	views := []string{
		"#/overview?principal=alice",
		"#/memories?principal=alice",
		fmt.Sprintf("#/memory/%s?principal=alice", r.Memory.ID),
		"#/recall?principal=alice&q=" + "Where%20does%20Alice%20live%3F",
	}

	t.Run("420 px", func(t *testing.T) {
		b.t = t
		b.do(chromedp.EmulateViewport(420, 900))
		for _, v := range views {
			b.navigate(v)
			m := measure()
			if m.ScrollWidth > 420 {
				t.Errorf("%s: the page is %v px wide", v, m.ScrollWidth)
			}
			if m.Right > 420 {
				t.Errorf("%s: the header reaches %v px", v, m.Right)
			}
		}
		b.healthy()
	})
	t.Run("1280 px (the control)", func(t *testing.T) {
		b.t = t
		b.do(chromedp.EmulateViewport(1280, 900))
		for _, v := range views {
			b.navigate(v)
			m := measure()
			if m.ScrollWidth > 1280 || m.Right > 1280 {
				t.Errorf("%s: the page is %v px wide, the header reaches %v px", v, m.ScrollWidth, m.Right)
			}
			// One row: the three parts side by side, the header one line
			// of tabs tall (with its padding), who at the right edge.
			if d := max(m.BrandTop, m.NavTop, m.WhoTop) - min(m.BrandTop, m.NavTop, m.WhoTop); d > m.LineHeight/2 {
				t.Errorf("%s: the header is not one row (tops %v, %v, %v)", v, m.BrandTop, m.NavTop, m.WhoTop)
			}
			if m.HeaderHeight > 2*m.LineHeight {
				t.Errorf("%s: the header is %v px tall, more than one row (%v)", v, m.HeaderHeight, m.LineHeight)
			}
			if m.WhoRight < 1280-40 {
				t.Errorf("%s: who is signed in ends at %v px, not at the right", v, m.WhoRight)
			}
		}
		b.healthy()
	})
}
