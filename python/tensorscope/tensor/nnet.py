# SPDX-License-Identifier: Apache-2.0
"""tensorscope.tensor.nnet (T.nnet): Theano's neural-network functions on the engine's ops."""
from .. import _core

sigmoid = _core.sigmoid
softplus = _core.softplus
relu = _core.relu
softmax = _core.softmax
logsoftmax = _core.log_softmax
log_softmax = _core.log_softmax
categorical_crossentropy = _core.categorical_crossentropy
crossentropy_categorical_1hot = _core.crossentropy_categorical_1hot
binary_crossentropy = _core.binary_crossentropy
softmax_cross_entropy = _core.softmax_cross_entropy
