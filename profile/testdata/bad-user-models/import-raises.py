"""Bad input for tessel profile --user-model: importing it fails."""
import torch_that_does_not_exist  # noqa: F401


def model():
    return [], None
