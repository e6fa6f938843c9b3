// SPDX-License-Identifier: Apache-2.0
// LayerNorm: each row of x (the trailing axes from `axis` on) normalised to zero mean and unit
// variance, then scaled by gamma and shifted by beta, both broadcast over those axes:
//   y = (x - mean) / sqrt(var + epsilon) * gamma + beta,  var the population variance.
// gamma and beta are optional; the attrs "scale" and "bias" record which ones the node has, so
// the inputs stay positional (x, then gamma when present, then beta when present). One node
// reads x twice from cache and writes y once per row, where the decomposed form (two means, a
// subtraction, a square and a Composite) makes five passes over the data with three temporaries.
// The statistics are accumulated in double for float32 too.
#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "../broadcast_grad.h"
#include "../wide_clones.h"
#include "nnet_common.h"
#include "tscope/graph/apply.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/nnet.h"
#include "tscope/ops/reduce.h"
#include "tscope/ops/registry.h"
#include "tscope/threads/parallel_for.h"

namespace tscope::ops {
namespace {
struct LayerNormLayout {
  int axis = 0;
  double epsilon = 0;
  int gamma = -1;  ///< input index, -1 when absent
  int beta = -1;
};

LayerNormLayout layout_of(const Attrs& attrs) {
  LayerNormLayout layout;
  layout.axis = static_cast<int>(attrs.get_int("axis"));
  layout.epsilon = attrs.get_double("epsilon");
  int next = 1;
  if (attrs.get_bool("scale")) layout.gamma = next++;
  if (attrs.get_bool("bias")) layout.beta = next;
  return layout;
}

// A parameter broadcasts over the normalised axes: its rank is at most theirs, and each of its
// dims (aligned to the right) is 1 or the row's extent there.
void check_parameter(const InferContext& ctx, int index, int axis, const char* what) {
  const Type& x = ctx.input_type(0);
  const Type& p = ctx.input_type(index);
  if (p.dtype != x.dtype) {
    throw_error(ErrorKind::TypeMismatch, "LayerNorm: {} {} must have x's type {}", what,
                p.to_string(), x.to_string());
  }
  const int lead = x.rank() - p.rank();
  if (lead < axis) {
    throw_error(ErrorKind::ShapeMismatch,
                "LayerNorm: {} {} has more axes than the {} normalised axes of x {}", what,
                p.to_string(), x.rank() - axis, x.to_string());
  }
  for (int k = 0; k < p.rank(); ++k) {
    const std::int64_t pd = p.dims[k];
    const std::int64_t xd = x.dims[lead + k];
    if (pd != 1 && pd != kUnknownDim && xd != kUnknownDim && pd != xd) {
      throw_error(ErrorKind::ShapeMismatch, "LayerNorm: {} {} does not broadcast over x {}", what,
                  p.to_string(), x.to_string());
    }
  }
}

std::vector<Type> infer_layer_norm(const InferContext& ctx) {
  detail::check_float_rows(ctx, 0, "x");
  const LayerNormLayout layout = layout_of(ctx.attrs);
  const int rank = ctx.input_type(0).rank();
  if (layout.axis < 0 || layout.axis >= rank) {
    throw_error(ErrorKind::IndexOutOfRange, "LayerNorm: axis {} is outside x's rank {}",
                layout.axis, rank);
  }
  const int expected = 1 + (layout.gamma >= 0 ? 1 : 0) + (layout.beta >= 0 ? 1 : 0);
  if (ctx.num_inputs() != expected) {
    throw_error(ErrorKind::InvalidArgument, "LayerNorm: {} inputs where its attrs ask for {}",
                ctx.num_inputs(), expected);
  }
  if (layout.gamma >= 0) check_parameter(ctx, layout.gamma, layout.axis, "gamma");
  if (layout.beta >= 0) check_parameter(ctx, layout.beta, layout.axis, "beta");
  return {ctx.input_type(0)};
}

struct Rows {
  std::int64_t rows = 1;
  std::int64_t inner = 1;  ///< elements per row
};

Rows rows_of(const Dims& shape, int axis) {
  Rows r;
  for (int k = 0; k < shape.rank(); ++k) (k < axis ? r.rows : r.inner) *= shape[k];
  return r;
}

// The parameter's value for each element of a row, in row order (its broadcast over the
// normalised axes); ShapeMismatch naming the node when the run-time shapes do not broadcast.
std::vector<double> parameter_row(const KernelContext& ctx,
                                  const Tensor& p,
                                  const Dims& x,
                                  int axis) {
  const int lead = x.rank() - p.rank();
  bool fits = lead >= axis;
  for (int k = 0; fits && k < p.rank(); ++k)
    fits = p.shape()[k] == 1 || p.shape()[k] == x[lead + k];
  if (!fits) {
    Error error(ErrorKind::ShapeMismatch,
                fmt::format("LayerNorm: parameter {} does not broadcast over the rows of x {}",
                            p.shape().to_string(), x.to_string()));
    if (ctx.node != nullptr) error.add_context("in " + ctx.node->describe());
    throw error;
  }
  const Rows r = rows_of(x, axis);
  std::vector<double> row(static_cast<std::size_t>(r.inner));
  for (std::int64_t j = 0; j < r.inner; ++j) {
    // Row coordinates from the last axis back; the parameter's flat index from the same digits.
    std::int64_t rest = j;
    std::int64_t index = 0;
    std::int64_t stride = 1;
    for (int k = x.rank() - 1; k >= axis; --k) {
      const std::int64_t coordinate = rest % x[k];
      rest /= x[k];
      const int pk = k - lead;
      if (pk < 0) continue;
      if (p.shape()[pk] != 1) index += coordinate * stride;
      stride *= p.shape()[pk];
    }
    row[static_cast<std::size_t>(j)] = p.at(index);
  }
  return row;
}

void compute_layer_norm_reference(KernelContext& ctx) {
  const LayerNormLayout layout = layout_of(*ctx.attrs);
  const Tensor& x = ctx.input(0);
  const Rows r = rows_of(x.shape(), layout.axis);
  std::vector<double> gamma(static_cast<std::size_t>(r.inner), 1.0);
  std::vector<double> beta(static_cast<std::size_t>(r.inner), 0.0);
  if (layout.gamma >= 0)
    gamma = parameter_row(ctx, ctx.input(layout.gamma), x.shape(), layout.axis);
  if (layout.beta >= 0) beta = parameter_row(ctx, ctx.input(layout.beta), x.shape(), layout.axis);
  Tensor& out = ctx.allocate_output(0, x.dtype(), x.shape());
  for (std::int64_t row = 0; row < r.rows; ++row) {
    const std::int64_t base = row * r.inner;
    double total = 0;
    for (std::int64_t j = 0; j < r.inner; ++j) total += x.at(base + j);
    const double mean = total / static_cast<double>(r.inner);
    double squares = 0;
    for (std::int64_t j = 0; j < r.inner; ++j)
      squares += (x.at(base + j) - mean) * (x.at(base + j) - mean);
    const double inverse_std =
        1.0 / std::sqrt(squares / static_cast<double>(r.inner) + layout.epsilon);
    for (std::int64_t j = 0; j < r.inner; ++j) {
      const auto k = static_cast<std::size_t>(j);
      detail::store_float(out, base + j,
                          (x.at(base + j) - mean) * inverse_std * gamma[k] + beta[k]);
    }
  }
}

// Eight independent double chains, so the additions of a long row overlap and the compiler can
// keep them in vector registers.
template <class T>
[[gnu::always_inline]] inline double row_total(const T* row, std::int64_t count) {
  double lanes[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::int64_t c = 0;
  for (; c + 8 <= count; c += 8) {
    for (int k = 0; k < 8; ++k) lanes[k] += static_cast<double>(row[c + k]);
  }
  for (; c < count; ++c) lanes[0] += static_cast<double>(row[c]);
  return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
         ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
}

template <class T>
[[gnu::always_inline]] inline double row_squares(const T* row, std::int64_t count, double mean) {
  double lanes[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::int64_t c = 0;
  for (; c + 8 <= count; c += 8) {
    for (int k = 0; k < 8; ++k) {
      const double d = static_cast<double>(row[c + k]) - mean;
      lanes[k] += d * d;
    }
  }
  for (; c < count; ++c) {
    const double d = static_cast<double>(row[c]) - mean;
    lanes[0] += d * d;
  }
  return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
         ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
}

template <class T>
struct RowArgs {
  const T* in = nullptr;
  T* out = nullptr;
  const T* gamma = nullptr;  ///< one value per row element, or null (1)
  const T* beta = nullptr;   ///< one value per row element, or null (0)
  std::int64_t inner = 0;
  double epsilon = 0;
};

// Rows [first, last): the statistics from the row while it sits in cache, then one pass writing
// the output, with the loop chosen by which parameters exist so each stays a plain vector loop.
template <class T>
[[gnu::always_inline]] inline void layer_norm_rows(const RowArgs<T>& a,
                                                   std::int64_t first,
                                                   std::int64_t last) {
  const std::int64_t n = a.inner;
  for (std::int64_t r = first; r < last; ++r) {
    const T* row = a.in + r * n;
    T* out = a.out + r * n;
    const double mean = row_total(row, n) / static_cast<double>(n);
    const double variance = row_squares(row, n, mean) / static_cast<double>(n);
    // x - mean as (x - m) - d, with m the mean rounded to T and d what that rounding lost: x - m
    // is exact for the x near the mean, so a row far from zero keeps its small spread in float32.
    const T m = static_cast<T>(mean);
    const T d = static_cast<T>(mean - static_cast<double>(m));
    const T s = static_cast<T>(1.0 / std::sqrt(variance + a.epsilon));
    const T* __restrict g = a.gamma;
    const T* __restrict b = a.beta;
    if (g != nullptr && b != nullptr) {
      for (std::int64_t c = 0; c < n; ++c) out[c] = ((row[c] - m) - d) * s * g[c] + b[c];
    } else if (g != nullptr) {
      for (std::int64_t c = 0; c < n; ++c) out[c] = ((row[c] - m) - d) * s * g[c];
    } else if (b != nullptr) {
      for (std::int64_t c = 0; c < n; ++c) out[c] = ((row[c] - m) - d) * s + b[c];
    } else {
      for (std::int64_t c = 0; c < n; ++c) out[c] = ((row[c] - m) - d) * s;
    }
  }
}

TSCOPE_WIDE_CLONES void rows_of_float(const RowArgs<float>& a,
                                      std::int64_t first,
                                      std::int64_t last) {
  layer_norm_rows(a, first, last);
}

TSCOPE_WIDE_CLONES void rows_of_double(const RowArgs<double>& a,
                                       std::int64_t first,
                                       std::int64_t last) {
  layer_norm_rows(a, first, last);
}

#undef TSCOPE_WIDE_CLONES

// A parameter as one contiguous value per row element: the tensor itself in the common case (a
// contiguous vector as long as the row), otherwise its broadcast copied into `storage`.
template <class T>
const T* parameter_data(const KernelContext& ctx,
                        int index,
                        const Dims& x,
                        int axis,
                        std::int64_t inner,
                        std::vector<T>& storage,
                        Tensor& keep) {
  if (index < 0) return nullptr;
  const Tensor& p = ctx.input(index);
  if (p.is_contiguous() && p.numel() == inner && x.rank() - p.rank() >= axis) {
    bool same = true;
    for (int k = 0; k < p.rank(); ++k) same = same && p.shape()[k] == x[x.rank() - p.rank() + k];
    if (same) {
      keep = p;
      return static_cast<const T*>(keep.raw_data());
    }
  }
  const std::vector<double> row = parameter_row(ctx, p, x, axis);
  storage.assign(row.begin(), row.end());
  return storage.data();
}

template <class T>
void run_layer_norm_fast(KernelContext& ctx) {
  const LayerNormLayout layout = layout_of(*ctx.attrs);
  const Tensor x = ctx.input(0).contiguous();
  const Rows r = rows_of(x.shape(), layout.axis);
  std::vector<T> gamma_storage;
  std::vector<T> beta_storage;
  Tensor gamma_keep;
  Tensor beta_keep;
  RowArgs<T> args;
  args.gamma = parameter_data<T>(ctx, layout.gamma, x.shape(), layout.axis, r.inner, gamma_storage,
                                 gamma_keep);
  args.beta =
      parameter_data<T>(ctx, layout.beta, x.shape(), layout.axis, r.inner, beta_storage, beta_keep);
  Tensor& out = ctx.allocate_output(0, x.dtype(), x.shape());
  if (r.rows == 0 || r.inner == 0) return;
  args.in = static_cast<const T*>(x.raw_data());
  args.out = static_cast<T*>(out.raw_data());
  args.inner = r.inner;
  args.epsilon = layout.epsilon;
  // Chunks of elements, each taking the rows that start inside it: disjoint, and every row once.
  const std::int64_t n = r.inner;
  threads::for_each_chunk(r.rows * n, [&](std::int64_t begin, std::int64_t end) {
    if constexpr (sizeof(T) == sizeof(float)) {
      rows_of_float(args, (begin + n - 1) / n, (end + n - 1) / n);
    } else {
      rows_of_double(args, (begin + n - 1) / n, (end + n - 1) / n);
    }
  });
}

void compute_layer_norm_fast(KernelContext& ctx) {
  if (ctx.input(0).dtype() == DType::Float32) {
    run_layer_norm_fast<float>(ctx);
  } else {
    run_layer_norm_fast<double>(ctx);
  }
}

// With xhat = (x - mean) * rstd and gx = g * gamma:
//   dx = rstd * (gx - mean(gx) - xhat * mean(gx * xhat)),  dgamma = sum(g * xhat),  dbeta = sum(g)
// (means over the normalised axes; the sums over what each parameter broadcast over).
std::vector<Variable> pullback_layer_norm(const PullbackContext& ctx) {
  const LayerNormLayout layout = layout_of(ctx.attrs);
  const Variable& x = ctx.inputs[0];
  const Variable& g = ctx.output_grads[0];
  std::vector<std::int64_t> axes;
  for (int k = layout.axis; k < x.rank(); ++k) axes.push_back(k);
  const Variable centred = x - mean(x, axes, /*keepdims=*/true);
  const Variable inverse_std =
      reciprocal(sqrt(mean(sqr(centred), axes, /*keepdims=*/true) + layout.epsilon));
  const Variable normalised = centred * inverse_std;
  const Variable gx =
      layout.gamma >= 0 ? g * ctx.inputs[static_cast<std::size_t>(layout.gamma)] : g;
  const Variable dx = inverse_std * (gx - mean(gx, axes, /*keepdims=*/true) -
                                     normalised * mean(gx * normalised, axes, /*keepdims=*/true));
  std::vector<Variable> grads{dx};
  if (layout.gamma >= 0) {
    grads.push_back(detail::sum_to_type(g * normalised,
                                        ctx.inputs[static_cast<std::size_t>(layout.gamma)].type()));
  }
  if (layout.beta >= 0) {
    grads.push_back(
        detail::sum_to_type(g, ctx.inputs[static_cast<std::size_t>(layout.beta)].type()));
  }
  return grads;
}

Cost layer_norm_cost(const CostContext& ctx) {
  const double n = static_cast<double>(ctx.input_shapes[0].product());
  const double item = static_cast<double>(dtype_size(ctx.input_dtypes[0]));
  double parameters = 0;
  for (std::size_t k = 1; k < ctx.input_shapes.size(); ++k) {
    parameters += static_cast<double>(ctx.input_shapes[k].product());
  }
  // Sum; subtract, square and sum; subtract, scale, multiply by gamma, add beta.
  return Cost{8.0 * n, (2.0 * n + parameters) * item};
}

std::string print_layer_norm(const OpDef&, const Attrs& attrs) {
  return fmt::format("LayerNorm{{{},{:.6g}}}", attrs.get_int("axis"), attrs.get_double("epsilon"));
}
}  // namespace

void register_layer_norm(OpRegistry& registry) {
  registry.add(
      {.name = "LayerNorm",
       .family = "LayerNorm",
       .summary = "(x - mean) / sqrt(var + epsilon) * gamma + beta over the axes from axis on",
       .num_inputs = -1,
       .infer = infer_layer_norm,
       .reference = {"ref", compute_layer_norm_reference},
       .fast = {"cpu", compute_layer_norm_fast},
       .pullback = pullback_layer_norm,
       .cost = layer_norm_cost,
       .print = print_layer_norm});
}

}  // namespace tscope::ops

namespace tscope {

Variable layer_norm(const Variable& x,
                    const Variable& gamma,
                    const Variable& beta,
                    const LayerNormOptions& options,
                    const std::source_location& location) {
  std::vector<Variable> inputs{x};
  if (gamma.defined()) inputs.push_back(gamma);
  if (beta.defined()) inputs.push_back(beta);
  const Attrs attrs{{"axis", static_cast<std::int64_t>(normalize_axis(options.axis, x.rank()))},
                    {"epsilon", options.epsilon},
                    {"scale", gamma.defined()},
                    {"bias", beta.defined()}};
  return apply_op1(op_def("LayerNorm"), std::move(inputs), attrs, location);
}

}  // namespace tscope
