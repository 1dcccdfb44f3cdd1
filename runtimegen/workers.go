package runtimegen

import (
	"bytes"
	"embed"
	"fmt"
	"slices"
	"text/template"
)

//go:embed templates/worker.py templates/blocks.py templates/decoder_blocks.py templates/launch.sh
var templates embed.FS

// Backends lists the torch.distributed backends the workers support:
// gloo on CPUs, nccl on GPUs (one per rank).
func Backends() []string { return []string{"gloo", "nccl"} }

// Files returns what a generated runtime consists of, by file name: the
// programs (FileName), worker.py (the executor), blocks.py (an example
// model to replace) and launch.sh (starts every rank). The programs must
// come from one Generate call; backend is one of Backends.
func Files(progs []*Program, backend string) (map[string][]byte, error) {
	if !slices.Contains(Backends(), backend) {
		return nil, fmt.Errorf("unknown backend %q (want one of %v)", backend, Backends())
	}
	if err := Check(progs); err != nil {
		return nil, fmt.Errorf("programs: %w", err)
	}
	files := map[string][]byte{}
	for _, p := range progs {
		b, err := p.Marshal()
		if err != nil {
			return nil, err
		}
		files[FileName(p.Device)] = b
	}
	for _, name := range []string{"worker.py", "blocks.py"} {
		b, err := templates.ReadFile("templates/" + name)
		if err != nil {
			return nil, fmt.Errorf("template %s: %w", name, err)
		}
		files[name] = b
	}
	t, err := template.ParseFS(templates, "templates/launch.sh")
	if err != nil {
		return nil, fmt.Errorf("template launch.sh: %w", err)
	}
	var b bytes.Buffer
	err = t.Execute(&b, struct {
		Devices   int
		Placement string
		Mode      Mode
		Backend   string
	}{progs[0].Devices, progs[0].Placement, progs[0].Mode, backend})
	if err != nil {
		return nil, fmt.Errorf("template launch.sh: %w", err)
	}
	files["launch.sh"] = b.Bytes()
	return files, nil
}
