# SPDX-License-Identifier: Apache-2.0
"""A 784-512-512-10 multilayer perceptron with relu, softmax cross-entropy on integer labels and
SGD with momentum, on synthetic data (labels from a random linear teacher, so the task is
learnable); a port of examples/mlp.cpp. Prints one "step <i> loss <value>" line per step, then
the profile of the training function, whose Apply rows point at the lines below.

    PYTHONPATH=build/release/python python3 examples/python/mlp.py [steps]
"""
import sys

import numpy as np

import tensorscope as ts
import tensorscope.tensor as T


def main(steps=40):
    sizes = [784, 512, 512, 10]
    batch, learning_rate, momentum = 128, 0.05, 0.9
    rng = np.random.default_rng(7)
    inputs = rng.normal(size=(batch, sizes[0])).astype(np.float32)
    labels = np.argmax(inputs @ rng.normal(size=(sizes[0], sizes[-1])), axis=1)

    x = T.fmatrix("x")
    y = T.lvector("y")
    params = []
    h = x
    for layer, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        scale = np.sqrt(2.0 / fan_in)   # He initialisation
        w = ts.shared(rng.normal(0.0, scale, (fan_in, fan_out)).astype(np.float32), f"W{layer}")
        b = ts.shared(np.zeros(fan_out, dtype=np.float32), f"b{layer}")
        params += [w, b]
        h = T.dot(h, w) + b                                  # Gemm after rewriting
        if layer + 2 < len(sizes):
            h = T.nnet.relu(h)
    loss = T.nnet.categorical_crossentropy(T.nnet.softmax(h), y).mean()
    grads = ts.grad(loss, params)
    updates = []
    for param, grad in zip(params, grads):
        velocity = ts.shared(np.zeros_like(param.get_value()), "v_" + param.name)
        new_velocity = momentum * velocity - learning_rate * grad
        updates += [(velocity, new_velocity), (param, param + new_velocity)]
    train = ts.function([x, y], loss, updates=updates, name="train", profile=True)

    for step in range(steps):
        print(f"step {step} loss {float(train(inputs, labels)):.6f}")
    train.profile.summary()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 40)
