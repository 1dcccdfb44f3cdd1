"""Bad input for tessel profile --user-model: loss() returns a vector."""
import torch


def model():
    return [("a", torch.nn.Linear(4, 4))], torch.randn(2, 4)


def loss(y):
    return y.sum(dim=1)
