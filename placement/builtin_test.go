package placement

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the built-in placement files in testdata and the fuzz seed corpus")

// TestBuiltinFiles checks that testdata/placements/<shape>.json is
// Builtin(<shape>) at the defaults. go test ./placement -update rewrites them.
func TestBuiltinFiles(t *testing.T) {
	for _, name := range BuiltinNames() {
		p, err := Builtin(name, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := p.Write(&buf); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(placementsDir, name+".json")
		if *update {
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./placement -update)", err)
		}
		if !bytes.Equal(data, buf.Bytes()) {
			t.Errorf("%s differs from Builtin(%q) (run go test ./placement -update)", path, name)
		}
	}
}

func TestBuiltinNames(t *testing.T) {
	want := []string{"v-shape", "x-shape", "m-shape", "nn-shape", "k-shape"}
	if got := BuiltinNames(); !slices.Equal(got, want) {
		t.Errorf("BuiltinNames() = %v, want %v", got, want)
	}
	for _, n := range want {
		s := BuiltinSummary(n)
		if s == "" || strings.Contains(s, "\n") {
			t.Errorf("BuiltinSummary(%q) = %q, want one non-empty line", n, s)
		}
	}
	if s := BuiltinSummary("w-shape"); s != "" {
		t.Errorf("BuiltinSummary of an unknown name = %q", s)
	}
}

// ids returns prefix+i for i in from..to, counting down when to < from.
func ids(prefix string, from, to int) []string {
	var out []string
	step := 1
	if to < from {
		step = -1
	}
	for i := from; ; i += step {
		out = append(out, fmt.Sprintf("%s%d", prefix, i))
		if i == to {
			return out
		}
	}
}

func cat(parts ...[]string) []string { return slices.Concat(parts...) }

// expected describes a shape at D devices from its definition in the design
// notes: the dependency chains (as id sequences) and the device of every
// block that is not on all devices.
func expected(name string, d int) (chains [][]string, device map[string]int) {
	device = map[string]int{}
	for s := range d {
		device[fmt.Sprint("f", s)] = s
		device[fmt.Sprint("b", s)] = s
	}
	h := d / 2
	switch name {
	case "v-shape":
		chains = [][]string{cat(ids("f", 0, d-1), ids("b", d-1, 0))}
	case "x-shape":
		device = map[string]int{}
		for s := range d {
			device[fmt.Sprint("fd", s)] = s
			device[fmt.Sprint("bd", s)] = s
			device[fmt.Sprint("fu", s)] = d - 1 - s
			device[fmt.Sprint("bu", s)] = d - 1 - s
		}
		chains = [][]string{
			cat(ids("fd", 0, d-1), ids("bd", d-1, 0)),
			cat(ids("fu", 0, d-1), ids("bu", d-1, 0)),
		}
	case "m-shape":
		chains = [][]string{cat([]string{"fs"}, ids("f", 0, d-1), ids("b", d-1, 0), []string{"bs"})}
	case "nn-shape":
		chains = [][]string{cat([]string{"fs0"}, ids("f", 0, h-1), []string{"fs1"}, ids("f", h, d-1),
			ids("b", d-1, h), []string{"bs1"}, ids("b", h-1, 0), []string{"bs0"})}
	case "k-shape":
		chains = [][]string{
			cat(ids("f", 0, h-1), []string{"fx", "bx"}, ids("b", h-1, 0)),
			cat(ids("f", h, d-1), []string{"fx"}),
			cat([]string{"bx"}, ids("b", d-1, h)),
		}
	}
	return chains, device
}

// depSet renders deps as "a->b" strings, sorted.
func depSet(p *Placement) []string {
	var out []string
	for _, d := range p.Deps {
		out = append(out, p.Blocks[d.From].ID+"->"+p.Blocks[d.To].ID)
	}
	slices.Sort(out)
	return out
}

func TestBuiltinShapes(t *testing.T) {
	for _, name := range BuiltinNames() {
		for _, d := range []int{1, 2, 4, 8} {
			even := name == "nn-shape" || name == "k-shape"
			if even && d == 1 {
				continue
			}
			for _, infer := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/D=%d/infer=%v", name, d, infer), func(t *testing.T) {
					const ft, bt = 2, 5 // distinct from the defaults and from the shard time 1
					p, err := Builtin(name, Options{Devices: d, ForwardTime: ft, BackwardTime: bt, Inference: infer})
					if err != nil {
						t.Fatal(err)
					}
					if err := p.Validate(); err != nil {
						t.Fatal(err)
					}
					wantName := name
					if infer {
						wantName += "-infer"
					}
					if p.Name != wantName || p.Devices != d {
						t.Errorf("name %q devices %d, want %q %d", p.Name, p.Devices, wantName, d)
					}
					chains, device := expected(name, d)
					var want []string
					blocks := map[string]bool{}
					for _, c := range chains {
						for i, id := range c {
							blocks[id] = true
							if i > 0 {
								want = append(want, c[i-1]+"->"+id)
							}
						}
					}
					if infer { // keep the forward blocks and the deps between them
						kept := map[string]bool{}
						for id := range blocks {
							if id[0] == 'f' {
								kept[id] = true
							}
						}
						blocks = kept
						want = slices.DeleteFunc(want, func(e string) bool {
							a, b, _ := strings.Cut(e, "->")
							return !kept[a] || !kept[b]
						})
					}
					want = slices.Compact(func() []string { slices.Sort(want); return want }())
					if got := depSet(p); !slices.Equal(got, want) {
						t.Errorf("deps %v, want %v", got, want)
					}
					if p.K() != len(blocks) {
						t.Errorf("K = %d, want %d", p.K(), len(blocks))
					}
					for _, b := range p.Blocks {
						if !blocks[b.ID] {
							t.Errorf("unexpected block %q", b.ID)
							continue
						}
						wantKind, wantMem := Forward, 1
						if b.ID[0] == 'b' {
							wantKind, wantMem = Backward, -1
						}
						wantTime := ft
						if wantKind == Backward {
							wantTime = bt
						}
						if dev, ok := device[b.ID]; ok {
							if !slices.Equal(b.Devices, []int{dev}) {
								t.Errorf("%s on %v, want [%d]", b.ID, b.Devices, dev)
							}
						} else {
							if len(b.Devices) != d {
								t.Errorf("%s on %v, want all %d devices", b.ID, b.Devices, d)
							}
							if strings.HasPrefix(b.ID[1:], "s") { // shard: time 1, memory 0
								wantTime, wantMem = 1, 0
							}
						}
						if infer {
							wantMem = 0
						}
						if b.Kind != wantKind || b.Time != wantTime || b.Memory != wantMem {
							t.Errorf("%s: kind %s time %d memory %d, want %s %d %d", b.ID, b.Kind, b.Time, b.Memory, wantKind, wantTime, wantMem)
						}
					}
					// One micro-batch frees what it allocates, on every device.
					for dev, bs := range p.DeviceBlocks() {
						sum := 0
						for _, i := range bs {
							sum += p.Blocks[i].Memory
						}
						if sum != 0 {
							t.Errorf("device %d: memory sums to %d", dev, sum)
						}
					}
					// Blocks are listed in dependency order.
					if order, ok := p.Topo(); !ok || !slices.IsSorted(order) {
						t.Errorf("blocks not in dependency order: %v", order)
					}
				})
			}
		}
	}
}

func TestBuiltinDefaults(t *testing.T) {
	for _, name := range BuiltinNames() {
		p, err := Builtin(name, Options{})
		if err != nil {
			t.Fatal(err)
		}
		q, err := Builtin(name, Options{Devices: 4, ForwardTime: 1, BackwardTime: 3})
		if err != nil {
			t.Fatal(err)
		}
		if !p.Equal(q) {
			t.Errorf("%s: zero options differ from 4 devices, times 1 and 3", name)
		}
		r, _ := Builtin(name, Options{})
		r.Blocks[0].Time++ // the result is the caller's: no shared state
		if s, _ := Builtin(name, Options{}); !s.Equal(p) {
			t.Errorf("%s: a second call sees the first caller's edit", name)
		}
	}
}

func TestBuiltinErrors(t *testing.T) {
	tests := []struct {
		name string
		opt  Options
		want string
	}{
		{"w-shape", Options{}, `unknown placement "w-shape" (built-in: v-shape, x-shape, m-shape, nn-shape, k-shape)`},
		{"", Options{}, `unknown placement ""`},
		{"v-shape", Options{Devices: -1}, "v-shape: devices must be in 1..4096, got -1"},
		{"v-shape", Options{Devices: MaxDevices + 1}, "v-shape: devices must be in 1..4096, got 4097"},
		{"nn-shape", Options{Devices: 3}, "nn-shape: devices must be even and at least 2, got 3"},
		{"k-shape", Options{Devices: 1}, "k-shape: devices must be even and at least 2, got 1"},
		{"k-shape", Options{Devices: -2}, "k-shape: devices must be even and at least 2, got -2"},
		{"m-shape", Options{ForwardTime: -1}, "m-shape: forward time must be in 1..1000000, got -1"},
		{"x-shape", Options{BackwardTime: -3}, "x-shape: backward time must be in 1..1000000, got -3"},
		{"x-shape", Options{BackwardTime: MaxTime + 1}, "x-shape: backward time must be in 1..1000000, got 1000001"},
	}
	for _, tt := range tests {
		p, err := Builtin(tt.name, tt.opt)
		if err == nil {
			t.Errorf("Builtin(%q, %+v) = %v, want error", tt.name, tt.opt, p.Name)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Builtin(%q, %+v): %q, want %q", tt.name, tt.opt, err, tt.want)
		}
	}
}
