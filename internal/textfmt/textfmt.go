// Package textfmt formats what tessel's reports share: percentages,
// budgets, integer lists, rounded numbers, JSON, CSV, and tables for
// people (boxed or Markdown).
package textfmt

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// Formats are the table formats of tessel compare and sweep.
func Formats() []string { return []string{"table", "csv", "json", "markdown"} }

// Ext is the file extension of a table format.
func Ext(format string) string {
	switch format {
	case "markdown":
		return "md"
	case "table":
		return "txt"
	}
	return format
}

// Round6 rounds x to 6 decimals, half up.
func Round6(x float64) float64 { return float64(int64(x*1e6+0.5)) / 1e6 }

// Secs is d in seconds, to 6 decimals.
func Secs(d time.Duration) float64 { return Round6(d.Seconds()) }

// Pct is a rate as a percentage with two decimals: 0.25 is "25.00%".
func Pct(x float64) string { return fmt.Sprintf("%.2f%%", 100*x) }

// Budget is a memory budget, "unlimited" for 0 or less.
func Budget(m int) string {
	if m <= 0 {
		return "unlimited"
	}
	return fmt.Sprint(m)
}

// Ints is [4 3 2].
func Ints(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// CommaInts is [4, 3, 2]: a list of integers as tessel verify and
// import print it.
func CommaInts(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// YesNo is "yes" or "no".
func YesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// Ptr is a pointer to a copy of v.
func Ptr[T any](v T) *T { return &v }

// OptFloat is *v with digits decimals, "" for nil.
func OptFloat(v *float64, digits int) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'f', digits, 64)
}

// OptInt is *v, "" for nil.
func OptInt(v *int) string {
	if v == nil {
		return ""
	}
	return strconv.Itoa(*v)
}

// OptBool is *v, "" for nil.
func OptBool(v *bool) string {
	if v == nil {
		return ""
	}
	return strconv.FormatBool(*v)
}

// JSON writes v indented, with a final newline.
func JSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// CSV writes rows as CSV.
func CSV(w io.Writer, rows [][]string) error {
	cw := csv.NewWriter(w)
	if err := cw.WriteAll(rows); err != nil {
		return err
	}
	return cw.Error()
}

// Table renders a table for people: boxed (format "table") or a pipe
// table ("markdown"), cells left-aligned and headers as written.
func Table(w io.Writer, format string, header []string, rows [][]string) error {
	var r tw.Renderer = renderer.NewBlueprint()
	if format == "markdown" {
		r = renderer.NewMarkdown()
	}
	t := tablewriter.NewTable(w,
		tablewriter.WithRenderer(r),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
	)
	t.Header(header)
	if err := t.Bulk(rows); err != nil {
		return err
	}
	return t.Render()
}

// Plain renders rows under a header (upper-cased) as plain left-aligned
// columns, no borders, every line trimmed.
func Plain(header []string, rows [][]string) (string, error) {
	var buf strings.Builder
	t := tablewriter.NewTable(&buf,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders: tw.BorderNone,
			Symbols: tw.NewSymbols(tw.StyleASCII),
			Settings: tw.Settings{
				Separators: tw.Separators{BetweenColumns: tw.Off, BetweenRows: tw.Off},
				Lines:      tw.Lines{ShowHeaderLine: tw.Off},
			},
		})),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
	)
	t.Header(header)
	if err := t.Bulk(rows); err != nil {
		return "", err
	}
	if err := t.Render(); err != nil {
		return "", err
	}
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(buf.String(), "\n"), "\n") {
		b.WriteString(strings.TrimSpace(line) + "\n")
	}
	return b.String(), nil
}
