package cluster

import (
	"slices"
	"testing"
)

func TestDeviceMemoryBytes(t *testing.T) {
	for _, c := range []struct {
		name  string
		bytes []float64
		want  []float64
	}{
		{"none", []float64{0, 0, 0}, nil},
		{"some", []float64{0, 80e9, 0}, []float64{0, 80e9, 0}},
		{"all", []float64{40e9, 80e9}, []float64{40e9, 80e9}},
	} {
		cl := Uniform(len(c.bytes))
		for i, b := range c.bytes {
			cl.Devices[i].MemoryBytes = b
		}
		if got := cl.DeviceMemoryBytes(); !slices.Equal(got, c.want) || (got == nil) != (c.want == nil) {
			t.Errorf("%s: DeviceMemoryBytes = %v, want %v", c.name, got, c.want)
		}
	}
}
