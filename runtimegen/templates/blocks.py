"""Example model for the workers that `tessel gen` writes: a small MLP split
along the placement. Replace it with your model; worker.py needs only the
class Model below. A forward block's module may be any torch.nn.Module:
the workers split its backward into an input and a weight part through
autograd alone (torch.autograd.grad with the inputs, later
torch.autograd.backward with the parameters).

Every forward block is one layer, tanh(W x + b), whose input x is the sum of
the block's activation inputs (or the micro-batch's data for a first block).
A block on a device group is the same layer split by rows of W (the output
features) over the group, Megatron style: each member computes its slice of
the output from the whole input, an all_gather joins the slices, and in the
backward pass an all_reduce sums the members' contributions to the input's
gradient. A forward block that feeds no other forward block ends in a loss,
the mean squared error against a fixed target.

Weights, data and targets come from fixed seeds, so the single-process
reference (`python3 worker.py check`) computes exactly the same math.
"""

import torch
import torch.distributed as dist

BATCH = 4  # samples per micro-batch
WIDTH = 16  # features; rounded up to a multiple of the largest group
SEED = 1234
DTYPE = torch.float64  # the gradient check compares to a reference run
LR = 0.1  # learning rate of the optimizer step between iterations


class _CopyToGroup(torch.autograd.Function):
    """Identity forward; backward sums the input's gradient over the group
    (each member saw only its slice of the output)."""

    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        grad = grad.contiguous().clone()
        dist.all_reduce(grad, group=ctx.group)
        return grad, None


class _GatherFromGroup(torch.autograd.Function):
    """all_gather of the members' output slices along the last dimension;
    backward keeps this member's slice (the gradient of the whole output is
    the same on every member)."""

    @staticmethod
    def forward(ctx, y, group, member, size):
        ctx.member, ctx.cols = member, y.shape[-1]
        parts = [torch.empty_like(y) for _ in range(size)]
        dist.all_gather(parts, y.contiguous(), group=group)
        return torch.cat(parts, dim=-1)

    @staticmethod
    def backward(ctx, grad):
        lo = ctx.member * ctx.cols
        return grad[..., lo:lo + ctx.cols].contiguous(), None, None, None


class Stage(torch.nn.Module):
    """One forward block on one device."""

    shard_rows = None  # the module holds whole parameters

    def __init__(self, width):
        super().__init__()
        self.linear = torch.nn.Linear(width, width, dtype=DTYPE)

    def forward(self, inputs):
        return torch.tanh(self.linear(sum(inputs)))


class ShardedStage(torch.nn.Module):
    """The rows [lo, hi) of a Stage's layer, on one member of a group."""

    def __init__(self, full, group, member, size, device):
        super().__init__()
        width = full.linear.in_features
        rows = width // size
        lo, hi = member * rows, (member + 1) * rows
        self.shard_rows = (lo, hi)  # of every parameter, along dimension 0
        self.linear = torch.nn.Linear(width, rows, dtype=DTYPE)
        with torch.no_grad():
            self.linear.weight.copy_(full.linear.weight[lo:hi])
            self.linear.bias.copy_(full.linear.bias[lo:hi])
        self.group, self.member, self.size = group, member, size
        self.to(device)

    def forward(self, inputs):
        x = _CopyToGroup.apply(sum(inputs), self.group)
        y = _GatherFromGroup.apply(self.linear(x), self.group, self.member, self.size)
        return torch.tanh(y)


class Model:
    """What worker.py asks of a model. blocks is the program's block table
    (id, kind, devices, time, forward, inputs, outputs); groups the device
    groups of group blocks."""

    def __init__(self, blocks, groups, device=torch.device("cpu")):
        self.index = {b["id"]: i for i, b in enumerate(blocks)}
        g = max([len(x) for x in groups], default=1)
        self.width = -(-WIDTH // g) * g
        self.device = device

    def module(self, block, group=None, member=0, size=1):
        """The module of forward block `block`: whole when group is None
        (one device, or the single-process reference), else this member's
        share of the group."""
        torch.manual_seed(SEED + self.index[block])
        full = Stage(self.width)
        if group is None:
            return full.to(self.device)
        return ShardedStage(full, group, member, size, self.device)

    def input(self, micro):
        """The data of one micro-batch, input of the first blocks."""
        g = torch.Generator().manual_seed(SEED * 7 + micro)
        return torch.randn(BATCH, self.width, generator=g, dtype=DTYPE).to(self.device)

    def loss(self, block, output, micro):
        """The loss at a forward block that feeds no other forward block."""
        g = torch.Generator().manual_seed(SEED * 13 + 1000 * micro + self.index[block])
        target = torch.randn(BATCH, self.width, generator=g, dtype=DTYPE).to(self.device)
        return ((output - target) ** 2).mean()

    def shape(self, role, src, dst):
        """The shape of the tensor that dependency src -> dst carries:
        an activation or a gradient, or a one-element token for "order"."""
        if role == "order":
            return (1,)
        return (BATCH, self.width)

    def dtype(self):
        return DTYPE

    def optimizer(self, params):
        """The optimizer of the parameters a rank holds (or of all of them,
        in the single-process reference), stepped after every iteration.
        Plain SGD keeps the reference exact: each parameter's update depends
        on its own gradient only, so slices of a group block update alone."""
        return torch.optim.SGD(params, lr=LR)
