package report

import "fmt"

// Progress takes a status line now and then while a long command works,
// for its caller to show (tessel shows it on a terminal); nil takes none.
type Progress func(line string)

// Show formats a status line and hands it to p; a nil p does nothing.
func (p Progress) Show(format string, args ...any) {
	if p != nil {
		p(fmt.Sprintf(format, args...))
	}
}
