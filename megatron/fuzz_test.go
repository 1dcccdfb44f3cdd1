package megatron

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// FuzzParseLayout: no layout string panics; an error is one line; a
// layout that reads writes back (String) to one that reads to the same
// stages, and its placement, where its blocks fit, is a valid chain on
// PP devices.
func FuzzParseLayout(f *testing.F) {
	for _, s := range []string{"E|t*3|(t|)*5mL", "E|t*3|(t|)*4tm|L", "E|t*3|(t|)*3tt|m|L", "Et*3|(tt|)*29,m|L", "E||t|L", "E|t|t*2|t||t|t|t*2L", "((t)*2|)*3", "E|x|L"} {
		f.Add(s, uint8(4), uint8(0))
	}
	f.Fuzz(func(t *testing.T, s string, pp, layers uint8) {
		l, err := ParseLayout(s, LayoutOptions{PP: int(pp), Layers: int(layers)})
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of more than one line: %q", err)
			}
			return
		}
		back, err := ParseLayout(l.String(), LayoutOptions{PP: l.PP, Layers: l.Layers, VPP: l.VPP})
		if err != nil || !slices.Equal(back.Stages, l.Stages) {
			t.Fatalf("%q written as %q reads back %v: %v", s, l.String(), back, err)
		}
		if len(l.Stages) > 64 {
			return
		}
		p, err := l.Placement(PlacementOptions{ForwardTime: 1, BackwardTime: 2, ForwardMemory: 1, BackwardMemory: -1})
		if err != nil {
			t.Fatalf("placement of %q: %v", s, err)
		}
		if p.Devices != l.PP || len(p.Blocks) != 2*len(l.Stages) {
			t.Fatalf("placement of %q: %d devices, %d blocks", s, p.Devices, len(p.Blocks))
		}
	})
}

// FuzzParseArgs: no input panics; an error is one line; what reads
// writes back (Text) to the same values.
func FuzzParseArgs(f *testing.F) {
	f.Add([]byte("# note\n--pipeline-model-parallel-size 4\n--pipeline-model-parallel-layout \"E|t*3|(t|)*5mL\"\n--overlap-moe-expert-parallel-comm\n"))
	f.Add([]byte("--a \"x\\\"y\"\n--b\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ParseArgs(data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of more than one line: %q", err)
			}
			return
		}
		a := &Args{}
		for name, v := range got {
			if v != "" && (strings.ContainsAny(v, " \t\"\\\n") || !isPrint(v)) {
				v = quote(v)
			}
			a.Flags = append(a.Flags, Flag{name, v})
		}
		again, err := ParseArgs(a.Text())
		if err != nil || len(again) != len(got) {
			t.Fatalf("written back %q: %v", a.Text(), err)
		}
		for k, v := range got {
			if again[k] != v {
				t.Fatalf("%s: %q read back as %q", k, v, again[k])
			}
		}
	})
}

func quote(s string) string { return strconv.Quote(s) }

// isPrint says whether s is one word of printable characters.
func isPrint(s string) bool {
	for _, r := range s {
		if !strconv.IsPrint(r) {
			return false
		}
	}
	return true
}
