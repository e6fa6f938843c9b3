# SPDX-License-Identifier: Apache-2.0
"""The models of the training-step comparison (scripts/bench_training, docs/onnx.md, "Training
speed"), their ONNX export for training and one PyTorch training step.

MODELS: name -> (module factory, input shape, number of classes). Every model ends in logits of
shape (batch, classes), so that all three train on softmax cross-entropy. Exports keep what
training needs: the module is exported in eval mode with TrainingMode.PRESERVE, so batch norms
stay batch norms (EVAL folds them into the convolutions), and without constant folding, so that
every weight stays an initializer named as in the module's state_dict.
"""
import torch
import torchvision

from models import Mlp

LEARNING_RATE = 0.01
MOMENTUM = 0.9


class LstmClassifier(torch.nn.Module):
    """A 1-layer LSTM, 64 -> 128, over (seq, batch, 64), and a linear head on its last step."""

    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(input_size=64, hidden_size=128, num_layers=1)
        self.head = torch.nn.Linear(128, 10)

    def forward(self, x):
        return self.head(self.lstm(x)[0][-1])


MODELS = {
    "mlp": (Mlp, (64, 784), 10),
    "resnet18": (lambda: torchvision.models.resnet18(), (8, 3, 224, 224), 1000),
    "lstm": (LstmClassifier, (50, 16, 64), 10),
}


def build(name, seed=0):
    """(module in train mode, input batch, int64 labels) of `name`, drawn from `seed`."""
    factory, shape, classes = MODELS[name]
    torch.manual_seed(seed)
    module = factory().train()
    spread_batch_norms(module)
    batch = torch.randn(*shape)
    batch_size = shape[1] if name == "lstm" else shape[0]
    labels = torch.randint(0, classes, (batch_size,))
    return module, batch, labels


def spread_batch_norms(module):
    """Draws every batch norm's scale, shift and running averages around their defaults. The
    exporter merges initializers of equal value, so default batch norms of one width would share
    one scale and one shift in the ONNX file, and train as one."""
    with torch.no_grad():
        for child in module.modules():
            if isinstance(child, torch.nn.modules.batchnorm._BatchNorm):
                child.weight.uniform_(0.9, 1.1)
                child.bias.uniform_(-0.1, 0.1)
                child.running_mean.uniform_(-0.1, 0.1)
                child.running_var.uniform_(0.9, 1.1)


def export(module, batch, path):
    """Exports `module` for training (see the module's docstring); it is left in train mode."""
    module.eval()
    torch.onnx.export(module, (batch,), path, opset_version=17, input_names=["input"],
                      output_names=["output"], do_constant_folding=False,
                      training=torch.onnx.TrainingMode.PRESERVE)
    module.train()


def optimizer(module):
    return torch.optim.SGD(module.parameters(), lr=LEARNING_RATE, momentum=MOMENTUM)


def step(module, opt, batch, labels):
    """One training step: forward, softmax cross-entropy, backward, SGD with momentum."""
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.cross_entropy(module(batch), labels)
    loss.backward()
    opt.step()
    return loss
