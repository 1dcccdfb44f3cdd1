"""Measures a model's layers for `tessel profile` (which runs this file and
writes the model file from what it prints; run it through tessel).

For each layer, in rounds (every layer once per round, so that a slower
stretch of the machine touches every layer alike): the forward (with
autograd recording, as a pipeline stage runs it), the input gradient
(torch.autograd.grad of the layer's output with respect to its input, the
graph kept) and the weight gradient (torch.autograd.backward with the
parameters as inputs), exactly as the workers of `tessel gen` split a
backward. The first --warmup rounds are dropped; of the others, each time's
median and its 10th and 90th percentiles are reported. On CPU with one
thread the clock is the thread's CPU time (time.thread_time_ns), which
other work on a busy machine does not lengthen; with more threads,
time.perf_counter_ns; on CUDA, CUDA events on the current stream, the
device synchronised after each pass.

Bytes: the activation a micro-batch keeps for its backward (every tensor
autograd saved but the parameters, and the output; on CUDA, the growth of
torch.cuda.memory_allocated over the forward), the checkpoint (the layer's
input, what a recomputed micro-batch keeps), the parameters with their
gradients, the optimizer's state, and the output (what crosses to the next
layer); on CUDA also the peak (torch.cuda.max_memory_allocated) over the
layer's forward and backward.

  python3 profile.py --config CONFIG.json --out OUT.json [--device cpu|cuda] [--warmup W] [--repeats R] [--threads T]
  python3 profile.py --user-model FILE.py --out OUT.json ...

A user's model (--user-model) is a Python file with a function model()
that returns (layers, sample): layers a list of (name, torch.nn.Module)
in pipeline order, each taking the previous one's output, and sample the
first layer's input; and, optionally, a function loss(output) of the last
layer's output (default: the mean of its squares).
"""

import argparse
import importlib.util
import json
import os
import platform
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import decoder  # noqa: E402


def percentile(xs, q):
    xs = sorted(xs)
    k = (len(xs) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def stats(xs):
    return {"median": percentile(xs, 0.5), "p10": percentile(xs, 0.1), "p90": percentile(xs, 0.9)}


class Clock:
    """Milliseconds between marks: on CUDA, CUDA events; on CPU with one
    thread, the thread's CPU time (time.thread_time_ns: torch computes in
    the calling thread, and the time other work on a busy machine takes
    the core away does not count); with more threads, perf_counter."""

    def __init__(self, device, threads):
        self.cuda = device.type == "cuda"
        self.now = time.thread_time_ns if threads == 1 else time.perf_counter_ns
        self.name = "cuda events" if self.cuda else "time." + self.now.__name__

    def mark(self):
        if self.cuda:
            ev = torch.cuda.Event(enable_timing=True)
            ev.record()
            return ev
        return self.now()

    def ms(self, a, b):
        if self.cuda:
            b.synchronize()
            return a.elapsed_time(b)
        return (b - a) / 1e6


def storage_key(t):
    return (t.device, t.storage().data_ptr())


class Layer:
    """One layer to measure: its module, its input and the gradient its
    output receives (a fixed random one, or 1 for the loss)."""

    def __init__(self, name, module, x, last, loss):
        self.name, self.module, self.x, self.last, self.loss = name, module, x, last, loss
        self.params = [p for p in module.parameters() if p.requires_grad]
        self.samples = {"forward": [], "input": [], "weight": []}

    def leaf(self):
        if self.x.is_floating_point():
            return self.x.detach().requires_grad_(True)
        return self.x

    def run(self, clock, record):
        x = self.leaf()
        t0 = clock.mark()
        y = self.module(x)
        out = self.loss(y) if self.last else y
        t1 = clock.mark()
        seed = torch.ones_like(out) if self.last else self.seed(out)
        if x.requires_grad:
            torch.autograd.grad([out], [x], [seed], retain_graph=True, allow_unused=True)
        t2 = clock.mark()
        if self.params:
            torch.autograd.backward([out], [seed], inputs=self.params)
        t3 = clock.mark()
        if record:
            self.samples["forward"].append(clock.ms(t0, t1))
            self.samples["input"].append(clock.ms(t1, t2))
            self.samples["weight"].append(clock.ms(t2, t3))
        return y

    def seed(self, y):
        if not hasattr(self, "_seed"):
            g = torch.Generator().manual_seed(decoder.SEED * 17)
            self._seed = torch.randn(y.shape, generator=g, dtype=torch.float32).to(y.device, y.dtype) * 1e-3
        return self._seed

    def bytes(self, device, cfg):
        """The layer's memory: saved activations, checkpoint, parameters,
        optimizer state, output and (CUDA) peak."""
        params = {storage_key(p) for p in self.module.parameters()}
        saved = {}

        def pack(t):
            k = storage_key(t)
            if k not in params:
                saved[k] = t.storage().nbytes()
            return t

        x = self.leaf()
        cuda = device.type == "cuda"
        if cuda:
            torch.cuda.synchronize()
            before = torch.cuda.memory_allocated()
            torch.cuda.reset_peak_memory_stats()
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            y = self.module(x)
            out = self.loss(y) if self.last else y
        saved[storage_key(y)] = y.storage().nbytes()
        activation = sum(saved.values())
        peak = None
        if cuda:
            torch.cuda.synchronize()
            activation = torch.cuda.memory_allocated() - before
            seed = torch.ones_like(out) if self.last else self.seed(out)
            torch.autograd.backward([out], [seed])
            torch.cuda.synchronize()
            peak = torch.cuda.max_memory_allocated() - before
        checkpoint = min(self.x.numel() * self.x.element_size(), activation)
        r = {
            "activation_bytes": activation,
            "checkpoint_bytes": checkpoint,
            "param_bytes": sum(2 * p.numel() * p.element_size() for p in self.module.parameters()),
            "optimizer_bytes": decoder.optimizer_bytes(cfg, self.module) if cfg is not None else 0,
            "output_bytes": 0 if self.last else y.numel() * y.element_size(),
        }
        if peak is not None:
            r["peak_bytes"] = peak
        return r


# The exit status of bad input (tessel profile then exits 2); not 2,
# which argparse takes for its own errors, nor 1, an uncaught exception.
BAD_INPUT = 3


def bad_input(msg):
    """Ends the profiler on input it cannot measure, in one line."""
    print(msg, file=sys.stderr, flush=True)
    sys.exit(BAD_INPUT)


def describe(e):
    """An exception in one line: its type and its message's first line."""
    lines = str(e).strip().splitlines()
    return f"{type(e).__name__}: {lines[0]}" if lines else type(e).__name__


def load_user(path):
    spec = importlib.util.spec_from_file_location("tessel_user_model", path)
    if spec is None:
        bad_input(f"profile: {path}: not a Python file")
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        spec.loader.exec_module(mod)
    except Exception as e:  # the user's file: whatever it raises is bad input
        bad_input(f"profile: {path}: importing it raised {describe(e)}")
    if not callable(getattr(mod, "model", None)):
        bad_input(f"profile: {path}: no function model() returning (layers, sample)")
    try:
        got = mod.model()
    except Exception as e:
        bad_input(f"profile: {path}: model() raised {describe(e)}")
    if not (isinstance(got, tuple) and len(got) == 2):
        bad_input(f"profile: {path}: model() must return (layers, sample), got {type(got).__name__}")
    layers, sample = got
    named, seen = [], {}
    try:
        items = list(layers)
    except TypeError:
        bad_input(f"profile: {path}: model()'s layers must be a list of (name, torch.nn.Module) pairs, got {type(layers).__name__}")
    for i, item in enumerate(items):
        if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str) and isinstance(item[1], torch.nn.Module)):
            bad_input(f"profile: {path}: layers[{i}]: want a (name, torch.nn.Module) pair")
        if not item[0]:
            bad_input(f"profile: {path}: layers[{i}]: an empty name")
        if item[0] in seen:
            bad_input(f"profile: {path}: layers[{i}]: name {item[0]!r} already used by layers[{seen[item[0]]}]")
        seen[item[0]] = i
        named.append(item)
    if not named:
        bad_input(f"profile: {path}: model() returned no layers")
    if not isinstance(sample, torch.Tensor):
        bad_input(f"profile: {path}: the sample input must be a tensor, got {type(sample).__name__}")
    loss = getattr(mod, "loss", None) or (lambda y: (y.float() ** 2).mean())
    return named, sample, loss


def chain(path, mods, sample, loss):
    """Each layer's input (the previous layer's output on the sample),
    every layer run once; a user model that cannot run is bad input."""
    inputs, x = [], sample
    with torch.no_grad():
        for i, (name, m) in enumerate(mods):
            inputs.append(x)
            try:
                x = m(x)
            except Exception as e:
                bad_input(f"profile: {path}: layers[{i}] ({name}) fails on its input: {describe(e)}")
            if not isinstance(x, torch.Tensor):
                bad_input(f"profile: {path}: layers[{i}] ({name}) returns {type(x).__name__}, not a tensor")
        try:
            out = loss(x)
        except Exception as e:
            bad_input(f"profile: {path}: loss() of the last layer's output raised {describe(e)}")
    if not (isinstance(out, torch.Tensor) and out.numel() == 1):
        bad_input(f"profile: {path}: loss() must return a tensor of one element")
    return inputs


def device_memory(device):
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).total_memory
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def device_name(device):
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "cpu"


def progress(msg):
    print(msg, file=sys.stderr, flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", help="decoder config (JSON)")
    ap.add_argument("--user-model", help="a Python file with model() -> (layers, sample)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    if (args.config is None) == (args.user_model is None):
        sys.exit("profile: give --config or --user-model")
    if args.device == "cuda" and not torch.cuda.is_available():
        bad_input("profile: --device cuda, but torch sees no CUDA device")
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    cfg = None
    if args.config:
        with open(args.config) as f:
            try:
                cfg = decoder.Config(json.load(f))
            except ValueError as e:
                bad_input(f"profile: {args.config}: {e}")
        if not decoder.supports(cfg.dtype, device):
            bad_input(f"profile: {cfg.dtype_name} is not supported on {device}")
        mods = [(n, decoder.build(cfg, n, device)) for n in decoder.layer_names(cfg)]
        sample = decoder.tokens(cfg, 0, device)
        loss = lambda y: decoder.loss(cfg, y, 0)  # noqa: E731
        dtype = cfg.dtype_name
    else:
        mods, sample, loss = load_user(args.user_model)
        mods = [(n, m.to(device)) for n, m in mods]
        sample = sample.to(device)
        ps = [p for _, m in mods for p in m.parameters()]
        dtype = str(ps[0].dtype if ps else sample.dtype).replace("torch.", "")
    inputs = chain(args.user_model or args.config, mods, sample, loss)
    layers = [Layer(name, m, inputs[i], i == len(mods) - 1, loss) for i, (name, m) in enumerate(mods)]
    clock = Clock(device, args.threads)
    rounds = args.warmup + args.repeats
    t0 = time.perf_counter()
    for r in range(rounds):
        for layer in layers:
            layer.run(clock, r >= args.warmup)
        what = "warm-up" if r < args.warmup else "measured"
        progress(f"profile: round {r + 1}/{rounds} ({what}), {len(layers)} layers, {time.perf_counter() - t0:.1f} s")
    out = {
        "device": args.device,
        "device_name": device_name(device),
        "device_bytes": device_memory(device),
        "dtype": dtype,
        "torch": torch.__version__,
        "threads": args.threads,
        "warmup": args.warmup,
        "repeats": args.repeats,
        "clock": clock.name,
        "layers": [],
    }
    for layer in layers:
        d = {"name": layer.name}
        for k, xs in layer.samples.items():
            d[k] = stats(xs)
        d.update(layer.bytes(device, cfg))
        out["layers"].append(d)
    with open(args.out, "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
