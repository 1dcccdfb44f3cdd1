package render

import (
	"slices"
	"testing"
)

func TestFormats(t *testing.T) {
	if got, want := FormatNames(), []string{"text", "svg", "html", "trace"}; !slices.Equal(got, want) {
		t.Fatalf("FormatNames() = %v, want %v", got, want)
	}
	for _, name := range FormatNames() {
		if f, ok := Lookup(name); !ok || f.Name != name || f.Draw == nil {
			t.Errorf("Lookup(%q) = %v, %v", name, f.Name, ok)
		}
	}
	if _, ok := Lookup("png"); ok {
		t.Error("Lookup found a format that does not exist")
	}
}
