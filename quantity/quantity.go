// Package quantity says what a placement's integers are in a person's units,
// and writes them the one way tessel writes them everywhere: a time in s,
// ms or µs (the largest that leaves a number ≥ 1), a memory in decimal
// units (1 GB = 10⁹ bytes, 1 MB = 10⁶ bytes).
//
// A placement made from a model in real units (docs/formats.md, "Units")
// carries a Scale: one time step is Step of the model's Time unit, one
// memory unit is MemoryBytes bytes. The built-in placements carry none:
// their figures are steps and units, as they always were.
package quantity

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// timeUnits are the time units a file may state, in seconds.
var timeUnits = map[string]float64{"s": 1, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}

// memoryUnits are the memory units a file may state, in bytes: decimal
// (kB, MB, GB, TB) and binary (KiB, MiB, GiB, TiB).
var memoryUnits = map[string]float64{
	"B": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
	"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40,
}

// TimeSeconds is the length of time unit name in seconds; ok is false for
// a name tessel does not know.
func TimeSeconds(name string) (seconds float64, ok bool) {
	s, ok := timeUnits[name]
	return s, ok
}

// MemoryBytes is the size of memory unit name in bytes; ok is false for a
// name tessel does not know.
func MemoryBytes(name string) (bytes float64, ok bool) {
	b, ok := memoryUnits[name]
	return b, ok
}

// ParseTime checks a file's time unit: the error lists the units known.
func ParseTime(name string) (float64, error) {
	if s, ok := TimeSeconds(name); ok {
		return s, nil
	}
	return 0, fmt.Errorf("unknown time unit %q (want one of %s)", name, names(timeUnits))
}

// ParseMemory checks a file's memory unit: the error lists the units
// known.
func ParseMemory(name string) (float64, error) {
	if b, ok := MemoryBytes(name); ok {
		return b, nil
	}
	return 0, fmt.Errorf("unknown memory unit %q (want one of %s)", name, names(memoryUnits))
}

func names(m map[string]float64) string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		if m[out[i]] != m[out[j]] {
			return m[out[i]] < m[out[j]]
		}
		return out[i] < out[j]
	})
	return strings.Join(out, ", ")
}

// Seconds writes a time given in seconds: "2.630 s" from one second up,
// "69.00 ms" from a millisecond, "0.17 ms" down to 10 µs, "3.20 µs"
// below.
func Seconds(x float64) string {
	a := math.Abs(x)
	switch {
	case a >= 1:
		return fmt.Sprintf("%.3f s", x)
	case a >= 1e-3:
		return fmt.Sprintf("%.2f ms", x*1e3)
	case a >= 1e-5:
		return fmt.Sprintf("%.3g ms", x*1e3)
	case a == 0:
		return "0 ms"
	}
	return fmt.Sprintf("%.3g µs", x*1e6)
}

// Step writes a short time given in seconds with as few digits as it
// needs: "2 µs", "3 ms", "0.5 ms", "1.5 s".
func Step(x float64) string {
	a := math.Abs(x)
	g := func(v float64, unit string) string {
		return strconv.FormatFloat(math.Round(v*1e9)/1e9, 'f', -1, 64) + " " + unit
	}
	switch {
	case a >= 1:
		return g(x, "s")
	case a >= 1e-3:
		return g(x*1e3, "ms")
	case a >= 1e-6:
		return g(x*1e6, "µs")
	}
	return g(x*1e9, "ns")
}

// Bytes writes a memory in decimal units: "18.79 GB" from a gigabyte,
// "67.1 MB" from a megabyte, "33.0 kB" from a kilobyte, "12 B" below.
func Bytes(x float64) string {
	a := math.Abs(x)
	switch {
	case a >= 1e9:
		return fmt.Sprintf("%.2f GB", x/1e9)
	case a >= 1e6:
		return fmt.Sprintf("%.1f MB", x/1e6)
	case a >= 1e3:
		return fmt.Sprintf("%.1f kB", x/1e3)
	}
	return fmt.Sprintf("%.0f B", x)
}

// Scale is what the integers of a placement are: a time step is Step of
// the model's time unit Time (a unit TimeSeconds knows; "" for a model
// that names none: Step of its own unit), a memory unit is MemoryBytes
// bytes. Step 0 or MemoryBytes 0: steps or memory units alone. Search,
// where > 1, is the steps of one step of the schedule search's coarse
// copy of the placement (package exact): the search runs there, and its
// answer is timed again at Step.
type Scale struct {
	Time        string
	Step        float64
	MemoryBytes float64
	Search      int
}

// Limits of a scale, far beyond any model: a step of 10⁻¹² to 10¹² of the
// model's unit, a memory unit up to a petabyte, a search step up to a
// million steps.
const (
	MinStep        = 1e-12
	MaxStep        = 1e12
	MaxMemoryBytes = 1e15
	MaxSearch      = 1_000_000
)

// Validate checks a scale on its own; the error names the field as the
// placement file spells it.
func (s *Scale) Validate() error {
	if s == nil {
		return nil
	}
	if s.Time != "" {
		if _, err := ParseTime(s.Time); err != nil {
			return fmt.Errorf("units: time: %w", err)
		}
		if s.Step == 0 {
			return fmt.Errorf("units: \"time\" needs \"step\" (what one time step is)")
		}
	}
	if s.Step != 0 && !(s.Step >= MinStep && s.Step <= MaxStep) {
		return fmt.Errorf("units: step: want %g..%g, got %g", float64(MinStep), float64(MaxStep), s.Step)
	}
	if s.Search != 0 && (s.Step == 0 || s.Search < 1 || s.Search > MaxSearch) {
		if s.Step == 0 {
			return fmt.Errorf("units: \"search_step\" needs \"step\"")
		}
		return fmt.Errorf("units: search_step: want 1..%d steps, got %d", MaxSearch, s.Search)
	}
	if !(s.MemoryBytes >= 0 && s.MemoryBytes <= MaxMemoryBytes) {
		return fmt.Errorf("units: memory_bytes: want 0..%g (0: not given), got %g", float64(MaxMemoryBytes), s.MemoryBytes)
	}
	if s.Step == 0 && s.MemoryBytes == 0 {
		return fmt.Errorf("units: give \"step\", \"memory_bytes\" or both")
	}
	return nil
}

// HasTime says whether steps have a length (s may be nil).
func (s *Scale) HasTime() bool { return s != nil && s.Step > 0 }

// Named says whether steps have a length in a named unit (s may be nil).
func (s *Scale) Named() bool { return s.HasTime() && s.Time != "" }

// HasMemory says whether memory units have a size (s may be nil).
func (s *Scale) HasMemory() bool { return s != nil && s.MemoryBytes > 0 }

// SearchStep is the steps of one step of the search's copy: Search, or 1.
func (s *Scale) SearchStep() int {
	if s == nil || s.Search < 1 {
		return 1
	}
	return s.Search
}

// InUnit is steps steps in the model's unit (ms for a model in ms); s
// must have a time.
func (s *Scale) InUnit(steps float64) float64 { return steps * s.Step }

// Seconds is steps steps in seconds; s must have a named time.
func (s *Scale) Seconds(steps float64) float64 {
	sec, _ := TimeSeconds(s.Time)
	return steps * s.Step * sec
}

// Duration writes steps steps as a time: "2.630 s" in a named unit, the
// number in the model's unit to six decimals ("2629.6") where it names
// none, "681 steps" where s has no time.
func (s *Scale) Duration(steps float64) string {
	switch {
	case !s.HasTime():
		return fmt.Sprintf("%s steps", strconv.FormatFloat(steps, 'f', -1, 64))
	case s.Time == "":
		return strconv.FormatFloat(math.Round(s.InUnit(steps)*1e6)/1e6, 'f', -1, 64)
	}
	return Seconds(s.Seconds(steps))
}

// StepText writes steps steps with as few digits as they need: "4 ms"
// in a named unit (Step), the number in the model's unit where it names
// none, "3 steps" where s has no time.
func (s *Scale) StepText(steps float64) string {
	switch {
	case !s.HasTime():
		return fmt.Sprintf("%s steps", strconv.FormatFloat(steps, 'f', -1, 64))
	case s.Time == "":
		return strconv.FormatFloat(s.InUnit(steps), 'g', 9, 64)
	}
	return Step(s.Seconds(steps))
}

// Memory writes units memory units as bytes ("18.79 GB"), or the number
// where s has no memory size.
func (s *Scale) Memory(units float64) string {
	if !s.HasMemory() {
		return strconv.FormatFloat(units, 'f', -1, 64)
	}
	return Bytes(units * s.MemoryBytes)
}

// Memories writes a list of memories, "[18.79 GB, 15.97 GB]", or "[280
// 238]" where s has no memory size (as tessel always wrote them).
func (s *Scale) Memories(xs []int) string {
	parts := make([]string, len(xs))
	sep := " "
	for i, x := range xs {
		parts[i] = s.Memory(float64(x))
	}
	if s.HasMemory() {
		sep = ", "
	}
	return "[" + strings.Join(parts, sep) + "]"
}

// Equal reports whether two scales are the same (both may be nil).
func (s *Scale) Equal(o *Scale) bool {
	if s == nil || o == nil {
		return s == o
	}
	return *s == *o
}

// Clone returns a copy (nil for nil).
func (s *Scale) Clone() *Scale {
	if s == nil {
		return nil
	}
	c := *s
	return &c
}

// AutoStep is the time step that makes a model's durations integers
// without moving a makespan by more than half a percent: the largest
// 1, 2 or 5 × 10^e of the model's unit that is at most a 200th of the
// shortest block (a makespan is a chain of blocks with at most one
// transfer between two of them, each rounded by at most half a step, so
// it moves by at most a step per block: under 0.5 %), and at most a 100th
// of the shortest nonzero transfer (each transfer is then charged within
// 0.5 % of its time), but at least longest / maxSteps, so that no
// duration passes maxSteps steps. blocks and transfers are in the model's
// unit; the values ≤ 0 are ignored; with no block it returns 1.
func AutoStep(blocks, transfers []float64, maxSteps float64) float64 {
	want, longest := math.Inf(1), 0.0
	for _, t := range blocks {
		if t > 0 {
			want, longest = math.Min(want, t/200), math.Max(longest, t)
		}
	}
	if math.IsInf(want, 1) {
		return 1
	}
	for _, t := range transfers {
		if t > 0 {
			want, longest = math.Min(want, t/100), math.Max(longest, t)
		}
	}
	step := nice(want, false)
	if floor := longest / maxSteps; step < floor {
		step = nice(floor, true)
	}
	return step
}

// nice is the largest 1, 2 or 5 × 10^e at most x (up: the least at least
// x), written with 12 significant digits so that 0.001 is 0.001.
func nice(x float64, up bool) float64 {
	e := math.Floor(math.Log10(x))
	best := math.NaN()
	for d := e - 1; d <= e+1; d++ {
		for _, f := range []float64{1, 2, 5} {
			v, _ := strconv.ParseFloat(strconv.FormatFloat(f*math.Pow(10, d), 'g', 12, 64), 64)
			switch {
			case up && v >= x*(1-1e-12) && !(v >= best):
				best = v
			case !up && v <= x*(1+1e-12) && !(v <= best):
				best = v
			}
		}
	}
	return best
}
