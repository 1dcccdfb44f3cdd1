// Package limits states the largest sizes tessel accepts from its users —
// devices, blocks, layers, micro-batches, N_R, names, times, memories and
// the bytes of a file — and checks them where input is read, so that a
// size beyond them is one clear error naming the limit, never a crash, an
// exhausted memory or an overflow later on.
//
// The limits are far beyond what the search can schedule well; they are
// chosen so that, within them, every sum tessel forms over a schedule
// (times, memories, counts of instances) stays far from overflow and every
// table it builds fits in memory. docs/commands.md ("Limits") lists them.
//
// The package imports nothing of tessel: every package that reads input
// can use it.
package limits

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"strconv"
)

// The limits. A value above one is refused where it is read.
const (
	// Devices is the most devices of a placement, a cluster or a model.
	Devices = 4096
	// Blocks is the most blocks of one placement (one micro-batch).
	Blocks = 65536
	// Layers is the most layers of a layer profile, and nodes of a graph
	// in Tarnawski et al.'s format.
	Layers = 16384
	// MicroBatches is the most micro-batches of a schedule.
	MicroBatches = 1 << 20
	// Instances is the most block instances of a schedule: micro-batches
	// times blocks.
	Instances = 1 << 23
	// NR is the largest N_R (micro-batches of a repetend) one may ask for.
	NR = 1024
	// Chunks is the most stages per device of a chunked placement.
	Chunks = 16
	// Time is the largest time of one block, transfer or action.
	// Instances·Time is far from overflowing an int64.
	Time = 1_000_000
	// Memory is the largest |memory| of one block, and the largest
	// capacity or budget of one device.
	Memory = 1_000_000_000
	// Name is the longest name (of a placement, block, layer, device), in
	// bytes.
	Name = 256
	// FileBytes is the largest input file tessel reads, schedules apart
	// (placements, models, clusters, timelines, programs, CSV).
	FileBytes = 64 << 20
	// ScheduleFileBytes is the largest schedule file tessel reads (a
	// schedule of Instances instances takes about 450 MB).
	ScheduleFileBytes = 1 << 30
)

// Error is a size beyond its limit: one line naming the size, the value
// and the limit. Commands treat it as bad input.
type Error struct {
	What  string // what was counted, plural: "devices", "micro-batches"
	Got   string // the value, as written
	Limit int64
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s %s is more than tessel's limit of %d (docs/commands.md, Limits)", e.Got, e.What, e.Limit)
}

// Check returns an *Error when got exceeds limit, else nil.
func Check(what string, got, limit int) error {
	if got > limit {
		return &Error{What: what, Got: strconv.Itoa(got), Limit: int64(limit)}
	}
	return nil
}

// Over is the *Error of a measure got past limit: a number of steps or
// units computed from a user's floats.
func Over(what string, got float64, limit int64) *Error {
	text := strconv.FormatFloat(got, 'g', -1, 64)
	if got == math.Trunc(got) && math.Abs(got) < 1e15 {
		text = strconv.FormatFloat(got, 'f', -1, 64)
	}
	return &Error{What: what, Got: text, Limit: limit}
}

// CheckName refuses a name longer than Name bytes; what says whose name
// it is ("placement name", "layer 3's name").
func CheckName(what, name string) error {
	if len(name) > Name {
		return &Error{What: "bytes in the " + what, Got: strconv.Itoa(len(name)), Limit: Name}
	}
	return nil
}

// CheckInstances checks a schedule of n micro-batches of blocks blocks against
// MicroBatches and Instances.
func CheckInstances(n, blocks int) error {
	if err := Check("micro-batches", n, MicroBatches); err != nil {
		return err
	}
	if n > 0 && blocks > Instances/n {
		return &Error{What: fmt.Sprintf("block instances (%d micro-batches × %d blocks)", n, blocks), Got: strconv.FormatInt(int64(n)*int64(blocks), 10), Limit: Instances}
	}
	return nil
}

// ReadFile reads the file at path, refusing one of more than max bytes
// (a regular file by its size, before reading; anything else, such as a
// pipe or a device, after max bytes). Errors start with the path; a
// missing file reads "path: no such file or directory", without the
// operation Go's error would add.
func ReadFile(path string, max int64) ([]byte, error) {
	f, err := Open(path, max)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAtMost(path, f, max)
}

// Open opens the file at path for reading, refusing a regular file of
// more than max bytes (Read then bounds anything else); errors as
// ReadFile's.
func Open(path string, max int64) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, pathError(path, err)
	}
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > max {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, &Error{What: "bytes", Got: strconv.FormatInt(fi.Size(), 10), Limit: max})
	}
	return f, nil
}

// Read reads r to its end, refusing more than max bytes; name names r
// in the error.
func Read(name string, r io.Reader, max int64) ([]byte, error) {
	return readAtMost(name, r, max)
}

func readAtMost(name string, r io.Reader, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, pathError(name, err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s: more than %d bytes is more than tessel's limit for this file (docs/commands.md, Limits)", name, max)
	}
	return data, nil
}

func pathError(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("%s: %w", path, err)
}
