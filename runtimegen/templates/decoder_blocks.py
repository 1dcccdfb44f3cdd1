"""The model of these workers: the decoder-only transformer that `tessel
profile` measured (decoder.py, of the config in stages.json), cut along
the placement. Written by `tessel gen --model`; worker.py needs only the
class Model below.

Every forward block runs the layers stages.json lists for it, in order
(the embedding takes the micro-batch's token ids; a block with several
activation inputs takes their sum); the block whose output feeds no other
forward block ends in the loss, the cross entropy against the micro-batch's
next tokens. Weights, tokens and targets come from fixed seeds per layer
and micro-batch, so the single-process reference (`python3 worker.py
check`) computes exactly the same math. The decoder's blocks run on one
device each (no device groups).
"""

import json
import os
import sys

import torch

import decoder

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "stages.json")) as f:
    STAGES = json.load(f)
CONFIG = decoder.Config(STAGES["config"])


class Stage(torch.nn.Module):
    """One forward block: its layers, in pipeline order."""

    shard_rows = None  # the module holds whole parameters

    def __init__(self, names, device):
        super().__init__()
        self.layers = torch.nn.ModuleList([decoder.build(CONFIG, n, device) for n in names])

    def forward(self, inputs):
        x = inputs[0] if len(inputs) == 1 else sum(inputs)
        for layer in self.layers:
            x = layer(x)
        return x


class Model:
    """What worker.py asks of a model (see blocks.py of the example MLP)."""

    def __init__(self, blocks, groups, device=torch.device("cpu")):
        if groups:
            sys.exit(f"blocks: the decoder's blocks run on one device each, but this placement has device groups {groups}")
        missing = [b["id"] for b in blocks if b["kind"] == "forward" and b["id"] not in STAGES["blocks"]]
        if missing:
            sys.exit(f"blocks: stages.json gives no layers to forward blocks {missing}")
        if not decoder.supports(CONFIG.dtype, device):
            sys.exit(f"blocks: {CONFIG.dtype_name} is not supported on {device}")
        self.device = device

    def module(self, block, group=None, member=0, size=1):
        if group is not None:
            sys.exit(f"blocks: block {block} on a device group: the decoder's blocks run on one device each")
        return Stage(STAGES["blocks"][block], self.device)

    def input(self, micro):
        return decoder.tokens(CONFIG, micro, self.device)

    def loss(self, block, output, micro):
        return decoder.loss(CONFIG, output, micro)

    def shape(self, role, src, dst):
        if role == "order":
            return (1,)
        return decoder.hidden_shape(CONFIG)

    def dtype(self):
        return CONFIG.dtype

    def optimizer(self, params):
        return decoder.optimizer(CONFIG, params)

    def tolerance(self):
        """The gradient check's (rtol, atol): float64 is exact up to the
        order of the sums; float32 and bfloat16 round."""
        if CONFIG.dtype == torch.float64:
            return 1e-9, 1e-12
        if CONFIG.dtype == torch.float32:
            return 1e-3, 1e-5
        return 5e-2, 1e-2
