package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/tessel-pp/tessel/profile"
)

// Profile writes tessel profile's report of r: how it was measured, then
// per layer the median times with their spread and the bytes.
func Profile(w io.Writer, r *profile.Result) error {
	m := r.Meta
	what := "user model " + m.UserModel
	if m.Config != nil {
		c := m.Config
		what = fmt.Sprintf("decoder: %d layers, hidden %d, %d heads, FFN %d, sequence %d, micro-batch %d, vocabulary %d, %s, %s",
			c.Layers, c.Hidden, c.Heads, c.FFN, c.Seq, c.Batch, c.Vocab, c.DType, c.Optimizer)
	}
	fmt.Fprintf(w, "tessel profile: %s\n", what)
	fmt.Fprintf(w, "device %s (%s), %s, torch %s, %d thread(s), %s; median of %d rounds after %d warm-up\n\n",
		m.Device, m.DeviceName, m.DType, m.Torch, m.Threads, m.Clock, m.Repeats, m.Warmup)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "layer\tforward ms\tinput ms\tweight ms\tactivation\tcheckpoint\tparams+grads\toptimizer\toutput\t")
	for _, l := range r.Layers {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", l.Name, passText(l.Forward), passText(l.Input), passText(l.Weight),
			profile.Bytes(l.ActivationBytes), profile.Bytes(l.CheckpointBytes), profile.Bytes(l.ParamBytes), profile.Bytes(l.OptimizerBytes), profile.Bytes(l.OutputBytes))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\ntimes: median [10th–90th percentile] in ms\n")
	return err
}

// passText is a pass's median time and its spread.
func passText(p profile.Pass) string {
	return fmt.Sprintf("%.3f [%.3f–%.3f]", p.Median, p.P10, p.P90)
}

// ProfileAgreement writes tessel profile --against's lines: the agreement
// a with the profile in file against, and every time outside its spread.
func ProfileAgreement(w io.Writer, a profile.Agreement, against string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "against %s: %d of %d times within its spread\n", against, a.Within, a.Total)
	for _, s := range a.Outside {
		fmt.Fprintf(&b, "  outside: %s\n", s)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
