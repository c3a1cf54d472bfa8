package inspector_test

import (
	"context"
	"fmt"
	"net/url"
	"testing"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/client"
)

// BenchmarkViews measures, in Chromium, the time from a navigation to the
// finished render of each main view for a principal with many memories:
// the API calls of the view, the JSON decoding and the DOM building. It is
// the figure behind "usable at 1,000+ memories per principal without a
// visible stall" (BENCHMARKS.md):
//
//	go test ./inspector -run '^$' -bench Views -benchtime 50x
func BenchmarkViews(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		b.Run(fmt.Sprintf("memories=%d", n), func(b *testing.B) {
			l := startServer(b)
			c := l.client(b, l.admin)
			ctx := context.Background()
			for start := 0; start < n; start += 100 {
				ms := make([]client.Memory, 0, 100)
				for i := start; i < min(n, start+100); i++ {
					kind := memgate.KindMessage
					if i%10 == 0 {
						kind = memgate.KindFact
					}
					ms = append(ms, client.Memory{
						Principal: "alice", Conversation: fmt.Sprintf("c%03d", i%100), Kind: kind, Source: memgate.SourceUser,
						Content: fmt.Sprintf("Note %d: the trip to city %d is planned for week %d with budget %d.", i, i%97, i%52, i*31),
						Reason:  "bench",
					})
				}
				if _, err := c.RememberBatch(ctx, ms); err != nil {
					b.Fatal(err)
				}
			}
			page, err := c.List(ctx, client.ListRequest{Scope: client.Scope{Principal: "alice"}, Limit: 1})
			if err != nil {
				b.Fatal(err)
			}
			id := page.Memories[0].ID
			br := newBrowser(b)
			br.signIn(l.base, l.admin)
			views := []struct{ name, a, b string }{
				{"overview", "#/overview?principal=alice", "#/overview?principal=alice&range=48h"},
				{"memories page of 50", "#/memories?principal=alice", "#/memories?principal=alice&kind=message"},
				{"memories page of 200", "#/memories?principal=alice&limit=200", "#/memories?principal=alice&kind=message&limit=200"},
				{"literal search", "#/memories?principal=alice&q=" + url.QueryEscape("city 42"), "#/memories?principal=alice&q=" + url.QueryEscape("week 7")},
				{"receipt", "#/memory/" + id + "?principal=alice", "#/memory/" + id + "?principal=alice&x=1"},
				{"recall preview", "#/recall?principal=alice&q=" + url.QueryEscape("when is the trip to city 42"), "#/recall?principal=alice&q=" + url.QueryEscape("budget for week 7")},
			}
			for _, v := range views {
				b.Run(v.name, func(b *testing.B) {
					br.t = b
					br.navigate(v.a)
					br.navigate(v.b) // warm both
					for i := 0; b.Loop(); i++ {
						if i%2 == 0 {
							br.navigate(v.a)
						} else {
							br.navigate(v.b)
						}
					}
				})
			}
			br.t = b
			br.healthy()
		})
	}
}
