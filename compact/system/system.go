// Package system is the core of the re-timing (package compact): a
// system of difference constraints v_x ≥ v_y + w over integer variables
// (the starts of instances, of offloads, reloads and recomputes) and its
// least solution ≥ 0. Where the constraints form no cycle — every list
// schedule's orders and dependencies, at any N — one topological pass in
// O(V+E) finds it; where they do (a latency budget's edges back from a
// sink to its sources, which weigh t_sink − L ≤ 0), relaxation rounds
// find it, or find that there is none (a cycle of positive weight: the
// orders contradict each other or the budget).
//
// It imports nothing of the project: a rule adds its variables and
// constraints to a System without knowing who solves it.
package system

import (
	"cmp"
	"errors"
	"math"
	"slices"
)

// ErrContradict is the error of constraints with no solution: a cycle of
// positive weight. Callers say which orders or budget it was.
var ErrContradict = errors.New("the constraints contradict each other")

// Constraint is v_X ≥ v_Y + W; Y < 0 makes it v_X ≥ W.
type Constraint struct{ X, Y, W int }

// System is difference constraints over Vars variables, every variable
// at least 0.
type System struct {
	// Vars is the number of variables, 0..Vars-1.
	Vars int
	// Cons are the constraints, in the order they were added: the
	// topological pass takes the successors of a variable in this order.
	Cons []Constraint
	// Floor, when set (one entry per variable), is the least value of
	// each variable: v_x ≥ Floor[x], a release time.
	Floor []int
	// Hint, when set (one entry per variable), is a solution the
	// constraints were read from (a schedule's given times): relaxation
	// takes the constraints in the order of their Y's hint, so that one
	// round settles those that point forward in time. Any hint, or none,
	// gives the same least solution.
	Hint []int
	// Rounds, when positive, bounds the relaxation rounds that change a
	// value before ErrContradict, where the caller knows a bound on the
	// rounds a solution takes (with an exact hint, a round or two more
	// than the constraints that point backwards in it); 0: Vars+2, the
	// bound of any system.
	Rounds int
}

// New is a system of vars variables with room for cons constraints.
func New(vars, cons int) *System {
	return &System{Vars: vars, Cons: make([]Constraint, 0, cons)}
}

// Var adds k variables and returns the first of them.
func (s *System) Var(k int) int {
	v := s.Vars
	s.Vars += k
	if s.Floor != nil {
		s.Floor = append(s.Floor, make([]int, k)...)
	}
	if s.Hint != nil {
		s.Hint = append(s.Hint, make([]int, k)...)
	}
	return v
}

// Add is the constraint v_x ≥ v_y + w (y < 0: v_x ≥ w).
func (s *System) Add(x, y, w int) { s.Cons = append(s.Cons, Constraint{x, y, w}) }

// Least raises variable x's floor to w: v_x ≥ w.
func (s *System) Least(x, w int) {
	if s.Floor == nil {
		s.Floor = make([]int, s.Vars)
	}
	s.Floor[x] = max(s.Floor[x], w)
}

// Solve is the least solution ≥ 0: in one topological pass where the
// constraints form no cycle, else by relaxation; ErrContradict where
// there is none.
func (s *System) Solve() ([]int, error) {
	if start, ok := s.Topological(nil); ok {
		return start, nil
	}
	return s.Relax()
}

// Topological is the least solution ≥ 0 in one pass of Kahn's algorithm
// over the constraints (successor lists in CSR form, O(V+E)), where they
// form no cycle; ok is false where they do. Variables leave the queue in
// a fixed order — those with no predecessor by index, then first in,
// first out, a variable's successors in the order of Cons — and visit,
// when set, is called as each leaves, its value final: it may raise the
// values of variables not yet left (a link queue books the transfers of
// a producer in that order, package compact).
func (s *System) Topological(visit func(v int, start []int)) (start []int, ok bool) {
	nodes := s.Vars
	start, first, succ, succW, ok := s.successors()
	if !ok {
		return nil, false
	}
	indeg := make([]int, nodes)
	for _, x := range succ {
		indeg[x]++
	}
	queue := make([]int, 0, nodes)
	for v := range nodes {
		if indeg[v] == 0 {
			queue = append(queue, v)
		}
	}
	for h := 0; h < len(queue); h++ {
		u := queue[h]
		if visit != nil {
			visit(u, start)
		}
		su := start[u]
		for e := first[u]; e < first[u+1]; e++ {
			w := succ[e]
			start[w] = max(start[w], su+succW[e])
			if indeg[w]--; indeg[w] == 0 {
				queue = append(queue, w)
			}
		}
	}
	return start, len(queue) == nodes
}

// Relax is the least solution ≥ 0 by relaxation rounds (Bellman–Ford
// from 0), for constraints with cycles, or ErrContradict where a cycle
// of positive weight leaves none.
func (s *System) Relax() ([]int, error) {
	nodes := s.Vars
	// The constraints by the hint of the variable they start from (then
	// by variable), as successor lists: where the hint is a solution most
	// of them point forward in time and one round in this order settles
	// them; in any other order, the rounds grow with N. (The least
	// solution is the same in any order.)
	start, first, succ, succW, ok := s.successors()
	if !ok {
		return nil, ErrContradict
	}
	order := make([]int, nodes)
	for v := range order {
		order[v] = v
	}
	if s.Hint != nil {
		sortByHint(order, s.Hint)
	}
	for round := 0; ; round++ {
		changed := false
		for _, y := range order {
			sy := start[y]
			for e := first[y]; e < first[y+1]; e++ {
				if v := sy + succW[e]; v > start[succ[e]] {
					start[succ[e]], changed = v, true
				}
			}
		}
		if !changed {
			return start, nil
		}
		if round > s.Vars+1 || (s.Rounds > 0 && round > s.Rounds) {
			return nil, ErrContradict
		}
	}
}

// successors is the start of a solution — the floors, at least 0, and
// the constants (Y < 0) — and the other constraints as successor lists
// in CSR form: those of y are succ[first[y]:first[y+1]] with their
// weights in succW, in the order of Cons. A variable's constraint on
// itself holds where its weight is at most 0 and is left out; ok is
// false where one's weight is positive (no solution).
func (s *System) successors() (start, first, succ, succW []int, ok bool) {
	nodes := s.Vars
	start = make([]int, nodes)
	if s.Floor != nil {
		for v, f := range s.Floor {
			start[v] = max(f, 0)
		}
	}
	first = make([]int, nodes+1)
	edges := 0
	for _, k := range s.Cons {
		switch {
		case k.Y < 0:
			start[k.X] = max(start[k.X], k.W)
		case k.Y == k.X:
			if k.W > 0 {
				return nil, nil, nil, nil, false
			}
		default:
			first[k.Y+1]++
			edges++
		}
	}
	for v := range nodes {
		first[v+1] += first[v]
	}
	succ = make([]int, edges)
	succW = make([]int, edges)
	fill := slices.Clone(first[:nodes])
	for _, k := range s.Cons {
		if k.Y >= 0 && k.Y != k.X {
			succ[fill[k.Y]] = k.X
			succW[fill[k.Y]] = k.W
			fill[k.Y]++
		}
	}
	return start, first, succ, succW, true
}

// sortByHint sorts the variables of order by hint, then by variable: as
// one integer key each where they fit (hint·len + v, hints ≥ 0), which
// sorts without a comparison function.
func sortByHint(order, hint []int) {
	n := len(order)
	lo, hi := 0, 0
	if n > 0 {
		lo, hi = slices.Min(hint), slices.Max(hint)
	}
	if lo < 0 || (n > 0 && hi > (math.MaxInt-n)/n) {
		slices.SortFunc(order, func(a, b int) int { return cmp.Or(cmp.Compare(hint[a], hint[b]), cmp.Compare(a, b)) })
		return
	}
	for v := range order {
		order[v] = hint[v]*n + v
	}
	slices.Sort(order)
	for i, k := range order {
		order[i] = k % n
	}
}

// Cycle is the constraints (indices into Cons) of one cycle among those
// the topological pass could not order, in order along the cycle, or nil
// where there is none. Every variable left has a predecessor left, so
// walking predecessors from the first must repeat; each variable's
// predecessor is its first constraint in Cons among those left.
func (s *System) Cycle() []int {
	indeg := make([]int, s.Vars)
	succ := make([][]int, s.Vars)
	for _, k := range s.Cons {
		if k.Y >= 0 && k.Y != k.X {
			indeg[k.X]++
			succ[k.Y] = append(succ[k.Y], k.X)
		}
	}
	var queue []int
	for v, d := range indeg {
		if d == 0 {
			queue = append(queue, v)
		}
	}
	for h := 0; h < len(queue); h++ {
		for _, w := range succ[queue[h]] {
			if indeg[w]--; indeg[w] == 0 {
				queue = append(queue, w)
			}
		}
	}
	pred := make(map[int]int) // variable -> constraint of one left-over predecessor
	for e, k := range s.Cons {
		if k.Y >= 0 && k.Y != k.X && indeg[k.Y] > 0 && indeg[k.X] > 0 {
			if _, ok := pred[k.X]; !ok {
				pred[k.X] = e
			}
		}
	}
	v := slices.IndexFunc(indeg, func(d int) bool { return d > 0 })
	if v < 0 {
		return nil
	}
	seen := make(map[int]bool)
	for !seen[v] {
		seen[v] = true
		v = s.Cons[pred[v]].Y
	}
	// v is on the cycle; collect it backwards, then return it forwards.
	var edges []int
	for u := v; ; {
		e := pred[u]
		edges = append(edges, e)
		u = s.Cons[e].Y
		if u == v {
			break
		}
	}
	slices.Reverse(edges)
	return edges
}
