package safego

import (
	"strings"
	"sync"
	"testing"
)

func TestRepanicCarriesTheWorkersPanic(t *testing.T) {
	var p Panic
	var wg sync.WaitGroup
	for i := range 4 {
		p.Go(&wg, func() {
			if i == 2 {
				var xs []int
				_ = xs[i] // index out of range
			}
		})
	}
	wg.Wait()
	defer func() {
		c, ok := recover().(*Crash)
		if !ok {
			t.Fatalf("Repanic did not panic with a *Crash")
		}
		if !strings.Contains(c.Error(), "index out of range") || !strings.HasPrefix(c.Where, "safego/safego_test.go:") {
			t.Errorf("crash %q at %q, want the index error at safego_test.go", c.Error(), c.Where)
		}
	}()
	p.Repanic()
	t.Fatal("Repanic returned after a worker panicked")
}

func TestNoPanicNoRepanic(t *testing.T) {
	var p Panic
	var wg sync.WaitGroup
	p.Go(&wg, func() {})
	wg.Wait()
	p.Repanic()
}
