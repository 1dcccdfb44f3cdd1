package main

import (
	"bytes"
	"testing"
)

// TestPlacementsZeroBubble checks that tessel placements shows the
// zero-bubble family with the flags that build it.
func TestPlacementsZeroBubble(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"placements", "--split-backward", "-d", "2"}, []string{"v-shape-split — ", "m-shape-split — ", "dualpipe — ", "i0 w0", "input gradient/weight gradient"}},
		{[]string{"placements", "--chunks", "2", "--order", "v", "--split-backward"}, []string{"v-shape-v2-split — ", "8 stages, 2 per device, order v", "k-shape: not available with these options: k-shape: cannot be cut into chunks"}},
		{[]string{"placements", "--chunks", "3"}, []string{"v-shape-loop3 — ", "12 stages, 3 per device, order loop"}},
		{[]string{"placements", "--input-time", "2"}, []string{"dualpipe — ", "device loads [8 8 8 8]"}},
	} {
		code, out, errOut := runCLI(t, c.args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, errOut)
		}
		for _, w := range c.want {
			if !bytes.Contains([]byte(out), []byte(w)) {
				t.Errorf("%v: output lacks %q", c.args, w)
			}
		}
	}
}
