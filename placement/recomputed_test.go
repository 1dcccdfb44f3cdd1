package placement

import (
	"bytes"
	"strings"
	"testing"
)

// "recomputed_layers" is written only where set, read back, compared by
// Equal, and refused on a block that is no forward or below zero.
func TestRecomputedLayers(t *testing.T) {
	p, err := Builtin("v-shape", Options{Devices: 2})
	if err != nil {
		t.Fatal(err)
	}
	var plain bytes.Buffer
	if err := p.Write(&plain); err != nil || strings.Contains(plain.String(), "recomputed_layers") {
		t.Fatalf("unset field written: %v\n%s", err, plain.String())
	}
	q := p.Clone()
	q.Blocks[0].RecomputedLayers = 3
	var buf bytes.Buffer
	if err := q.Write(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if back.Blocks[0].RecomputedLayers != 3 || !back.Equal(q) || back.Equal(p) {
		t.Errorf("read back %+v", back.Blocks[0])
	}
	for _, tc := range []struct {
		block, k int
		want     string
	}{
		{0, -1, "-1 recomputed layers"},
		{len(q.Blocks) - 1, 2, "only a forward block's layers are recomputed"},
	} {
		r := p.Clone()
		r.Blocks[tc.block].RecomputedLayers = tc.k
		if err := r.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("block %d, %d layers: %v", tc.block, tc.k, err)
		}
	}
}
