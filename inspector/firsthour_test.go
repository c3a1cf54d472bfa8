package inspector_test

// The inspector's rough edges of the first hour (issue 28, item 8), each
// reproduced in Chromium at 1280 px, the width a laptop gives a browser
// window: a Reject button cut off at the table's edge, a gate code shown
// raw, a revoke's reason missing from the audit trail, key ids where a
// person looks for who acted, a chart in 60 % of its box, a forgotten
// principal left in the dropdown and a placeholder cut short. Each check
// has its populated control beside it.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/client"
)

// rect is an element's box in the viewport, with its scroll container's.
type rect struct {
	Left, Right, Width float64
	// BoxLeft, BoxRight bound what the nearest scrolling or clipping
	// ancestor shows (the viewport when there is none).
	BoxLeft, BoxRight float64
}

// shown measures sel's box and the part of the page that shows it.
func (b *browser) shown(sel string) rect {
	b.t.Helper()
	return evalJS[rect](b, fmt.Sprintf(`(() => {
		const e = document.querySelector(%q);
		if (!e) return {Left: 0, Right: 0, Width: 0, BoxLeft: 0, BoxRight: 0};
		const r = e.getBoundingClientRect();
		let boxL = 0, boxR = document.documentElement.clientWidth;
		for (let p = e.parentElement; p; p = p.parentElement) {
			const ov = getComputedStyle(p).overflowX;
			if (ov !== 'visible') {
				const pr = p.getBoundingClientRect();
				boxL = Math.max(boxL, pr.left + p.clientLeft);
				boxR = Math.min(boxR, pr.left + p.clientLeft + p.clientWidth);
			}
		}
		return {Left: r.left, Right: r.right, Width: r.width, BoxLeft: boxL, BoxRight: boxR};
	})()`, sel))
}

func TestInspectorFirstHourEdges(t *testing.T) {
	t.Parallel()
	l := startServer(t)
	ctx := context.Background()
	admin := l.client(t, l.admin)
	remember := func(m client.Memory) *memgate.Memory {
		t.Helper()
		r, err := admin.Remember(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		return r.Memory
	}
	// A pending memory with long content and a long reason: the widest
	// row the list shows.
	held := remember(client.Memory{Principal: "alice", Kind: memgate.KindFact, Source: memgate.SourceAssistant, TTL: 720 * time.Hour,
		Content: strings.Repeat("Alice mentioned that her sister's wedding in Coimbra is planned for late September. ", 4),
		Reason:  "inferred by the assistant from a long conversation about family plans and travel"})
	if held.Status != memgate.StatusPending || held.StatusReason != "source_kind_requires_approval" {
		t.Fatalf("planted memory: %s %q, want pending for approval", held.Status, held.StatusReason)
	}
	fact := remember(client.Memory{Principal: "alice", Kind: memgate.KindFact, Source: memgate.SourceUser, Content: "Alice lives in Lisbon."})
	remember(client.Memory{Principal: "bob", Kind: memgate.KindFact, Source: memgate.SourceUser, Content: "Bob runs on Tuesdays."})
	// A principal id as products name them: an address, in no word.
	remember(client.Memory{Principal: "alice.martins-oliveira@customers.example.com", Kind: memgate.KindFact, Source: memgate.SourceAssistant, TTL: 720 * time.Hour,
		Content: "Alice Martins-Oliveira asked for the invoice of the 3rd of November to be sent again.", Reason: "the assistant noted a request"})
	remember(client.Memory{Principal: "carol", Kind: memgate.KindFact, Source: memgate.SourceUser, Content: "Carol plays the oboe."})
	if _, err := admin.Recall(ctx, client.RecallRequest{Principal: "alice", Query: "Where does Alice live?"}); err != nil {
		t.Fatal(err)
	}

	b := newBrowser(t)
	// A 1280 px window less a 16 px scrollbar (the test browser hides its
	// scrollbars).
	b.do(chromedp.EmulateViewport(1264, 900))
	b.signInTo(l.base, l.admin, "overview")

	t.Run("the row's Reject button is on screen", func(t *testing.T) {
		b.t = t
		// All principals: the widest table, with a principal column.
		b.navigate("#/memories?status=pending")
		sel := fmt.Sprintf(`#memories button.reject[data-id=%q]`, held.ID)
		r := b.shown(sel)
		if r.Width == 0 {
			t.Fatalf("no Reject button for the held memory")
		}
		// The control: the row's first cell is on screen by the same
		// measure.
		if o := b.shown(fmt.Sprintf(`#memories tr[data-id=%q] td`, held.ID)); o.Width == 0 || o.Left < o.BoxLeft || o.Right > o.BoxRight {
			t.Fatalf("the measure does not see the row's first cell on screen: %+v", o)
		}
		for _, action := range []string{"a.open", "button.approve"} {
			if o := b.shown(fmt.Sprintf(`#memories tr[data-id=%q] %s`, held.ID, action)); o.Width == 0 || o.Left < o.BoxLeft || o.Right > o.BoxRight+0.5 {
				t.Errorf("%s spans %.0f–%.0f px, the page shows %.0f–%.0f", action, o.Left, o.Right, o.BoxLeft, o.BoxRight)
			}
		}
		if r.Left < r.BoxLeft || r.Right > r.BoxRight+0.5 {
			t.Errorf("Reject spans %.0f–%.0f px, the page shows %.0f–%.0f: it is cut off", r.Left, r.Right, r.BoxLeft, r.BoxRight)
		}
	})

	t.Run("a gate code is said in words", func(t *testing.T) {
		b.t = t
		b.navigate("#/memories?principal=alice&status=pending")
		cell := b.text(fmt.Sprintf(`#memories tr[data-id=%q] td .muted.small`, held.ID))
		if strings.Contains(cell, "_") || !strings.Contains(cell, "approval") {
			t.Errorf("list status cell = %q, want words about approval, not the code", cell)
		}
		b.navigate(fmt.Sprintf("#/memory/%s?principal=alice", held.ID))
		status := evalJS[string](b, `Array.from(document.querySelectorAll('#receipt dt')).find(d => d.textContent === 'Status').nextElementSibling.textContent`)
		if strings.Contains(status, "source_kind") || !strings.Contains(status, "approval") {
			t.Errorf("receipt status = %q, want words", status)
		}
		// The code stays at hand for a reviewer who searches for it.
		if codes := b.attrs("#receipt .gate-code", "data-code"); !slices.Contains(codes, held.StatusReason) {
			t.Errorf("gate codes in the receipt = %v, want %s among them", codes, held.StatusReason)
		}
	})

	t.Run("the audit trail shows a revoke's reason and who acted", func(t *testing.T) {
		b.t = t
		b.navigate(fmt.Sprintf("#/memory/%s?principal=alice", fact.ID))
		b.do(chromedp.SendKeys(chromedp.CSS("#revoke-reason"), "she moved to Porto"))
		b.clickAndRender("#revoke")
		rows := evalJS[[][]string](b, `Array.from(document.querySelectorAll('#trail tbody tr'), tr => Array.from(tr.cells, td => td.textContent))`)
		var revoke, remembered []string
		for _, r := range rows {
			switch {
			case len(r) == 4 && strings.HasPrefix(r[1], "revoke"):
				revoke = r
			case len(r) == 4 && strings.HasPrefix(r[1], "remember"):
				remembered = r
			}
		}
		if revoke == nil || remembered == nil {
			t.Fatalf("trail rows %q: want a remember and a revoke", rows)
		}
		if !strings.Contains(revoke[3], "she moved to Porto") {
			t.Errorf("revoke row's reason = %q, want the reason given", revoke[3])
		}
		// The control: the remember row has no reason to show.
		if strings.Contains(remembered[3], "Porto") {
			t.Errorf("the remember row shows the revoke's reason: %q", remembered[3])
		}
		for _, r := range [][]string{revoke, remembered} {
			if !strings.Contains(r[2], "created by the first serve") || !strings.Contains(r[2], "admin") {
				t.Errorf("by = %q, want the key's name and role", r[2])
			}
			if strings.HasPrefix(strings.TrimSpace(r[2]), "k_") {
				t.Errorf("by = %q starts with a key id", r[2])
			}
		}
	})

	t.Run("the recall chart fills its box", func(t *testing.T) {
		b.t = t
		b.navigate("#/overview?principal=alice")
		w := evalJS[[]float64](b, `(() => {
			const box = document.querySelector('#recall-chart');
			const cs = getComputedStyle(box);
			const inner = box.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
			return [document.querySelector('#recall-chart svg').getBoundingClientRect().width, inner];
		})()`)
		if w[1] < 600 {
			t.Fatalf("chart box is %.0f px wide at 1280 px; the case needs a wide box", w[1])
		}
		if w[0] < 0.95*w[1] {
			t.Errorf("chart is %.0f px in a box of %.0f (%.0f %%)", w[0], w[1], 100*w[0]/w[1])
		}
		if n := b.count("#recall-chart rect.barc"); n != 14 {
			t.Errorf("chart bars = %d, want 14", n)
		}
	})

	t.Run("the Floor placeholder is shown whole", func(t *testing.T) {
		b.t = t
		b.navigate("#/recall?principal=alice")
		fit := evalJS[[]float64](b, `(() => {
			const fits = (e) => {
				const cs = getComputedStyle(e);
				const c = document.createElement('canvas').getContext('2d');
				c.font = cs.font;
				const text = c.measureText(e.placeholder).width;
				const room = e.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight)
					- (e.type === 'number' ? 20 : 0); // the spin buttons
				return [text, room];
			};
			return fits(document.querySelector('#r-min')).concat(fits(document.querySelector('#r-q')));
		})()`)
		// The control: the query's placeholder fits its wide box.
		if fit[2] > fit[3] {
			t.Fatalf("the measure finds the query placeholder (%.0f px) wider than its box (%.0f)", fit[2], fit[3])
		}
		if fit[0] > fit[1] {
			t.Errorf("Floor placeholder needs %.0f px, the box has %.0f: it is cut", fit[0], fit[1])
		}
	})

	t.Run("a forgotten principal leaves the dropdown", func(t *testing.T) {
		b.t = t
		b.navigate("#/memories?principal=bob")
		if opts := evalJS[[]string](b, `Array.from(document.querySelectorAll('#f-principal option'), o => o.value)`); !slices.Contains(opts, "bob") || !slices.Contains(opts, "carol") {
			t.Fatalf("dropdown before forget = %v, want bob and carol", opts)
		}
		b.do(chromedp.Click(chromedp.CSS("#forget")))
		b.wait(`document.querySelector('#confirm').open`)
		n := b.renders()
		b.do(chromedp.SendKeys(chromedp.CSS("#confirm-typed"), "bob"), chromedp.Click(chromedp.CSS("#confirm-ok")))
		b.rendered(n)
		opts := evalJS[[]string](b, `Array.from(document.querySelectorAll('#f-principal option'), o => o.value)`)
		if slices.Contains(opts, "bob") {
			t.Errorf("dropdown after forgetting bob = %v", opts)
		}
		// The control: the others are still offered.
		if !slices.Contains(opts, "carol") || !slices.Contains(opts, "alice") {
			t.Errorf("dropdown after forgetting bob = %v, want alice and carol", opts)
		}
		if p := evalJS[string](b, `new URLSearchParams(location.hash.split('?')[1] || '').get('principal') || ''`); p == "bob" {
			t.Errorf("the address still names bob: %s", evalJS[string](b, `location.hash`))
		}
	})
	b.healthy()
}
