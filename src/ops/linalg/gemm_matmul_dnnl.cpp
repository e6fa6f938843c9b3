// SPDX-License-Identifier: Apache-2.0
// dnnl_sgemm packs the weights again on every call, which a 64-row product cannot amortise. The
// matmul primitive with weights packed once, in the layout it chooses (oneDNN's brgemm kernels on
// AVX-512), skips that (docs/performance.md, "Float32 matrix products on oneDNN"). Weights that a
// loop holds fixed through one execution (a recurrent weight read by every step) are packed once
// per execution. Two kinds of product whose weights change every call run here too, on the
// weights as they are: one whose added term is a transposed matrix, since the primitive adds the
// term in place, and one with column-major weights (ONNX Gemm's transB while the model trains),
// whose transposition the primitive's copy of the weights absorbs at less cost than sgemm's
// pack.
#include "gemm_matmul_dnnl.h"

#include <memory>

#include "../conv/dnnl_util.h"
#include "tscope/graph/apply.h"
#include "tscope/graph/loop_invariants.h"

namespace tscope::ops::detail {
namespace {
constexpr auto kF32 = dnnl::memory::data_type::f32;

/// Below this many rows, dnnl_sgemm multiplies by weights that change every call faster than the
/// primitive reading them in place.
constexpr std::int64_t kMinRowsForPlainWeights = 16;

// What the product adds to x.y: nothing (beta 0), a row of n biases broadcast over the m rows
// (the primitive's bias), or a full (m, n) matrix (a binary post-op reading it in place).
enum class Addend { None, BiasRow, Matrix };

struct MatmulGemmState final : KernelState {
  std::int64_t m = -1;
  Dims x_strides;
  Dims y_strides;
  Dims z_strides;
  Addend addend = Addend::None;
  /// The Gemm's erf GELU, a post-op after the addend.
  bool gelu = false;
  /// Weights reordered into the primitive's layout (held still), or read in place every call.
  bool packs = true;
  bool unimplemented = false;
  DnnlCall matmul;
  DnnlCall pack;
  dnnl::memory packed_weights;
  bool packed = false;
  /// The loop execution the packed weights belong to (loop_invariant_execution); 0 for constant
  /// weights, packed once.
  std::uint64_t packed_for = 0;
};

dnnl::memory::desc strided_desc(std::int64_t rows, std::int64_t cols, const Dims& strides) {
  return dnnl::memory::desc({rows, cols}, kF32, {strides[0], strides[1]});
}

// A matrix oneDNN can read in place: one axis dense, the other at least that wide (row- or
// column-major, possibly padded); broadcast (stride 0) and overlapping views are not.
bool readable(const Dims& shape, const Dims& strides) {
  return (strides[1] == 1 && strides[0] >= shape[1]) || (strides[0] == 1 && strides[1] >= shape[0]);
}

// Builds the primitive for this m and these layouts into `state` and, when it packs, the reorder
// of y into the weights layout the primitive chose; false when oneDNN has no implementation.
bool build(MatmulGemmState& state, std::int64_t k, std::int64_t n) {
  const std::int64_t m = state.m;
  const dnnl::memory::desc x_md = strided_desc(m, k, state.x_strides);
  const dnnl::memory::desc plain_weights = strided_desc(k, n, state.y_strides);
  const dnnl::memory::desc weights_md =
      state.packs ? dnnl::memory::desc({k, n}, kF32, dnnl::memory::format_tag::any) : plain_weights;
  const dnnl::memory::desc bias_md =
      state.addend == Addend::BiasRow
          ? dnnl::memory::desc({1, n}, kF32, dnnl::memory::format_tag::ab)
          : dnnl::memory::desc();
  const dnnl::memory::desc out_md({m, n}, kF32, dnnl::memory::format_tag::ab);
  const dnnl::memory::desc z_md = strided_desc(m, n, state.z_strides);
  try {
    dnnl::primitive_attr attr = dnnl_attr();
    dnnl::post_ops ops;
    if (state.addend == Addend::Matrix) ops.append_binary(dnnl::algorithm::binary_add, z_md);
    if (state.gelu) ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_gelu_erf, 0.0f, 0.0f);
    attr.set_post_ops(ops);
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(x_md, weights_md, bias_md, out_md),
                                          attr, dnnl_engine());
    state.matmul.primitive = dnnl::matmul(pd);
    state.matmul.impl = pd.impl_info_str();
    if (state.packs) {
      state.packed_weights = dnnl::memory(pd.weights_desc(), dnnl_engine());
      const dnnl::memory plain = dnnl_unbound_memory(plain_weights);
      state.pack = {dnnl::reorder(plain, state.packed_weights),
                    {{DNNL_ARG_FROM, plain}, {DNNL_ARG_TO, state.packed_weights}},
                    ""};
    }
    state.matmul.args = {
        {DNNL_ARG_SRC, dnnl_unbound_memory(x_md)},
        {DNNL_ARG_WEIGHTS, state.packs ? state.packed_weights : dnnl_unbound_memory(plain_weights)},
        {DNNL_ARG_DST, dnnl_unbound_memory(out_md)}};
    if (state.addend == Addend::BiasRow) {
      state.matmul.args.emplace(DNNL_ARG_BIAS, dnnl_unbound_memory(bias_md));
    }
    if (state.addend == Addend::Matrix) {
      state.matmul.args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1,
                                dnnl_unbound_memory(z_md));
    }
    dnnl_add_scratchpad(state.matmul, pd);
    return true;
  } catch (const dnnl::error& error) {
    if (is_unimplemented(error, "a packed-weights matmul")) return false;
    throw;
  }
}
}  // namespace

bool run_gemm_matmul_dnnl(KernelContext& ctx,
                          std::int64_t m,
                          std::int64_t k,
                          std::int64_t n,
                          const Dims& z_strides,
                          Tensor& out) {
  const double alpha = ctx.attrs->get_double("alpha");
  const double beta = ctx.attrs->get_double("beta");
  const bool gelu = ctx.attrs->has("activation");
  if (alpha != 1.0 || (beta != 0.0 && beta != 1.0) || m == 0 || n == 0 || k == 0) return false;
  Addend addend = Addend::None;
  if (beta == 1.0) {
    const bool bias_row = z_strides[0] == 0 && (z_strides[1] == 1 || n == 1);
    if (bias_row) {
      addend = Addend::BiasRow;
    } else if (readable(Dims{m, n}, z_strides)) {
      addend = Addend::Matrix;
    } else {
      return false;
    }
  }
  const Tensor& x = ctx.input(1);
  const Tensor& y = ctx.input(2);
  // Weights that hold still (for the function's life: constants; or for the loop execution
  // this call belongs to) are packed. Others are read in place, and only come here where the
  // primitive beats dnnl_sgemm: for an added term that dnnl_sgemm would have to copy through a
  // transposing walk, and for column-major weights (a Linear layer's W^T while it trains) from
  // kMinRowsForPlainWeights rows on, which the primitive's own copy of the weights handles
  // better than sgemm's transposing pack.
  std::uint64_t execution = 0;
  bool packs = true;
  if (!ctx.input_is_constant(2)) {
    execution = ctx.node != nullptr ? loop_invariant_execution(ctx.node->input(2)) : 0;
    if (execution == 0) {
      const bool row_major_z = z_strides[1] == 1 && z_strides[0] == n;
      const bool transposed_addend = addend == Addend::Matrix && !row_major_z;
      const bool column_major_weights = y.strides()[0] == 1 && m >= kMinRowsForPlainWeights;
      if (!transposed_addend && !column_major_weights) return false;
      packs = false;
    }
  }
  if (!readable(x.shape(), x.strides()) || !readable(y.shape(), y.strides())) return false;
  auto* state = dynamic_cast<MatmulGemmState*>(ctx.state.get());
  if (state == nullptr || state->m != m || !(state->x_strides == x.strides()) ||
      !(state->y_strides == y.strides()) || state->addend != addend || state->gelu != gelu ||
      state->packs != packs || (addend == Addend::Matrix && !(state->z_strides == z_strides))) {
    auto fresh = std::make_shared<MatmulGemmState>();
    fresh->m = m;
    fresh->x_strides = x.strides();
    fresh->y_strides = y.strides();
    fresh->z_strides = addend == Addend::Matrix ? z_strides : Dims{0, 0};
    fresh->addend = addend;
    fresh->gelu = gelu;
    fresh->packs = packs;
    fresh->unimplemented = !build(*fresh, k, n);
    state = fresh.get();
    ctx.state = std::move(fresh);
  }
  if (state->unimplemented) return false;
  if (!packs) {
    dnnl_bind(state->matmul, DNNL_ARG_WEIGHTS, y.raw_data());
  } else if (!state->packed || state->packed_for != execution) {
    dnnl_bind(state->pack, DNNL_ARG_FROM, y.raw_data());
    dnnl_execute(state->pack);
    state->packed = true;
    state->packed_for = execution;
  }
  dnnl_bind(state->matmul, DNNL_ARG_SRC, x.raw_data());
  if (addend == Addend::BiasRow) dnnl_bind(state->matmul, DNNL_ARG_BIAS, ctx.input(0).raw_data());
  if (addend == Addend::Matrix) {
    dnnl_bind(state->matmul, DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1,
              ctx.input(0).raw_data());
  }
  dnnl_bind(state->matmul, DNNL_ARG_DST, out.raw_data());
  dnnl_execute(state->matmul);
  return true;
}

}  // namespace tscope::ops::detail
