"""The decoder-only transformer that `tessel profile` measures and the
workers of `tessel gen --model` train: an embedding (tokens and learned
positions), pre-norm decoder layers (causal self-attention and a GELU MLP,
each with a residual) and a head (the final norm and the vocabulary
projection; the loss is the cross entropy against fixed next tokens).

Every layer takes one tensor and returns one: the embedding the token ids
of a micro-batch (batch × sequence), the others the hidden states (batch ×
sequence × hidden). Weights, tokens and targets come from fixed seeds (a
layer's from its index in layer_names), so that the same layer has the same
weights whichever stage holds it, and a single process computes exactly
what the ranks compute.
"""

import math

import torch

SEED = 1234

DTYPES = {"float32": torch.float32, "float64": torch.float64, "bfloat16": torch.bfloat16}

# The fields of a config, each a positive integer but dtype (a name of
# DTYPES) and optimizer ("sgd" or "adam").
FIELDS = ("layers", "hidden", "heads", "ffn", "seq", "batch", "vocab")


class Config:
    """The decoder's sizes: layers, hidden, heads, ffn, seq (sequence
    length), batch (samples per micro-batch), vocab, dtype and optimizer."""

    def __init__(self, d):
        for f in FIELDS:
            v = d.get(f)
            if not isinstance(v, int) or v < 1:
                raise ValueError(f"decoder config: {f!r} must be a positive integer, got {v!r}")
            setattr(self, f, v)
        if self.hidden % self.heads:
            raise ValueError(f"decoder config: hidden {self.hidden} is not a multiple of heads {self.heads}")
        self.dtype_name = d.get("dtype", "float32")
        if self.dtype_name not in DTYPES:
            raise ValueError(f"decoder config: dtype {self.dtype_name!r}: want one of {sorted(DTYPES)}")
        self.dtype = DTYPES[self.dtype_name]
        self.optimizer = d.get("optimizer", "sgd")
        if self.optimizer not in ("sgd", "adam"):
            raise ValueError(f"decoder config: optimizer {self.optimizer!r}: want sgd or adam")
        self.lr = float(d.get("lr", 0.01))


def layer_names(cfg):
    """The layers in pipeline order."""
    return ["embedding"] + [f"decoder.{i}" for i in range(cfg.layers)] + ["head"]


class Embedding(torch.nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.tokens = torch.nn.Embedding(cfg.vocab, cfg.hidden)
        self.positions = torch.nn.Parameter(torch.randn(cfg.seq, cfg.hidden) * 0.02)

    def forward(self, ids):
        return self.tokens(ids) + self.positions


class DecoderLayer(torch.nn.Module):
    def __init__(self, cfg):
        super().__init__()
        h = cfg.hidden
        self.heads = cfg.heads
        self.norm1 = torch.nn.LayerNorm(h)
        self.qkv = torch.nn.Linear(h, 3 * h)
        self.proj = torch.nn.Linear(h, h)
        self.norm2 = torch.nn.LayerNorm(h)
        self.fc1 = torch.nn.Linear(h, cfg.ffn)
        self.fc2 = torch.nn.Linear(cfg.ffn, h)
        mask = torch.full((cfg.seq, cfg.seq), float("-inf")).triu(1)
        self.register_buffer("mask", mask, persistent=False)

    def forward(self, x):
        b, s, h = x.shape
        d = h // self.heads
        q, k, v = self.qkv(self.norm1(x)).split(h, dim=-1)
        q, k, v = (t.reshape(b, s, self.heads, d).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(d) + self.mask.to(q.dtype)
        y = (att.softmax(dim=-1) @ v).transpose(1, 2).reshape(b, s, h)
        x = x + self.proj(y)
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.norm2(x))))


class Head(torch.nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.norm = torch.nn.LayerNorm(cfg.hidden)
        self.out = torch.nn.Linear(cfg.hidden, cfg.vocab, bias=False)

    def forward(self, x):
        return self.out(self.norm(x))


def build(cfg, name, device=torch.device("cpu")):
    """The layer called name (one of layer_names), its weights from a seed
    of its index."""
    names = layer_names(cfg)
    if name not in names:
        raise ValueError(f"decoder: no layer {name!r} in a decoder of {cfg.layers} layers")
    torch.manual_seed(SEED + names.index(name))
    if name == "embedding":
        m = Embedding(cfg)
    elif name == "head":
        m = Head(cfg)
    else:
        m = DecoderLayer(cfg)
    return m.to(device=device, dtype=cfg.dtype)


def tokens(cfg, micro, device=torch.device("cpu")):
    """The token ids of one micro-batch, input of the embedding."""
    g = torch.Generator().manual_seed(SEED * 7 + micro)
    return torch.randint(cfg.vocab, (cfg.batch, cfg.seq), generator=g).to(device)


def loss(cfg, logits, micro):
    """The cross entropy of the head's logits against the micro-batch's
    targets, computed in float32 at least."""
    g = torch.Generator().manual_seed(SEED * 13 + micro)
    target = torch.randint(cfg.vocab, (cfg.batch, cfg.seq), generator=g).to(logits.device)
    x = logits if logits.dtype == torch.float64 else logits.float()
    return torch.nn.functional.cross_entropy(x.reshape(-1, cfg.vocab), target.reshape(-1))


def hidden_shape(cfg):
    """The shape of what crosses between layers after the embedding."""
    return (cfg.batch, cfg.seq, cfg.hidden)


def optimizer(cfg, params):
    if cfg.optimizer == "adam":
        return torch.optim.Adam(params, lr=cfg.lr)
    return torch.optim.SGD(params, lr=cfg.lr)


def optimizer_bytes(cfg, module):
    """The optimizer state the module's parameters take: Adam keeps two
    tensors per parameter, SGD without momentum none."""
    if cfg.optimizer != "adam":
        return 0
    return sum(2 * p.numel() * p.element_size() for p in module.parameters())


def supports(dtype, device):
    """Whether the device computes in dtype (bfloat16 needs support)."""
    if dtype != torch.bfloat16:
        return True
    if device.type == "cuda":
        return torch.cuda.is_bf16_supported()
    try:
        a = torch.ones(4, 4, dtype=dtype)
        (a @ a).sum().item()
        return True
    except RuntimeError:
        return False
