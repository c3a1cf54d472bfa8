//go:build !purego

package index

// pureGo: built with -tags purego (see purego_test.go).
const pureGo = false
