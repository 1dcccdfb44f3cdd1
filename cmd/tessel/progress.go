package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/tessel-pp/tessel/internal/textfmt"
)

// progress shows one status line on a terminal, rewritten in place at
// most ten times a second, and nothing at all when stderr is a file or a
// pipe (scripts and CI stay quiet).
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	on    bool
	last  time.Time
	shown bool
}

func newProgress(w io.Writer) *progress {
	if u, ok := w.(interface{ Unwrap() io.Writer }); ok {
		w = u.Unwrap() // the line's own controls pass; its text is escaped (show)
	}
	f, ok := w.(*os.File)
	return &progress{w: w, on: ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))}
}

// show replaces the status line (throttled).
func (p *progress) show(format string, args ...any) {
	if p == nil || !p.on {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if time.Since(p.last) < 100*time.Millisecond {
		return
	}
	p.last = time.Now()
	fmt.Fprint(p.w, "\r\x1b[K"+textfmt.SafeText(fmt.Sprintf(format, args...)))
	p.shown = true
}

// done clears the status line.
func (p *progress) done() {
	if p == nil || !p.on {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.shown = false
	}
}

// line shows a status line as it is.
func (p *progress) line(s string) { p.show("%s", s) }

// clearing is w that clears the status line before each write, so that
// what a command prints while it shows starts on a line of its own.
func (p *progress) clearing(w io.Writer) io.Writer { return clearingWriter{p, w} }

type clearingWriter struct {
	p *progress
	w io.Writer
}

func (c clearingWriter) Write(b []byte) (int, error) {
	c.p.done()
	return c.w.Write(b)
}
