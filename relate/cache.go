package relate

import "sync"

// cacheSize bounds a cache of query words: a Relater's related words, and
// the judgments of Modifier, Temporal and CommonNoun.
const cacheSize = 8192

// wordCache keeps what was found for the query words asked most recently.
// It is safe for concurrent use; the zero value is empty.
type wordCache[V any] struct {
	mu sync.Mutex
	m  map[string]V
}

// get returns what find finds for token, found once (outside the lock)
// while token stays cached. Past cacheSize tokens the cache is cleared:
// simple and bounded; a hot word is found again at once.
func (c *wordCache[V]) get(token string, find func(string) V) V {
	c.mu.Lock()
	v, ok := c.m[token]
	c.mu.Unlock()
	if ok {
		return v
	}
	v = find(token)
	c.mu.Lock()
	if c.m == nil || len(c.m) >= cacheSize {
		c.m = make(map[string]V)
	}
	c.m[token] = v
	c.mu.Unlock()
	return v
}

// len is how many tokens c holds.
func (c *wordCache[V]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// reset empties c.
func (c *wordCache[V]) reset() {
	c.mu.Lock()
	c.m = nil
	c.mu.Unlock()
}
