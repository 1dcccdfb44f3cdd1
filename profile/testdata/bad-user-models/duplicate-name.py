"""Bad input for tessel profile --user-model: two layers of one name."""
import torch


def model():
    return [("block", torch.nn.Linear(4, 4)), ("block", torch.nn.Linear(4, 4))], torch.randn(2, 4)
