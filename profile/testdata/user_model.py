"""An example of your own model for `tessel profile --user-model`: a small
convolutional network cut into four layers.

tessel profile imports this file and calls model(), which returns the
layers in pipeline order, each a (name, torch.nn.Module) pair whose
module takes the previous layer's output, and a sample input of one
micro-batch for the first layer. loss(output), optional, turns the last
layer's output into the scalar whose backward is measured (without it,
the mean of the output's squares).
"""

import torch


def model():
    torch.manual_seed(0)
    layers = [
        ("stem", torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.ReLU())),
        ("block1", torch.nn.Sequential(torch.nn.Conv2d(16, 16, 3, padding=1), torch.nn.ReLU())),
        ("block2", torch.nn.Sequential(torch.nn.Conv2d(16, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1))),
        ("classifier", torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(16, 10))),
    ]
    sample = torch.randn(4, 3, 16, 16)  # one micro-batch of 4 images
    return layers, sample


def loss(logits):
    target = torch.arange(logits.shape[0]) % logits.shape[1]
    return torch.nn.functional.cross_entropy(logits, target)
