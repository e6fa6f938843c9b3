// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Indexing ops: NumPy basic indexing (Subtensor, a view), writes into a region (IncSubtensor,
/// SetSubtensor), and integer-array indexing (AdvancedSubtensor1, AdvancedIncSubtensor1,
/// AdvancedSubtensor, AdvancedIncSubtensor).
///
/// An index list holds one entry per leading axis; axes past the list are taken whole, as in
/// NumPy. An entry is a slice (keeps the axis) or an integer (drops the axis). Slice parts and
/// integers are constants or rank-0 integer Variables whose value is read at call time:
///
///   x[1:-1, ::2, 3]    subtensor(x, {slice(1, -1), slice(none, none, 2), 3})
///   x[i:j]             subtensor(x, {slice(i, j)})           // i, j: int64 scalar Variables
///   x[::-1]            subtensor(x, {slice(none, none, -1)})
///   x[:, 0]            subtensor(x, {slice(), 0})
///   x[1:3] += y        inc_subtensor(x, {slice(1, 3)}, y)    // a new tensor; x is unchanged
///   x[1:3] = y         set_subtensor(x, {slice(1, 3)}, y)
///   x[idx]             advanced_subtensor1(x, idx)           // idx: integer vector
///   x[idx] += y        advanced_inc_subtensor1(x, idx, y)    // duplicates in idx accumulate
///   x[:, a, b]         advanced_subtensor(x, {slice(), a, b}) // a, b: integer arrays
///
/// `slice(start, stop, step)` follows Python: negative values count from the end, a negative step
/// walks backwards, out-of-range slice bounds are clipped, `none` (or leaving a part out) is
/// Python's None. Note that `slice(2)` is `2:` (start only), unlike Python's `slice(2)`.
///
/// Semantics and limits:
/// - Integer indices out of range raise IndexOutOfRange naming the node, the axis, the index and
///   the axis length: at graph-build time for constants on known dims, else when the function
///   runs. A zero step raises InvalidArgument.
/// - The value written by inc/set_subtensor broadcasts to the selected region along leading axes
///   it lacks and along axes whose static dim is 1 (Theano's rule); any other difference is a
///   ShapeMismatch. Its dtype must promote into x's dtype (it is cast).
/// - advanced_subtensor: integer arrays (any rank; integer constants count as rank-0 arrays)
///   broadcast against each other with NumPy's rules, and their broadcast shape replaces the
///   indexed axes in place. The other entries must be slices with constant parts. Integer arrays
///   separated by a slice (where NumPy moves the indexed axes to the front) raise Unsupported.
/// - Index arrays must have an integer dtype. A boolean mask over some axes is NumPy's x[mask]:
///   its mask_coordinates() as integer arrays on those axes.
/// - set semantics with duplicate indices: the last write wins (NumPy); gradients of set with
///   duplicates treat every write as taking effect.
/// Every builder records the caller's source location.
#include <cstdint>
#include <source_location>
#include <variant>
#include <vector>

#include "tscope/graph/variable.h"

#pragma GCC visibility push(default)

namespace tscope {

/// An omitted slice part (Python's None).
struct NoneIndex {};
inline constexpr NoneIndex none{};

/// One part of a slice: omitted, a constant, or a rank-0 integer Variable.
class IndexBound {
 public:
  IndexBound(NoneIndex) {}  // NOLINT(google-explicit-constructor): index sugar
  IndexBound(int value) : value_(static_cast<std::int64_t>(value)) {}  // NOLINT
  IndexBound(std::int64_t value) : value_(value) {}                    // NOLINT
  IndexBound(const Variable& value) : value_(value) {}                 // NOLINT

  [[nodiscard]] bool is_omitted() const noexcept { return value_.index() == 0; }
  [[nodiscard]] bool is_constant() const noexcept { return value_.index() == 1; }
  [[nodiscard]] bool is_variable() const noexcept { return value_.index() == 2; }
  [[nodiscard]] std::int64_t constant() const { return std::get<1>(value_); }
  [[nodiscard]] const Variable& variable() const { return std::get<2>(value_); }

 private:
  std::variant<NoneIndex, std::int64_t, Variable> value_;
};

struct Slice {
  IndexBound start = none;
  IndexBound stop = none;
  IndexBound step = none;
};

/// start:stop:step; every part may be left out: slice() is `:`.
[[nodiscard]] Slice slice(IndexBound start = none, IndexBound stop = none, IndexBound step = none);

/// One entry of an index list: a slice, or an integer (constant or integer Variable).
class Index {
 public:
  Index(const Slice& value) : value_(value) {}                 // NOLINT
  Index(int value) : value_(IndexBound(value)) {}              // NOLINT
  Index(std::int64_t value) : value_(IndexBound(value)) {}     // NOLINT
  Index(const Variable& value) : value_(IndexBound(value)) {}  // NOLINT

  [[nodiscard]] bool is_slice() const noexcept { return value_.index() == 0; }
  [[nodiscard]] const Slice& as_slice() const { return std::get<0>(value_); }
  /// The integer (or integer-array Variable) of a non-slice entry.
  [[nodiscard]] const IndexBound& as_integer() const { return std::get<1>(value_); }

 private:
  std::variant<Slice, IndexBound> value_;
};

using IndexList = std::vector<Index>;

/// x[indices] (basic indexing): a view of x, printed Subtensor{1:-1, ::2, int64}.
Variable subtensor(const Variable& x,
                   const IndexList& indices,
                   const std::source_location& location = std::source_location::current());
/// A copy of x with y added to x[indices]; printed IncSubtensor{Inc;1:3}.
Variable inc_subtensor(const Variable& x,
                       const IndexList& indices,
                       const Variable& y,
                       const std::source_location& location = std::source_location::current());
/// A copy of x with x[indices] replaced by y; printed IncSubtensor{Set;1:3}.
Variable set_subtensor(const Variable& x,
                       const IndexList& indices,
                       const Variable& y,
                       const std::source_location& location = std::source_location::current());

/// x[indices] along axis 0 for an integer vector `indices` (negative values count from the end).
Variable advanced_subtensor1(
    const Variable& x,
    const Variable& indices,
    const std::source_location& location = std::source_location::current());
/// A copy of x with y added to x[indices]; rows named several times receive every addition.
Variable advanced_inc_subtensor1(
    const Variable& x,
    const Variable& indices,
    const Variable& y,
    const std::source_location& location = std::source_location::current());
/// A copy of x with x[indices] replaced by y (the last of duplicate indices wins).
Variable advanced_set_subtensor1(
    const Variable& x,
    const Variable& indices,
    const Variable& y,
    const std::source_location& location = std::source_location::current());

/// General integer-array indexing (see the limits above).
Variable advanced_subtensor(const Variable& x,
                            const IndexList& indices,
                            const std::source_location& location = std::source_location::current());
/// A copy of x with y added to advanced_subtensor(x, indices); duplicates accumulate.
Variable advanced_inc_subtensor(
    const Variable& x,
    const IndexList& indices,
    const Variable& y,
    const std::source_location& location = std::source_location::current());

/// The coordinates of x's nonzero (true) elements: an int64 matrix (x.rank(), n) whose row k
/// holds axis k's coordinates in row-major order (numpy.nonzero stacked; ONNX NonZero). n is known
/// only at run time unless x is a constant. Throws TypeMismatch for a rank-0 x.
Variable nonzero(const Variable& x,
                 const std::source_location& location = std::source_location::current());
/// The integer index vectors of NumPy's boolean indexing with `mask` on x's axes first_axis ..
/// first_axis + mask.rank() - 1: one row of nonzero(mask) per mask axis, for advanced_subtensor
/// (x[mask] is advanced_subtensor(x, {rows...})). The mask must have those axes' extents: a
/// mismatch throws IndexOutOfRange, at build time where both are static, else when the function
/// runs. Throws TypeMismatch unless mask is bool.
std::vector<Variable> mask_coordinates(
    const Variable& x,
    std::int64_t first_axis,
    const Variable& mask,
    const std::source_location& location = std::source_location::current());

/// How scatter_elements combines an update with the element it lands on.
enum class ScatterReduction { None, Add };

/// out[..., i, ...] = x[..., indices[..., i, ...], ...] along `axis` (ONNX GatherElements,
/// torch.gather): indices has x's rank, extents at most x's off the axis, and the result has
/// indices' shape. Negative indices count from the end. A composite of AdvancedSubtensor with
/// constant aranges on the other axes, so its gradient is a scatter-add (AdvancedIncSubtensor);
/// indices' extents off `axis` must be static (Unsupported otherwise).
Variable gather_elements(const Variable& x,
                         const Variable& indices,
                         std::int64_t axis,
                         const std::source_location& location = std::source_location::current());
/// A copy of x with updates written (None) or added (Add) at the positions gather_elements would
/// read (ONNX ScatterElements). updates has indices' shape. With None, an element named several
/// times receives the sum of its updates (ONNX leaves that case undefined).
Variable scatter_elements(const Variable& x,
                          const Variable& indices,
                          const Variable& updates,
                          std::int64_t axis,
                          ScatterReduction reduction = ScatterReduction::None,
                          const std::source_location& location = std::source_location::current());
/// ONNX GatherND: the last axis of indices (static extent k) holds coordinates into x's axes
/// batch_dims .. batch_dims + k - 1; the first batch_dims axes of x and indices are paired. The
/// result has shape indices.shape[:-1] + x.shape[batch_dims + k:]. Negative coordinates count from
/// the end. A composite of AdvancedSubtensor; indices' batch extents must be static.
Variable gather_nd(const Variable& x,
                   const Variable& indices,
                   std::int64_t batch_dims = 0,
                   const std::source_location& location = std::source_location::current());
/// A copy of x with updates written (None) or added (Add) at the positions gather_nd (batch_dims
/// 0) would read (ONNX ScatterND): updates has shape indices.shape[:-1] + x.shape[k:]. With None,
/// an element named several times receives the sum of its updates (ONNX leaves that undefined).
Variable scatter_nd(const Variable& x,
                    const Variable& indices,
                    const Variable& updates,
                    ScatterReduction reduction = ScatterReduction::None,
                    const std::source_location& location = std::source_location::current());

}  // namespace tscope

#pragma GCC visibility pop
