package runtimegen

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tessel-pp/tessel/internal/atomicfile"
	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/limits"
)

// LoadPrograms reads rank0.json … rank<D-1>.json (FileName) from dir, D
// being the first program's device count. Errors name the file.
func LoadPrograms(dir string) ([]*Program, error) {
	read := func(d int) (*Program, error) {
		path := filepath.Join(dir, FileName(d))
		data, err := limits.ReadFile(path, limits.FileBytes)
		if err != nil {
			return nil, err
		}
		p, err := ParseProgram(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		return p, nil
	}
	p0, err := read(0)
	if err != nil {
		return nil, err
	}
	progs := []*Program{p0}
	for d := 1; d < p0.Devices; d++ {
		p, err := read(d)
		if err != nil {
			return nil, err
		}
		progs = append(progs, p)
	}
	return progs, nil
}

// WriteFiles writes files (Files' output) into dir, made when missing:
// shell scripts executable, the rest 0644, replacing files of the same
// names. The files are written all or nothing (package atomicfile), and a
// symbolic link of one of their names is replaced, never written
// through.
func WriteFiles(dir string, files map[string][]byte) error {
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	bundle := make([]atomicfile.File, len(names))
	for k, name := range names {
		perm := fs.FileMode(0o644)
		if strings.HasSuffix(name, ".sh") {
			perm = 0o755
		}
		bundle[k] = atomicfile.File{Name: name, Data: files[name], Perm: perm}
	}
	return atomicfile.WriteFiles(dir, bundle, atomicfile.Options{Replace: true})
}

// WroteText is what tessel gen prints after writing progs (in mode) and
// the workers into dir: the files, the transfers, and the commands that
// run and check them (the script's path quoted for the shell where it
// needs it).
func WroteText(dir string, progs []*Program, mode Mode) string {
	launch := textfmt.ShellQuote(filepath.Join(dir, "launch.sh"))
	return fmt.Sprintf("wrote %s: %s … %s (%s, %d transfers), worker.py, blocks.py, launch.sh\n"+
		"run:   sh %s --out results --iterations 3\n"+
		"check: sh %s check --out results\n",
		dir, FileName(0), FileName(len(progs)-1), mode.Name(), Transfers(progs), launch, launch)
}

// Transfers counts the tensors that cross devices: the programs' sends.
func Transfers(progs []*Program) int {
	n := 0
	for _, p := range progs {
		for _, o := range p.Ops {
			if o.Kind == Send {
				n++
			}
		}
	}
	return n
}

// Contention is a run with channels beside the same run without
// (SimulateContention).
type Contention struct {
	*Result // with channels
	// Free is the makespan without contention; Late how much later the
	// run with channels ends.
	Free, Late int
}

// SimulateContention runs the programs with opt.QueuedLinks and without, to
// say how much later the queues on the links make the run end.
func SimulateContention(progs []*Program, opt SimOptions) (*Contention, error) {
	opt.QueuedLinks = false
	free, err := SimulateWith(progs, opt)
	if err != nil {
		return nil, err
	}
	opt.QueuedLinks = true
	r, err := SimulateWith(progs, opt)
	if err != nil {
		return nil, err
	}
	return &Contention{Result: r, Free: free.Makespan, Late: r.Makespan - free.Makespan}, nil
}
