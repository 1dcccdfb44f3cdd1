package rule

import "github.com/tessel-pp/tessel/spec"

// Unhandled returns the first rule of list that sp switches on and that
// is not among handled (rules are told apart by Name), or nil. A step
// that handles only some rules — a builder, a solver's encoding, a phase
// of the search — names those it handles and asks whether sp switches on
// another: the rule's own On decides, so that a rule added to the list is
// one no step claims by accident, and the rule returned says why the step
// does not apply (Title).
func Unhandled(sp spec.Spec, list []Rule, handled ...Rule) Rule {
	for _, r := range list {
		if !handles(handled, r) && r.On(sp) {
			return r
		}
	}
	return nil
}

func handles(handled []Rule, r Rule) bool {
	for _, h := range handled {
		if h.Name() == r.Name() {
			return true
		}
	}
	return false
}

// Titled is a rule with a title: what it is in words, for the messages of
// the steps that do not handle it ("links that carry one transfer at a
// time").
type Titled interface {
	Title() string
}

// Title is r's title (Titled), or its name where it has none.
func Title(r Rule) string {
	if t, ok := r.(Titled); ok {
		return t.Title()
	}
	return r.Name()
}
