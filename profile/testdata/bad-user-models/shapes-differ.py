"""Bad input for tessel profile --user-model: the second layer cannot
take the first one's output (8 features, it wants 4)."""
import torch


def model():
    return [("up", torch.nn.Linear(4, 8)), ("down", torch.nn.Linear(4, 2))], torch.randn(2, 4)
