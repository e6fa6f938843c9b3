# SPDX-License-Identifier: Apache-2.0
"""The models of the ONNX speed benchmark (scripts/bench_onnx), built with a fixed seed.

Random weights, eval mode. Each entry: name -> (module factory, example input shapes). The same
modules are exported to ONNX (export_models.py) and timed under PyTorch (time_torch.py).
"""
import torch
import torchvision


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.Sequential(
            torch.nn.Linear(784, 512), torch.nn.ReLU(),
            torch.nn.Linear(512, 512), torch.nn.ReLU(),
            torch.nn.Linear(512, 10))

    def forward(self, x):
        return self.layers(x)


class Lstm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(input_size=64, hidden_size=128, num_layers=1)

    def forward(self, x):
        return self.lstm(x)[0]


# name: (factory, input shape); the ONNX input is called "input".
MODELS = {
    "resnet18": (lambda: torchvision.models.resnet18(), (1, 3, 224, 224)),
    "mobilenet_v2": (lambda: torchvision.models.mobilenet_v2(), (1, 3, 224, 224)),
    "mlp": (Mlp, (64, 784)),
    "lstm": (Lstm, (32, 8, 64)),
}


def build(name, seed=0):
    """The module `name` in eval mode with weights drawn from `seed`, and an input of its shape."""
    factory, shape = MODELS[name]
    torch.manual_seed(seed)
    module = factory().eval()
    example = torch.randn(*shape)
    return module, example
