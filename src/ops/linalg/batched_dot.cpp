// SPDX-License-Identifier: Apache-2.0
// BatchedDot: (b, m, k) . (b, k, n) -> (b, m, n), one gemm per batch entry on strided views
// (oneDNN for float32, BLAS for float64; blas_util.h); small float32 entries are divided between
// the threads.
#include <fmt/format.h>

#include <algorithm>
#include <type_traits>
#include <vector>

#include "blas_util.h"
#include "tscope/graph/apply.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/linalg.h"
#include "tscope/ops/registry.h"
#include "tscope/ops/shape.h"
#include "tscope/threads/parallel_for.h"

namespace tscope::ops {
namespace {
bool known_differ(std::int64_t a, std::int64_t b) {
  return a != kUnknownDim && b != kUnknownDim && a != b;
}

std::vector<Type> infer_batched_dot(const InferContext& ctx) {
  detail::check_float_inputs(ctx, {3, 3});
  const Type& x = ctx.input_type(0);
  const Type& y = ctx.input_type(1);
  if (known_differ(x.dims[0], y.dims[0]) || known_differ(x.dims[2], y.dims[1])) {
    throw_error(ErrorKind::ShapeMismatch,
                "BatchedDot: shapes {} and {} do not fit (b, m, k) . (b, k, n)",
                x.dims.to_string(), y.dims.to_string());
  }
  return {Type{x.dtype, Dims{x.dims[0] != kUnknownDim ? x.dims[0] : y.dims[0], x.dims[1],
                             y.dims[2]}}};
}

void check_batched_shapes(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.input(1);
  if (x.shape()[0] != y.shape()[0] || x.shape()[2] != y.shape()[1]) {
    detail::throw_kernel_shape_error(
        ctx, fmt::format("BatchedDot: shapes {} and {} do not fit (b, m, k) . (b, k, n)",
                         x.shape().to_string(), y.shape().to_string()));
  }
}

void compute_batched_dot_reference(KernelContext& ctx) {
  check_batched_shapes(ctx);
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.input(1);
  const std::int64_t batch = x.shape()[0], m = x.shape()[1], k = x.shape()[2], n = y.shape()[2];
  const Dims& xs = x.strides();
  const Dims& ys = y.strides();
  Tensor& out = ctx.allocate_output(0, x.dtype(), Dims{batch, m, n});
  for (std::int64_t b = 0; b < batch; ++b) {
    for (std::int64_t i = 0; i < m; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        double total = 0;
        for (std::int64_t p = 0; p < k; ++p) {
          total += detail::element_at(x, b * xs[0] + i * xs[1] + p * xs[2]) *
                   detail::element_at(y, b * ys[0] + p * ys[1] + j * ys[2]);
        }
        detail::store_at(out, (b * m + i) * n + j, total);
      }
    }
  }
}

template <class T>
struct BatchJob {
  const std::vector<detail::BlasMatrix>* xs;
  const std::vector<detail::BlasMatrix>* ys;
  std::int64_t batch, m, k, n;
  int parts;
  T* data;
};

// The gemms of part `index`'s batch entries, each on the calling thread.
template <class T>
void multiply_entries(void* data, int index) {
  const BatchJob<T>& job = *static_cast<const BatchJob<T>*>(data);
  const std::int64_t first = job.batch * index / job.parts;
  const std::int64_t last = job.batch * (index + 1) / job.parts;
  for (std::int64_t b = first; b < last; ++b) {
    detail::blas_gemm_operands<T>((*job.xs)[b], (*job.ys)[b], job.m, job.n, job.k, T{1}, T{0},
                                  job.data + b * job.m * job.n);
  }
}

template <class T>
void run_batched_dot_blas(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.input(1);
  const std::int64_t batch = x.shape()[0], m = x.shape()[1], k = x.shape()[2], n = y.shape()[2];
  Tensor& out = ctx.allocate_output(0, x.dtype(), Dims{batch, m, n});
  T* data = static_cast<T*>(out.raw_data());
  if (m == 0 || n == 0 || batch == 0) return;
  if (k == 0) {
    std::fill_n(data, batch * m * n, T{0});
    return;
  }
  // Operands first, on this thread: a layout BLAS cannot read is copied here.
  std::vector<detail::BlasMatrix> xs;
  std::vector<detail::BlasMatrix> ys;
  xs.reserve(static_cast<std::size_t>(batch));
  ys.reserve(static_cast<std::size_t>(batch));
  for (std::int64_t b = 0; b < batch; ++b) {
    xs.push_back(detail::blas_matrix(
        x.view(Dims{m, k}, Dims{x.strides()[1], x.strides()[2]}, x.offset() + b * x.strides()[0]),
        ctx));
    ys.push_back(detail::blas_matrix(
        y.view(Dims{k, n}, Dims{y.strides()[1], y.strides()[2]}, y.offset() + b * y.strides()[0]),
        ctx));
  }
  // Float32 entries too small to split between threads (attention over short sequences or
  // windows: sgemm_row_major runs them on the calling thread) are divided between the threads
  // instead, whole entries each. Float64 stays serial: OpenBLAS's gemm runs its own threads.
  const double entry_flops =
      2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  int parts = 1;
  if (std::is_same_v<T, float> && entry_flops < detail::kMinFlopsForThreads &&
      entry_flops * static_cast<double>(batch) >= detail::kMinFlopsForThreads) {
    parts = static_cast<int>(std::min<std::int64_t>(batch, threads::parallel_threads()));
  }
  BatchJob<T> job{&xs, &ys, batch, m, k, n, parts, data};
  if (parts <= 1) {
    multiply_entries<T>(&job, 0);
    return;
  }
  threads::run_parts(parts, multiply_entries<T>, &job);
}

void compute_batched_dot_blas(KernelContext& ctx) {
  check_batched_shapes(ctx);
  if (ctx.input(0).dtype() == DType::Float32) {
    run_batched_dot_blas<float>(ctx);
  } else {
    run_batched_dot_blas<double>(ctx);
  }
}

bool batched_dot_blas_accepts(std::span<const Variable> inputs, const Attrs&) {
  return detail::all_same_float_dtype(inputs);
}

std::vector<Variable> pullback_batched_dot(const PullbackContext& ctx) {
  const Variable& g = ctx.output_grads[0];
  return {batched_dot(g, dimshuffle(ctx.inputs[1], {0, 2, 1})),
          batched_dot(dimshuffle(ctx.inputs[0], {0, 2, 1}), g)};
}

Cost batched_dot_cost(const CostContext& ctx) {
  const double batch = static_cast<double>(ctx.input_shapes[0][0]);
  const double m = static_cast<double>(ctx.input_shapes[0][1]);
  const double k = static_cast<double>(ctx.input_shapes[0][2]);
  const double n = static_cast<double>(ctx.input_shapes[1][2]);
  const double item = static_cast<double>(dtype_size(ctx.input_dtypes[0]));
  return Cost{2.0 * batch * m * n * k, batch * (m * k + k * n + m * n) * item};
}
}  // namespace

void register_batched_dot(OpRegistry& registry) {
  registry.add(
      {.name = "BatchedDot",
       .family = "BatchedDot",
       .summary =
           "batched 3-D matrix product, one gemm per batch entry (oneDNN float32, BLAS float64)",
       .num_inputs = 2,
       .infer = infer_batched_dot,
       .reference = {"ref", compute_batched_dot_reference},
       .fast = {"blas", compute_batched_dot_blas, batched_dot_blas_accepts,
                detail::gemm_library_label},
       .pullback = pullback_batched_dot,
       .cost = batched_dot_cost,
       .print = [](const OpDef&, const Attrs&) { return std::string("BatchedDot"); }});
}

}  // namespace tscope::ops

namespace tscope {

Variable batched_dot(const Variable& x, const Variable& y, const std::source_location& location) {
  return apply_op1(op_def("BatchedDot"), {x, y}, {}, location);
}

}  // namespace tscope
