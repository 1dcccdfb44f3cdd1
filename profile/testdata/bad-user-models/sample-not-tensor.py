"""Bad input for tessel profile --user-model: a sample that is a list."""
import torch


def model():
    return [("a", torch.nn.Linear(4, 4))], [[0.0] * 4] * 2
