package hetero

import "math"

// Interleaved is the model cut into v stages per device of order (v·G
// stages for G devices), stage i on device order[i mod G]: the loop
// placement of interleaved 1F1B (Narayanan et al., "Efficient Large-Scale
// Language Model Training on GPU Clusters Using Megatron-LM", §2.2), with
// every stage's time on its own device. The cut points are those whose
// largest stage load (its computation, the transfers it pays at its ends
// and the link to the next stage) is least: a dynamic program over the
// stages in pipeline order, the first least cut on ties. Fits says
// whether every device holds the memory of all of its stages. nil where
// there are fewer layers than stages. With v = 1 it is Evaluate's split
// of those cuts.
func (k *Cost) Interleaved(method string, order []int, v int) *Split {
	S := v * len(order)
	if S < 1 || len(k.Model.Layers) < S {
		return nil
	}
	devs := make([]int, S)
	for i := range devs {
		devs[i] = order[i%len(order)]
	}
	return k.Cut(method, devs, nil)
}

// Cut is the model cut into len(devs) stages, stage i on device devs[i]
// (a device may hold several), at the cut points whose largest stage
// load (its computation, the transfers it pays at its ends and the link
// to the next stage) is least, among the stages [a, b) that ok accepts
// (nil: all): a dynamic program over the stages in pipeline order, the
// first least cut on ties. Fits says whether every device holds the
// memory of all of its stages. nil where no cut has every stage
// non-empty and accepted.
func (k *Cost) Cut(method string, devs []int, ok func(a, b int) bool) *Split {
	n, S := len(k.Model.Layers), len(devs)
	if S < 1 || n < S {
		return nil
	}
	load := func(i, a, b int) float64 {
		t := k.Compute(devs[i], a, b)
		if a > 0 {
			t += k.Model.boundary[a-1]
		}
		if b < n {
			t += k.Model.boundary[b-1]
			if i+1 < S {
				t = max(t, k.LinkLoad(devs[i], devs[i+1], b-1))
			}
		}
		return t
	}
	// best[i][j]: the least largest load of layers 0..j-1 in stages
	// 0..i-1; cut[i][j] where stage i-1 begins.
	best := make([][]float64, S+1)
	cut := make([][]int, S+1)
	for i := range best {
		best[i], cut[i] = make([]float64, n+1), make([]int, n+1)
		for j := range best[i] {
			best[i][j] = math.Inf(1)
		}
	}
	best[0][0] = 0
	for i := 1; i <= S; i++ {
		for j := i; j <= n-(S-i); j++ {
			for a := i - 1; a < j; a++ {
				if math.IsInf(best[i-1][a], 1) || (ok != nil && !ok(a, j)) {
					continue
				}
				if x := max(best[i-1][a], load(i-1, a, j)); x < best[i][j] {
					best[i][j], cut[i][j] = x, a
				}
			}
		}
	}
	if math.IsInf(best[S][n], 1) {
		return nil
	}
	cuts := make([]int, S+1)
	for i, j := S, n; i > 0; i-- {
		cuts[i] = j
		j = cut[i][j]
	}
	s := k.Evaluate(method, cuts, devs)
	// A device's memory holds all of its stages.
	s.Fits = true
	held := map[int]float64{}
	for _, st := range s.Stages {
		held[st.Device] += st.Memory
	}
	for d, m := range held {
		if c := k.Capacity(d); c > 0 && m > c*(1+1e-12) {
			s.Fits = false
		}
	}
	return s
}
