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
	want := []string{"v-shape", "x-shape", "dualpipe", "m-shape", "nn-shape", "k-shape"}
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
		if name == "dualpipe" { // x-shape split: TestSplitBackward
			continue
		}
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
		q, err := Builtin(name, Options{Devices: 4, ForwardTime: 1, BackwardTime: 3, InputTime: 1, WeightTime: 1, Chunks: 1, Order: Loop})
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
		{"w-shape", Options{}, `unknown placement "w-shape" (built-in: v-shape, x-shape, dualpipe, m-shape, nn-shape, k-shape)`},
		{"v-shape", Options{SplitBackward: true, InputTime: -1}, "v-shape: input time must be in 1..1000000, got -1"},
		{"v-shape", Options{SplitBackward: true, WeightTime: MaxTime + 1}, "v-shape: weight time must be in 1..1000000, got 1000001"},
		{"v-shape", Options{Chunks: -1}, "v-shape: chunks must be in 1..16, got -1"},
		{"v-shape", Options{Chunks: MaxChunks + 1}, "v-shape: chunks must be in 1..16, got 17"},
		{"k-shape", Options{Chunks: 2}, "k-shape: cannot be cut into chunks (only v-shape, x-shape, m-shape)"},
		{"v-shape", Options{Chunks: 2, Order: "zigzag"}, `v-shape: unknown order "zigzag" (want loop or v)`},
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

// TestSplitBackward checks the split against the unsplit shape, block by
// block: every backward b becomes an input block (b's place in the chain,
// memory 0) and a weight block (b's memory) on b's devices, the weight
// block after the input block alone, and nothing else changes.
//
// Reference: OptPipe (Li et al.) §III (F, B and W blocks) and
// docs/design.md, "Block kinds": input + weight do what one backward does.
func TestSplitBackward(t *testing.T) {
	const it, wt = 2, 3
	for _, name := range BuiltinNames() {
		if name == "dualpipe" {
			continue
		}
		for _, d := range []int{2, 4, 8} {
			p, err := Builtin(name, Options{Devices: d})
			if err != nil {
				t.Fatal(err)
			}
			q, err := Builtin(name, Options{Devices: d, SplitBackward: true, InputTime: it, WeightTime: wt})
			if err != nil {
				t.Fatal(err)
			}
			if q.Name != name+"-split" {
				t.Errorf("name %q, want %q", q.Name, name+"-split")
			}
			// Map every block of p to its block in q, backward → input.
			var want []string
			for _, b := range p.Blocks {
				if b.Kind != Backward {
					if j := q.Index(b.ID); j < 0 || !slices.Equal(q.Blocks[j].Devices, b.Devices) || q.Blocks[j].Kind != b.Kind || q.Blocks[j].Time != b.Time {
						t.Errorf("%s/%d: %s missing or changed", name, d, b.ID)
					}
					continue
				}
				in, w := q.Index("i"+b.ID[1:]), q.Index("w"+b.ID[1:])
				if in < 0 || w < 0 {
					t.Fatalf("%s/%d: %s has no input or weight block", name, d, b.ID)
				}
				I, W := q.Blocks[in], q.Blocks[w]
				shard := len(b.Devices) == d && d > 1 && b.Memory == 0
				wantI, wantW, wantMem := it, wt, b.Memory
				if shard {
					wantI, wantW, wantMem = 1, 1, 0
				}
				if I.Kind != Input || W.Kind != Weight || !slices.Equal(I.Devices, b.Devices) || !slices.Equal(W.Devices, b.Devices) ||
					I.Time != wantI || W.Time != wantW || I.Memory != 0 || W.Memory != wantMem {
					t.Errorf("%s/%d: %s split into %+v and %+v", name, d, b.ID, I, W)
				}
				want = append(want, I.ID+"->"+W.ID)
			}
			rename := func(id string) string {
				if id[0] == 'b' {
					return "i" + id[1:]
				}
				return id
			}
			for _, dep := range p.Deps {
				want = append(want, rename(p.Blocks[dep.From].ID)+"->"+rename(p.Blocks[dep.To].ID))
			}
			slices.Sort(want)
			if got := depSet(q); !slices.Equal(got, want) {
				t.Errorf("%s/%d: deps %v, want %v", name, d, got, want)
			}
			if p.K()+len(want)-len(p.Deps) != q.K() {
				t.Errorf("%s/%d: %d blocks, want one more per backward", name, d, q.K())
			}
			if order, ok := q.Topo(); !ok || !slices.IsSorted(order) {
				t.Errorf("%s/%d: blocks not in dependency order", name, d)
			}
		}
	}
	// DualPipe is the x-shape with its backward split (She et al. §V-A).
	for _, d := range []int{2, 4, 8} {
		dp, err := Builtin("dualpipe", Options{Devices: d})
		if err != nil {
			t.Fatal(err)
		}
		x, _ := Builtin("x-shape", Options{Devices: d, SplitBackward: true})
		x.Name = "dualpipe"
		if !dp.Equal(x) {
			t.Errorf("dualpipe on %d devices is not the x-shape split", d)
		}
	}
}

// TestChunks checks where the C·D stages of the chunked placements run.
// Reference: docs/design.md, "Placements of the zero-bubble family": loop
// puts stage s on device s mod D; V puts stages 0..D−1 on devices 0..D−1
// and D..2D−1 back on D−1..0.
func TestChunks(t *testing.T) {
	cases := []struct {
		d, c  int
		order Order
		want  []int // device of f0, f1, …
	}{
		{4, 2, Loop, []int{0, 1, 2, 3, 0, 1, 2, 3}},
		{4, 2, V, []int{0, 1, 2, 3, 3, 2, 1, 0}},
		{3, 3, Loop, []int{0, 1, 2, 0, 1, 2, 0, 1, 2}},
		{3, 3, V, []int{0, 1, 2, 2, 1, 0, 0, 1, 2}},
		{1, 2, V, []int{0, 0}},
	}
	for _, c := range cases {
		p, err := Builtin("v-shape", Options{Devices: c.d, Chunks: c.c, Order: c.order})
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("v-shape-%s%d", c.order, c.c); p.Name != want {
			t.Errorf("name %q, want %q", p.Name, want)
		}
		S := c.c * c.d
		chain := cat(ids("f", 0, S-1), ids("b", S-1, 0))
		var wantDeps []string
		for i := 1; i < len(chain); i++ {
			wantDeps = append(wantDeps, chain[i-1]+"->"+chain[i])
		}
		slices.Sort(wantDeps)
		if got := depSet(p); !slices.Equal(got, wantDeps) {
			t.Errorf("%d devices, %d chunks, %s: deps %v", c.d, c.c, c.order, got)
		}
		for s, dev := range c.want {
			for _, id := range []string{fmt.Sprint("f", s), fmt.Sprint("b", s)} {
				if i := p.Index(id); i < 0 || !slices.Equal(p.Blocks[i].Devices, []int{dev}) {
					t.Errorf("%d devices, %d chunks, %s: %s not on device %d", c.d, c.c, c.order, id, dev)
				}
			}
		}
	}
	// The x-shape's chain going up mirrors the one going down.
	p, err := Builtin("x-shape", Options{Devices: 4, Chunks: 2, Order: V, SplitBackward: true})
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "x-shape-v2-split" || p.K() != 2*8*3 {
		t.Errorf("x-shape, 2 chunks, v, split: %s with %d blocks", p.Name, p.K())
	}
	for s := range 8 {
		down, up := p.Blocks[p.Index(fmt.Sprint("fd", s))].Devices[0], p.Blocks[p.Index(fmt.Sprint("fu", s))].Devices[0]
		if down+up != 3 {
			t.Errorf("stage %d: down on %d, up on %d", s, down, up)
		}
	}
}
