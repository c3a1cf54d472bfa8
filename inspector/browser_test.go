package inspector_test

// The inspector tested in a real browser: Debian's Chromium, headless,
// driven over the DevTools protocol (chromedp), against a real "memgate
// serve" (server.Run on 127.0.0.1:0 over a SQLite file). scripts/test
// installs Chromium when it is missing and sets MEMGATE_REQUIRE_BROWSER, so
// in CI a missing browser fails the test instead of skipping it.
//
// Set MEMGATE_SCREENSHOTS to a directory (the repository's docs/) to save a
// screenshot of each main view there.

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/auth"
	"github.com/memgate/memgate/client"
	"github.com/memgate/memgate/guard"
	"github.com/memgate/memgate/internal/logtest"
	"github.com/memgate/memgate/rank"
	"github.com/memgate/memgate/server"
	"github.com/memgate/memgate/sqlite"
)

// lockedBuffer captures the log lines.
type lockedBuffer = logtest.Buffer

// live is a running memgate serve with its admin key.
type live struct {
	base   string // http://127.0.0.1:port
	db     string
	admin  string // the bootstrap admin key's secret
	tenant string
}

var keyRE = regexp.MustCompile(`mgk_[A-Za-z0-9_-]+`)

func startServer(t testing.TB, configure ...func(*server.Config)) *live {
	t.Helper()
	dir := t.TempDir()
	l := &live{db: filepath.Join(dir, "memgate.db"), tenant: server.DefaultBootstrapTenant}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	var out lockedBuffer
	cfg := server.Config{
		Addr: "127.0.0.1:0", DB: l.db, SweepEvery: -1,
		RateLimit: guard.RateLimit{PerSecond: -1},
		Ready:     func(addr string) { ready <- addr },
	}
	for _, f := range configure {
		f(&cfg)
	}
	go func() { done <- server.Run(ctx, cfg, &out, io.Discard) }()
	select {
	case addr := <-ready:
		l.base = "http://" + addr
	case err := <-done:
		cancel()
		t.Fatalf("server.Run: %v", err)
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatal("server did not start")
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("server.Run: %v", err)
		}
	})
	l.admin = keyRE.FindString(out.String())
	if l.admin == "" {
		t.Fatal("no admin key on the server's stdout")
	}
	return l
}

// userKey creates a user key bound to principal, in the server's database.
func (l *live) userKey(t testing.TB, principal string) string {
	t.Helper()
	return l.key(t, memgate.Key{Tenant: l.tenant, Role: memgate.RoleUser, Principal: principal, Name: "browser test"})
}

// key creates the key k in the server's database and returns its secret.
func (l *live) key(t testing.TB, k memgate.Key) string {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, l.db)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	secret, rec, err := auth.NewKey(k)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.CreateKey(ctx, rec); err != nil {
		t.Fatal(err)
	}
	return secret
}

func (l *live) client(t testing.TB, key string) *client.Client {
	t.Helper()
	c, err := client.New(l.base, key)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// browser is one Chromium tab and what it saw: every request URL, console
// errors, uncaught exceptions and Content-Security-Policy violations.
type browser struct {
	t   testing.TB
	ctx context.Context

	mu         sync.Mutex
	requests   []string
	problems   []string
	violations []string
}

// chromium finds Debian's Chromium (or another Chromium-based browser).
func chromium(t testing.TB) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("MEMGATE_REQUIRE_BROWSER") != "" || os.Getenv("CI") != "" {
		t.Fatal("Chromium is not installed (apt-get install -y chromium); the browser tests need it")
	}
	t.Skip("Chromium is not installed; scripts/test installs it (set MEMGATE_REQUIRE_BROWSER=1 to fail instead)")
	return ""
}

func newBrowser(t testing.TB) *browser {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium(t)),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("mute-audio", true),
		chromedp.WindowSize(1360, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
	})
	b := &browser{t: t, ctx: ctx}
	// The first call starts Chromium for the life of ctx (no timeout on it).
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	if err := chromedp.Listen(ctx, b.observe); err != nil {
		t.Fatalf("listen to Chromium: %v", err)
	}
	if _, err := chromedp.Call(ctx, runtime.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, log.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	return b
}

// observe records what the page did; it runs on chromedp's reading
// goroutine, so it only appends under the lock.
func (b *browser) observe(ev any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch e := ev.(type) {
	case *network.EventRequestWillBeSent:
		b.requests = append(b.requests, e.Request.URL)
	case *runtime.EventExceptionThrown:
		b.problems = append(b.problems, "exception: "+e.ExceptionDetails.Text)
	case *runtime.EventConsoleAPICalled:
		if e.Type == runtime.ConsoleAPICalledTypeError {
			b.problems = append(b.problems, "console.error")
		}
	case *log.EventEntryAdded:
		if strings.Contains(e.Entry.Text, "Content Security Policy") {
			b.violations = append(b.violations, e.Entry.Text)
		}
	}
}

func (b *browser) do(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.t.Fatalf("browser: %v", err)
	}
}

// evalJS evaluates expr in the page and returns its value.
func evalJS[T any](b *browser, expr string, opts ...chromedp.EvaluateOption) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, opts...))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// wait polls until the JavaScript expression is truthy.
func (b *browser) wait(expr string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool]("!!("+expr+")", chromedp.WithPollingMutation())); err != nil {
		page, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.querySelector('#main') ? document.querySelector('#main').innerText.slice(0, 600) : ''`))
		b.t.Fatalf("waiting for %s: %v\npage text: %s", expr, err, page)
	}
}

// renders is how many views the page has finished rendering.
func (b *browser) renders() int {
	b.t.Helper()
	return evalJS[int](b, `Number(document.documentElement.dataset.renders || 0)`)
}

// rendered waits for a render after the count n.
func (b *browser) rendered(n int) {
	b.t.Helper()
	b.wait(fmt.Sprintf(`Number(document.documentElement.dataset.renders || 0) > %d`, n))
}

// navigate goes to the inspector's address hash and waits for the view.
func (b *browser) navigate(hash string) {
	b.t.Helper()
	n := b.renders()
	evalJS[chromedp.Void](b, fmt.Sprintf(`location.hash = %q`, hash))
	b.rendered(n)
}

// clickAndRender clicks the element and waits for the next finished render.
func (b *browser) clickAndRender(sel string) {
	b.t.Helper()
	n := b.renders()
	b.do(chromedp.Click(chromedp.CSS(sel)))
	b.rendered(n)
}

func (b *browser) text(sel string) string {
	b.t.Helper()
	return evalJS[string](b, fmt.Sprintf(`(document.querySelector(%q) || {textContent: ''}).textContent`, sel))
}

func (b *browser) count(sel string) int {
	b.t.Helper()
	return evalJS[int](b, fmt.Sprintf(`document.querySelectorAll(%q).length`, sel))
}

func (b *browser) attrs(sel, attr string) []string {
	b.t.Helper()
	return evalJS[[]string](b, fmt.Sprintf(`Array.from(document.querySelectorAll(%q), e => e.getAttribute(%q))`, sel, attr))
}

// screenshot saves the page (the window only, unless full) when
// MEMGATE_SCREENSHOTS names a directory.
func (b *browser) screenshot(name string, full bool) {
	b.t.Helper()
	dir := os.Getenv("MEMGATE_SCREENSHOTS")
	if dir == "" {
		return
	}
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	shot := chromedp.CaptureScreenshot()
	if full {
		shot = chromedp.FullScreenshot(100)
	}
	png, err := chromedp.Run(ctx, shot)
	if err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// healthy fails the test on any script error or CSP violation so far: the
// page must work within its own policy.
func (b *browser) healthy() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.problems) > 0 || len(b.violations) > 0 {
		b.t.Fatalf("page problems: %q; CSP violations: %q", b.problems, b.violations)
	}
}

func (b *browser) requested() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.requests)
}

func (b *browser) signIn(base, key string) {
	b.t.Helper()
	b.do(chromedp.Navigate(base+"/#/signin"), chromedp.WaitVisible(chromedp.CSS("#key")))
	n := b.renders()
	evalJS[chromedp.Void](b, `document.querySelector('#key').value = ''`)
	b.do(chromedp.SendKeys(chromedp.CSS("#key"), key), chromedp.Click(chromedp.CSS("#signin button[type=submit]")))
	b.wait(fmt.Sprintf(`Number(document.documentElement.dataset.renders || 0) > %d && document.querySelector('section.view[data-view="overview"][data-ready]')`, n))
}

// The inspector's content: what the tests plant and look for.
const (
	hostileContent = `<script>window.__pwned = 1</script> ![x](http://127.0.0.1:1/?d=secret) <img src="http://127.0.0.1:1/img.png" onerror="window.__pwned = 2"> [click](javascript:window.__pwned=3)`
	lisbonFact     = "Alice lives in Lisbon and works as a marine biologist."
	teaPreference  = "Alice prefers green tea to coffee in the morning."
	pendingFact    = "Alice's favourite colour is ultramarine blue."
)

type seeded struct {
	lisbon, tea, pending, hostile string
	recallID                      string
	aliceTotal                    int64
}

func seed(t testing.TB, l *live) seeded {
	t.Helper()
	ctx := context.Background()
	c := l.client(t, l.admin)
	var s seeded
	// 1,200 conversation turns: the inspector must page through a
	// principal with more than a thousand memories.
	for batch := 0; batch < 12; batch++ {
		ms := make([]client.Memory, 100)
		for i := range ms {
			n := batch*100 + i
			ms[i] = client.Memory{
				Principal: "alice", Agent: "planner", Conversation: fmt.Sprintf("c%02d", n%12),
				Kind: memgate.KindMessage, Source: memgate.SourceUser,
				Content: fmt.Sprintf("Turn %d: we talked about the weekly plan, item %d, and the budget line %d.", n, n*7, n*13),
			}
		}
		if _, err := c.RememberBatch(ctx, ms); err != nil {
			t.Fatal(err)
		}
	}
	one := func(m client.Memory) string {
		r, err := c.Remember(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		return r.Memory.ID
	}
	s.lisbon = one(client.Memory{Principal: "alice", Kind: memgate.KindFact, Source: memgate.SourceUser, Content: lisbonFact, Reason: "she told the onboarding agent", Key: "home:city"})
	s.tea = one(client.Memory{Principal: "alice", Kind: memgate.KindPreference, Source: memgate.SourceUser, Content: teaPreference, Reason: "stated preference"})
	s.pending = one(client.Memory{Principal: "alice", Kind: memgate.KindFact, Source: memgate.SourceAssistant, Content: pendingFact, Reason: "inferred by the assistant"})
	s.hostile = one(client.Memory{Principal: "alice", Kind: memgate.KindFact, Source: memgate.SourceUser, Content: hostileContent, Reason: `<b>bold</b> reason`})
	// Other things about Alice: related to her, less to where she lives.
	for _, content := range []string{
		"Alice has a border collie named Miso.", "Alice's birthday is on the 14th of March.",
		"Alice works from home on Fridays.", "Alice is learning to play the cello.",
		"Alice ran the Porto half marathon last year.", "Alice's manager is called Priya.",
	} {
		one(client.Memory{Principal: "alice", Kind: memgate.KindFact, Source: memgate.SourceUser, Content: content})
	}
	for _, content := range []string{"Bob is allergic to peanuts.", "Bob runs on Tuesdays.", "Bob's sister is called Eva."} {
		one(client.Memory{Principal: "bob", Kind: memgate.KindFact, Source: memgate.SourceUser, Content: content})
	}
	// A real recall that injects the Lisbon fact: its receipt must show it.
	res, err := c.Recall(ctx, client.RecallRequest{Principal: "alice", Query: "Where does Alice live?"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Results) == 0 || res.Results[0].Memory.ID != s.lisbon {
		t.Fatalf("seed recall: want the Lisbon fact first, got %+v", res.Results)
	}
	s.recallID = res.RecallID
	st, err := c.Stats(ctx, client.Scope{Principal: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	s.aliceTotal = st.Total
	return s
}

func TestInspectorInBrowser(t *testing.T) {
	l := startServer(t)
	data := seed(t, l)
	b := newBrowser(t)
	base, err := url.Parse(l.base)
	if err != nil {
		t.Fatal(err)
	}
	// The steps build on each other: the first failure ends the test.
	step := func(name string, f func(t *testing.T)) {
		if !t.Run(name, f) {
			t.FailNow()
		}
	}

	step("a refused key is told so and nothing is shown", func(t *testing.T) {
		b.t = t
		b.do(chromedp.Navigate(l.base+"/#/signin"), chromedp.WaitVisible(chromedp.CSS("#key")))
		b.do(chromedp.SendKeys(chromedp.CSS("#key"), "mgk_not_a_real_key"), chromedp.Click(chromedp.CSS("#signin button[type=submit]")))
		b.wait(`!document.querySelector('#signin-error').hidden`)
		if got := b.text("#signin-error"); !strings.Contains(got, "refused") {
			t.Errorf("sign-in error = %q", got)
		}
		if n := b.count("#nav:not([hidden])"); n != 0 {
			t.Error("navigation shown without a valid key")
		}
	})

	step("sign in and overview", func(t *testing.T) {
		b.t = t
		b.signIn(l.base, l.admin)
		if got := b.text("#who-text"); !strings.Contains(got, "tenant default") || !strings.Contains(got, "admin") {
			t.Errorf("who = %q", got)
		}
		stored := evalJS[string](b, `sessionStorage.getItem('memgate.key') || ''`)
		if stored != l.admin {
			t.Error("the key is not held in session storage")
		}
		cookies := evalJS[string](b, `document.cookie`)
		if cookies != "" {
			t.Errorf("cookies set: %q", cookies)
		}
		b.navigate("#/overview?principal=alice")
		if got := b.text(`[data-stat="Memories"] .n`); got != fmt.Sprintf("%s", formatThousands(data.aliceTotal)) {
			t.Errorf("total card = %q, want %d", got, data.aliceTotal)
		}
		if got := b.text(`[data-stat="Pending approval"] .n`); got != "1" {
			t.Errorf("pending card = %q, want 1", got)
		}
		chartTotal := evalJS[string](b, `document.querySelector('#recall-chart').dataset.total`)
		if chartTotal != "1" {
			t.Errorf("recalls in the chart = %s, want 1 (the seed's recall)", chartTotal)
		}
		if n := b.count("#recall-chart rect.barc"); n != 14 {
			t.Errorf("chart bars = %d, want 14 days", n)
		}
		b.screenshot("inspector-overview.png", true)
		b.healthy()
	})

	step("memories: filters, literal search and paging over 1,200 memories", func(t *testing.T) {
		b.t = t
		b.navigate("#/memories?principal=alice")
		if n := b.count("#memories tbody tr"); n != 50 {
			t.Fatalf("first page rows = %d, want 50", n)
		}
		if kinds := b.attrs("#memories tbody tr", "data-kind"); !slices.Contains(kinds, "message") {
			t.Errorf("unfiltered page kinds = %v, want messages among them", kinds)
		}
		b.screenshot("inspector-memories.png", false)

		// Through the form, as a person would.
		n := b.renders()
		b.do(chromedp.SetValue(chromedp.CSS("#f-kind"), "preference"), chromedp.Click(chromedp.CSS("#apply")))
		b.rendered(n)
		if ids := b.attrs("#memories tbody tr", "data-id"); !slices.Equal(ids, []string{data.tea}) {
			t.Errorf("kind=preference rows = %v, want only %s", ids, data.tea)
		}
		if got := b.text("#memories tbody tr td.reason"); got != "stated preference" {
			t.Errorf("reason cell = %q", got)
		}

		b.navigate("#/memories?principal=alice&q=Lisbon")
		if ids := b.attrs("#memories tbody tr", "data-id"); !slices.Equal(ids, []string{data.lisbon}) {
			t.Errorf("q=Lisbon rows = %v, want only %s", ids, data.lisbon)
		}
		// Literal: FTS operators and quotes are text, not syntax.
		b.navigate(`#/memories?principal=alice&q=` + url.QueryEscape(`Lisbon" OR "Turn`))
		if n := b.count("#memories tbody tr"); n != 0 {
			t.Errorf("a query with FTS syntax matched %d rows; it must be literal text", n)
		}

		b.navigate("#/memories?principal=alice&status=pending")
		if ids := b.attrs("#memories tbody tr", "data-id"); !slices.Equal(ids, []string{data.pending}) {
			t.Errorf("status=pending rows = %v, want only %s", ids, data.pending)
		}

		b.navigate("#/memories?principal=alice&kind=message")
		first := b.attrs("#memories tbody tr", "data-id")
		if got := b.text("#list-summary"); !strings.HasPrefix(got, "Showing 1–50 of") {
			t.Errorf("summary = %q", got)
		}
		b.clickAndRender("#next")
		second := b.attrs("#memories tbody tr", "data-id")
		if len(second) != 50 || slices.ContainsFunc(second, func(id string) bool { return slices.Contains(first, id) }) {
			t.Errorf("second page: %d rows, overlapping the first: %v", len(second), second[:min(3, len(second))])
		}
		if got := b.text("#list-summary"); !strings.HasPrefix(got, "Showing 51–100 of") {
			t.Errorf("summary = %q", got)
		}
		b.clickAndRender("#prev")
		if again := b.attrs("#memories tbody tr", "data-id"); !slices.Equal(again, first) {
			t.Error("previous did not return to the first page")
		}
		b.healthy()
	})

	step("receipt: provenance, hash and recall history", func(t *testing.T) {
		b.t = t
		b.navigate("#/memories?principal=alice&q=Lisbon")
		b.clickAndRender(fmt.Sprintf(`#memories a.open[data-id=%q]`, data.lisbon))
		m, err := l.client(t, l.admin).Get(context.Background(), client.Scope{Principal: "alice"}, data.lisbon)
		if err != nil {
			t.Fatal(err)
		}
		if got := b.text("#content"); got != lisbonFact {
			t.Errorf("content = %q", got)
		}
		if got := b.text("#sha"); got != m.ContentSHA256 {
			t.Errorf("hash = %q, want %q", got, m.ContentSHA256)
		}
		if got := b.text("#embedding"); got != "builtin · builtin/hybrid-v2 · 484 dimensions" {
			t.Errorf("embedding = %q", got)
		}
		if got := b.text("#receipt"); !strings.Contains(got, "she told the onboarding agent") {
			t.Errorf("receipt lacks the reason: %q", got)
		}
		if got := b.text("#key"); got != "home:city" {
			t.Errorf("key = %q, want home:city", got)
		}
		hist := b.text("#history")
		if !strings.Contains(hist, data.recallID) || !strings.Contains(hist, "1 of ") {
			t.Errorf("recall history = %q, want recall %s at rank 1", hist, data.recallID)
		}
		b.screenshot("inspector-memory.png", true)
		b.healthy()
	})

	step("recall preview, then revoke, and it leaves the preview", func(t *testing.T) {
		b.t = t
		b.navigate("#/recall?principal=alice&q=" + url.QueryEscape("Where does Alice live?"))
		if ids := b.attrs("#results tbody tr", "data-id"); len(ids) == 0 || ids[0] != data.lisbon {
			t.Fatalf("preview results = %v, want the Lisbon fact first", ids)
		}
		if got := b.text("#context"); !strings.Contains(got, "Lisbon") || !strings.Contains(got, "<memories") {
			t.Errorf("context block = %q", got)
		}
		// A prompt other memories share a word with: what fell below the
		// floor is listed apart, scored, and not in the context block.
		b.navigate("#/recall?principal=alice&q=" + url.QueryEscape("cello practice at home"))
		below := b.attrs("#below tbody tr", "data-id")
		if len(below) == 0 {
			t.Fatalf("no below-floor candidates shown; summary %q", b.text("#recall-summary"))
		}
		var scores []float64
		scores = evalJS[[]float64](b, `Array.from(document.querySelectorAll('#below tbody td.score'), td => parseFloat(td.textContent))`)
		for _, sc := range scores {
			if !(sc > 0 && sc < rank.DefaultFloor) {
				t.Errorf("below-floor score %v is not under the floor %v", sc, rank.DefaultFloor)
			}
		}
		ctxBlock := b.text("#context")
		for _, id := range below {
			if strings.Contains(ctxBlock, id) {
				t.Errorf("below-floor memory %s is in the context block", id)
			}
		}
		if got := b.text("#results"); !strings.Contains(got, "cello") {
			t.Errorf("results = %q, want the cello fact (summary %q, below %q)", got, b.text("#recall-summary"), b.text("#below"))
		}
		b.screenshot("inspector-recall.png", true)

		// A preview is not an injection: the receipt's history is unchanged.
		page, err := l.client(t, l.admin).Audit(context.Background(), client.AuditRequest{Principal: "alice", MemoryID: data.lisbon, Action: "recall"})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Events) != 1 {
			t.Errorf("recall events of the Lisbon fact = %d after a preview, want 1", len(page.Events))
		}

		b.navigate(fmt.Sprintf("#/memory/%s?principal=alice", data.lisbon))
		b.do(chromedp.SendKeys(chromedp.CSS("#revoke-reason"), "no longer true"))
		b.clickAndRender("#revoke")
		if got := b.text("h1 .badge"); got != "revoked" {
			t.Errorf("status after revoke = %q", got)
		}
		if got := b.text("#receipt"); !strings.Contains(got, "no longer true") {
			t.Errorf("receipt lacks the revoke reason: %q", got)
		}
		b.navigate("#/recall?principal=alice&q=" + url.QueryEscape("Where does Alice live?") + "&k=6")
		if ids := append(b.attrs("#results tbody tr", "data-id"), b.attrs("#below tbody tr", "data-id")...); slices.Contains(ids, data.lisbon) {
			t.Errorf("the revoked memory is still in the preview: %v", ids)
		}
		if got := b.text("#context"); strings.Contains(got, "Lisbon") {
			t.Errorf("the revoked memory is still in the context block: %q", got)
		}
		b.healthy()
	})

	step("approve a pending memory", func(t *testing.T) {
		b.t = t
		b.navigate("#/memories?principal=alice&status=pending")
		b.do(chromedp.Click(chromedp.CSS(fmt.Sprintf(`button.approve[data-id=%q]`, data.pending))))
		b.wait(fmt.Sprintf(`document.querySelector('#memories tr[data-id=%q]').dataset.status === 'active'`, data.pending))
		m, err := l.client(t, l.admin).Get(context.Background(), client.Scope{Principal: "alice"}, data.pending)
		if err != nil {
			t.Fatal(err)
		}
		if m.Status != memgate.StatusActive {
			t.Errorf("status in the store = %s, want active", m.Status)
		}
		b.healthy()
	})

	step("hostile content renders as inert text and loads nothing", func(t *testing.T) {
		b.t = t
		b.navigate("#/memories?principal=alice&q=" + url.QueryEscape("127.0.0.1"))
		if ids := b.attrs("#memories tbody tr", "data-id"); !slices.Equal(ids, []string{data.hostile}) {
			t.Fatalf("rows = %v, want the hostile memory", ids)
		}
		if got := b.text("#memories tbody tr td.content"); got != hostileContent {
			t.Errorf("content cell = %q, want the raw text", got)
		}
		if got := b.text("#memories tbody tr td.reason"); got != "<b>bold</b> reason" {
			t.Errorf("reason cell = %q, want the raw text", got)
		}
		b.clickAndRender(fmt.Sprintf(`#memories a.open[data-id=%q]`, data.hostile))
		if got := b.text("#content"); got != hostileContent {
			t.Errorf("detail content = %q", got)
		}
		for _, sel := range []string{"main script", "main img", "main a[href^='javascript']", "main a[href*='127.0.0.1']", "main b", "iframe", "object", "embed"} {
			if n := b.count(sel); n != 0 {
				t.Errorf("%d %s elements in the page", n, sel)
			}
		}
		pwned := evalJS[string](b, `String(window.__pwned)`)
		if pwned != "undefined" {
			t.Errorf("content ran as script: window.__pwned = %s", pwned)
		}
		// Give any stray load a moment to be sent before judging.
		time.Sleep(300 * time.Millisecond)
		reqs := b.requested()
		sawAPI := false
		for _, r := range reqs {
			u, err := url.Parse(r)
			if err != nil {
				t.Errorf("unparsable request URL %q", r)
				continue
			}
			if u.Scheme == "data" {
				continue
			}
			if u.Host != base.Host {
				t.Errorf("request to another origin: %s", r)
			}
			if strings.Contains(r, "secret") {
				t.Errorf("content triggered a request: %s", r)
			}
			sawAPI = sawAPI || strings.HasPrefix(u.Path, "/v1/memories/")
		}
		if !sawAPI {
			// The control: the listener does see the page's own requests.
			t.Errorf("no /v1/memories/ request recorded among %d: the network listener is not working", len(reqs))
		}
		b.healthy()
	})

	step("a user key sees its own principal and may forget it", func(t *testing.T) {
		b.t = t
		bobKey := l.userKey(t, "bob")
		b.do(chromedp.Click(chromedp.CSS("#signout")))
		b.wait(`document.querySelector('#key')`)
		stored := evalJS[string](b, `sessionStorage.getItem('memgate.key') || ''`)
		if stored != "" {
			t.Error("sign out left the key in session storage")
		}
		b.signIn(l.base, bobKey)
		if got := b.text("#who-text"); !strings.Contains(got, "principal bob") || !strings.Contains(got, "user") {
			t.Errorf("who = %q", got)
		}
		// Asking for alice in the address changes nothing: a user key is
		// bound to bob.
		b.navigate("#/memories?principal=alice")
		rows := b.count("#memories tbody tr")
		if rows != 3 {
			t.Errorf("bob's rows = %d, want 3", rows)
		}
		aliceRows := evalJS[int](b, `Array.from(document.querySelectorAll('#memories tbody td.content')).filter(td => td.textContent.includes('Alice')).length`)
		if aliceRows != 0 {
			t.Errorf("%d of alice's memories shown to bob's key", aliceRows)
		}
		// And the API itself refuses it, whatever the page would do.
		status := evalJS[int](b, fmt.Sprintf(`fetch('/v1/memories/%s?principal=alice', {headers: {Authorization: 'Bearer ' + sessionStorage.getItem('memgate.key')}}).then(r => r.status)`, data.tea), chromedp.EvalAwaitPromise)
		if status != 403 && status != 404 {
			t.Errorf("bob's key reading alice's memory: status %d", status)
		}
		if n := b.count("button.approve"); n != 0 {
			t.Errorf("a user key is offered %d approve buttons", n)
		}

		b.do(chromedp.Click(chromedp.CSS("#forget")))
		b.wait(`document.querySelector('#confirm').open`)
		if got := b.text("#confirm-body"); !strings.Contains(got, "3 memories of bob") {
			t.Errorf("confirmation = %q, want it to name the count", got)
		}
		disabled := evalJS[bool](b, `document.querySelector('#confirm-ok').disabled`)
		if !disabled {
			t.Error("forget is enabled before the principal is typed")
		}
		n := b.renders()
		b.do(chromedp.SendKeys(chromedp.CSS("#confirm-typed"), "bob"), chromedp.Click(chromedp.CSS("#confirm-ok")))
		b.rendered(n)
		if got := b.text("#toast"); !strings.Contains(got, "Forgot 3 memories of bob") {
			t.Errorf("toast = %q", got)
		}
		if n := b.count("#memories tbody tr"); n != 0 {
			t.Errorf("%d rows after forget", n)
		}
		// The control: alice's memories are all still there.
		st, err := l.client(t, l.admin).Stats(context.Background(), client.Scope{Principal: "alice"})
		if err != nil {
			t.Fatal(err)
		}
		if st.Total != data.aliceTotal {
			t.Errorf("alice's total = %d after forgetting bob, want %d", st.Total, data.aliceTotal)
		}
		bob, err := l.client(t, l.admin).Stats(context.Background(), client.Scope{Principal: "bob"})
		if err != nil {
			t.Fatal(err)
		}
		if bob.Total != 0 {
			t.Errorf("bob's total = %d after forget", bob.Total)
		}
		b.healthy()
	})
}

func formatThousands(n int64) string {
	s := fmt.Sprint(n)
	var out []string
	for len(s) > 3 {
		out = append([]string{s[len(s)-3:]}, out...)
		s = s[:len(s)-3]
	}
	return strings.Join(append([]string{s}, out...), ",")
}
