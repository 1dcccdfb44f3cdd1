"""Runs one rank's program of a tessel schedule on torch.distributed.

Written by `tessel gen` beside the programs (rank<R>.json), blocks.py (the
model) and launch.sh (which starts every rank). Each rank executes its
program op by op:

  compute, collective  run a block: a forward block through the model's
                       module (kept with its activations per micro-batch),
                       a backward block as the backward of its forward
                       block with the received gradient; a collective is a
                       block on a device group, whose module talks to the
                       group (all_gather, all_reduce)
  send, recv           point-to-point; blocking (send/recv) or posted
                       (isend/irecv), as the program's mode says, with the
                       transfer's tag
  wait                 waits for a posted send or receive

The programs put every pair of ranks' sends and receives in the same order,
so they cannot deadlock (see the runtimegen package of tessel).

  python3 worker.py run --programs DIR --out DIR [--backend gloo|nccl]
      (one rank; torch.distributed.run sets RANK, WORLD_SIZE, MASTER_*)
  python3 worker.py check --programs DIR --out DIR
      runs the same model in one process and compares every parameter's
      gradient (and every loss) with what the ranks saved
"""

import argparse
import json
import os
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


def has_backward(blocks, forward):
    return any(b["kind"] == "backward" and b.get("forward") == forward for b in blocks)


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
        self.tensors = {}  # name -> tensor held here
        self.uses = {}  # name -> uses left here (sends and consumers)
        for op in prog["ops"]:
            if op["op"] == "send":
                self.uses[op["tensor"]] = self.uses.get(op["tensor"], 0) + 1
            elif op["op"] in ("compute", "collective"):
                for p in self.info[op["block"]]["inputs"]:
                    if p["role"] != "saved":
                        name = tensor_name(p["block"], op["block"], op["micro"])
                        self.uses[name] = self.uses.get(name, 0) + 1
        self.pending = {}  # tag -> (work, name, tensor)
        self.saved = {}  # (forward block, micro) -> (input leaves, output, loss)
        self.losses = {}  # "block@micro" -> loss

    def run(self):
        for op in self.prog["ops"]:
            getattr(self, "op_" + op["op"])(op)

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
        if b["kind"] == "forward":
            self.forward(b, op["micro"])
        else:
            self.backward(b, op["micro"])

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

    # Blocks ------------------------------------------------------------------

    def forward(self, b, micro):
        train = has_backward(self.prog["blocks"], b["id"])
        leaves, inputs = {}, []
        for p in b["inputs"]:
            if p["role"] == "saved":
                continue
            t = self.take(tensor_name(p["block"], b["id"], micro))
            if p["role"] == "activation":
                leaf = t.detach().requires_grad_(train)
                leaves[p["block"]] = leaf
                inputs.append(leaf)
        if not inputs:
            inputs = [self.model.input(micro)]
        with torch.set_grad_enabled(train):
            y = self.modules[b["id"]](inputs)
            loss = None
            if not any(p["role"] == "activation" for p in b["outputs"]):
                loss = self.model.loss(b["id"], y, micro)
                self.losses[f"{b['id']}@{micro}"] = loss.item()
        if train:
            self.saved[(b["id"], micro)] = (leaves, y, loss)
        for p in b["outputs"]:
            name = tensor_name(b["id"], p["block"], micro)
            if p["role"] == "activation":
                self.put(name, y.detach())
            elif p["role"] == "order":
                self.put(name, self.token())

    def backward(self, b, micro):
        leaves, y, loss = self.saved.pop((b["forward"], micro))
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
        if outs:
            torch.autograd.backward(outs, seeds)
        for p in b["outputs"]:
            name = tensor_name(b["id"], p["block"], micro)
            if p["role"] == "gradient":
                leaf = leaves[self.info[p["block"]]["forward"]]
                self.put(name, leaf.grad if leaf.grad is not None else torch.zeros_like(leaf))
            elif p["role"] == "order":
                self.put(name, self.token())

    def grads(self):
        """Every parameter's gradient held here: name -> (grad, rows), rows
        being the slice of dimension 0 a group member holds, or None."""
        out = {}
        for block, m in sorted(self.modules.items()):
            for pname, prm in m.named_parameters():
                g = prm.grad if prm.grad is not None else torch.zeros_like(prm)
                out[f"{block}.{pname}"] = (g.detach().cpu(), m.shard_rows)
        return out


def run(args):
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    prog = load_program(args.programs, rank)
    if prog["devices"] != world:
        sys.exit(f"worker: the programs are for {prog['devices']} ranks, WORLD_SIZE is {world}")
    dist.init_process_group(args.backend)
    start = time.time()
    r = Rank(prog, args.backend)
    r.run()
    if r.pending:
        sys.exit(f"worker: rank {rank}: transfers {sorted(r.pending)} were never waited for")
    dist.barrier()
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        torch.save({"grads": r.grads(), "losses": r.losses},
                   os.path.join(args.out, f"result{rank}.pt"))
    print(f"worker: rank {rank}: {len(prog['ops'])} ops in {time.time() - start:.2f} s", flush=True)
    dist.destroy_process_group()


def reference(prog):
    """The same model in one process: every micro-batch through every block
    in dependency order, the sum of the losses differentiated at once."""
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
    train = any(b["kind"] == "backward" for b in prog["blocks"])
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
            grads[f"{block}.{pname}"] = prm.grad if prm.grad is not None else torch.zeros_like(prm)
    return grads, losses


def check(args):
    prog = load_program(args.programs, 0)
    want, want_losses = reference(prog)
    covered = {name: torch.zeros(g.shape[0], dtype=torch.bool) for name, g in want.items()}
    bad, seen = [], set()
    for rank in range(prog["devices"]):
        got = torch.load(os.path.join(args.out, f"result{rank}.pt"))
        for name, (g, rows) in sorted(got["grads"].items()):
            lo, hi = rows if rows is not None else (0, want[name].shape[0])
            if not torch.allclose(g, want[name][lo:hi], rtol=1e-9, atol=1e-12):
                err = (g - want[name][lo:hi]).abs().max().item()
                bad.append(f"rank {rank}: {name}[{lo}:{hi}] differs by up to {err:.3g}")
            covered[name][lo:hi] = True
        for key, loss in got["losses"].items():
            if key not in want_losses:
                bad.append(f"rank {rank}: loss {key} has no counterpart in the reference")
            elif abs(loss - want_losses[key]) > 1e-9 * max(1.0, abs(loss)):
                bad.append(f"rank {rank}: loss {key} is {loss}, reference {want_losses[key]}")
            seen.add(key)
    bad += [f"no rank holds the gradient of {n}" for n, c in sorted(covered.items()) if not c.all()]
    bad += [f"no rank computed loss {k}" for k in sorted(want_losses) if k not in seen]
    if bad:
        print("check: FAILED\n  " + "\n  ".join(bad))
        sys.exit(1)
    print(f"check: ok: {len(want)} parameter gradients and {len(seen)} losses "
          f"equal the single-process run's")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("command", choices=["run", "check"])
    ap.add_argument("--programs", default=os.path.dirname(os.path.abspath(__file__)),
                    help="directory of rank<R>.json (default: this file's)")
    ap.add_argument("--out", default="", help="directory for results (result<R>.pt)")
    ap.add_argument("--backend", default="gloo", choices=["gloo", "nccl"])
    args = ap.parse_args()
    torch.manual_seed(0)
    if args.command == "run":
        run(args)
    else:
        if not args.out:
            sys.exit("check: --out is required (where the ranks saved their results)")
        check(args)


if __name__ == "__main__":
    main()
