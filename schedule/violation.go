package schedule

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/limits"
)

// Limits of a schedule the verifier accepts. They keep every end time and
// every sum of memory far from overflow; a solver never comes near them.
const (
	MaxMicroBatches = limits.MicroBatches
	MaxStart        = 1 << 40
)

// MaxViolations is how many violations a VerifyError lists; the rest are
// only counted.
const MaxViolations = 50

// ViolationKind names the constraint a violation breaks.
type ViolationKind string

const (
	// Input: the schedule cannot be checked as given (no or an invalid
	// placement, a micro-batch count or budget out of range).
	Input ViolationKind = "input"
	// Missing: an instance B_i^n with i < K, n < N has no start time.
	Missing ViolationKind = "missing"
	// Duplicate: an instance has more than one start time.
	Duplicate ViolationKind = "duplicate"
	// OutOfRange: an instance names a block or micro-batch that does not exist.
	OutOfRange ViolationKind = "out-of-range"
	// Start: a start time below 0 or above MaxStart.
	Start ViolationKind = "start"
	// Dependency: B_j^n starts before B_i^n ends plus the transfer time
	// (with channels, before its tensor arrives over its queued links),
	// for a dependency i -> j.
	Dependency ViolationKind = "dependency"
	// Overlap: two instances run on one device at the same time.
	Overlap ViolationKind = "overlap"
	// Memory: a device's running memory exceeds the budget.
	Memory ViolationKind = "memory"
	// RepetendMismatch: the schedule's repetend does not describe its instances.
	RepetendMismatch ViolationKind = "repetend"
	// MetricsMismatch: the metrics a file claims differ from the measured ones.
	MetricsMismatch ViolationKind = "metrics"
	// BadDecision: a decision names no forward instance of the schedule,
	// an action its block does not allow, or an instance decided twice.
	BadDecision ViolationKind = "decision"
	// OffloadTiming: an offload starts before its forward ends, a reload
	// before its offload ends, or a reload ends after its consumer starts.
	OffloadTiming ViolationKind = "offload"
	// RecomputeTiming: a recompute starts before its forward ends or ends
	// after its consumer starts.
	RecomputeTiming ViolationKind = "recompute"
	// HostChannel: two offloads or reloads on one host channel at once.
	HostChannel ViolationKind = "host-channel"
	// Latency: a micro-batch's latency (its first block's start to its
	// last block's end) exceeds the schedule's latency budget.
	Latency ViolationKind = "latency"
	// BadLinkOrder: a recorded link order (Schedule.LinkOrder) names a
	// link or transfer that does not exist, or misses or repeats one.
	BadLinkOrder ViolationKind = "link-order"
)

// Violation is one broken constraint.
type Violation struct {
	Kind      ViolationKind
	Message   string // one line, names the constraint and the instances, e.g. "overlap on device 1: f1^0 [0,1) and b1^3 [0,3)"
	Instances []Ref  // the instances involved, if any
	Device    int    // the device involved, or -1
}

// VerifyError is every violation verify.Schedule found: the first MaxViolations of
// them in Violations (in a deterministic order), and how many more there
// were in Omitted.
type VerifyError struct {
	Violations []Violation
	Omitted    int
}

// Count is the total number of violations found.
func (e *VerifyError) Count() int { return len(e.Violations) + e.Omitted }

// Error summarises the violations on one line: the first one and how many
// more there are.
func (e *VerifyError) Error() string {
	if len(e.Violations) == 0 {
		return "invalid schedule"
	}
	msg := "invalid schedule: " + e.Violations[0].Message
	if more := e.Count() - 1; more > 0 {
		msg += fmt.Sprintf(" (and %d more %s)", more, plural(more, "violation"))
	}
	return msg
}

// List is every violation listed, one a line, and a last line "... and N
// more" where some were omitted: what tessel verify prints.
func (e *VerifyError) List() string {
	var b strings.Builder
	for _, v := range e.Violations {
		b.WriteString(v.Message + "\n")
	}
	if e.Omitted > 0 {
		fmt.Fprintf(&b, "... and %d more\n", e.Omitted)
	}
	return b.String()
}

// CountText is how many violations there are, "1 violation" or "N
// violations".
func (e *VerifyError) CountText() string {
	return fmt.Sprintf("%d %s", e.Count(), plural(e.Count(), "violation"))
}

// ValidText is the line tessel verify prints for a valid schedule: its
// placement, micro-batches, makespan, bubble rate, peak memory of every
// device, the budget (every device's where they differ) and, where the
// schedule shows one, its latency.
func ValidText(s *Schedule) string { return ValidTextHow(s, "") }

// ValidTextHow is ValidText with how it was checked after "valid" (say
// " (from its period)").
func ValidTextHow(s *Schedule, how string) string {
	m := Measure(s)
	name := s.Placement.Name
	if name == "" {
		name = "(unnamed)"
	}
	budget := "unlimited"
	if s.Memory > 0 {
		budget = strconv.Itoa(s.Memory)
	}
	if !s.Placement.Uniform(s.Memory) {
		budget = textfmt.CommaInts(s.Budgets()) // every device's, where they differ
	}
	onCluster := ""
	if s.Cluster != nil {
		onCluster = " on its cluster"
	}
	latency := ""
	if ShowsLatency(s) {
		full, err := s.Materialize(context.Background()) // the latency of every micro-batch
		if err != nil {
			full = s
		}
		latency = ", latency " + LatencyText(full)
	}
	onCluster = how + onCluster
	makespan, peak := strconv.Itoa(m.Makespan), textfmt.CommaInts(m.PeakMemory)
	if u := s.Placement.Units; u != nil {
		// In time and bytes where the placement says what its steps and
		// memory units are.
		if u.HasTime() {
			makespan = fmt.Sprintf("%s (%d steps of %s)", u.Duration(float64(m.Makespan)), m.Makespan, u.StepText(1))
		}
		if u.HasMemory() {
			peak, budget = u.Memories(m.PeakMemory), s.Placement.BudgetText(s.Memory)
		}
	}
	return fmt.Sprintf("valid%s: %s, %d micro-batches, makespan %s, bubble rate %.2f%%, peak memory %v (budget %s)%s\n",
		onCluster, name, s.MicroBatches, makespan, 100*m.BubbleRate, peak, budget, latency)
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
