# SPDX-License-Identifier: Apache-2.0
"""Logistic regression, the classic first Theano program, with tensorscope (a port of
examples/logistic_regression.cpp): 400 samples of 784 features with labels from a hidden linear
rule, trained by gradient descent on the cross-entropy plus weight decay. Prints one
"step <i> loss <value>" line per step, then the profile of the training function.

    PYTHONPATH=build/release/python python3 examples/python/logistic_regression.py [steps]
"""
import sys

import numpy as np

import tensorscope as ts
import tensorscope.tensor as T


def main(steps=100):
    rng = np.random.default_rng(2024)
    samples, features = 400, 784
    data_x = rng.normal(size=(samples, features))
    data_y = (data_x @ rng.normal(size=features) >= 0).astype(np.float64)

    x = T.matrix("x")
    y = T.vector("y")
    w = ts.shared(np.zeros(features), "w")
    b = ts.shared(0.0, "b")

    p_1 = T.nnet.sigmoid(T.dot(x, w) + b)                 # probability that the label is 1
    xent = T.nnet.binary_crossentropy(p_1, y)             # cross-entropy per sample
    cost = xent.mean() + 0.001 * (w ** 2).sum()           # the cost to minimise
    gw, gb = ts.grad(cost, [w, b])
    learning_rate = 0.05
    train = ts.function([x, y], cost, updates=[(w, w - learning_rate * gw),
                                               (b, b - learning_rate * gb)],
                        name="train", profile=True)
    predict = ts.function([x], p_1 > 0.5)

    for step in range(steps):
        print(f"step {step} loss {float(train(data_x, data_y)):.6f}")
    print(f"accuracy {np.mean(predict(data_x) == data_y):.3f}")
    train.profile.summary()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100)
