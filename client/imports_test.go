package client_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportsOnlyTheRoot: the client speaks the callers' contract (the
// root package) and the standard library, never a server package, so an
// embedder's binary holds no engine, store or backend.
func TestImportsOnlyTheRoot(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			checked++
			first, _, _ := strings.Cut(path, "/")
			if path != "github.com/memgate/memgate" && strings.Contains(first, ".") {
				t.Errorf("%s imports %s: the client may import only the root package and the standard library", name, path)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no imports checked: the test reads no client source")
	}
}
