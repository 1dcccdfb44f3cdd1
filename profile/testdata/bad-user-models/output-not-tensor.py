"""Bad input for tessel profile --user-model: a layer returns a tuple,
not a tensor."""
import torch


class Split(torch.nn.Module):
    def forward(self, x):
        return x[:, :2], x[:, 2:]


def model():
    return [("a", torch.nn.Linear(4, 4)), ("split", Split())], torch.randn(2, 4)
