# SPDX-License-Identifier: Apache-2.0
"""The models of the ONNX speed benchmark (scripts/bench_onnx) and of the model zoo test tier
(`scripts/test zoo`), built with a fixed seed.

Random weights, eval mode. MODELS: name -> (module factory, example input shape), exported to
ONNX (export_models.py) and timed under PyTorch (time_torch.py). ZOO: name -> (module factory,
shape of one batch entry); zoo_cases() says at which opsets and batch sizes each is exported.
"""
import collections

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


class TransformerEncoder(torch.nn.Module):
    """nn.TransformerEncoder: 2 layers, d_model 64, 4 heads, batch first."""

    def __init__(self):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128,
                                                 batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, num_layers=2,
                                                   enable_nested_tensor=False)

    def forward(self, x):
        return self.encoder(x)


class Gru(torch.nn.Module):
    """nn.GRU: 1 layer, 32 -> 64, batch first."""

    def __init__(self):
        super().__init__()
        self.gru = torch.nn.GRU(input_size=32, hidden_size=64, num_layers=1, batch_first=True)

    def forward(self, x):
        return self.gru(x)[0]


# name: (factory, input shape); the ONNX input is called "input".
MODELS = {
    "resnet18": (lambda: torchvision.models.resnet18(), (1, 3, 224, 224)),
    "mobilenet_v2": (lambda: torchvision.models.mobilenet_v2(), (1, 3, 224, 224)),
    "mlp": (Mlp, (64, 784)),
    "lstm": (Lstm, (32, 8, 64)),
}


def torchvision_model(name, **kwargs):
    return lambda: getattr(torchvision.models, name)(**kwargs)


def image(side):
    return (3, side, side)


# The zoo: one or two models of every torchvision 0.14 classification family, a transformer
# encoder and a GRU. name: (factory, shape of one batch entry); the batch axis is axis 0. Images
# are as small as each architecture allows: AlexNet and VGG need 224 for their adaptive pools
# (the exporter only handles output sizes that divide the input), ViT, Swin and MaxViT are kept
# at their native 224, Inception-v3 needs 75 at least. Swin-v2 is left out: torch 1.13 cannot
# export it at any opset (`aten::zero`).
ZOO = {
    "alexnet": (torchvision_model("alexnet"), image(224)),
    "convnext_tiny": (torchvision_model("convnext_tiny"), image(64)),
    "densenet121": (torchvision_model("densenet121"), image(64)),
    "efficientnet_b0": (torchvision_model("efficientnet_b0"), image(64)),
    "efficientnet_v2_s": (torchvision_model("efficientnet_v2_s"), image(64)),
    "googlenet": (torchvision_model("googlenet", aux_logits=False, init_weights=True), image(64)),
    "inception_v3": (torchvision_model("inception_v3", aux_logits=False, init_weights=True),
                     image(96)),
    "maxvit_t": (torchvision_model("maxvit_t"), image(224)),
    "mnasnet0_5": (torchvision_model("mnasnet0_5"), image(64)),
    "mobilenet_v2": (torchvision_model("mobilenet_v2"), image(64)),
    "mobilenet_v3_large": (torchvision_model("mobilenet_v3_large"), image(64)),
    "mobilenet_v3_small": (torchvision_model("mobilenet_v3_small"), image(64)),
    "regnet_x_400mf": (torchvision_model("regnet_x_400mf"), image(64)),
    "regnet_y_400mf": (torchvision_model("regnet_y_400mf"), image(64)),
    "resnet18": (torchvision_model("resnet18"), image(64)),
    "resnet50": (torchvision_model("resnet50"), image(64)),
    "resnext50_32x4d": (torchvision_model("resnext50_32x4d"), image(64)),
    "shufflenet_v2_x0_5": (torchvision_model("shufflenet_v2_x0_5"), image(64)),
    "squeezenet1_0": (torchvision_model("squeezenet1_0"), image(64)),
    "squeezenet1_1": (torchvision_model("squeezenet1_1"), image(64)),
    "swin_t": (torchvision_model("swin_t"), image(224)),
    "vgg11": (torchvision_model("vgg11"), image(224)),
    "vit_b_16": (torchvision_model("vit_b_16"), image(224)),
    "wide_resnet50_2": (torchvision_model("wide_resnet50_2"), image(64)),
    "transformer_encoder": (TransformerEncoder, (16, 64)),
    "gru": (Gru, (16, 32)),
}

# Exported at every opset from 11 to 17 too: the models whose export changes most with the opset
# (HardSwish and HardSigmoid, channel shuffles, SiLU, LayerNorm, GELU and attention, recurrences).
ZOO_EVERY_OPSET = ("mobilenet_v3_small", "shufflenet_v2_x0_5", "efficientnet_b0",
                   "convnext_tiny", "transformer_encoder", "gru")
ZOO_OPSETS = range(11, 18)
# The lowest opset torch 1.13 exports a model at, where above 11: MaxViT's einsum needs 12.
ZOO_MIN_OPSET = {"maxvit_t": 12}

# One export of a zoo model. Dynamic cases have a symbolic batch axis, are exported from a
# one-entry example and run with DYNAMIC_RUN_BATCH entries; static cases run the example itself.
ZooCase = collections.namedtuple("ZooCase", "model opset batch dynamic")
DYNAMIC_RUN_BATCH = 2


def zoo_cases():
    """Every zoo model once with a dynamic batch axis, at an opset chosen by its place in ZOO
    (so that every opset gets several), then the ZOO_EVERY_OPSET models with a static batch of
    one at each opset."""
    cases = [ZooCase(name, max(ZOO_OPSETS[i % len(ZOO_OPSETS)], ZOO_MIN_OPSET.get(name, 0)),
                     DYNAMIC_RUN_BATCH, True) for i, name in enumerate(ZOO)]
    cases += [ZooCase(name, opset, 1, False) for name in ZOO_EVERY_OPSET for opset in ZOO_OPSETS]
    return cases


def case_id(case):
    """The file stem of a case: resnet18.opset11.batch2."""
    return f"{case.model}.opset{case.opset}.batch{case.batch}"


def build(name, seed=0):
    """The module `name` in eval mode with weights drawn from `seed`, and an input of its shape."""
    factory, shape = MODELS[name]
    torch.manual_seed(seed)
    module = factory().eval()
    example = torch.randn(*shape)
    return module, example


def build_zoo(name, seed=0):
    """The zoo module `name` in eval mode with weights drawn from `seed`, made informative."""
    factory, _ = ZOO[name]
    torch.manual_seed(seed)
    module = factory()
    make_informative(module, name, torch.Generator().manual_seed(seed + 1))
    return module.eval()


def make_informative(module, name, generator):
    """Replaces the values that default initialisation leaves trivial, which would hide a wrong
    import of what uses them. Batch norms get statistics measured on random inputs (their
    defaults, mean 0 and variance 1, make them almost the identity, and the activations of a
    deep network can then vanish until its output is little more than its last bias). Every
    parameter still constant after initialisation (normalisation scales and shifts, zero biases,
    ViT's zero classifier, ConvNeXt's 1e-6 layer scales) is spread by up to 10% of
    max(|value|, 1) around its value."""
    norms = [m for m in module.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    with torch.no_grad():
        if norms:
            for norm in norms:
                norm.reset_running_stats()
                norm.momentum = None  # a plain average over the batches below
            module.train()
            for _ in range(2):
                module(torch.randn(4, *ZOO[name][1], generator=generator))
        for parameter in module.parameters():
            first = float(parameter.flatten()[0])
            if bool((parameter == first).all()):
                noise = torch.rand(parameter.shape, generator=generator) - 0.5
                parameter.add_(noise * 0.2 * max(abs(first), 1.0))


def zoo_input(name, batch, seed=1):
    """A random input of `batch` entries for the zoo model `name`."""
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(batch, *ZOO[name][1], generator=generator)
