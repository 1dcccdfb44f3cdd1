package render

import (
	"io"

	"github.com/tessel-pp/tessel/schedule"
)

// Format is one way to draw a schedule: its name (tessel render
// --format) and the drawing.
type Format struct {
	Name string
	Draw func(*schedule.Schedule, io.Writer) error
}

// Formats lists every format, in the order tessel render's help shows
// them.
func Formats() []Format {
	return []Format{{"text", Text}, {"svg", SVG}, {"html", HTML}, {"trace", Trace}}
}

// FormatNames are the names of Formats, in their order.
func FormatNames() []string {
	var names []string
	for _, f := range Formats() {
		names = append(names, f.Name)
	}
	return names
}

// Lookup is the format of this name; ok is false for none.
func Lookup(name string) (f Format, ok bool) {
	for _, f := range Formats() {
		if f.Name == name {
			return f, true
		}
	}
	return Format{}, false
}
