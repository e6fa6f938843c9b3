// SPDX-License-Identifier: Apache-2.0
// ARange{dtype}(start, stop, step): numpy.arange over rank-0 inputs (Theano's ARange). The length,
// max(0, ceil((stop - start) / step)), is static when all three inputs are constants and known
// only at run time otherwise. Integer inputs are read exactly (int64 arithmetic); any float input
// makes the bounds doubles. The gradient is Theano's: none through an integer output; for a float
// one, start receives sum(g), step sum(g * arange(n)), and stop, which only sets the length, none.
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <optional>

#include "../broadcast_grad.h"
#include "shape_values.h"
#include "tscope/core/checked_math.h"
#include "tscope/graph/apply.h"
#include "tscope/graph/constructors.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/reduce.h"
#include "tscope/ops/registry.h"
#include "tscope/ops/shape.h"

namespace tscope::ops {
namespace {
constexpr const char* kInputNames[] = {"start", "stop", "step"};

// One bound, exactly as given: int64 for integer dtypes, double for floats.
struct Bound {
  bool integral = true;
  std::int64_t integer = 0;
  double real = 0;
  [[nodiscard]] double as_double() const { return integral ? static_cast<double>(integer) : real; }
};

Bound read_bound(const Tensor& value) {
  return visit_dtype(value.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T element = *static_cast<const T*>(value.raw_data());
    Bound bound;
    if constexpr (std::is_floating_point_v<T>) {
      bound.integral = false;
      bound.real = static_cast<double>(element);
    } else {
      bound.integer = static_cast<std::int64_t>(element);
    }
    return bound;
  });
}

// The bound when known at build time: a constant, or an integer whose value the graph knows (the
// extent behind Shape_i of a static axis).
std::optional<Bound> static_bound(const Variable& value) {
  if (value.kind() == VariableKind::Constant) return read_bound(value.constant_value());
  if (!is_integral(value.dtype())) return std::nullopt;
  const std::optional<std::int64_t> known = detail::static_scalar(value);
  if (!known) return std::nullopt;
  return Bound{.integral = true, .integer = *known};
}

std::string bounds_string(const Bound (&bounds)[3]) {
  auto text = [](const Bound& b) {
    return b.integral ? fmt::format("{}", b.integer) : fmt::format("{}", b.real);
  };
  return fmt::format("arange({}, {}, {})", text(bounds[0]), text(bounds[1]), text(bounds[2]));
}

[[noreturn]] void throw_too_long(const Bound (&bounds)[3]) {
  throw_error(ErrorKind::InvalidArgument,
              "ARange: the length of {} overflows; expected at most {} elements",
              bounds_string(bounds), std::numeric_limits<std::int64_t>::max());
}

// max(0, ceil((stop - start) / step)); throws InvalidArgument for a zero or non-finite step, a
// non-finite bound, or a length (or byte count of `dtype`) that overflows.
std::int64_t range_length(const Bound (&bounds)[3], DType dtype) {
  const Bound& start = bounds[0];
  const Bound& stop = bounds[1];
  const Bound& step = bounds[2];
  if (step.as_double() == 0) {
    throw_error(ErrorKind::InvalidArgument, "ARange: step is 0 in {}; expected a nonzero step",
                bounds_string(bounds));
  }
  std::int64_t length = 0;
  if (start.integral && stop.integral && step.integral) {
    std::int64_t span = 0;
    if (__builtin_sub_overflow(stop.integer, start.integer, &span)) throw_too_long(bounds);
    length = span / step.integer;
    const std::int64_t remainder = span % step.integer;
    if (remainder != 0 && (remainder > 0) == (step.integer > 0)) ++length;
  } else {
    for (const Bound& bound : bounds) {
      if (!std::isfinite(bound.as_double())) {
        throw_error(ErrorKind::InvalidArgument, "ARange: {} has a bound that is not finite",
                    bounds_string(bounds));
      }
    }
    const double steps = std::ceil((stop.as_double() - start.as_double()) / step.as_double());
    // 2^63 is the first double past int64's range.
    if (!(steps < 9223372036854775808.0)) throw_too_long(bounds);
    length = static_cast<std::int64_t>(steps);
  }
  length = std::max<std::int64_t>(length, 0);
  (void)checked_byte_count(Dims{length}, dtype, "the ARange output");
  return length;
}

std::vector<Type> infer_arange(const InferContext& ctx) {
  const DType dtype = ctx.attrs.get_dtype("dtype");
  if (dtype == DType::Bool) {
    throw_error(ErrorKind::TypeMismatch, "ARange: dtype bool is not a number type");
  }
  std::optional<Bound> known[3];
  for (int i = 0; i < 3; ++i) {
    const Type& type = ctx.input_type(i);
    if (type.rank() != 0 || type.dtype == DType::Bool) {
      throw_error(ErrorKind::TypeMismatch, "ARange: {} is {}; expected a number scalar (rank 0)",
                  kInputNames[i], type.to_string());
    }
    known[i] = static_bound(ctx.inputs[i]);
  }
  if (known[2] && known[2]->as_double() == 0) {
    throw_error(ErrorKind::InvalidArgument, "ARange: step is 0; expected a nonzero step");
  }
  std::int64_t length = kUnknownDim;
  if (known[0] && known[1] && known[2]) {
    const Bound bounds[3] = {*known[0], *known[1], *known[2]};
    length = range_length(bounds, dtype);
  }
  return {Type{dtype, Dims{length}}};
}

template <class T>
void fill_range(
    const Bound& start, const Bound& step, bool integral, T* data, std::int64_t length) {
  if (integral) {
    // start + i * step lies between start and stop, so it cannot overflow.
    for (std::int64_t i = 0; i < length; ++i) {
      data[i] = static_cast<T>(start.integer + i * step.integer);
    }
    return;
  }
  const double first = start.as_double();
  const double delta = step.as_double();
  for (std::int64_t i = 0; i < length; ++i) {
    data[i] = static_cast<T>(first + static_cast<double>(i) * delta);
  }
}

void compute_arange(KernelContext& ctx) {
  const Bound bounds[3] = {read_bound(ctx.input(0)), read_bound(ctx.input(1)),
                           read_bound(ctx.input(2))};
  const DType dtype = ctx.attrs->get_dtype("dtype");
  const std::int64_t length = range_length(bounds, dtype);
  Tensor& out = ctx.allocate_output(0, dtype, Dims{length});
  const bool integral = bounds[0].integral && bounds[1].integral && bounds[2].integral;
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    fill_range(bounds[0], bounds[2], integral, static_cast<T*>(out.raw_data()), length);
  });
}

std::vector<Variable> pullback_arange(const PullbackContext& ctx) {
  std::vector<Variable> grads(3);
  const Variable& g = ctx.output_grads[0];
  const DType dtype = ctx.attrs.get_dtype("dtype");
  if (!g.defined() || !is_floating(dtype)) return grads;
  if (is_floating(ctx.inputs[0].dtype())) {
    grads[0] = detail::cast_like(sum(g), ctx.inputs[0].dtype());
  }
  if (is_floating(ctx.inputs[2].dtype())) {
    const Variable steps =
        arange(constant(Tensor::scalar(0, DType::Int64)), shape_i(ctx.outputs[0], 0),
               constant(Tensor::scalar(1, DType::Int64)), dtype);
    grads[2] = detail::cast_like(sum(g * steps), ctx.inputs[2].dtype());
  }
  return grads;
}

std::string print_arange(const OpDef&, const Attrs& attrs) {
  return fmt::format("ARange{{dtype='{}'}}", dtype_name(attrs.get_dtype("dtype")));
}

Cost arange_cost(const CostContext& ctx) {
  const auto count = static_cast<double>(ctx.output_shapes[0].product());
  return Cost{count, count * static_cast<double>(dtype_size(ctx.attrs.get_dtype("dtype")))};
}
}  // namespace

void register_arange(OpRegistry& registry) {
  registry.add({.name = "ARange",
                .family = "ARange",
                .summary = "numpy.arange(start, stop, step) from three scalars",
                .num_inputs = 3,
                .infer = infer_arange,
                .reference = {"ref", compute_arange},
                .pullback = pullback_arange,
                .cost = arange_cost,
                .print = print_arange});
}

}  // namespace tscope::ops

namespace tscope {

DType arange_dtype(const Variable& start, const Variable& stop, const Variable& step) {
  DType dtype = promote_types(promote_types(start.dtype(), stop.dtype()), step.dtype());
  return is_floating(dtype) ? dtype : DType::Int64;
}

Variable arange(const Variable& start,
                const Variable& stop,
                const Variable& step,
                std::optional<DType> dtype,
                const std::source_location& location) {
  const DType out = dtype.value_or(arange_dtype(start, stop, step));
  return apply_op1(op_def("ARange"), {start, stop, step}, Attrs{{"dtype", out}}, location);
}

}  // namespace tscope
