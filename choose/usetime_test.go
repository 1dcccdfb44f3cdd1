package choose_test

import (
	"context"
	"testing"
	"time"

	"github.com/tessel-pp/tessel/choose"
	"github.com/tessel-pp/tessel/internal/testskip"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// With time to use (tessel search --time-limit T) on a placement whose
// devices are still to choose, the choice does not return before T while
// its schedule is more than 1 % above the lower bound and not proven, and
// it answers after T with a verified schedule (search's
// TestUseTimeInEveryMode, for the mode that lives here). The bound on the
// answer's delay is loose: the machine may be shared.
func TestUseTimeChoosingDevices(t *testing.T) {
	testskip.Short(t, "a search of a few seconds")
	p, err := placement.Load("../testdata/placements/where-branches.json")
	if err != nil {
		t.Fatal(err)
	}
	const limit = 3 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	t0 := time.Now()
	res, err := choose.Devices(ctx, spec.New(p, 8), choose.Options{Search: search.Options{UseTime: true, TimeLimit: limit}})
	took := time.Since(t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := verify.Schedule(res.Schedule); err != nil {
		t.Fatal(err)
	}
	open := res.Gap()*100 > res.Makespan() && !(res.Proven() && (res.Gap() <= 0 || res.TO != nil))
	if open && took < limit {
		t.Errorf("returned after %v of %v: makespan %d, lower bound %d, not proven", took, limit, res.Makespan(), res.Bounds.Makespan)
	}
	if took > 3*limit {
		t.Errorf("returned after %v of %v", took, limit)
	}
	t.Logf("%v: makespan %d, lower bound %d, %s", took, res.Makespan(), res.Bounds.Makespan, res.Source)
}
