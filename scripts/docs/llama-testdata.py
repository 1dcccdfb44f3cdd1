#!/usr/bin/env python3
"""Writes the Llama-7B-like layer profile and its clusters into testdata
(run from the repository root; the files are committed, this script says
how they were made).

The model: Llama-7B's shapes (hidden 4096, MLP 11008, 32 heads, 32
layers, vocabulary 32000), a sequence of 4096 tokens per micro-batch of
one sample, bf16 activations, mixed-precision Adam. Times in ms: every
decoder layer 5 forward and 10 backward; the embedding and the head as a
roofline at the layers' rate would give them.

Bytes per decoder layer:
- weights and gradients, 2 + 2 bytes per parameter; Adam's fp32 master
  weights and two moments, 12 bytes per parameter;
- activations, 34·s·h bytes: Korthikanti et al., "Reducing Activation
  Recomputation in Large Transformer Models" (2022), §4.1, without the
  5·a·s²·b term of the attention scores, which flash attention keeps none
  of;
- a recomputed layer keeps its input, 2·s·h bytes;
- the output sent to the next stage, 2·s·h bytes (bf16).

Links: latency in ms, per_unit in ms per byte: NVLink at 200 GB/s
(5e-9 ms per byte: 33.5 MB in 0.17 ms), PCIe at 25 GB/s, InfiniBand at
100 Gb/s (12.5 GB/s, 8e-8 ms per byte).
"""
import json

H, FFN, VOCAB, S, LAYERS = 4096, 11008, 32000, 4096, 32
ACT = 2 * S * H  # one bf16 tensor of the sequence

def layer_bytes(params, activation, checkpoint):
    return {"param_bytes": 4 * params, "optimizer_bytes": 12 * params,
            "activation_bytes": activation, "checkpoint_bytes": checkpoint}

block = 4 * H * H + 3 * H * FFN + 2 * H
layers = [{"name": "embed", "forward": 0.05, "backward": 0.1,
           **layer_bytes(VOCAB * H, S * 8, S * 8), "output_size": ACT}]
for i in range(LAYERS):
    layers.append({"name": f"layer{i}", "forward": 5, "backward": 10,
                   **layer_bytes(block, 34 * S * H, ACT), "output_size": ACT})
# The final norm and the output projection; the loss keeps the logits in
# fp32 (4·s·vocab bytes) beside the two bf16 inputs of norm and projection.
layers.append({"name": "head", "forward": 3, "backward": 6,
               **layer_bytes(VOCAB * H + H, 2 * ACT + 4 * S * VOCAB, ACT)})

model = {"name": "llama7b", "devices": 8, "device_bytes": 80_000_000_000,
         "host_bandwidth": 25_000_000, "layers": layers}

def dump_model(path, m):
    with open(path, "w") as f:
        f.write("{\n")
        for k, v in m.items():
            if k != "layers":
                f.write(f"  {json.dumps(k)}: {json.dumps(v)},\n")
        f.write("  \"layers\": [\n")
        f.write(",\n".join("    " + json.dumps(l) for l in m["layers"]))
        f.write("\n  ]\n}\n")

def dump_cluster(path, c):
    with open(path, "w") as f:
        f.write("{\n  \"devices\": [\n")
        f.write(",\n".join("    " + json.dumps(d) for d in c["devices"]))
        f.write("\n  ],\n  \"links\": {\n")
        items = []
        for k, v in c["links"].items():
            if isinstance(v, list):
                items.append(f"    {json.dumps(k)}: [\n" + ",\n".join("      " + json.dumps(x) for x in v) + "\n    ]")
            else:
                items.append(f"    {json.dumps(k)}: {json.dumps(v)}")
        f.write(",\n".join(items) + "\n  }\n}\n")

NVLINK = {"latency": 0.002, "per_unit": 5e-9}
PCIE = {"latency": 0.005, "per_unit": 4e-8}
IB = {"latency": 0.01, "per_unit": 8e-8}
HOST = {"latency": 0.01, "per_unit": 4e-8}

def gpus(n, memory, node=0, speed=1, name="gpu", first=0):
    return [{"name": f"{name}{first + d}", "speed": speed, "memory": 0, "memory_bytes": memory,
             "host": HOST, "node": node} for d in range(n)]

def pairs(devices, link):
    out = []
    for a in range(len(devices)):
        for b in range(a + 1, len(devices)):
            if devices[a]["node"] == devices[b]["node"]:
                out.append({"from": a, "to": b, **link(devices[a]["node"])})
    return out

dump_model("testdata/models/llama7b.json", model)
# The same model with every backward split into the gradient for the
# inputs and the one for the weights (the zero-bubble schedules' blocks),
# half of it each: for a transformer layer the two take about the same
# time (Qi et al., "Zero Bubble Pipeline Parallelism", §2).
def split(layer):
    layer = dict(layer)
    b = layer.pop("backward")
    return {**{k: v for k, v in layer.items() if k in ("name", "forward")}, "input": b / 2, "weight": b / 2,
            **{k: v for k, v in layer.items() if k not in ("name", "forward")}}
dump_model("testdata/models/llama7b-split.json", {**model, "name": "llama7b-split", "layers": [split(l) for l in layers]})
for path, memory in (("testdata/clusters/llama-8x80.json", 80_000_000_000), ("testdata/clusters/llama-8x24.json", 24_000_000_000)):
    dump_cluster(path, {"devices": gpus(8, memory), "links": {"default": NVLINK}})
# Four fast GPUs on NVLink in node 0, four at half speed and half the
# memory on PCIe in node 1, InfiniBand between the nodes.
mixed = gpus(4, 80_000_000_000, name="fast") + gpus(4, 40_000_000_000, node=1, speed=0.5, name="slow", first=4)
dump_cluster("testdata/clusters/llama-mixed.json",
             {"devices": mixed, "links": {"default": IB, "pairs": pairs(mixed, lambda n: NVLINK if n == 0 else PCIE)}})
