// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the indexing ops share: the index list as plain attributes, its printed form, the static
// and the run-time resolution of slices and integers (NumPy rules), and errors that name the node.
//
// Attribute layout (one position per index entry; three bound slots per entry):
//   "index_kinds":   0 = slice, 1 = integer, 2 = integer array (advanced ops only)
//   "bound_sources": per slot 0 = omitted, 1 = constant, 2 = symbolic (a node input)
//   "bound_values":  per slot the constant, or for a symbolic bound the DType of its input (so
//                    the printed name reads Subtensor{int64:int64:int8} as in Theano)
// An integer entry uses its first slot. Symbolic bounds and integer arrays take node inputs in
// entry order, after the op's data inputs.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tscope/graph/apply.h"
#include "tscope/graph/op_def.h"
#include "tscope/ops/indexing.h"

namespace tscope::ops::detail {

enum class EntryKind : std::int64_t { Slice = 0, Integer = 1, IntegerArray = 2 };
enum class BoundSource : std::int64_t { Omitted = 0, Constant = 1, Symbolic = 2 };

struct SpecBound {
  BoundSource source = BoundSource::Omitted;
  std::int64_t value = 0;
};

struct SpecEntry {
  EntryKind kind = EntryKind::Slice;
  SpecBound start;  ///< the index itself for an integer entry
  SpecBound stop;
  SpecBound step;
};

/// An index list lowered to plain entries plus the Variables it reads (in entry order).
struct LoweredIndex {
  std::vector<SpecEntry> entries;
  std::vector<Variable> symbolic_inputs;
};

/// Lowers a user index list. With `allow_arrays`, integer Variables of any
/// rank become IntegerArray entries (integer constants become rank-0 constant arrays); otherwise
/// integer Variables must be rank 0. Types are checked later by the op's type rule.
LoweredIndex lower_index(const IndexList& indices, bool allow_arrays);

void encode_entries(const std::vector<SpecEntry>& entries, Attrs& attrs);
std::vector<SpecEntry> decode_entries(const Attrs& attrs);
/// Rebuilds a user index list from entries and the node inputs they read (for pullbacks).
IndexList index_list_from(const std::vector<SpecEntry>& entries,
                          std::span<const Variable> symbolic_inputs);

/// "1:-1, ::2, int64".
std::string print_entries(const std::vector<SpecEntry>& entries);

/// Number of node inputs the entries read.
int count_symbolic_inputs(const std::vector<SpecEntry>& entries);

/// Static dims of basic indexing; kUnknownDim where a bound is symbolic or the dim unknown.
/// Checks constant integers against known dims and constant steps for zero.
Dims infer_basic_dims(std::string_view op_name,
                      const Dims& input_dims,
                      const std::vector<SpecEntry>& entries);
/// Checks that each symbolic input is a rank-0 integer and each entry fits the input rank.
void check_symbolic_inputs(std::string_view op_name,
                           const Type& input_type,
                           const std::vector<SpecEntry>& entries,
                           std::span<const Variable> symbolic_inputs);

/// One input axis after run-time resolution: the first element, the step and the count; an
/// integer entry has count 1 and `kept` false.
struct ResolvedAxis {
  std::int64_t start = 0;
  std::int64_t step = 1;
  std::int64_t length = 0;
  bool kept = true;
};

/// Resolves the entries of a basic index (plus implicit trailing full slices) against `shape`,
/// reading symbolic bounds from `symbolic` (one tensor per symbolic bound, in order). Throws
/// IndexOutOfRange / InvalidArgument with the node's description as context.
std::vector<ResolvedAxis> resolve_basic(const KernelContext& ctx,
                                        const Dims& shape,
                                        const std::vector<SpecEntry>& entries,
                                        int first_symbolic_input);

/// The view of `x` that the resolved axes select.
Tensor basic_view(const Tensor& x, const std::vector<ResolvedAxis>& axes);

/// NumPy slice resolution for an axis of `length`; `step` must be non-zero.
ResolvedAxis resolve_slice(std::int64_t length,
                           const std::int64_t* start,
                           const std::int64_t* stop,
                           std::int64_t step);

/// The value of a rank-0 integer tensor.
std::int64_t read_index_scalar(const Tensor& scalar);

/// Type rule of the axis-0 ops: x has rank >= 1, indices is an integer vector.
void check_row_indices(std::string_view op_name, const Type& x, const Type& indices);

/// The values of an integer index array (row-major), made non-negative; throws IndexOutOfRange
/// naming the node, the axis, the offending value and the axis length.
std::vector<std::int64_t> checked_indices(const KernelContext& ctx,
                                          const Tensor& indices,
                                          int axis,
                                          std::int64_t length);

/// An Error of `kind` with `message`, carrying "in <node description>" as context.
Error node_error(const KernelContext& ctx, ErrorKind kind, std::string message);

/// The static type of the node's input `index` (broadcasting follows static dims).
const Type& node_input_type(const KernelContext& ctx, int index);

/// Zeros with x's type: second(x, 0).
/// Static check that `value` broadcasts into `region` (it may lack leading axes and broadcast along
/// axes of static length 1; unknown dims are checked at run time). Throws ShapeMismatch naming
/// `op_name`, the value and `region_name` (e.g. "region", "rows").
void check_value_fits_region(std::string_view op_name, const Type& value, const Dims& region,
                             std::string_view region_name);

/// Row-major walk over `shape`, calling fn(out_flat, offset_a, offset_b) where the offsets
/// advance by `strides_a` / `strides_b` (in elements). The fast kernels' loop.
template <class Fn>
void walk_strided(const Dims& shape, const Dims& strides_a, const Dims& strides_b, Fn&& fn) {
  const int rank = shape.rank();
  const std::int64_t count = shape.product();
  if (count == 0) return;
  Dims position = Dims::filled(rank, 0);
  std::int64_t offset_a = 0;
  std::int64_t offset_b = 0;
  for (std::int64_t flat = 0; flat < count; ++flat) {
    fn(flat, offset_a, offset_b);
    for (int axis = rank - 1; axis >= 0; --axis) {
      if (++position[axis] < shape[axis]) {
        offset_a += strides_a[axis];
        offset_b += strides_b[axis];
        break;
      }
      offset_a -= strides_a[axis] * (shape[axis] - 1);
      offset_b -= strides_b[axis] * (shape[axis] - 1);
      position[axis] = 0;
    }
  }
}

/// Element offset (in elements, from element 0) of row-major flat index `flat` in a tensor with
/// `shape` and `strides`: the plain per-element computation the reference kernels use.
std::int64_t strided_offset(const Dims& shape, const Dims& strides, std::int64_t flat);

/// Strides that broadcast `value` (right-aligned) over `target`: 0 along broadcast axes. Throws
/// ShapeMismatch naming both shapes unless each value dim equals the target dim or is 1 where
/// `value_type` is statically 1.
Dims broadcast_strides(const KernelContext& ctx,
                       const Tensor& value,
                       const Type& value_type,
                       const Dims& target,
                       std::string_view what);

}  // namespace tscope::ops::detail
