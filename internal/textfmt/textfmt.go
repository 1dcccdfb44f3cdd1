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
	"unicode/utf8"

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

// SafeWriter passes text to a terminal with its control characters made
// visible: every C0 control but newline and tab, DEL, the C1 controls and
// bytes that are not UTF-8 are written as Go escapes (\x1b, \r, \u009b),
// so that a name holding ESC or BEL cannot move the cursor, recolour or
// retitle the terminal. Text without them passes unchanged, byte for
// byte. A rune split between two writes is held until the next (Flush
// writes what is held at the end).
type SafeWriter struct {
	w       io.Writer
	pending []byte
}

// NewSafeWriter escapes what it passes to w.
func NewSafeWriter(w io.Writer) *SafeWriter { return &SafeWriter{w: w} }

// Unwrap is the writer underneath, for what writes its own controls (the
// progress line).
func (s *SafeWriter) Unwrap() io.Writer { return s.w }

// Write escapes p and writes it; it reports all of p written when the
// escaped text was.
func (s *SafeWriter) Write(p []byte) (int, error) {
	data := p
	if len(s.pending) > 0 {
		data = append(s.pending, p...)
		s.pending = nil
	}
	safe := true
	for _, c := range data {
		if (c < 0x20 && c != '\n' && c != '\t') || c >= 0x7f {
			safe = false
			break
		}
	}
	if safe {
		_, err := s.w.Write(data)
		return len(p), err
	}
	var out []byte
	for i := 0; i < len(data); {
		c := data[i]
		switch {
		case c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7f):
			out = append(out, c)
			i++
		case c < 0x80:
			out = append(out, escape(rune(c))...)
			i++
		default:
			if !utf8.FullRune(data[i:]) {
				s.pending = append(s.pending, data[i:]...)
				i = len(data)
				continue
			}
			r, n := utf8.DecodeRune(data[i:])
			switch {
			case r == utf8.RuneError && n == 1:
				out = fmt.Appendf(out, `\x%02x`, c)
			case r >= 0x80 && r <= 0x9f:
				out = append(out, escape(r)...)
			default:
				out = append(out, data[i:i+n]...)
			}
			i += n
		}
	}
	_, err := s.w.Write(out)
	return len(p), err
}

// Flush writes a rune left incomplete at the end, escaped byte by byte.
func (s *SafeWriter) Flush() error {
	if len(s.pending) == 0 {
		return nil
	}
	var out []byte
	for _, c := range s.pending {
		out = fmt.Appendf(out, `\x%02x`, c)
	}
	s.pending = nil
	_, err := s.w.Write(out)
	return err
}

// escape is a control character as Go writes it in a quoted string.
func escape(r rune) string {
	q := strconv.QuoteRune(r)
	return q[1 : len(q)-1]
}

// SafeText is s with its control characters escaped as SafeWriter does:
// a name to print where a terminal shows it.
func SafeText(s string) string {
	var b strings.Builder
	w := NewSafeWriter(&b)
	w.Write([]byte(s))
	w.Flush()
	return b.String()
}

// OneLine is s for one line of a comment: unchanged where every
// character is printable, else with Go's escapes of a quoted string
// (\n, \x1b, \xff for a byte that is not UTF-8, \" and \\), so that a
// path holding a newline cannot start a line of its own.
func OneLine(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r == utf8.RuneError || !strconv.IsPrint(r) }) {
		return s
	}
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

// PythonString is s as a Python str literal in double quotes, for a
// value written into a Python file: backslash, quote and every character
// that is not printable escaped (\n, \t, \r, \xHH, \uHHHH, \UHHHHHHHH), so
// that no s can end the literal or the line; each byte that is not UTF-8
// becomes the lone surrogate \udcHH, which Python's file-system encoding
// (surrogateescape) turns back into that byte, so a path reaches open()
// as it was given. Where s holds none of these it is Go's %q of s.
func PythonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\udc%02x`, s[i])
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x100 && !strconv.IsPrint(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x10000 && !strconv.IsPrint(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		case !strconv.IsPrint(r):
			fmt.Fprintf(&b, `\U%08x`, r)
		default:
			b.WriteRune(r)
		}
		i += n
	}
	b.WriteByte('"')
	return b.String()
}

// ShellQuote is s as one word for a POSIX shell: unchanged when it holds
// only characters no shell treats specially, else in single quotes (a
// quote inside written '\”).
func ShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@%+=:,./-_", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
