package hetero

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
)

// MaxDPStates bounds the dynamic program's table; past it devices that
// differ only in their node are merged (and the split is no longer
// proven the least).
const MaxDPStates = 8_000_000

// ErrNoSplit says that no split fits the devices' memories (or there
// are fewer layers than devices).
var ErrNoSplit = errors.New("no split")

// classes groups interchangeable devices: the same speed, type, roofline
// figures and capacity, and — where links differ — the same node; with
// few devices and links that differ within a class, every device is its
// own class. exact reports whether the link between two devices depends
// only on their classes (then the program's optimum is the optimum).
type classes struct {
	of      []int   // class per device
	members [][]int // devices per class, in index order
	exact   bool
}

func (k *Cost) classes(byNode, singletons bool) *classes {
	c := k.Cluster
	type key struct {
		speed, peak, bw, cp float64
		typ                 string
		node, self          int
	}
	index := map[key]int{}
	cl := &classes{}
	for d, dev := range c.Devices {
		kk := key{speed: dev.Speed, peak: dev.PeakFLOPs, bw: dev.MemoryBandwidth, cp: k.capacity[d], typ: dev.Type, self: -1}
		if byNode {
			kk.node = dev.Node
		}
		if singletons {
			kk.self = d
		}
		x, ok := index[kk]
		if !ok {
			x = len(cl.members)
			index[kk] = x
			cl.members = append(cl.members, nil)
		}
		cl.of = append(cl.of, x)
		cl.members[x] = append(cl.members[x], d)
	}
	cl.exact = true
	for x := range cl.members {
		for y := range cl.members {
			var first *float64
			for _, a := range cl.members[x] {
				for _, b := range cl.members[y] {
					if a == b {
						continue
					}
					l := c.Link(a, b)
					v := l.Latency + 1e9*l.PerUnit
					if first == nil {
						first = &v
					} else if *first != v {
						cl.exact = false
					}
				}
			}
		}
	}
	return cl
}

// classLink is the worst link load between two devices of classes x and
// y (distinct devices), at a cut after layer l.
func (k *Cost) classLink(cl *classes, x, y, l int) float64 {
	worst := 0.0
	for _, a := range cl.members[x] {
		for _, b := range cl.members[y] {
			if a != b {
				worst = max(worst, k.LinkLoad(a, b, l))
			}
		}
	}
	return worst
}

// Best is the split of least max load onto every device of the cluster,
// one stage each: the dynamic program over (cut, class of the stage before
// it, class of the stage after it, devices used per class). Exact says
// whether it is proven the least (links that depend only on the classes).
func (k *Cost) Best(ctx context.Context) (*Split, bool, error) {
	n, D := len(k.Model.Layers), len(k.Cluster.Devices)
	if n < D {
		return nil, false, fmt.Errorf("%w: %d layers for %d devices (one stage each)", ErrNoSplit, n, D)
	}
	uniform := k.Cluster.LinksUniform()
	cl := k.classes(!uniform, false)
	if !cl.exact && D <= 8 {
		cl = k.classes(true, true)
	}
	if states(cl, n) > MaxDPStates {
		cl = k.classes(false, false)
	}
	if states(cl, n) > MaxDPStates {
		return nil, false, fmt.Errorf("%w: %d device classes are too many for the dynamic program", ErrNoSplit, len(cl.members))
	}
	cuts, order, err := k.dp(ctx, cl)
	if err != nil {
		return nil, false, err
	}
	return k.Evaluate("cluster", cuts, order), cl.exact, nil
}

func states(cl *classes, n int) float64 {
	s := float64(n+1) * float64(len(cl.members)+1) * float64(len(cl.members))
	for _, m := range cl.members {
		s *= float64(len(m) + 1)
	}
	return s
}

func (k *Cost) dp(ctx context.Context, cl *classes) ([]int, []int, error) {
	n, D, C := len(k.Model.Layers), len(k.Cluster.Devices), len(cl.members)
	radix := make([]int, C+1)
	radix[0] = 1
	for x := range C {
		radix[x+1] = radix[x] * (len(cl.members[x]) + 1)
	}
	U := radix[C]
	count := func(u, x int) int { return u / radix[x] % (len(cl.members[x]) + 1) }
	total := make([]int, U)
	for u := range U {
		for x := range C {
			total[u] += count(u, x)
		}
	}
	// Link loads per class pair and cut.
	bnd := make([][][]float64, C)
	for x := range C {
		bnd[x] = make([][]float64, C)
		for y := range C {
			if x == y && len(cl.members[x]) < 2 {
				continue
			}
			bnd[x][y] = make([]float64, n)
			for l := range n - 1 {
				bnd[x][y][l] = k.classLink(cl, x, y, l)
			}
		}
	}
	rep := make([]int, C) // a device of each class: its times and capacity
	for x := range C {
		rep[x] = cl.members[x][0]
	}
	// State (b, p, q, u): a cut before layer b, the stage before it on
	// class p (C: none), the next on class q, u the devices used before
	// the cut. Value: the least max load of the stages before the cut.
	P := C + 1
	idx := func(b, p, q, u int) int { return ((b*P+p)*C+q)*U + u }
	size := (n + 1) * P * C * U
	val := make([]float64, size)
	from := make([]int32, size) // the previous state's index, -1 none
	for i := range val {
		val[i] = inf
		from[i] = -1
	}
	for q := range C {
		val[idx(0, C, q, 0)] = 0
	}
	best, bestFrom, bestStart, bestP := inf, -1, 0, -1
	for a := range n {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		for p := range P {
			for q := range C {
				for u := range U {
					i := idx(a, p, q, u)
					v := val[i]
					if v == inf || count(u, q) >= len(cl.members[q]) {
						continue
					}
					u2 := u + radix[q]
					used := total[u2]
					in := 0.0
					if p < C {
						in = k.Model.boundary[a-1]
					}
					for b := a + 1; b <= n; b++ {
						if n-b < D-used {
							break
						}
						if c := k.capacity[rep[q]]; c > 0 && k.Memory(a, b) > c*(1+1e-12) {
							break
						}
						load := k.Compute(rep[q], a, b) + in
						if load >= best || load >= math.Inf(1) {
							break
						}
						if b == n {
							if used == D && max(v, load) < best {
								best, bestFrom, bestStart, bestP = max(v, load), i, a, q
							}
							continue
						}
						if used == D {
							continue
						}
						for r := range C {
							if count(u2, r) >= len(cl.members[r]) || bnd[q][r] == nil {
								continue
							}
							w := max(v, load+k.Model.boundary[b-1], bnd[q][r][b-1])
							j := idx(b, q, r, u2)
							if w < val[j] {
								val[j], from[j] = w, int32(i)
							}
						}
					}
				}
			}
		}
	}
	if bestFrom < 0 {
		return nil, nil, fmt.Errorf("%w: none fits the devices' memories", ErrNoSplit)
	}
	// Walk back: each state's (b, q) is a stage start and its class.
	type step struct{ start, class int }
	steps := []step{{bestStart, bestP}}
	for i := from[bestFrom]; i >= 0; {
		j := int(i)
		b := j / (P * C * U)
		q := j / U % C
		steps = append(steps, step{b, q})
		i = from[j]
	}
	// The first state (b = 0) has no predecessor; steps holds every
	// stage, last first.
	sort.SliceStable(steps, func(i, j int) bool { return steps[i].start < steps[j].start })
	cuts := []int{}
	order := []int{}
	next := make([]int, C)
	for _, s := range steps {
		cuts = append(cuts, s.start)
		order = append(order, cl.members[s.class][next[s.class]])
		next[s.class]++
	}
	cuts = append(cuts, n)
	return cuts, order, nil
}
