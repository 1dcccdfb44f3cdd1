// Package safego hands a panic of a worker goroutine to the goroutine that
// waits for it, so that one recover at the top of a command catches every
// panic of its work: a panic on a goroutine of its own would end the
// process with a Go stack and exit code 2, the code of bad input.
//
// A worker defers (*Panic).Recover; the goroutine that waits calls
// (*Panic).Repanic after the wait, which panics again with a *Crash
// holding the first value and where it was raised.
package safego

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
)

// Crash is a panic carried from one goroutine to another: the value the
// worker panicked with and the source line it panicked at.
type Crash struct {
	Value any
	Where string
}

func (c *Crash) Error() string { return fmt.Sprintf("%v (at %s)", c.Value, c.Where) }

// Panic records the first panic of a group of goroutines. Its zero value
// is ready to use; it must not be copied after first use.
type Panic struct {
	mu    sync.Mutex
	crash *Crash
}

// Recover, deferred by a worker, records the worker's panic, if any, and
// lets the worker end normally.
func (p *Panic) Recover() {
	r := recover()
	if r == nil {
		return
	}
	p.record(AsCrash(r))
}

// Record records r, a value recovered by the caller's own deferred
// function, for Repanic.
func (p *Panic) Record(r any) { p.record(AsCrash(r)) }

func (p *Panic) record(c *Crash) {
	p.mu.Lock()
	if p.crash == nil {
		p.crash = c
	}
	p.mu.Unlock()
}

// Repanic panics with the recorded *Crash, if a worker panicked.
func (p *Panic) Repanic() {
	p.mu.Lock()
	c := p.crash
	p.mu.Unlock()
	if c != nil {
		panic(c)
	}
}

// Do runs f, recording its panic (for a worker that goes on to its next
// item, so that a feeder never waits for a worker that is gone).
func (p *Panic) Do(f func()) {
	defer p.Recover()
	f()
}

// Go runs f on a goroutine of wg whose panic p records.
func (p *Panic) Go(wg *sync.WaitGroup, f func()) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer p.Recover()
		f()
	}()
}

// AsCrash is the recovered value r as a *Crash: r itself when it is one
// (carried from a worker), else r with the line that panicked. It must be
// called while the panic unwinds (from the deferred function that
// recovered it), when the panicking frames are still on the stack.
func AsCrash(r any) *Crash {
	if c, ok := r.(*Crash); ok {
		return c
	}
	return &Crash{Value: r, Where: where()}
}

// where is the first frame below the runtime's panic on the stack: the
// line that panicked, as package/file.go:line.
func where() string {
	pcs := make([]uintptr, 128)
	n := runtime.Callers(2, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	panicking := false
	for {
		f, more := frames.Next()
		switch {
		case f.Function == "runtime.gopanic" || strings.HasPrefix(f.Function, "runtime.panic"):
			panicking = true
		case panicking && !strings.HasPrefix(f.Function, "runtime."):
			return short(f.File, f.Line)
		}
		if !more {
			return "unknown"
		}
	}
}

// short keeps the last two elements of a source path: package/file.go.
func short(file string, line int) string {
	parts := strings.Split(file, "/")
	if len(parts) > 2 {
		parts = parts[len(parts)-2:]
	}
	return fmt.Sprintf("%s:%d", strings.Join(parts, "/"), line)
}
