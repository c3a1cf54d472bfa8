package ollama

import "testing"

// FuzzResponse: the decoder never panics and never accepts a response
// without embeddings.
func FuzzResponse(f *testing.F) {
	f.Add([]byte(`{"model":"m","embeddings":[[0.1,0.2],[1,2]]}`))
	f.Add([]byte(`{"model":"m","embeddings":[[null]]}`))
	f.Add([]byte(`{"error":"model \"x\" not found, try pulling it first"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		vecs, _, err := embedWire{}.Response(body, 2)
		if err == nil && vecs == nil {
			t.Fatal("accepted a response without embeddings")
		}
		embedWire{}.ErrorMessage(body)
	})
}
