package runtimegen

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// LoadPrograms reads rank0.json … rank<D-1>.json (FileName) from dir, D
// being the first program's device count. Errors name the file.
func LoadPrograms(dir string) ([]*Program, error) {
	read := func(d int) (*Program, error) {
		path := filepath.Join(dir, FileName(d))
		data, err := os.ReadFile(path)
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return nil, fmt.Errorf("%s: %v", path, err)
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

// WriteFiles writes files (Files' output) into dir, which must exist, in
// name order: shell scripts executable, the rest 0644, replacing files of
// the same names.
func WriteFiles(dir string, files map[string][]byte) error {
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		perm := fs.FileMode(0o644)
		if strings.HasSuffix(name, ".sh") {
			perm = 0o755
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, files[name], perm); err != nil {
			return err
		}
		if err := os.Chmod(path, perm); err != nil { // WriteFile keeps an existing file's mode
			return err
		}
	}
	return nil
}

// WroteText is what tessel gen prints after writing progs (in mode) and
// the workers into dir: the files, the transfers, and the commands that
// run and check them.
func WroteText(dir string, progs []*Program, mode Mode) string {
	launch := filepath.Join(dir, "launch.sh")
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

// SimulateContention runs the programs with opt.Channels and without, to
// say how much later the queues on the links make the run end.
func SimulateContention(progs []*Program, opt SimOptions) (*Contention, error) {
	opt.Channels = false
	free, err := SimulateWith(progs, opt)
	if err != nil {
		return nil, err
	}
	opt.Channels = true
	r, err := SimulateWith(progs, opt)
	if err != nil {
		return nil, err
	}
	return &Contention{Result: r, Free: free.Makespan, Late: r.Makespan - free.Makespan}, nil
}
