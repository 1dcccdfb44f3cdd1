package schedule_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/verify"
)

// ValidText is tessel verify's line of a valid schedule; List and
// CountText its report of an invalid one.
func TestVerifyTexts(t *testing.T) {
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 4, ForwardTime: 1, BackwardTime: 3})
	if err != nil {
		t.Fatal(err)
	}
	s := oneF1B(t, p, 8, 0)
	m := schedule.Measure(s)
	want := "valid: v-shape, 8 micro-batches, makespan " + strconv.Itoa(m.Makespan) + ", bubble rate "
	if got := schedule.ValidText(s); !strings.HasPrefix(got, want) || !strings.HasSuffix(got, "(budget unlimited)\n") || strings.Count(got, "\n") != 1 {
		t.Errorf("ValidText = %q, want %q… (budget unlimited)", got, want)
	}
	bad := *s
	bad.Instances = append([]schedule.Instance(nil), s.Instances...)
	bad.Instances[len(bad.Instances)-1].Start = 0
	var ve *schedule.VerifyError
	if err := verify.Schedule(&bad); err == nil || !errors.As(err, &ve) {
		t.Fatalf("Verify of a broken schedule: %v", err)
	}
	if got := strings.Count(ve.List(), "\n"); got != len(ve.Violations)+min(ve.Omitted, 1) {
		t.Errorf("List has %d lines for %d violations (%d omitted)", got, len(ve.Violations), ve.Omitted)
	}
	want1 := strconv.Itoa(ve.Count()) + " violation"
	if got := ve.CountText(); got != want1 && got != want1+"s" {
		t.Errorf("CountText = %q, want %q(s)", got, want1)
	}
	one := &schedule.VerifyError{Violations: ve.Violations[:1]}
	if got := one.CountText(); got != "1 violation" {
		t.Errorf("CountText of one = %q", got)
	}
	if got := (&schedule.VerifyError{Violations: ve.Violations[:1], Omitted: 2}).List(); !strings.HasSuffix(got, "... and 2 more\n") {
		t.Errorf("List with 2 omitted = %q", got)
	}
}
