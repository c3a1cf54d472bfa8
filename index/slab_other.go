//go:build !linux

package index

import "errors"

// mapHuge maps nothing outside Linux: full chunks stay on the heap.
func mapHuge(int) (raw, mem []byte, err error) {
	return nil, nil, errors.ErrUnsupported
}

func unmap([]byte) {}
