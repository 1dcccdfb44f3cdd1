package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/placement"
)

func TestWriteBuiltins(t *testing.T) {
	o := placement.Options{Devices: 4, ForwardTime: 1, BackwardTime: 3, InputTime: 1, WeightTime: 1, Chunks: 2, Order: placement.Loop, SplitBackward: true}
	var b bytes.Buffer
	if err := Builtins(&b, o); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"v-shape", "; every backward b split into input i and weight w; 8 stages, 2 per device, order loop\n", " blocks on 4 devices, device loads "} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
}
