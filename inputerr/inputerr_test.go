package inputerr

import (
	"errors"
	"fmt"
	"testing"
)

func TestWrapAndIs(t *testing.T) {
	base := errors.New("no such file")
	if Wrap(nil) != nil {
		t.Fatal("Wrap(nil) is not nil")
	}
	w := Wrap(base)
	if !Is(w) || !errors.Is(w, base) || w.Error() != "no such file" {
		t.Fatalf("Wrap(base) = %v: not bad input wrapping base", w)
	}
	if Wrap(w) != w {
		t.Fatal("Wrap wraps bad input twice")
	}
	if Is(base) || Is(fmt.Errorf("solver: %w", base)) {
		t.Fatal("a plain error is taken for bad input")
	}
	if !Is(fmt.Errorf("load: %w", Errorf("--x %d", 1))) {
		t.Fatal("wrapped bad input is not seen")
	}
}

func TestAtLeast(t *testing.T) {
	for _, c := range []struct {
		v, min int
		want   string
	}{
		{0, 1, "--n must be at least 1, got 0"},
		{-1, 0, "--n must be at least 0, got -1"},
		{1, 1, ""},
		{5, 0, ""},
	} {
		err := AtLeast("n", c.v, c.min)
		got := ""
		if err != nil {
			got = err.Error()
			if !Is(err) {
				t.Errorf("AtLeast(%d, %d) is not bad input", c.v, c.min)
			}
		}
		if got != c.want {
			t.Errorf("AtLeast(%d, %d) = %q, want %q", c.v, c.min, got, c.want)
		}
	}
	err := AtLeastAll(Bound{"a", 1, 0}, Bound{"b", 0, 1}, Bound{"c", -1, 0})
	if err == nil || err.Error() != "--b must be at least 1, got 0" {
		t.Errorf("AtLeastAll = %v, want the first refusal (--b)", err)
	}
}
