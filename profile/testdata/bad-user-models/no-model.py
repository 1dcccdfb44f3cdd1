"""Bad input for tessel profile --user-model: no model() at all."""
import torch

layers = [("a", torch.nn.Linear(4, 4))]
