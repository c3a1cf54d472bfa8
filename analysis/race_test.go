//go:build race

package analysis

// The race detector allocates on its own; allocation counts are checked
// without it.
const raceEnabled = true
