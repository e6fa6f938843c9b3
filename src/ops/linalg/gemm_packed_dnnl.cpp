// SPDX-License-Identifier: Apache-2.0
// dnnl_sgemm packs the weights again on every call, which a 64-row product cannot amortise. The
// matmul primitive with constant weights packed once, in the layout it chooses (oneDNN's brgemm
// kernels on AVX-512), skips that (docs/performance.md, "Float32 matrix products on oneDNN").
#include "gemm_packed_dnnl.h"

#include <memory>

#include "../conv/dnnl_util.h"
#include "tscope/graph/apply.h"

namespace tscope::ops::detail {
namespace {
constexpr auto kF32 = dnnl::memory::data_type::f32;

struct PackedGemmState final : KernelState {
  std::int64_t m = -1;
  Dims x_strides;
  bool unimplemented = false;
  DnnlCall matmul;
  dnnl::memory packed_weights;
};

// y is a constant or a view of one, so its values are the same on every call.
bool weights_never_change(const KernelContext& ctx) {
  if (ctx.node == nullptr) return false;
  const Variable& y = ctx.node->input(2);
  if (y.kind() == VariableKind::Constant) return true;
  const ApplyNode* view = y.owner();
  return view != nullptr && view->op().name == "DimShuffle" &&
         view->input(0).kind() == VariableKind::Constant;
}

dnnl::memory::desc strided_desc(std::int64_t rows, std::int64_t cols, const Dims& strides) {
  return dnnl::memory::desc({rows, cols}, kF32, {strides[0], strides[1]});
}

// A matrix oneDNN can read in place: one axis dense, the other at least that wide (row- or
// column-major, possibly padded); broadcast (stride 0) and overlapping views are not.
bool readable(const Tensor& matrix) {
  const Dims& strides = matrix.strides();
  const Dims& shape = matrix.shape();
  return (strides[1] == 1 && strides[0] >= shape[1]) || (strides[0] == 1 && strides[1] >= shape[0]);
}

// Builds the primitive for this m and x layout into `state`, with y reordered into the weights
// layout the primitive chose; false when oneDNN has no implementation.
bool build(PackedGemmState& state, const Tensor& x, const Tensor& y, std::int64_t m,
           std::int64_t k, std::int64_t n, bool has_bias) {
  const dnnl::memory::desc x_md = strided_desc(m, k, x.strides());
  const dnnl::memory::desc weights_any({k, n}, kF32, dnnl::memory::format_tag::any);
  const dnnl::memory::desc bias_md =
      has_bias ? dnnl::memory::desc({1, n}, kF32, dnnl::memory::format_tag::ab)
               : dnnl::memory::desc();
  const dnnl::memory::desc out_md({m, n}, kF32, dnnl::memory::format_tag::ab);
  try {
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(x_md, weights_any, bias_md, out_md),
                                          dnnl_attr(), dnnl_engine());
    state.matmul.primitive = dnnl::matmul(pd);
    state.matmul.impl = pd.impl_info_str();
    state.packed_weights = dnnl::memory(pd.weights_desc(), dnnl_engine());
    // oneDNN reads the plain weights only; the handle is non-const in its API.
    dnnl::memory plain(strided_desc(k, n, y.strides()), dnnl_engine(),
                       const_cast<void*>(y.raw_data()));  // NOLINT(cppcoreguidelines-pro-type-const-cast)
    const DnnlCall pack{dnnl::reorder(plain, state.packed_weights),
                        {{DNNL_ARG_FROM, plain}, {DNNL_ARG_TO, state.packed_weights}},
                        ""};
    dnnl_execute(pack);
    state.matmul.args = {{DNNL_ARG_SRC, dnnl_unbound_memory(x_md)},
                         {DNNL_ARG_WEIGHTS, state.packed_weights},
                         {DNNL_ARG_DST, dnnl_unbound_memory(out_md)}};
    if (has_bias) state.matmul.args.emplace(DNNL_ARG_BIAS, dnnl_unbound_memory(bias_md));
    dnnl_add_scratchpad(state.matmul, pd);
    return true;
  } catch (const dnnl::error& error) {
    if (is_unimplemented(error, "a packed-weights matmul")) return false;
    throw;
  }
}
}  // namespace

bool run_gemm_packed_dnnl(KernelContext& ctx, std::int64_t m, std::int64_t k, std::int64_t n,
                          const Dims& z_strides, Tensor& out) {
  const double alpha = ctx.attrs->get_double("alpha");
  const double beta = ctx.attrs->get_double("beta");
  const bool has_bias = beta != 0.0;
  // A bias row: z broadcast along m and dense along n.
  const bool bias_row = z_strides[0] == 0 && (z_strides[1] == 1 || n == 1);
  if (alpha != 1.0 || (has_bias && (beta != 1.0 || !bias_row)) || m == 0 || n == 0 || k == 0 ||
      !weights_never_change(ctx)) {
    return false;
  }
  const Tensor& x = ctx.input(1);
  const Tensor& y = ctx.input(2);
  if (!readable(x) || !readable(y)) return false;
  auto* state = dynamic_cast<PackedGemmState*>(ctx.state.get());
  if (state == nullptr || state->m != m || !(state->x_strides == x.strides())) {
    auto fresh = std::make_shared<PackedGemmState>();
    fresh->m = m;
    fresh->x_strides = x.strides();
    fresh->unimplemented = !build(*fresh, x, y, m, k, n, has_bias);
    state = fresh.get();
    ctx.state = std::move(fresh);
  }
  if (state->unimplemented) return false;
  dnnl_bind(state->matmul, DNNL_ARG_SRC, x.raw_data());
  if (has_bias) dnnl_bind(state->matmul, DNNL_ARG_BIAS, ctx.input(0).raw_data());
  dnnl_bind(state->matmul, DNNL_ARG_DST, out.raw_data());
  dnnl_execute(state->matmul);
  return true;
}

}  // namespace tscope::ops::detail
