package render

import "github.com/tessel-pp/tessel/placement"

// Colours of the renderings besides the kinds': unknown kinds grey,
// repetend boundaries red (the paper's Fig. 8), offloads, reloads and
// transfers in muted tones.
const (
	colourOther    = "#9c9c9c"
	colourRepetend = "#d62728"
	colourOffload  = "#76b7b2"
	colourReload   = "#edc948"
	colourTransfer = "#bab0ac"
)

// KindStyle is how the charts draw a block kind: the CSS class of its
// bars and their fill. Forward blue and backward orange after the Tessel
// paper's figures, input green and weight purple after the zero-bubble
// papers' three-colour charts; any other kind "other", grey.
func KindStyle(k placement.Kind) (class, colour string) {
	switch k {
	case placement.Forward:
		return "fwd", "#4e79a7"
	case placement.Backward:
		return "bwd", "#f28e2b"
	case placement.Input:
		return "inp", "#59a14f"
	case placement.Weight:
		return "wgt", "#b07aa1"
	}
	return "other", colourOther
}

// kindColour is KindStyle's colour alone.
func kindColour(k placement.Kind) string {
	_, c := KindStyle(k)
	return c
}
