package compare

import (
	"bytes"

	"github.com/tessel-pp/tessel/internal/textfmt"
)

// File is one file of tessel sweep --out-dir: its name and its content.
type File struct {
	Name string
	Data []byte
}

// SweepFileNames are the names of the files Files writes for format: the
// table and the chart of Fig. 11, then of Fig. 12.
func SweepFileNames(format string) []string {
	ext := textfmt.Ext(format)
	return []string{"fig11." + ext, "fig11.svg", "fig12." + ext, "fig12.svg"}
}

// Files are the sweep's tables in format and its SVG line charts, one
// pair per figure (SweepFileNames), as tessel sweep --out-dir writes them.
func (o *SweepResult) Files(format string) ([]File, error) {
	var files []File
	for _, f := range []*Figure{&o.Fig11, &o.Fig12} {
		var table, svg bytes.Buffer
		if err := f.Write(&table, format, format == "json"); err != nil {
			return nil, err
		}
		if err := f.Chart().WriteSVG(&svg); err != nil {
			return nil, err
		}
		files = append(files, File{"fig" + f.Figure + "." + textfmt.Ext(format), table.Bytes()}, File{"fig" + f.Figure + ".svg", svg.Bytes()})
	}
	return files, nil
}

// Files are the latency sweep's table in format, its throughput chart
// and, where it has one, its latency chart, as tessel sweep --latency
// --out-dir writes them.
func (r *LatencyResult) Files(format string) ([]File, error) {
	var table, svg bytes.Buffer
	if err := r.Write(&table, format); err != nil {
		return nil, err
	}
	if err := r.Chart().WriteSVG(&svg); err != nil {
		return nil, err
	}
	files := []File{{"latency." + textfmt.Ext(format), table.Bytes()}, {"latency.svg", svg.Bytes()}}
	if lc := r.LatencyChart(); lc != nil {
		var b bytes.Buffer
		if err := lc.WriteSVG(&b); err != nil {
			return nil, err
		}
		files = append(files, File{"latency-max.svg", b.Bytes()})
	}
	return files, nil
}
