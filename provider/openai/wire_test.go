package openai

import "testing"

// FuzzResponse: the decoder never panics, and what it accepts has one
// vector per input, each placed once.
func FuzzResponse(f *testing.F) {
	f.Add([]byte(`{"object":"list","data":[{"object":"embedding","index":1,"embedding":[0.1,0.2]},{"index":0,"embedding":[1,2]}],"model":"m"}`), 2)
	f.Add([]byte(`{"data":[{"embedding":[1]}]}`), 1)
	f.Add([]byte(`{"data":[{"index":0,"embedding":[null]}]}`), 1)
	f.Add([]byte(`{"error":{"message":"x","type":"y","code":"z"}}`), 1)
	f.Fuzz(func(t *testing.T, body []byte, n int) {
		if n < 0 || n > 64 {
			return
		}
		vecs, _, err := embedWire{}.Response(body, n)
		if err != nil {
			return
		}
		if len(vecs) != n {
			t.Fatalf("%d vectors for %d inputs", len(vecs), n)
		}
		for i, v := range vecs {
			if v == nil {
				t.Fatalf("vector %d missing", i)
			}
		}
		embedWire{}.ErrorMessage(body)
	})
}
