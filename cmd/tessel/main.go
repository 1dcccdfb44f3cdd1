// Command tessel searches pipeline schedules for distributed DNN training
// and inference: the time-optimal schedule of a few micro-batches, the
// repetend schedule of the Tessel paper for any number of them, baselines
// to compare against, and per-device programs that run them.
//
// Each command is an options struct and a run function; urfave/cli only
// parses flags and hands over, so every command is testable with buffers.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/internal/safego"
	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/limits"

	// The C allocator tuned for a program that makes a few Z3 contexts.
	_ "github.com/tessel-pp/tessel/z3/tune"
)

func main() {
	ctx, stop := interruptible()
	defer stop()
	os.Exit(run(ctx, os.Args, os.Stdout, os.Stderr))
}

// interruptible is a context that Ctrl-C (or SIGTERM) ends: the command
// then answers with the best it has. After the first signal the default
// handling is back, so that a second Ctrl-C ends the process at once.
func interruptible() (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	return ctx, stop
}

// The exit codes (docs/commands.md, "Exit codes").
const (
	exitOK       = 0
	exitNoAnswer = 1 // the work ran and found no answer (or failed)
	exitBad      = 2 // bad input: flags, files, sizes beyond the limits
	exitCrash    = 3 // a bug: a panic tessel caught
)

// run executes the command line and returns the process exit code: 0 on
// success, 2 on bad input or usage, 1 when the work itself failed, 3 on
// a crash (a panic, a bug of tessel's), after one line asking for a
// report; a crashed command writes no file (they are written last, each
// whole or not at all).
//
// Whatever it prints passes through textfmt.SafeWriter: a name that holds
// ESC or BEL prints escaped, never as a terminal command.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runWith(ctx, args, stdout, stderr)
}

// runWith is run with extra commands beside tessel's (tests add some).
func runWith(ctx context.Context, args []string, stdout, stderr io.Writer, extra ...*cli.Command) int {
	out, errOut := textfmt.NewSafeWriter(stdout), textfmt.NewSafeWriter(stderr)
	defer out.Flush()
	defer errOut.Flush()
	app := newApp(out, errOut)
	app.Commands = append(app.Commands, withUsageErrors(extra)...)
	return runApp(ctx, app, args, errOut)
}

// runApp runs app, recovering a panic as one line and exitCrash.
func runApp(ctx context.Context, app *cli.App, args []string, stderr io.Writer) (code int) {
	defer func() {
		if r := recover(); r != nil {
			c := safego.AsCrash(r)
			fmt.Fprintf(stderr, "tessel: internal error at %s: %s (a bug in tessel: please report it with the command line that caused it)\n", c.Where, oneLine(fmt.Sprint(c.Value)))
			code = exitCrash
		}
	}()
	if err := app.RunContext(ctx, args); err != nil {
		fmt.Fprintf(stderr, "tessel: %s\n", oneLine(err.Error()))
		var ue *usageError
		var le *limits.Error
		if errors.As(err, &ue) || errors.As(err, &le) {
			return exitBad
		}
		return exitNoAnswer
	}
	return exitOK
}

func newApp(stdout, stderr io.Writer) *cli.App {
	return &cli.App{
		Name:  "tessel",
		Usage: "search pipeline schedules for distributed DNN training and inference",
		Description: "A placement pins the blocks of one micro-batch to devices, with time and memory.\n" +
			"tessel finds when every block of every micro-batch runs: the fewest bubbles under a\n" +
			"per-device memory budget, verified independently of the solver.\n\n" +
			"Start with:  tessel placements\n" +
			"             tessel search --placement m-shape --memory 6\n" +
			"             tessel compare --placement m-shape --memory 6 --micro-batches 128\n\n" +
			"Exit codes: 0 an answer, 1 none found, 2 bad input (one line names it; sizes past\n" +
			"their limits too), 3 a crash (a bug: one line asks for a report). Ctrl-C answers at\n" +
			"once with the best schedule so far. docs/commands.md has the limits.",
		Writer:          stdout,
		ErrWriter:       stderr,
		HideHelpCommand: true,
		Commands:        withUsageErrors(commands()),
		ExitErrHandler:  func(*cli.Context, error) {}, // run() reports errors, one line each
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return usageErrorf("%v", err)
		},
	}
}

// commands lists every subcommand, in the order --help shows them.
func commands() []*cli.Command {
	return []*cli.Command{
		placementsCommand(),
		searchCommand(),
		optimalCommand(),
		compareCommand(),
		sweepCommand(),
		verifyCommand(),
		renderCommand(),
		simulateCommand(),
		replanCommand(),
		genCommand(),
		exportCommand(),
		importCommand(),
		partitionCommand(),
		planCommand(),
		profileCommand(),
		measureCommand(),
		genDagCommand(),
	}
}

// withUsageErrors makes a bad flag of any command, or an argument where
// every command takes flags only, a one-line usage error (exit 2) instead
// of a page of help, and checks the flags every command shares the meaning
// of (checkFlags) before it runs.
func withUsageErrors(cmds []*cli.Command) []*cli.Command {
	for _, c := range cmds {
		name, action := c.Name, c.Action
		c.OnUsageError = func(_ *cli.Context, err error, _ bool) error {
			return usageErrorf("%s: %v (see tessel %s --help)", name, err, name)
		}
		c.Before = checkFlags
		hint := ""
		if name == "render" || name == "verify" {
			hint = " (use --schedule FILE)"
		}
		c.Action = func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErrorf("%s: unexpected argument %q%s", name, c.Args().First(), hint)
			}
			return action(c)
		}
	}
	return cmds
}

// flagLimit is the limit that bounds a flag's value whatever the command
// (docs/commands.md, Limits), and what it counts; ok is false for a flag
// without one.
func flagLimit(name string) (what string, limit int, ok bool) {
	switch name {
	case "devices":
		return "devices", limits.Devices, true
	case "micro-batches":
		return "micro-batches", limits.MicroBatches, true
	case "nr":
		return "N_R", limits.NR, true
	case "chunks":
		return "chunks", limits.Chunks, true
	}
	return "", 0, false
}

// checkFlags refuses, for every command alike, values no flag of its kind
// can mean: a negative duration (time limits: 0 is none), an effort
// below -1 (-1: no cap), a number that is not finite, and a size past its
// limit.
func checkFlags(c *cli.Context) error {
	for _, f := range c.Command.Flags {
		name := f.Names()[0]
		if !c.IsSet(name) {
			continue
		}
		switch f.(type) {
		case *cli.DurationFlag:
			if v := c.Duration(name); v < 0 {
				return usageErrorf("--%s must be at least 0, got %v", name, v)
			}
		case *cli.Float64Flag:
			if v := c.Float64(name); math.IsNaN(v) || math.IsInf(v, 0) {
				return usageErrorf("--%s must be a finite number, got %v", name, v)
			}
		case *cli.IntFlag:
			v := c.Int(name)
			if name == "effort" && v < -1 {
				return usageErrorf("--effort must be -1 (no cap), 0 (the default) or a positive cap, got %d", v)
			}
			if what, limit, ok := flagLimit(name); ok {
				if err := limits.Check(what, v, limit); err != nil {
					return usageErrorf("--%s: %v", name, err)
				}
			}
		}
	}
	return nil
}

// usageError marks bad input (flags, files, placements): exit code 2.
type usageError = inputerr.Error

func usageErrorf(format string, args ...any) error { return inputerr.Errorf(format, args...) }

// oneLine folds a multi-line message so that every error is one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}
