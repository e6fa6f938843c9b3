// SPDX-License-Identifier: Apache-2.0
#pragma once
/// OpDef: everything about one op, in one record (type rule, kernels, gradient, aliasing, cost,
/// printed name). An empty field means the capability is absent. The registry (op_registry.h)
/// holds one OpDef per op; Apply nodes point at it.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tscope/core/allocator.h"
#include "tscope/core/buffer_pool.h"
#include "tscope/core/tensor.h"
#include "tscope/graph/attrs.h"
#include "tscope/graph/type.h"
#include "tscope/graph/variable.h"

#pragma GCC visibility push(default)

namespace tscope {

class ApplyNode;
struct OpDef;
struct ScalarOp;

/// What infer() sees: the input types (and the input Variables, for constant values).
struct InferContext {
  const OpDef& op;
  std::span<const Variable> inputs;
  const Attrs& attrs;
  [[nodiscard]] const Type& input_type(int index) const { return inputs[index].type(); }
  [[nodiscard]] int num_inputs() const { return static_cast<int>(inputs.size()); }
};
using InferFn = std::vector<Type> (*)(const InferContext&);

/// What a kernel keeps between calls of one instruction, such as a library primitive prepared for
/// the shapes it last saw. Kernels derive from it and rebuild it when the shapes change.
struct KernelState {
  KernelState() = default;
  KernelState(const KernelState&) = delete;
  KernelState& operator=(const KernelState&) = delete;
  virtual ~KernelState() = default;
};

/// What a kernel sees. Built once per instruction at link time; the VM only calls the kernel.
struct KernelContext {
  const ApplyNode* node = nullptr;
  const Attrs* attrs = nullptr;
  const Tensor* const* inputs = nullptr;
  Tensor* const* outputs = nullptr;
  int num_inputs = 0;
  int num_outputs = 0;
  Allocator* allocator = nullptr;
  /// With allow_gc: buffers released earlier in this call, tried before the allocator.
  BufferPool* pool = nullptr;
  /// Empty until the kernel stores something; one per instruction, so a node's prepared state is
  /// never shared with another node.
  std::shared_ptr<KernelState> state;
  /// The input that output 0 may overwrite (the node's "inplace" attribute, set by the use_inplace
  /// rewrite), or -1. allocate_output(0) then returns that input's tensor when it has the output's
  /// dtype and shape, is contiguous and its buffer has at most `inplace_holders` holders: the
  /// input's slot and the slots of the in-place chain it came from (inplace_rules.h).
  int inplace_input = -1;
  long inplace_holders = 1;

  [[nodiscard]] const Tensor& input(int index) const { return *inputs[index]; }
  [[nodiscard]] Tensor& output(int index) const { return *outputs[index]; }
  /// Whether input `index` is a constant or a view of constants (views_constant_data), so that
  /// what the kernel derives from it (packed or transformed weights) may be kept across calls.
  /// False when the kernel runs without a node (constant folding of a node-less call).
  [[nodiscard]] bool input_is_constant(int index) const;
  /// Makes output `index` a contiguous tensor of `dtype`/`shape`: the input it may overwrite (see
  /// inplace_input), else the buffer it held from the previous call when nobody else holds it and
  /// it is large enough.
  Tensor& allocate_output(int index, DType dtype, const Dims& shape) const;
};
using KernelFn = void (*)(KernelContext&);

/// One kernel implementation. `name` is what the profile's impl column shows.
struct KernelImpl {
  std::string_view name;
  KernelFn fn = nullptr;
  /// Optional link-time check: can this implementation run a node with these inputs and attrs?
  bool (*accepts)(std::span<const Variable> inputs, const Attrs& attrs) = nullptr;
  /// Optional, for a kernel that picks its library per node (by dtype, attrs or the BLAS thread
  /// count when the function is linked): the library a node with these inputs and attrs runs,
  /// which the profile shows instead of `name`. Returns a string with static storage.
  std::string_view (*label)(std::span<const Variable> inputs, const Attrs& attrs) = nullptr;
  [[nodiscard]] bool available() const noexcept { return fn != nullptr; }
  /// The impl name the profile shows for a node.
  [[nodiscard]] std::string_view name_for(std::span<const Variable> inputs,
                                          const Attrs& attrs) const {
    return label != nullptr ? label(inputs, attrs) : name;
  }
};

/// What a pullback sees. An undefined Variable in output_grads means "zero".
struct PullbackContext {
  const ApplyNode& node;
  std::span<const Variable> inputs;
  std::span<const Variable> outputs;
  std::span<const Variable> output_grads;
  const Attrs& attrs;
};
/// Returns one gradient per input; an undefined Variable means "disconnected" (zero).
using PullbackFn = std::vector<Variable> (*)(const PullbackContext&);

struct Cost {
  double flops = 0;
  double bytes = 0;
};
struct CostContext {
  const OpDef& op;
  std::span<const Dims> input_shapes;
  std::span<const Dims> output_shapes;
  std::span<const DType> input_dtypes;
  const Attrs& attrs;
};
using CostFn = Cost (*)(const CostContext&);

/// Which outputs view or overwrite which inputs: (output index, input index) pairs.
struct AliasInfo {
  std::vector<std::pair<int, int>> views;
  std::vector<std::pair<int, int>> destroys;
  [[nodiscard]] bool empty() const noexcept { return views.empty() && destroys.empty(); }
};

struct OpTraits {
  bool elementwise = false;
  bool commutative = false;
  /// The op has a zero gradient everywhere it is defined (comparisons, argmax, shape queries).
  bool zero_gradient = false;
  /// A change of layout (weight packing) whose result depends only on its inputs: when every input
  /// is a constant the compiler computes it once, at compile time, instead of on every call.
  bool fold_when_constant = false;
};

using PrintFn = std::string (*)(const OpDef&, const Attrs&);

/// An elementwise op applied to `n` contiguous elements of each operand (`args[k][0..n)`) into
/// `out[0..n)`, for ops whose scalar op maps float32 to float32 and float64 to float64. `out` may
/// be one of the operands (the same elements), never a partial overlap. The Composite op evaluates
/// its scalar expression through these, one block at a time; both pointers are null for every
/// other op (comparisons, logic, casts), which fusion treats as boundaries.
struct BlockKernels {
  void (*f32)(const float* const* args, float* out, std::int64_t n) = nullptr;
  void (*f64)(const double* const* args, double* out, std::int64_t n) = nullptr;
  [[nodiscard]] bool available() const noexcept { return f32 != nullptr && f64 != nullptr; }
};

struct OpDef {
  std::string_view name;     ///< registry key, PascalCase ("Add", "Dot22")
  std::string_view family;   ///< the profile's Class column ("Elemwise", "CAReduce", "Gemm")
  std::string_view summary;  ///< one line for `tscope ops`
  int num_inputs = -1;       ///< -1: variadic
  int num_outputs = 1;
  OpTraits traits;
  AliasInfo aliasing;
  InferFn infer = nullptr;
  KernelImpl reference;  ///< plain loops; the oracle in tests
  KernelImpl fast;       ///< optional: BLAS, SIMD, ...
  PullbackFn pullback = nullptr;
  CostFn cost = nullptr;
  PrintFn print = nullptr;           ///< printed op name; default "Name" or "Name{k=v,...}"
  const ScalarOp* scalar = nullptr;  ///< elementwise ops: the scalar op lifted to tensors
  BlockKernels block;                ///< elementwise float ops: the scalar op over a block

  [[nodiscard]] std::string printed_name(const Attrs& attrs) const;
  [[nodiscard]] bool is_differentiable() const noexcept {
    return pullback != nullptr || traits.zero_gradient;
  }
};

}  // namespace tscope

#pragma GCC visibility pop
