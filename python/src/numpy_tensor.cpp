// SPDX-License-Identifier: Apache-2.0
#include "numpy_tensor.h"

#include <mutex>
#include <string>
#include <vector>

#include "tscope/core/allocator.h"
#include "tscope/core/buffer.h"
#include "tscope/core/error.h"

namespace tscope::python {
namespace {

// Arrays whose last engine holder went away on a thread without the GIL. Taking the GIL there
// could deadlock (that thread may hold an engine lock that a thread holding the GIL waits for),
// so the reference is parked here and dropped by the next binding call that holds the GIL. The
// mutex is held only to move pointers, never while waiting for anything else.
std::mutex& pending_mutex() {
  static std::mutex& mutex = *new std::mutex();
  return mutex;
}
std::vector<PyObject*>& pending_arrays() {
  static std::vector<PyObject*>& arrays = *new std::vector<PyObject*>();
  return arrays;
}

// Lends an ndarray's memory to exactly one Buffer: allocate() hands out the array's data and
// deallocate(), run by the Buffer's destructor as its last act, drops the array reference and
// the lender. Buffers reach their memory only through an Allocator, so this is how the engine
// sees foreign memory without a copy.
class ArrayLender final : public Allocator {
 public:
  explicit ArrayLender(py::array array) : array_(array.release().ptr()) {}

  void* allocate(std::size_t /*bytes*/) override {
    return py::detail::array_proxy(array_)->data;
  }

  void deallocate(void* /*pointer*/, std::size_t /*bytes*/) noexcept override {
    if (Py_IsInitialized() != 0 && PyGILState_Check() != 0) {
      Py_DECREF(array_);
    } else if (Py_IsInitialized() != 0) {
      std::lock_guard lock(pending_mutex());
      pending_arrays().push_back(array_);
    }
    // After the interpreter has shut down, the reference is left to the process exit.
    delete this;
  }

 private:
  PyObject* array_;  // one owned reference
};

bool native_order(const py::dtype& dtype) {
  const char order = dtype.byteorder();
  return order == '=' || order == '|' ||
         (order == '<') == (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__);
}

Tensor lend(const py::array& array, DType dtype) {
  Dims shape;
  for (py::ssize_t axis = 0; axis < array.ndim(); ++axis) shape.push_back(array.shape(axis));
  const auto bytes = static_cast<std::size_t>(array.nbytes());
  auto* lender = new ArrayLender(array);
  std::shared_ptr<Buffer> buffer;
  try {
    buffer = std::make_shared<Buffer>(bytes, *lender);
  } catch (...) {
    delete lender;
    throw;
  }
  return Tensor::over_buffer(std::move(buffer), dtype, shape);
}

}  // namespace

DType dtype_from_numpy(const py::dtype& dtype) {
  const char kind = dtype.kind();
  const py::ssize_t size = dtype.itemsize();
  if (native_order(dtype)) {
    if (kind == 'b' && size == 1) return DType::Bool;
    if (kind == 'i' && size == 1) return DType::Int8;
    if (kind == 'u' && size == 1) return DType::UInt8;
    if (kind == 'i' && size == 4) return DType::Int32;
    if (kind == 'i' && size == 8) return DType::Int64;
    if (kind == 'f' && size == 4) return DType::Float32;
    if (kind == 'f' && size == 8) return DType::Float64;
  }
  throw_error(ErrorKind::TypeMismatch,
              "numpy dtype '{}' is not supported; expected bool, int8, uint8, int32, int64, "
              "float32 or float64 in native byte order",
              py::str(dtype.attr("name")).cast<std::string>());
}

py::dtype numpy_dtype(DType dtype) {
  // NumPy's type numbers (stable ABI values), indexed by DType.
  constexpr int kTypeNumbers[kNumDTypes] = {0 /*bool*/,  1 /*byte*/,   2 /*ubyte*/, 5 /*int*/,
                                            7 /*long*/, 11 /*float*/, 12 /*double*/};
  return py::dtype(kTypeNumbers[static_cast<int>(dtype)]);
}

std::optional<DType> dtype_from_object(const py::handle& object) {
  if (object.is_none()) return std::nullopt;
  if (py::isinstance<py::str>(object)) {
    const auto name = object.cast<std::string>();
    if (const std::optional<DType> parsed = parse_dtype(name)) return parsed;
    throw_error(ErrorKind::TypeMismatch,
                "dtype '{}' is unknown; expected bool, int8, uint8, int32, int64, float32 or "
                "float64",
                name);
  }
  return dtype_from_numpy(py::dtype::from_args(py::reinterpret_borrow<py::object>(object)));
}

Tensor tensor_from_object(const py::handle& object, std::optional<DType> dtype_hint) {
  py::array array;
  if (py::isinstance<py::array>(object)) {
    array = py::reinterpret_borrow<py::array>(object);
  } else {
    py::object numpy_dtype_hint = dtype_hint ? py::object(numpy_dtype(*dtype_hint)) : py::none();
    try {
      array = py::module_::import("numpy").attr("asarray")(object, numpy_dtype_hint);
    } catch (py::error_already_set& error) {
      throw_error(ErrorKind::TypeMismatch, "cannot convert a value of type '{}' to {} array: {}",
                  py::str(py::type::of(object).attr("__name__")).cast<std::string>(),
                  dtype_hint ? "a " + std::string(dtype_name(*dtype_hint)) : std::string("an"),
                  error.what());
    }
  }
  const DType dtype = dtype_from_numpy(array.dtype());
  if ((array.flags() & py::array::c_style) == 0) {
    array = py::module_::import("numpy").attr("ascontiguousarray")(array);
  }
  return lend(array, dtype);
}

namespace {

// NumPy's "safe" casts between the engine's dtypes: those that can never lose a value.
bool casts_safely(DType from, DType to) {
  if (from == to || from == DType::Bool) return true;
  switch (from) {
    case DType::Int8:
    case DType::UInt8:
      return to == DType::Int32 || to == DType::Int64 || is_floating(to);
    case DType::Int32:
      return to == DType::Int64 || to == DType::Float64;
    case DType::Int64:
      return to == DType::Float64;
    case DType::Float32:
      return to == DType::Float64;
    default:
      return false;
  }
}

std::string type_name_of(const py::handle& object) {
  return py::str(py::type::of(object).attr("__name__")).cast<std::string>();
}

// Whether `converted` holds the same numbers as NumPy's own reading of `object` (NaN equal to
// NaN), as Theano's lossless check of a non-array argument.
bool converts_losslessly(const py::handle& object, const py::object& converted) {
  const py::module_ numpy = py::module_::import("numpy");
  const py::object original = numpy.attr("asarray")(object);
  const bool floats = py::str(original.attr("dtype").attr("kind")).cast<std::string>() == "f";
  return numpy.attr("array_equal")(original, converted, py::arg("equal_nan") = floats).cast<bool>();
}

}  // namespace

Tensor tensor_for_input(const py::handle& object, DType dtype, InputCast cast, DType float_x) {
  if (py::isinstance<py::array>(object)) {
    const auto array = py::reinterpret_borrow<py::array>(object);
    const DType given = dtype_from_numpy(array.dtype());
    if (given == dtype) return tensor_from_object(object);
    const bool allowed =
        cast == InputCast::Any || (cast != InputCast::Strict && casts_safely(given, dtype));
    if (!allowed) {
      Dims shape;
      for (py::ssize_t axis = 0; axis < array.ndim(); ++axis) shape.push_back(array.shape(axis));
      if (cast == InputCast::Strict) {
        throw_error(ErrorKind::TypeMismatch,
                    "a {} {} array given to a strict {} input; pass an array of exactly its dtype",
                    dtype_name(given), shape.to_string(), dtype_name(dtype));
      }
      throw_error(ErrorKind::TypeMismatch,
                  "a {} {} array cannot become {} without risking a loss of precision; cast it, "
                  "or pass allow_input_downcast=True to function()",
                  dtype_name(given), shape.to_string(), dtype_name(dtype));
    }
    return tensor_from_object(object).astype(dtype);
  }
  if (cast == InputCast::Strict) {
    throw_error(ErrorKind::TypeMismatch,
                "a value of type '{}' given to a strict {} input; pass a numpy array of that dtype",
                type_name_of(object), dtype_name(dtype));
  }
  Tensor tensor = tensor_from_object(object, dtype);
  const bool python_float = Py_TYPE(object.ptr()) == &PyFloat_Type;
  if (cast == InputCast::Any || (cast == InputCast::FloatX && python_float && dtype == float_x)) {
    return tensor;
  }
  const py::object converted = array_from_tensor(tensor);
  if (!converts_losslessly(object, converted)) {
    const std::string text = py::str(object).cast<std::string>();
    throw_error(ErrorKind::TypeMismatch,
                "the value {} of type '{}' cannot become {} without a loss of precision; cast it, "
                "or pass allow_input_downcast=True to function()",
                text.size() > 80 ? text.substr(0, 77) + "..." : text, type_name_of(object),
                dtype_name(dtype));
  }
  return tensor;
}

Tensor tensor_copy_from_object(const py::handle& object, std::optional<DType> dtype_hint) {
  return tensor_from_object(object, dtype_hint).clone();
}

void release_pending_arrays() {
  std::vector<PyObject*> arrays;
  {
    std::lock_guard lock(pending_mutex());
    if (pending_arrays().empty()) return;
    arrays.swap(pending_arrays());
  }
  for (PyObject* array : arrays) Py_DECREF(array);
}

py::array array_from_tensor(Tensor tensor) {
  const auto item = static_cast<py::ssize_t>(dtype_size(tensor.dtype()));
  std::vector<py::ssize_t> shape;
  std::vector<py::ssize_t> strides;
  for (int axis = 0; axis < tensor.rank(); ++axis) {
    shape.push_back(tensor.shape()[axis]);
    strides.push_back(tensor.strides()[axis] * item);
  }
  void* data = tensor.raw_data();
  // The array's own reference plus at most the function's result slot, which the engine reuses
  // only once it is the sole holder.
  const bool writeable = held_by_at_most(tensor.buffer(), 2);
  py::dtype dtype = numpy_dtype(tensor.dtype());
  auto* kept = new Tensor(std::move(tensor));
  py::capsule owner(kept, [](void* pointer) { delete static_cast<Tensor*>(pointer); });
  py::array array(std::move(dtype), std::move(shape), std::move(strides), data, owner);
  if (!writeable) {
    py::detail::array_proxy(array.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  }
  return array;
}

}  // namespace tscope::python
