#!/usr/bin/env python3
"""Writes the model and cluster files of docs/heterogeneous.md's scenarios
into testdata/hetero (run from the repository root; the files are
committed, this script says how they were made)."""
import json

def dump(path, obj, devices=False):
    with open(path, "w") as f:
        if devices:
            f.write("{\n  \"devices\": [\n")
            f.write(",\n".join("    " + json.dumps(d) for d in obj["devices"]))
            f.write("\n  ],\n  \"links\": {\n    \"default\": " + json.dumps(obj["links"]["default"]) + ",\n    \"pairs\": [")
            pairs = obj["links"]["pairs"]
            if pairs:
                f.write("\n" + ",\n".join("      " + json.dumps(p) for p in pairs) + "\n    ")
            f.write("]\n  }\n}\n")
        else:
            f.write("{\n")
            items = [(k, v) for k, v in obj.items() if k != "layers"]
            for k, v in items:
                f.write(f"  {json.dumps(k)}: {json.dumps(v)},\n")
            f.write("  \"layers\": [\n")
            f.write(",\n".join("    " + json.dumps(l) for l in obj["layers"]))
            f.write("\n  ]\n}\n")

# The model: an embedding, 32 transformer blocks, a head.
layers = [{"name": "embed", "forward": 1, "backward": 2, "params": 8, "activations": 1}]
for i in range(32):
    layers.append({"name": f"block{i}", "forward": 1, "backward": 2, "params": 4, "activations": 1})
layers.append({"name": "head", "forward": 2, "backward": 4, "params": 8, "activations": 1})
dump("testdata/hetero/gpt-34.json", {"name": "gpt-34", "memory": 64, "layers": layers})

INTRA = {"latency": 0.01, "per_unit": 0.05}

def cluster(n, per_node, speeds, inter):
    devs, pairs = [], []
    for d in range(n):
        node = d // per_node
        kind = node % len(speeds)
        name, speed = speeds[kind]
        devs.append({"name": f"{name}{d}", "type": name, "speed": speed, "memory": 0, "node": node})
    for a in range(n):
        for b in range(a + 1, n):
            if a // per_node == b // per_node:
                pairs.append({"from": a, "to": b, **INTRA})
    return {"devices": devs, "links": {"default": inter, "pairs": pairs}}

# S1: two GPU types in equal numbers, nodes of 4 alternating types.
for n in (8, 16, 32):
    for label, slow in (("close", 1 / 1.1), ("far", 1 / 3)):
        dump(f"testdata/hetero/s1-{label}-{n}.json",
             cluster(n, 4, [("fast", 1), ("slow", round(slow, 6))], {"latency": 0.05, "per_unit": 0.2}), devices=True)

# S2: 16 devices of one type in nodes of 4, inter-node bandwidth varied.
for label, pu in (("bw-high", 0.05), ("bw-mid", 0.5), ("bw-low", 2), ("bw-vlow", 8)):
    dump(f"testdata/hetero/s2-{label}.json",
         cluster(16, 4, [("gpu", 1)], {"latency": 0.05, "per_unit": pu}), devices=True)
