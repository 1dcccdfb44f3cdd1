package report

import (
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/megatron"
)

// The layout as Megatron-Core's pretty_repr prints it: one row per rank,
// one column per virtual stage.
func TestMegatronLayout(t *testing.T) {
	// The documentation's table of "Et*3|(tt|)*29,m|L" on 16 ranks.
	l, err := megatron.ParseLayout("Et*3|(tt|)*29,m|L", megatron.LayoutOptions{Layers: 61, PP: 16})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	megatronLayout(&b, l)
	rows := strings.Split(b.String(), "\n")
	for r, want := range map[int]string{0: "embedding,decoder*3  decoder*2", 1: "decoder*2            decoder*2", 13: "decoder*2            decoder*2",
		14: "decoder*2            mtp", 15: "decoder*2            loss"} {
		if !strings.HasSuffix(rows[r+1], want) || !strings.HasPrefix(rows[r+1], "rank ") {
			t.Errorf("rank %d: %q, want %q", r, rows[r+1], want)
		}
	}
}
