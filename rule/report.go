package rule

import (
	"fmt"

	"github.com/tessel-pp/tessel/schedule"
)

// Report collects violations up to schedule.MaxViolations and counts the
// rest.
type Report struct {
	list    []schedule.Violation
	omitted int
}

// Add reports one violation of kind on device (or -1) involving refs,
// its message formatted as by fmt.Sprintf.
func (r *Report) Add(kind schedule.ViolationKind, device int, refs []schedule.Ref, format string, args ...any) {
	if len(r.list) >= schedule.MaxViolations {
		r.omitted++
		return
	}
	r.list = append(r.list, schedule.Violation{Kind: kind, Message: fmt.Sprintf(format, args...), Instances: refs, Device: device})
}

// Omit counts one violation without listing it.
func (r *Report) Omit() { r.omitted++ }

// Err is nil without violations, else a *schedule.VerifyError listing
// them.
func (r *Report) Err() error {
	if len(r.list) == 0 {
		return nil
	}
	return &schedule.VerifyError{Violations: r.list, Omitted: r.omitted}
}
