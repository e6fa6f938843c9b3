// SPDX-License-Identifier: Apache-2.0
#pragma once
/// NumPy arrays in and out of the engine without copies where the memory allows it.
///
/// In: a C-contiguous array of a supported dtype in native byte order becomes a Tensor over the
/// array's own memory (the Tensor's buffer keeps the array alive). The engine never writes into
/// the buffers of graph inputs, so read-only arrays are lent the same way. Other layouts are
/// copied to a C-contiguous array first; other Python values go through numpy.asarray.
///
/// Out: a Tensor becomes an array over the Tensor's buffer (any strides), kept alive by a
/// capsule holding the Tensor. The array is writeable only when nothing but the function's own
/// result slot shares the buffer, so writing into a result can never change a constant, a shared
/// variable or another result.
#include <optional>

#include <pybind11/numpy.h>

#include "tscope/core/tensor.h"

namespace tscope::python {
namespace py = pybind11;

/// The engine dtype of a NumPy dtype; throws Error(TypeMismatch) naming it when unsupported.
[[nodiscard]] DType dtype_from_numpy(const py::dtype& dtype);
/// The NumPy dtype of an engine dtype.
[[nodiscard]] py::dtype numpy_dtype(DType dtype);
/// The engine dtype named by a Python value: None (nullopt), a string ("float32"), a NumPy dtype
/// or a type such as numpy.float32.
[[nodiscard]] std::optional<DType> dtype_from_object(const py::handle& object);

/// A Tensor for `object` (see above). A value that is not an ndarray is converted with
/// numpy.asarray, to `dtype_hint` when given.
[[nodiscard]] Tensor tensor_from_object(const py::handle& object,
                                        std::optional<DType> dtype_hint = std::nullopt);
/// How a function argument may be converted to its input's dtype (Theano's strict and
/// allow_input_downcast).
enum class InputCast {
  Strict,  ///< only an ndarray of exactly the dtype
  Safe,    ///< allow_input_downcast=False: arrays cast only where no precision can be lost
           ///< (NumPy's "safe" casts), other values only when converting them loses nothing
  FloatX,  ///< allow_input_downcast=None: Safe, and a Python float may become floatX
  Any,     ///< allow_input_downcast=True: every value is cast, as NumPy's astype would
};

/// The Tensor a function argument gives an input of `dtype`: `object` itself (as
/// tensor_from_object) when it is an array of that dtype, else converted as `cast` allows (a
/// copy); throws TypeMismatch explaining the refusal otherwise. `float_x` is ts.config.floatX when
/// the function was compiled.
[[nodiscard]] Tensor tensor_for_input(const py::handle& object,
                                      DType dtype,
                                      InputCast cast,
                                      DType float_x);
/// A deep copy of `object` as a Tensor (shared variables own their values, as in Theano).
[[nodiscard]] Tensor tensor_copy_from_object(const py::handle& object,
                                             std::optional<DType> dtype_hint = std::nullopt);
/// Drops the array references that the engine released on threads without the GIL; call with
/// the GIL held.
void release_pending_arrays();

/// An ndarray over `tensor`'s memory (see above).
[[nodiscard]] py::array array_from_tensor(Tensor tensor);

}  // namespace tscope::python
