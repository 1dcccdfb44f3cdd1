"""Bad input for tessel profile --user-model: a layer that is a function,
not a torch.nn.Module."""
import torch


def model():
    return [("a", torch.nn.Linear(4, 4)), ("b", torch.relu)], torch.randn(2, 4)
