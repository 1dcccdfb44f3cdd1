"""Runs one rank's program of a tessel schedule on torch.distributed.

Written by `tessel gen` beside the programs (rank<R>.json), blocks.py (the
model) and launch.sh (which starts every rank). Each rank executes its
program op by op:

  compute, collective  run a block: a forward block through the model's
                       module (kept with its activations per micro-batch);
                       a backward block as the backward of its forward
                       block with the received gradient; an input block
                       as the gradient of its forward's inputs only, the
                       graph kept; a weight block, later, as the gradient
                       of its forward's weights from what the input block
                       kept. A collective is a block on a device group,
                       whose module talks to the group (all_gather,
                       all_reduce)
  send, recv           point-to-point; blocking (send/recv) or posted
                       (isend/irecv), as the program's mode says, with the
                       transfer's tag
  wait                 waits for a posted send or receive
  offload              copies what a forward block saved for its backward
                       (every tensor autograd saved but the parameters, its
                       input and its output) to host memory, pinned and on
                       a side stream where CUDA is present, and frees it on
                       the device once copied (its storage shrinks to 0)
  reload               copies it back (on the side stream); the forward's
                       first gradient block waits for the copy, and fails
                       loudly if it finds a tensor still offloaded
  recompute            runs a forward block again from the checkpoint its
                       first run kept (its inputs and the random state):
                       a forward that the program recomputes runs first
                       without autograd, saving nothing else

The programs put every pair of ranks' sends and receives in the same order,
so they cannot deadlock (see the runtimegen package of tessel).

Each run trains --warmup W iterations, then --iterations K: the program
once per iteration, then an optimizer step (Model.optimizer) and zeroed
gradients. Every rank reports the time per iteration after the first,
which carries one-time costs (lazy imports, allocations); only the K
iterations after the warm-up are saved and traced.

With several --programs, --interleave makes their iterations take turns
(one of each, then the next), so that a change of the machine's load
touches every schedule alike.

With --trace, every rank also writes trace<R>.json beside its results:
for each of the K iterations, which all ranks start together (a barrier),
the start and end of every op of its program (compute, send, recv, wait,
offload, reload, recompute), in nanoseconds after the iteration's start,
and the optimizer step's; on CPU from time.perf_counter_ns, on CUDA from
CUDA events on the compute stream. `tessel measure` reads them.

  python3 worker.py run --programs DIR --out DIR [--warmup W] [--iterations K] [--trace] [--backend gloo|nccl]
      (one rank; torch.distributed.run sets RANK, WORLD_SIZE, MASTER_*)
  python3 worker.py check --programs DIR --out DIR
      runs the same model and optimizer in one process, the warm-up and
      as many iterations as the ranks saved, and compares every
      parameter's gradient (and every loss) of every saved iteration with
      theirs (to Model.tolerance(), where the model gives one)

--programs and --out may be repeated, in pairs: one launch (and one check)
then runs several schedules of the same device count in turn, each with
this directory's blocks.py.
"""

import argparse
import contextlib
import json
import os
import socket
import sys
import time

import torch
import torch.distributed as dist

import blocks as user


def tensor_name(src, dst, micro):
    return f"{src}->{dst}@{micro}"


def load_program(dirname, rank):
    with open(os.path.join(dirname, f"rank{rank}.json")) as f:
        return json.load(f)


# What each block kind computes: (gradient, input gradient, weight
# gradient), as in tessel's table of kinds (placement.Kind.Info).
KINDS = {
    "forward": (False, False, False),
    "backward": (True, True, True),
    "input": (True, True, False),
    "weight": (True, False, True),
}


def has_backward(blocks, forward):
    return any(KINDS[b["kind"]][0] and b.get("forward") == forward for b in blocks)


class Rank:
    """One rank executing its program."""

    def __init__(self, prog, backend):
        self.prog = prog
        self.rank = prog["device"]
        self.blocking = prog["mode"] == "blocking"
        self.info = {b["id"]: b for b in prog["blocks"]}
        self.device = torch.device("cpu")
        if backend == "nccl":
            self.device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", self.rank)))
            torch.cuda.set_device(self.device)
        self.model = user.Model(prog["blocks"], prog["groups"], self.device)
        # Every rank creates every group, in the same order.
        self.groups = {tuple(g): dist.new_group(g) for g in prog["groups"]}
        self.modules = {}
        for b in prog["blocks"]:
            if b["kind"] == "forward" and self.rank in b["devices"]:
                devs = b["devices"]
                if len(devs) == 1:
                    self.modules[b["id"]] = self.model.module(b["id"])
                else:
                    self.modules[b["id"]] = self.model.module(
                        b["id"], self.groups[tuple(devs)], devs.index(self.rank), len(devs))
        params = [prm for m in self.modules.values() for prm in m.parameters()]
        self.optimizer = self.model.optimizer(params) if params else None
        self.param_storages = {prm.storage().data_ptr() for prm in params}
        # The forward instances this program offloads and recomputes.
        self.offloads = {(op["block"], op["micro"]) for op in prog["ops"] if op["op"] == "offload"}
        self.recomputes = {(op["block"], op["micro"]) for op in prog["ops"] if op["op"] == "recompute"}
        self.cuda = self.device.type == "cuda"
        self.side = torch.cuda.Stream(self.device) if self.cuda else None
        self.uses0 = {}  # name -> uses in one iteration (sends and consumers)
        for op in prog["ops"]:
            if op["op"] == "send":
                self.uses0[op["tensor"]] = self.uses0.get(op["tensor"], 0) + 1
            elif op["op"] in ("compute", "collective"):
                for p in self.info[op["block"]]["inputs"]:
                    if p["role"] != "saved":
                        name = tensor_name(p["block"], op["block"], op["micro"])
                        self.uses0[name] = self.uses0.get(name, 0) + 1

    def run(self, trace=None):
        """One iteration: the program, every gradient accumulated into the
        parameters' .grad. With trace (a Tracer), each op's start and
        end are recorded."""
        self.tensors = {}  # name -> tensor held here
        self.uses = dict(self.uses0)  # name -> uses left here
        self.pending = {}  # tag -> (work, name, tensor)
        self.saved = {}  # (forward block, micro) -> (input leaves, output, loss)
        self.kept = {}  # (forward block, micro) -> (outputs, seeds) an input block kept for its weight block
        self.losses = {}  # "block@micro" -> loss
        self.holding = {}  # (forward block, micro) -> tensors an offload moves
        self.host = {}  # (forward block, micro) -> [(storage, host copy, size)]
        self.copies = {}  # (forward block, micro) -> CUDA event of its last copy
        self.checkpoints = {}  # (forward block, micro) -> (inputs, random state)
        self.offloaded_bytes, self.recomputed = 0, 0  # in this iteration
        for op in self.prog["ops"]:
            if trace is None:
                getattr(self, "op_" + op["op"])(op)
            else:
                trace.mark()
                getattr(self, "op_" + op["op"])(op)
                trace.mark()
        if self.pending:
            sys.exit(f"worker: rank {self.rank}: transfers {sorted(self.pending)} were never waited for")
        if self.saved or self.kept or self.checkpoints:
            sys.exit(f"worker: rank {self.rank}: {len(self.saved) + len(self.kept) + len(self.checkpoints)} forward passes never finished their backward")
        if self.host:
            sys.exit(f"worker: rank {self.rank}: {sorted(self.host)} offloaded and never reloaded")

    def step(self):
        """The optimizer step between iterations, then zeroed gradients."""
        if self.optimizer is not None:
            self.optimizer.step()
            self.optimizer.zero_grad(set_to_none=False)

    # Tensors ---------------------------------------------------------------

    def put(self, name, t):
        if self.uses.get(name, 0) > 0:
            self.tensors[name] = t

    def take(self, name):
        t = self.tensors[name]
        self.uses[name] -= 1
        if self.uses[name] == 0:
            del self.tensors[name]
        return t

    def token(self):
        return torch.zeros(1, dtype=self.model.dtype(), device=self.device)

    # Operations ------------------------------------------------------------

    def op_compute(self, op):
        b = self.info[op["block"]]
        gradient, inputs, weights = KINDS[b["kind"]]
        if not gradient:
            self.forward(b, op["micro"])
        elif inputs and weights:
            self.backward(b, op["micro"])
        elif inputs:
            self.backward_input(b, op["micro"])
        else:
            self.backward_weight(b, op["micro"])

    op_collective = op_compute

    def op_send(self, op):
        t = self.take(op["tensor"]).contiguous()
        if self.blocking:
            dist.send(t, op["peer"], tag=op["tag"])
        else:
            self.pending[op["tag"]] = (dist.isend(t, op["peer"], tag=op["tag"]), None, t)

    def op_recv(self, op):
        src, dst = op["tensor"].rsplit("@", 1)[0].split("->", 1)
        role = next(p["role"] for p in self.info[dst]["inputs"] if p["block"] == src)
        buf = torch.empty(self.model.shape(role, src, dst), dtype=self.model.dtype(), device=self.device)
        if self.blocking:
            dist.recv(buf, op["peer"], tag=op["tag"])
            self.put(op["tensor"], buf)
        else:
            self.pending[op["tag"]] = (dist.irecv(buf, op["peer"], tag=op["tag"]), op["tensor"], buf)

    def op_wait(self, op):
        work, name, t = self.pending.pop(op["tag"])
        work.wait()
        if name is not None:
            self.put(name, t)

    def op_offload(self, op):
        """Copies the instance's saved tensors to host memory and frees
        them here: each storage once, whole (views share it)."""
        key = (op["block"], op["micro"])
        storages = {}
        for t in self.holding.pop(key):
            st = t.storage()
            if st.size() > 0:
                storages.setdefault(st.data_ptr(), st)
        moved = []
        if self.cuda:
            self.side.wait_stream(torch.cuda.current_stream(self.device))
        for st in storages.values():
            flat = torch.empty(0, dtype=st.dtype, device=self.device).set_(st)
            host = torch.empty(flat.shape, dtype=st.dtype, pin_memory=self.cuda)
            if self.cuda:
                with torch.cuda.stream(self.side):
                    host.copy_(flat, non_blocking=True)
                # The allocator reuses the memory only once the side
                # stream's copy is done.
                flat.record_stream(self.side)
            else:
                host.copy_(flat)
            moved.append((st, host, st.size()))
            self.offloaded_bytes += st.size() * st.element_size()
            del flat
            st.resize_(0)
        self.host[key] = moved
        self.event(key)

    def op_reload(self, op):
        """Copies an offloaded instance's tensors back into their storages."""
        key = (op["block"], op["micro"])
        moved = self.host.pop(key, None)
        if moved is None:
            sys.exit(f"worker: rank {self.rank}: reload of {key[0]}@{key[1]}, which is not offloaded")
        # On CUDA the side stream runs its copies in order: this one
        # reads the host copy after the offload wrote it.
        self.copies.pop(key, None)
        for st, host, size in moved:
            st.resize_(size)
            flat = torch.empty(0, dtype=st.dtype, device=self.device).set_(st)
            if self.cuda:
                self.side.wait_stream(torch.cuda.current_stream(self.device))
                with torch.cuda.stream(self.side):
                    flat.copy_(host, non_blocking=True)
            else:
                flat.copy_(host)
        self.event(key)

    def event(self, key):
        if self.cuda:
            ev = torch.cuda.Event()
            ev.record(self.side)
            self.copies[key] = ev

    def wait_copy(self, key):
        """Makes the compute stream wait for the instance's last copy."""
        ev = self.copies.pop(key, None)
        if ev is not None:
            torch.cuda.current_stream(self.device).wait_event(ev)

    def op_recompute(self, op):
        key = (op["block"], op["micro"])
        inputs, rng = self.checkpoints.pop(key)
        b = self.info[op["block"]]
        leaves = {}
        for src, x in inputs:
            if src is not None:
                leaves[src] = x.requires_grad_(True)
        # The random state of the first run, in a fork: what runs after
        # draws as if nothing had run again (torch.utils.checkpoint does
        # the same).
        with torch.random.fork_rng(devices=[self.device] if self.cuda else []), torch.enable_grad():
            torch.set_rng_state(rng[0])
            if self.cuda:
                torch.cuda.set_rng_state(rng[1], self.device)
            y = self.modules[b["id"]]([x for _, x in inputs])
            loss = None
            if not any(p["role"] == "activation" for p in b["outputs"]):
                loss = self.model.loss(b["id"], y, op["micro"])
        self.saved[key] = (leaves, y, loss)
        self.recomputed += 1

    # Blocks ------------------------------------------------------------------

    def forward(self, b, micro):
        train = has_backward(self.prog["blocks"], b["id"])
        key = (b["id"], micro)
        offload, recompute = train and key in self.offloads, train and key in self.recomputes
        leaves, inputs, checkpoint = {}, [], []
        for p in b["inputs"]:
            if p["role"] == "saved":
                continue
            t = self.take(tensor_name(p["block"], b["id"], micro))
            if p["role"] == "activation":
                if offload:
                    # Its own copy: the tensor may be another block's
                    # output on this device, which that block keeps.
                    t = t.clone()
                leaf = t.detach().requires_grad_(train and not recompute)
                leaves[p["block"]] = leaf
                inputs.append(leaf)
                checkpoint.append((p["block"], t.detach()))
        if not inputs:
            inputs = [self.model.input(micro)]
            checkpoint = [(None, inputs[0])]
        if recompute:
            rng = (torch.get_rng_state(), torch.cuda.get_rng_state(self.device) if self.cuda else None)
            self.checkpoints[key] = (checkpoint, rng)
        held = []

        def pack(t):
            if t.storage().data_ptr() not in self.param_storages:
                held.append(t)
            return t

        def unpack(t):
            if t.numel() > 0 and t.storage().size() == 0:
                sys.exit(f"worker: rank {self.rank}: the backward of {b['id']}@{micro} needs a tensor that is still offloaded")
            return t

        hooks = torch.autograd.graph.saved_tensors_hooks(pack, unpack) if offload else contextlib.nullcontext()
        with torch.set_grad_enabled(train and not recompute), hooks:
            y = self.modules[b["id"]](inputs)
            loss = None
            if not any(p["role"] == "activation" for p in b["outputs"]):
                loss = self.model.loss(b["id"], y, micro)
                self.losses[f"{b['id']}@{micro}"] = loss.item()
        if train and not recompute:
            self.saved[key] = (leaves, y, loss)
        if offload:
            self.holding[key] = held + list(leaves.values()) + [y]
        for p in b["outputs"]:
            name = tensor_name(b["id"], p["block"], micro)
            if p["role"] == "activation":
                # An offloaded output leaves this device's memory: what
                # the next block receives or reads here is a copy.
                self.put(name, y.detach().clone() if offload else y.detach())
            elif p["role"] == "order":
                self.put(name, self.token())

    def seeds(self, b, micro, y, loss):
        """Takes a gradient block's inputs; returns the tensors to
        differentiate (the loss, the forward's output) and their seeds (1,
        the sum of the received gradients of the output)."""
        grads = []
        for p in b["inputs"]:
            if p["role"] == "saved":
                continue
            t = self.take(tensor_name(p["block"], b["id"], micro))
            if p["role"] == "gradient":
                grads.append(t)
        outs, seeds = [], []
        if loss is not None:
            outs.append(loss)
            seeds.append(torch.ones_like(loss))
        if grads:
            outs.append(y)
            seeds.append(sum(grads))
        return outs, seeds

    def send_gradients(self, b, micro, leaves, grad):
        """Puts the gradient of every input for the blocks that wait for it
        (grad(leaf) is None where none flowed), and order tokens."""
        for p in b["outputs"]:
            name = tensor_name(b["id"], p["block"], micro)
            if p["role"] == "gradient":
                leaf = leaves[self.info[p["block"]]["forward"]]
                g = grad(leaf)
                self.put(name, g if g is not None else torch.zeros_like(leaf))
            elif p["role"] == "order":
                self.put(name, self.token())

    def backward(self, b, micro):
        self.reloaded(b, micro)
        leaves, y, loss = self.saved.pop((b["forward"], micro))
        outs, seeds = self.seeds(b, micro, y, loss)
        if outs:
            torch.autograd.backward(outs, seeds)
        self.send_gradients(b, micro, leaves, lambda leaf: leaf.grad)

    def backward_input(self, b, micro):
        """The gradient of the forward's inputs only. The autograd engine
        runs only the part of the graph that leads to them (the matrix
        products for the weights' gradients are skipped); the graph is kept
        for the weight block."""
        self.reloaded(b, micro)
        leaves, y, loss = self.saved.pop((b["forward"], micro))
        outs, seeds = self.seeds(b, micro, y, loss)
        got = {}
        xs = list(leaves.values())
        if outs and xs:
            gs = torch.autograd.grad(outs, xs, seeds, retain_graph=True, allow_unused=True)
            got = {id(x): g for x, g in zip(xs, gs)}
        self.kept[(b["forward"], micro)] = (outs, seeds)
        self.send_gradients(b, micro, leaves, lambda leaf: got.get(id(leaf)))

    def reloaded(self, b, micro):
        """Before the first gradient block of a forward instance: its
        reload must be issued (and, on CUDA, the compute stream waits for
        the copy)."""
        key = (b["forward"], micro)
        if key in self.host:
            sys.exit(f"worker: rank {self.rank}: {b['id']}@{micro} runs while {key[0]}@{micro} is offloaded")
        if self.cuda:
            self.wait_copy(key)

    def backward_weight(self, b, micro):
        """The gradient of the forward's weights, accumulated into their
        .grad, from the outputs and seeds the input block kept: the engine
        runs only the part of the graph that leads to the weights, and then
        frees it."""
        outs, seeds = self.kept.pop((b["forward"], micro))
        self.seeds(b, micro, None, None)  # takes order tokens, if any
        params = [prm for prm in self.modules[b["forward"]].parameters() if prm.requires_grad]
        if outs and params:
            torch.autograd.backward(outs, seeds, inputs=params)
        self.send_gradients(b, micro, {}, lambda leaf: None)

    def grads(self):
        """Every parameter's gradient held here: name -> (grad, rows), rows
        being the slice of dimension 0 a group member holds, or None."""
        out = {}
        for block, m in sorted(self.modules.items()):
            for pname, prm in m.named_parameters():
                g = prm.grad if prm.grad is not None else torch.zeros_like(prm)
                # A copy: the optimizer zeroes .grad in place.
                out[f"{block}.{pname}"] = (g.detach().cpu().clone(), m.shard_rows)
        return out


class Tracer:
    """The start and end of every op of one iteration: marks in pairs, in
    nanoseconds after start() (time.perf_counter_ns; on CUDA, events on
    the compute stream, read once the iteration is over)."""

    def __init__(self, device):
        self.cuda = device.type == "cuda"

    def start(self):
        self.marks = []
        if self.cuda:
            torch.cuda.synchronize()
            self.t0 = torch.cuda.Event(enable_timing=True)
            self.t0.record()
        self.host0 = time.perf_counter_ns()

    def mark(self):
        if self.cuda:
            ev = torch.cuda.Event(enable_timing=True)
            ev.record()
            self.marks.append(ev)
        else:
            self.marks.append(time.perf_counter_ns() - self.host0)

    def times(self):
        """The marks as nanoseconds after start()."""
        if not self.cuda:
            return self.marks
        torch.cuda.synchronize()
        return [int(self.t0.elapsed_time(ev) * 1e6) for ev in self.marks]


def pairs(args):
    """The (programs, out) directories of each schedule to run or check."""
    programs = args.programs or [os.path.dirname(os.path.abspath(__file__))]
    outs = args.out or []
    if args.command == "check" and len(outs) != len(programs):
        sys.exit(f"check: {len(programs)} --programs but {len(outs)} --out")
    if outs and len(outs) != len(programs):
        sys.exit(f"worker: {len(programs)} --programs but {len(outs)} --out (give one --out per --programs, or none)")
    return list(zip(programs, outs or [""] * len(programs)))


class Schedule:
    """One schedule's run on this rank: its Rank, what it saves and how
    long its iterations take."""

    def __init__(self, prog, out, args):
        torch.manual_seed(0)
        self.prog, self.out, self.args = prog, out, args
        self.r = Rank(prog, args.backend)
        self.tracer = Tracer(self.r.device) if args.trace else None
        self.results, self.times, self.traced = [], [], []

    def iteration(self, kept):
        """One training iteration: saved (and traced) when kept."""
        t = time.perf_counter()
        r, tracer = self.r, self.tracer if kept else None
        if tracer is not None:
            dist.barrier()  # every rank starts the iteration together
            tracer.start()
        r.run(tracer)
        if kept:
            self.results.append({"grads": r.grads(), "losses": r.losses})
        if tracer is not None:
            tracer.mark()
            r.step()
            tracer.mark()
            self.traced.append((tracer.host0, tracer.times()))
        else:
            r.step()
        dist.barrier()  # an iteration ends when every rank's ends
        self.times.append(time.perf_counter() - t)

    def finish(self, rank):
        """Saves the results (and the trace) and reports."""
        if self.out:
            os.makedirs(self.out, exist_ok=True)
            torch.save({"warmup": self.args.warmup, "iterations": self.results}, os.path.join(self.out, f"result{rank}.pt"))
            if self.tracer is not None:
                write_trace(os.path.join(self.out, f"trace{rank}.json"), self.prog, self.r, self.traced, self.args)
        timing = "one iteration"
        if len(self.times) > 1:
            per = sum(self.times[1:]) / (len(self.times) - 1)
            timing = f"{len(self.times)} iterations, {per * 1e3:.1f} ms per iteration after the first"
        memory = ""
        if self.r.offloaded_bytes or self.r.recomputed:
            memory = f", {self.r.offloaded_bytes} bytes offloaded and {self.r.recomputed} forwards recomputed per iteration"
        print(f"worker: rank {rank}: {self.prog['placement']}: {len(self.prog['ops'])} ops, {timing}{memory}", flush=True)


def run(args):
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    todo = [(load_program(d, rank), out) for d, out in pairs(args)]
    for prog, _ in todo:
        if prog["devices"] != world:
            sys.exit(f"worker: the programs of {prog['placement']} are for {prog['devices']} ranks, WORLD_SIZE is {world}")
    dist.init_process_group(args.backend)
    total = args.warmup + args.iterations
    if args.interleave:
        # The schedules take turns, an iteration each: a change of the
        # machine's load touches every schedule alike.
        runs = [Schedule(prog, out, args) for prog, out in todo]
        for it in range(total):
            for s in runs:
                s.iteration(it >= args.warmup)
        for s in runs:
            s.finish(rank)
    else:
        for prog, out in todo:
            s = Schedule(prog, out, args)
            for it in range(total):
                s.iteration(it >= args.warmup)
            s.finish(rank)
    dist.destroy_process_group()


def write_trace(path, prog, r, traced, args):
    """One rank's trace: per iteration, its start (time.perf_counter_ns,
    which ranks on one host share) and [start, end] of every op of its
    program in order and of the optimizer step, in ns after the start."""
    n = len(prog["ops"])
    its = []
    for t0, marks in traced:
        ops = [marks[2 * k:2 * k + 2] for k in range(n)]
        its.append({"start": t0, "ops": ops, "step": marks[2 * n:2 * n + 2]})
    doc = {
        "rank": r.rank,
        "placement": prog["placement"],
        "micro_batches": prog["micro_batches"],
        "ops": n,
        "host": socket.gethostname(),
        "device": str(r.device),
        "backend": args.backend,
        "dtype": str(r.model.dtype()).replace("torch.", ""),
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "clock": "cuda events" if r.cuda else "time.perf_counter_ns",
        "warmup": args.warmup,
        "iterations": its,
    }
    with open(path, "w") as f:
        json.dump(doc, f)


def reference(prog, iterations):
    """The same model in one process: every micro-batch through every block
    in dependency order, the sum of the losses differentiated at once, then
    the optimizer step; per iteration, every gradient and every loss."""
    model = user.Model(prog["blocks"], prog["groups"])
    blocks = [b for b in prog["blocks"] if b["kind"] == "forward"]
    modules = {b["id"]: model.module(b["id"]) for b in blocks}
    # Kahn's algorithm over activation dependencies, in block order.
    order, done = [], set()
    while len(order) < len(blocks):
        for b in blocks:
            if b["id"] not in done and all(
                    p["block"] in done for p in b["inputs"] if p["role"] == "activation"):
                order.append(b)
                done.add(b["id"])
                break
        else:
            sys.exit("check: the forward blocks have a cycle")
    train = any(KINDS[b["kind"]][0] for b in prog["blocks"])
    optimizer = model.optimizer([prm for m in modules.values() for prm in m.parameters()])
    results = []
    for _ in range(iterations):
        losses = {}
        for micro in range(prog["micro_batches"]):
            out, total = {}, 0
            for b in order:
                inputs = [out[p["block"]] for p in b["inputs"] if p["role"] == "activation"]
                y = modules[b["id"]](inputs or [model.input(micro)])
                out[b["id"]] = y
                if not any(p["role"] == "activation" for p in b["outputs"]):
                    loss = model.loss(b["id"], y, micro)
                    losses[f"{b['id']}@{micro}"] = loss.item()
                    total = total + loss
            if train:
                total.backward()
        grads = {}
        for block, m in modules.items():
            for pname, prm in m.named_parameters():
                g = prm.grad if prm.grad is not None else torch.zeros_like(prm)
                grads[f"{block}.{pname}"] = g.detach().clone()
        results.append((grads, losses))
        optimizer.step()
        optimizer.zero_grad(set_to_none=False)
    return results


def check_one(programs, out):
    """Compares one run's saved results with the reference; returns the
    differences, one line each, and a summary."""
    prog = load_program(programs, 0)
    got = [torch.load(os.path.join(out, f"result{rank}.pt")) for rank in range(prog["devices"])]
    iterations = len(got[0]["iterations"])
    warmup = got[0].get("warmup", 0)
    if any(len(g["iterations"]) != iterations or g.get("warmup", 0) != warmup for g in got):
        return [f"the ranks saved different numbers of iterations: {[(g.get('warmup', 0), len(g['iterations'])) for g in got]}"], ""
    rtol, atol = 1e-9, 1e-12
    model = user.Model(prog["blocks"], prog["groups"])
    if hasattr(model, "tolerance"):
        rtol, atol = model.tolerance()
    bad = []
    for it, (want, want_losses) in enumerate(reference(prog, warmup + iterations)[warmup:]):
        covered = {name: torch.zeros(g.shape[0], dtype=torch.bool) for name, g in want.items()}
        seen = set()
        for rank in range(prog["devices"]):
            res = got[rank]["iterations"][it]
            for name, (g, rows) in sorted(res["grads"].items()):
                lo, hi = rows if rows is not None else (0, want[name].shape[0])
                if not torch.allclose(g, want[name][lo:hi], rtol=rtol, atol=atol):
                    err = (g - want[name][lo:hi]).abs().max().item()
                    bad.append(f"iteration {it}: rank {rank}: {name}[{lo}:{hi}] differs by up to {err:.3g}")
                covered[name][lo:hi] = True
            for key, loss in res["losses"].items():
                if key not in want_losses:
                    bad.append(f"iteration {it}: rank {rank}: loss {key} has no counterpart in the reference")
                elif abs(loss - want_losses[key]) > rtol * max(1.0, abs(loss)):
                    bad.append(f"iteration {it}: rank {rank}: loss {key} is {loss}, reference {want_losses[key]}")
                seen.add(key)
        bad += [f"iteration {it}: no rank holds the gradient of {n}" for n, c in sorted(covered.items()) if not c.all()]
        bad += [f"iteration {it}: no rank computed loss {k}" for k in sorted(want_losses) if k not in seen]
    return bad, (f"{len(want)} parameter gradients and {len(seen)} losses in each of {iterations} "
                 f"iterations equal the single-process run's")


def check(args):
    failed = False
    for programs, out in pairs(args):
        bad, summary = check_one(programs, out)
        name = load_program(programs, 0)["placement"]
        if bad:
            failed = True
            print(f"check: FAILED: {name} ({out})\n  " + "\n  ".join(bad))
        else:
            print(f"check: ok: {name}: {summary}")
    if failed:
        sys.exit(1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("command", choices=["run", "check"])
    ap.add_argument("--programs", action="append",
                    help="directory of rank<R>.json (default: this file's); repeat to run several")
    ap.add_argument("--out", action="append",
                    help="directory for results (result<R>.pt), one per --programs")
    ap.add_argument("--iterations", type=int, default=1,
                    help="training iterations saved (and traced), an optimizer step between them (default 1)")
    ap.add_argument("--warmup", type=int, default=0,
                    help="iterations run first, neither saved nor traced (default 0)")
    ap.add_argument("--trace", action="store_true",
                    help="write trace<R>.json: the start and end of every op of every saved iteration")
    ap.add_argument("--interleave", action="store_true",
                    help="with several --programs: their iterations take turns (all models held at once)")
    ap.add_argument("--backend", default="gloo", choices=["gloo", "nccl"])
    args = ap.parse_args()
    if args.iterations < 1:
        sys.exit(f"worker: --iterations must be at least 1, got {args.iterations}")
    if args.warmup < 0:
        sys.exit(f"worker: --warmup must be at least 0, got {args.warmup}")
    if args.trace and args.command == "run" and not args.out:
        sys.exit("worker: --trace writes beside the results: give --out")
    torch.manual_seed(0)
    if args.command == "run":
        run(args)
    else:
        if not args.out:
            sys.exit("check: --out is required (where the ranks saved their results)")
        check(args)


if __name__ == "__main__":
    main()
