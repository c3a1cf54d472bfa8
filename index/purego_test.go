//go:build purego

package index

// pureGo: built with -tags purego, so the Go loops run in place of every
// SIMD kernel (as on a CPU or an architecture without them).
const pureGo = true
