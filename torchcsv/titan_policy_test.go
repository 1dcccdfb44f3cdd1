package torchcsv_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/internal/testskip"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/torchcsv"
)

// titanAC is a stand-in of torchtitan's activation_checkpoint module at
// TitanCommit, as far as the bundle uses it: FullAC with its nested
// Config (keyword-only, slotted), build() wired to the owner class by
// __init_subclass__ as torchtitan's Configurable does, and apply() calling
// _wrap_block on every transformer block with base_fqn "layers.N".
const titanAC = `from dataclasses import dataclass


class FullAC:
    @dataclass(kw_only=True, slots=True)
    class Config:
        preserve_rng_state: bool = True

        def build(self):
            return type(self)._owner(self)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "Config" in cls.__dict__:
            if "__slots__" not in cls.__dict__["Config"].__dict__:
                raise TypeError(cls.__name__ + ".Config must use slots")
            cls.__dict__["Config"]._owner = cls

    def __init__(self, config):
        self.config = config

    def _wrap_block(self, module, *, base_fqn=None):
        return ("checkpointed", module)

    def apply(self, blocks):
        return {fqn: self._wrap_block(m, base_fqn=fqn) for fqn, m in blocks.items()}


FullAC.Config._owner = FullAC
`

// A schedule under a per-stage recompute policy: the bundle names every
// stage's first k transformer blocks, and its settings, run against a
// stand-in of torchtitan's FullAC, checkpoint exactly those on every rank;
// without module names, or with fewer transformer blocks than k, it
// refuses.
func TestTitanPolicy(t *testing.T) {
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 4})
	if err != nil {
		t.Fatal(err)
	}
	ks := []int{2, 1, 0, 1}
	q := p.Clone()
	f := 0
	for i := range q.Blocks {
		if q.Blocks[i].Kind == placement.Forward {
			q.Blocks[i].RecomputedLayers = ks[f]
			f++
		}
	}
	res, err := search.Run(context.Background(), spec.Spec{Placement: q, MicroBatches: 4, Memory: 4}, search.Options{})
	if err != nil {
		t.Fatal(err)
	}
	modules := [][]string{{"tok_embeddings", "layers.0", "layers.1"}, {"layers.2", "layers.3"}, {"layers.4", "layers.5"}, {"layers.6", "layers.7", "norm", "output"}}
	b, err := torchcsv.Titan(res.Schedule, torchcsv.TitanOptions{Modules: modules})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"layers.0", "layers.1", "layers.2", "layers.6"}
	if !slices.Equal(b.Recomputed, want) {
		t.Errorf("recomputed %v, want %v", b.Recomputed, want)
	}
	if _, err := torchcsv.Titan(res.Schedule, torchcsv.TitanOptions{}); err == nil || !strings.Contains(err.Error(), "--split") {
		t.Errorf("without module names: %v", err)
	}
	short := [][]string{{"tok_embeddings", "layers.0"}, {"layers.2", "layers.3"}, {"layers.4", "layers.5"}, {"layers.6", "norm"}}
	if _, err := torchcsv.Titan(res.Schedule, torchcsv.TitanOptions{Modules: short}); err == nil || !strings.Contains(err.Error(), "stage 0 recomputes 2 layers, but holds 1 transformer blocks") {
		t.Errorf("too few blocks: %v", err)
	}
	py := string(b.Config("schedule.csv"))
	if !strings.Contains(py, "config.activation_checkpoint = TesselRecompute.Config()") {
		t.Fatalf("settings:\n%s", py)
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		testskip.Skip(t, "no python3: the settings were checked as text only")
	}
	dir := t.TempDir()
	pkg := filepath.Join(dir, "torchtitan", "distributed")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		filepath.Join(dir, "torchtitan", "__init__.py"): "",
		filepath.Join(pkg, "__init__.py"):               "",
		filepath.Join(pkg, "activation_checkpoint.py"):  titanAC,
		filepath.Join(dir, "settings.py"):               py,
	} {
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := `import types
from settings import tessel_pipeline
config = types.SimpleNamespace(training=types.SimpleNamespace(), parallelism=types.SimpleNamespace(), activation_checkpoint=None)
policy = tessel_pipeline(config).activation_checkpoint.build()
out = policy.apply({"layers.%d" % i: i for i in range(8)})
print(" ".join(sorted(k for k, v in out.items() if isinstance(v, tuple))))
`
	cmd := exec.Command(python, "-c", run)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PYTHONPATH="+dir)
	got, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python3: %v\n%s\n%s", err, got, py)
	}
	if string(got) != strings.Join(want, " ")+"\n" {
		t.Errorf("checkpointed %q, want %v", got, want)
	}
}
