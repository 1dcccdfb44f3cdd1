"""Runs a PyTorch pipelining CSV (as `tessel export --format torch-csv`
writes it) with PyTorch's own runtime, to show that PyTorch accepts it.

Not part of tessel's tests (Debian's PyTorch 1.13 has no pipelining): run it
on a machine with PyTorch >= 2.6, one process per row of the CSV:

  torchrun --nproc-per-node RANKS scripts/torch_csv_check.py FILE.csv [--steps 3] [--device cpu|cuda]

Each rank builds the stages its row names (a small MLP: stage s is one
Linear+tanh layer, float32, seeded by s), loads the CSV with
_PipelineScheduleRuntime._load_csv(FILE, format="compute_only") (which runs
PyTorch's validator and adds the communication itself), and runs --steps
training steps with an SGD step between them. Every rank also runs the
whole model in one process and compares its stages' gradients with that
reference in every step (allclose; PyTorch scales gradients by
1/micro-batches by default, so both the sum and the mean are tried). Rank 0
prints one line per step and "torch_csv_check: ok" at the end; a failure
exits 1 with the reason.

The gloo backend on CPU is the default; --device cuda uses NCCL, one GPU per
rank (LOCAL_RANK).
"""

import argparse
import csv
import os
import sys
import time

import torch
import torch.distributed as dist

WIDTH = 16
BATCH = 4  # samples per micro-batch
LR = 0.1


def read_csv(path):
    """The stage -> rank map, the number of stages and of micro-batches,
    read the way PyTorch reads the file (csv.reader, empty cells idle)."""
    stage_rank, micros, rows = {}, 0, 0
    with open(path, newline="") as f:
        for rank, row in enumerate(csv.reader(f)):
            rows += 1
            for cell in row:
                cell = cell.strip()
                if not cell:
                    continue
                i = 0
                while i < len(cell) and cell[i].isdigit():
                    i += 1
                j = i
                while j < len(cell) and not cell[j].isdigit():
                    j += 1
                stage, micro = int(cell[:i]), int(cell[j:])
                stage_rank.setdefault(stage, rank)
                micros = max(micros, micro + 1)
    return stage_rank, max(stage_rank) + 1, micros, rows


def layer(stage):
    torch.manual_seed(1000 + stage)
    return torch.nn.Sequential(torch.nn.Linear(WIDTH, WIDTH), torch.nn.Tanh())


def data(n_micro, step):
    g = torch.Generator().manual_seed(7 + step)
    x = torch.randn(n_micro * BATCH, WIDTH, generator=g)
    y = torch.randn(n_micro * BATCH, WIDTH, generator=g)
    return x, y


def loss_fn(out, target):
    return torch.nn.functional.mse_loss(out, target)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    args = ap.parse_args()

    from torch.distributed.pipelining import PipelineStage
    from torch.distributed.pipelining.schedules import _PipelineScheduleRuntime

    stage_rank, n_stages, n_micro, n_rows = read_csv(args.csv)
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    if world != n_rows:
        sys.exit(f"torch_csv_check: {args.csv} has {n_rows} rows (ranks), WORLD_SIZE is {world}")
    if args.device == "cuda":
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", rank)))
        torch.cuda.set_device(device)
        dist.init_process_group("nccl", device_id=device)
    else:
        device = torch.device("cpu")
        dist.init_process_group("gloo")

    mine = sorted(s for s, r in stage_rank.items() if r == rank)
    modules = {s: layer(s).to(device) for s in mine}
    # Shapes given, not inferred: PyTorch's shape inference sends from a
    # stage to the next even where both are on one rank (V placements),
    # which gloo cannot do.
    example = torch.empty(BATCH, WIDTH, device=device)
    stages = [PipelineStage(modules[s], s, n_stages, device, input_args=(example,), output_args=example)
              for s in mine]
    if args.device == "cpu":
        # PyTorch's stage set-up posts a send and a receive between
        # neighbouring stages even where both are on this rank (V
        # placements), which gloo cannot do: drop those (the runtime
        # passes tensors between local stages without P2P).
        for st in stages:
            init = st._get_init_p2p_neighbors_ops
            st._get_init_p2p_neighbors_ops = (lambda init: lambda: [
                op for op in init() if getattr(op, "group_peer", getattr(op, "peer", None)) != rank])(init)
    sched = _PipelineScheduleRuntime(stages, n_micro, loss_fn=loss_fn)
    sched._load_csv(args.csv, format="compute_only")
    opt = torch.optim.SGD([p for m in modules.values() for p in m.parameters()], lr=LR) if modules else None

    # The reference: the whole model in this process, kept in step.
    ref = torch.nn.Sequential(*[layer(s) for s in range(n_stages)]).to(device)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=LR)
    scale = None
    for step in range(args.steps):
        x, y = (t.to(device) for t in data(n_micro, step))
        start = time.perf_counter()
        kwargs = {}
        if n_stages - 1 in mine:
            kwargs["target"] = y
            kwargs["losses"] = []
        if 0 in mine:
            sched.step(x, **kwargs)
        else:
            sched.step(**kwargs)
        dist.barrier()
        took = time.perf_counter() - start

        ref_opt.zero_grad()
        total = sum(loss_fn(ref(xm), ym) for xm, ym in zip(x.chunk(n_micro), y.chunk(n_micro)))
        total.backward()
        bad = []
        for s in mine:
            for (name, p), q in zip(modules[s].named_parameters(), ref[s].parameters()):
                got = p.grad if p.grad is not None else torch.zeros_like(p)
                options = [("sum", 1.0), ("mean", 1.0 / n_micro)] if scale is None else [scale]
                for label, f in options:
                    if torch.allclose(got, q.grad * f, rtol=1e-4, atol=1e-6):
                        scale = (label, f)
                        break
                else:
                    err = min((got - q.grad * f).abs().max().item() for _, f in options)
                    bad.append(f"stage {s} {name}: differs from the reference by up to {err:.3g}")
        ok = torch.tensor([0 if bad else 1], device=device)
        dist.all_reduce(ok, op=dist.ReduceOp.MIN)
        if bad:
            print(f"torch_csv_check: rank {rank}, step {step}: " + "; ".join(bad), flush=True)
        if ok.item() == 0:
            dist.destroy_process_group()
            sys.exit(1)
        if rank == 0:
            print(f"torch_csv_check: step {step}: {n_stages} stages on {world} ranks, {n_micro} micro-batches, "
                  f"{took * 1e3:.1f} ms, gradients equal the single-process run's", flush=True)
        with torch.no_grad():  # the reference takes the pipeline's step
            for p in ref.parameters():
                p.grad *= scale[1] if scale else 1.0
        ref_opt.step()
        if opt is not None:
            opt.step()
            opt.zero_grad()
    if rank == 0:
        print(f"torch_csv_check: ok: {args.csv} ran {args.steps} steps with PyTorch {torch.__version__}'s runtime", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
