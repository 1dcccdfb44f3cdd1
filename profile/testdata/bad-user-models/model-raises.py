"""Bad input for tessel profile --user-model: model() raises."""


def model():
    raise ValueError("no weights here")
