"""Bad input for tessel profile --user-model: model() returns the layers
alone, not (layers, sample)."""
import torch


def model():
    return [("a", torch.nn.Linear(4, 4))]
