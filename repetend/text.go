package repetend

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tessel-pp/tessel/placement"
)

// OffsetsText is every block's offset, as id:offset, in block order.
func (r *Repetend) OffsetsText(p *placement.Placement) string {
	parts := make([]string, len(r.Offsets))
	for i, o := range r.Offsets {
		parts[i] = fmt.Sprintf("%s:%d", p.Blocks[i].ID, o)
	}
	return strings.Join(parts, " ")
}

// DeviceRows lists every device's blocks of one iteration in start order,
// as id^offset@start.
func (r *Repetend) DeviceRows(p *placement.Placement) []string {
	rows := make([]string, p.Devices)
	for d, on := range p.DeviceBlocks() {
		sort.SliceStable(on, func(a, b int) bool { return r.Starts[on[a]] < r.Starts[on[b]] })
		parts := make([]string, len(on))
		for k, i := range on {
			parts[k] = fmt.Sprintf("%s^%d@%d", p.Blocks[i].ID, r.Offsets[i], r.Starts[i])
		}
		rows[d] = strings.Join(parts, " ")
	}
	return rows
}
