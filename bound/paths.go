package bound

import "github.com/tessel-pp/tessel/placement"

// PathLengths is the longest start-to-start dependency path between every
// two blocks of p (-1 where none leads from one to the other; 0 from a block
// to itself).
func PathLengths(p *placement.Placement) [][]int {
	order, _ := p.Topo()
	succs := p.SuccDeps()
	out := make([][]int, len(p.Blocks))
	for a := range p.Blocks {
		far := make([]int, len(p.Blocks))
		for i := range far {
			far[i] = -1
		}
		far[a] = 0
		for _, i := range order {
			if far[i] < 0 {
				continue
			}
			for _, d := range succs[i] {
				far[d.To] = max(far[d.To], far[i]+p.Delay(d))
			}
		}
		out[a] = far
	}
	return out
}

// pathLengths is PathLengths by the name the host channel's bound
// (hostchannel.go) calls it.
func pathLengths(p *placement.Placement) [][]int { return PathLengths(p) }
