// Command genneighbors makes the word table's neighbour table
// (neighbors.bin) from the embedded table.bin: for every word, its
// NeighborsK nearest words with cosine at least NeighborsMin. The output
// depends on table.bin only, byte for byte.
//
//	go run ./embedder/builtin/wordvec/genneighbors -out embedder/builtin/wordvec/neighbors.bin
package main

import (
	"flag"
	"log"
	"os"
	"runtime"
	"sync"

	"github.com/memgate/memgate/embedder/builtin/wordvec"
)

func main() {
	out := flag.String("out", "", "the file to write")
	flag.Parse()
	if *out == "" {
		log.Fatal("genneighbors: -out is required")
	}
	tb := wordvec.Default()
	nb := make([][]wordvec.Neighbor, tb.Len())
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				nb[i] = tb.Nearest(i, wordvec.NeighborsK, wordvec.NeighborsMin)
			}
		}()
	}
	for i := range nb {
		next <- i
	}
	close(next)
	wg.Wait()
	if err := os.WriteFile(*out, wordvec.EncodeNeighbors(nb), 0o644); err != nil {
		log.Fatal(err)
	}
}
