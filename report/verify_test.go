package report

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// A valid schedule gets one line; an invalid one every violation, and the
// verifier's error.
func TestVerify(t *testing.T) {
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 2})
	if err != nil {
		t.Fatal(err)
	}
	s, err := baseline.OneFOneB(spec.New(p, 4))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Verify(&b, s); err != nil || b.String() != schedule.ValidText(s) {
		t.Errorf("valid: %v, %q", err, b.String())
	}
	bad := *s
	bad.Instances = append([]schedule.Instance(nil), s.Instances...)
	bad.Instances[len(bad.Instances)-1].Start = 0
	b.Reset()
	err = Verify(&b, &bad)
	var ve *schedule.VerifyError
	if !errors.As(err, &ve) || b.String() != ve.List() || !strings.Contains(b.String(), "\n") {
		t.Errorf("invalid: %v, %q", err, b.String())
	}
}
