package inspector_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/agent/agenttest"
	"github.com/memgate/memgate/client"
	"github.com/memgate/memgate/server"
)

// The playground in a real browser, against "memgate serve" with a scripted
// chat model (agenttest speaks the OpenAI chat-completions wire format):
// beside each reply it shows exactly the memories that reached the model's
// prompt, with their scores, and never another principal's.
func TestPlaygroundInBrowser(t *testing.T) {
	model := agenttest.NewServer(t)
	model.Script(
		func(agenttest.Request) string { return "You live in Lisbon, as far as I remember." },
		func(agenttest.Request) string {
			return `{"memories":[{"kind":"fact","content":"Alice is learning Portuguese.","reason":"she said so in the playground"}]}`
		},
	)
	l := startServer(t, func(c *server.Config) {
		c.LLM = model.Model(t)
		c.Extract = true
	})
	ctx := context.Background()
	admin := l.client(t, l.admin)
	remember := func(principal, content string) string {
		r, err := admin.Remember(ctx, client.Memory{Principal: principal, Kind: memgate.KindFact, Source: memgate.SourceUser, Content: content})
		if err != nil {
			t.Fatal(err)
		}
		return r.Memory.ID
	}
	lisbon := remember("alice", "Alice lives in Lisbon, near the river.")
	unrelated := remember("alice", "Alice's printer needs a new cartridge.")
	bobs := remember("bob", "Bob lives in Rome, near the river.")

	b := newBrowser(t)
	b.signIn(l.base, l.admin)
	if n := b.count(`#nav a[data-view="playground"]:not([hidden])`); n != 1 {
		t.Fatal("an admin key is not offered the playground")
	}
	b.navigate("#/playground?principal=alice")
	n := evalJS[int](b, `Number(document.documentElement.dataset.chats || 0)`)
	b.do(chromedp.SendKeys(chromedp.CSS("#c-message"), "Where do I live, near the river?"), chromedp.Click(chromedp.CSS("#send")))
	b.wait(fmt.Sprintf(`Number(document.documentElement.dataset.chats || 0) > %d`, n))

	if got := b.text("#transcript .turn .reply"); got != "You live in Lisbon, as far as I remember." {
		t.Fatalf("reply = %q (status %q)", got, b.text("#chat-status"))
	}
	injected := b.attrs("#transcript .turn .hits-list li", "data-id")
	if !slices.Contains(injected, lisbon) {
		t.Errorf("injected = %v, want the Lisbon fact", injected)
	}
	if slices.Contains(injected, unrelated) || slices.Contains(injected, bobs) {
		t.Errorf("injected = %v: an unrelated memory or another principal's", injected)
	}
	scores := evalJS[[]float64](b, `Array.from(document.querySelectorAll('#transcript .hits-list .bar'), e => parseFloat(e.textContent))`)
	if len(scores) != len(injected) || len(scores) == 0 || scores[0] <= 0.22 {
		t.Errorf("scores beside the reply = %v", scores)
	}
	// What the page shows is what the model got.
	reqs := model.Requests()
	if len(reqs) == 0 {
		t.Fatal("the model was never called")
	}
	prompt := reqs[0].System()
	if !strings.Contains(prompt, lisbon) || strings.Contains(prompt, bobs) || strings.Contains(prompt, "Rome") {
		t.Errorf("the model's system prompt does not match the page: has Lisbon %v, has Bob's %v", strings.Contains(prompt, lisbon), strings.Contains(prompt, "Rome"))
	}
	// Extraction proposed a fact: pending, linked for approval.
	proposed := b.attrs("#transcript .extraction a", "data-id")
	if len(proposed) != 1 {
		t.Fatalf("proposals shown = %v, want one", proposed)
	}
	m, err := admin.Get(ctx, client.Scope{Principal: "alice"}, proposed[0])
	if err != nil || m.Status != memgate.StatusPending || m.Content != "Alice is learning Portuguese." {
		t.Fatalf("the proposal in the store: %+v, %v", m, err)
	}
	b.screenshot("inspector-playground.png", true)
	b.healthy()

	// A user key may not chat (it may not remember): no playground offered.
	bob := l.userKey(t, "bob")
	b.do(chromedp.Click(chromedp.CSS("#signout")))
	b.wait(`document.querySelector('#key')`)
	b.signIn(l.base, bob)
	if n := b.count(`#nav a[data-view="playground"]:not([hidden])`); n != 0 {
		t.Error("a user key is offered the playground")
	}
	if n := b.count(`#nav a[data-view="memories"]:not([hidden])`); n != 1 {
		t.Error("the control: a user key is not offered its memories")
	}
	b.healthy()
}
