// SPDX-License-Identifier: Apache-2.0
// ONNX Einsum, lowered at import time: the equation is parsed into one label per axis; repeated
// labels within an operand take a diagonal (integer-array indexing), labels nobody needs later
// are summed away, and operands are contracted left to right, each pair as one (batched) matrix
// product of transposed and reshaped operands: batch labels (in both, still needed), free labels
// of each side, and contracted labels (in both, not needed). The result is transposed to the
// output's label order. Ellipsis axes get their own labels, aligned from the right.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "../converter.h"
#include "shape_builder.h"
#include "tscope/graph/constructors.h"
#include "tscope/ops/indexing.h"
#include "tscope/ops/linalg.h"
#include "tscope/ops/reduce.h"
#include "tscope/ops/shape.h"

namespace tscope::onnx {
namespace {

using Outputs = std::vector<Variable>;
using Labels = std::vector<int>;

// Letters are labelled by their character code (so implicit outputs sort like NumPy's); the
// ellipsis axes counted from the right by kEllipsisLabel + 0, + 1, ...
constexpr int kEllipsisLabel = 1000;

struct Equation {
  std::vector<Labels> inputs;
  Labels output;
};

[[noreturn]] void bad_equation(std::string_view equation, std::string_view problem) {
  throw_error(ErrorKind::InvalidArgument, "Einsum equation '{}': {}", equation, problem);
}

/// The labels of one term for an operand of `rank`; `ellipsis_rank` is how many axes "..." covers
/// (-1: the term has none, or, for the output, the widest input ellipsis).
Labels parse_term(std::string_view equation, std::string_view term, int rank, int* ellipsis_rank) {
  Labels labels;
  std::size_t letters = 0;
  const std::size_t dots = term.find("...");
  for (std::size_t i = 0; i < term.size(); ++i) {
    if (dots != std::string_view::npos && i >= dots && i < dots + 3) continue;
    if (!std::isalpha(static_cast<unsigned char>(term[i]))) {
      bad_equation(equation, fmt::format("'{}' is not a letter", term[i]));
    }
    ++letters;
  }
  if (term.find("...", dots == std::string_view::npos ? 0 : dots + 3) != std::string_view::npos &&
      dots != std::string_view::npos) {
    bad_equation(equation, "a term with two ellipses");
  }
  int covered = 0;
  if (dots != std::string_view::npos) {
    covered = rank < 0 ? *ellipsis_rank : rank - static_cast<int>(letters);
    if (covered < 0)
      bad_equation(
          equation,
          fmt::format("term '{}' has more letters than its operand has axes ({})", term, rank));
    if (rank >= 0) *ellipsis_rank = std::max(*ellipsis_rank, covered);
  } else if (rank >= 0 && static_cast<int>(letters) != rank) {
    throw_error(ErrorKind::ShapeMismatch,
                "Einsum equation '{}': term '{}' names {} axes of an operand of rank {}", equation,
                term, letters, rank);
  }
  for (std::size_t i = 0; i < term.size(); ++i) {
    if (i == dots) {
      for (int j = covered - 1; j >= 0; --j) labels.push_back(kEllipsisLabel + j);
      i += 2;
      continue;
    }
    labels.push_back(static_cast<unsigned char>(term[i]));
  }
  return labels;
}

Equation parse_equation(std::string_view equation, const std::vector<Variable>& operands) {
  std::string text;
  for (char c : equation) {
    if (c != ' ') text.push_back(c);
  }
  const std::size_t arrow = text.find("->");
  const std::string left = text.substr(0, arrow);
  std::vector<std::string> terms;
  for (std::size_t start = 0;;) {
    const std::size_t comma = left.find(',', start);
    terms.push_back(left.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != operands.size()) {
    bad_equation(equation, fmt::format("{} terms for {} operands", terms.size(), operands.size()));
  }
  Equation parsed;
  int ellipsis_rank = 0;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    parsed.inputs.push_back(parse_term(equation, terms[i], operands[i].rank(), &ellipsis_rank));
  }
  if (arrow != std::string::npos) {
    parsed.output = parse_term(equation, text.substr(arrow + 2), -1, &ellipsis_rank);
    std::set<int> seen;
    for (int label : parsed.output) {
      if (!seen.insert(label).second) bad_equation(equation, "a label repeated in the output");
    }
    return parsed;
  }
  // Implicit output: the ellipsis axes, then the letters used exactly once, in alphabetical order.
  std::map<int, int> uses;
  for (const Labels& labels : parsed.inputs) {
    for (int label : labels) ++uses[label];
  }
  for (int j = ellipsis_rank - 1; j >= 0; --j) parsed.output.push_back(kEllipsisLabel + j);
  for (const auto& [label, count] : uses) {
    if (label < kEllipsisLabel && count == 1) parsed.output.push_back(label);
  }
  return parsed;
}

struct Operand {
  Variable value;
  Labels labels;
};

int position(const Labels& labels, int label) {
  return static_cast<int>(std::find(labels.begin(), labels.end(), label) - labels.begin());
}

bool contains(const Labels& labels, int label) {
  return std::find(labels.begin(), labels.end(), label) != labels.end();
}

std::vector<std::int64_t> positions(const Labels& labels, const Labels& order) {
  std::vector<std::int64_t> pattern;
  for (int label : order) pattern.push_back(position(labels, label));
  return pattern;
}

Variable permute(const Variable& x, const std::vector<std::int64_t>& pattern) {
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != static_cast<std::int64_t>(i)) return dimshuffle(x, pattern);
  }
  return x;
}

/// Extents of one label on two axes must agree (broadcasting size-1 axes is not lowered).
void check_extents(
    std::string_view equation, const Variable& a, int a_axis, const Variable& b, int b_axis) {
  const std::int64_t ea = a.type().dims[a_axis];
  const std::int64_t eb = b.type().dims[b_axis];
  if (ea != kUnknownDim && eb != kUnknownDim && ea != eb) {
    if (ea == 1 || eb == 1) {
      throw_error(ErrorKind::Unsupported,
                  "Einsum equation '{}' broadcasts an axis of extent 1 against {}; only equal "
                  "extents are supported",
                  equation, std::max(ea, eb));
    }
    throw_error(ErrorKind::ShapeMismatch, "Einsum equation '{}': one label has extents {} and {}",
                equation, ea, eb);
  }
}

/// Repeated labels within one operand select its diagonal along those axes.
Operand take_diagonals(std::string_view equation, Operand operand) {
  for (bool repeated = true; repeated;) {
    repeated = false;
    const Labels& labels = operand.labels;
    for (std::size_t p = 0; p < labels.size() && !repeated; ++p) {
      for (std::size_t q = p + 1; q < labels.size() && !repeated; ++q) {
        if (labels[p] != labels[q]) continue;
        repeated = true;
        const Variable& x = operand.value;
        check_extents(equation, x, static_cast<int>(p), x, static_cast<int>(q));
        std::int64_t extent = x.type().dims[static_cast<int>(p)];
        if (extent == kUnknownDim) extent = x.type().dims[static_cast<int>(q)];
        if (extent == kUnknownDim || extent > (std::int64_t{1} << 24)) {
          throw_error(ErrorKind::Unsupported,
                      "Einsum equation '{}' takes a diagonal along axes of unknown or huge extent",
                      equation);
        }
        std::vector<std::int64_t> pattern;
        Labels kept;
        for (std::size_t i = 0; i < labels.size(); ++i) {
          if (i == p || i == q) continue;
          pattern.push_back(static_cast<std::int64_t>(i));
          kept.push_back(labels[i]);
        }
        pattern.push_back(static_cast<std::int64_t>(p));
        pattern.push_back(static_cast<std::int64_t>(q));
        kept.push_back(labels[p]);
        std::vector<std::int64_t> steps(static_cast<std::size_t>(extent));
        for (std::int64_t i = 0; i < extent; ++i) steps[static_cast<std::size_t>(i)] = i;
        const Variable arange = constant(Tensor::from_vector<std::int64_t>({extent}, steps));
        IndexList list(pattern.size() - 2, Index(slice()));
        list.emplace_back(arange);
        list.emplace_back(arange);
        operand = {advanced_subtensor(permute(x, pattern), list), kept};
      }
    }
  }
  return operand;
}

/// Sums the axes whose labels are not in `keep`.
Operand sum_unneeded(Operand operand, const std::set<int>& keep) {
  std::vector<std::int64_t> axes;
  Labels kept;
  for (std::size_t i = 0; i < operand.labels.size(); ++i) {
    if (keep.count(operand.labels[i]) != 0) {
      kept.push_back(operand.labels[i]);
    } else {
      axes.push_back(static_cast<std::int64_t>(i));
    }
  }
  if (axes.empty()) return operand;
  return {sum(operand.value, axes), kept};
}

/// a and b as one (batched) matrix product: (batch, a_free, contracted) . (batch, contracted,
/// b_free) -> (batch, a_free, b_free), each group folded into one axis.
Operand contract(std::string_view equation,
                 const Operand& a,
                 const Operand& b,
                 const std::set<int>& keep) {
  Labels batch;
  Labels contracted;
  Labels a_free;
  Labels b_free;
  for (int label : a.labels) {
    if (!contains(b.labels, label)) {
      a_free.push_back(label);
    } else if (keep.count(label) != 0) {
      batch.push_back(label);
    } else {
      contracted.push_back(label);
    }
  }
  for (int label : b.labels) {
    if (!contains(a.labels, label)) b_free.push_back(label);
  }
  for (int label : batch) {
    check_extents(equation, a.value, position(a.labels, label), b.value, position(b.labels, label));
  }
  for (int label : contracted) {
    check_extents(equation, a.value, position(a.labels, label), b.value, position(b.labels, label));
  }
  Labels a_order = batch;
  a_order.insert(a_order.end(), a_free.begin(), a_free.end());
  a_order.insert(a_order.end(), contracted.begin(), contracted.end());
  Labels b_order = batch;
  b_order.insert(b_order.end(), contracted.begin(), contracted.end());
  b_order.insert(b_order.end(), b_free.begin(), b_free.end());
  const Variable pa = permute(a.value, positions(a.labels, a_order));
  const Variable pb = permute(b.value, positions(b.labels, b_order));
  const int nb = static_cast<int>(batch.size());
  const int na = static_cast<int>(a_free.size());
  const int nc = static_cast<int>(contracted.size());
  ShapeBuilder fold_a;
  ShapeBuilder fold_b;
  if (nb > 0) {
    fold_a.add_product_of(pa, 0, nb);
    fold_b.add_product_of(pb, 0, nb);
  }
  fold_a.add_product_of(pa, nb, nb + na);
  fold_a.add_product_of(pa, nb + na, pa.rank());
  fold_b.add_product_of(pb, nb, nb + nc);
  fold_b.add_product_of(pb, nb + nc, pb.rank());
  const Variable product = nb > 0 ? batched_dot(fold_a.reshape(pa), fold_b.reshape(pb))
                                  : dot(fold_a.reshape(pa), fold_b.reshape(pb));
  ShapeBuilder unfold;
  for (int axis = 0; axis < nb + na; ++axis) unfold.add_axis_of(pa, axis);
  for (int axis = nb + nc; axis < pb.rank(); ++axis) unfold.add_axis_of(pb, axis);
  Labels labels = batch;
  labels.insert(labels.end(), a_free.begin(), a_free.end());
  labels.insert(labels.end(), b_free.begin(), b_free.end());
  return {unfold.reshape(product), labels};
}

std::set<int> needed_after(const Equation& equation, std::size_t operand) {
  std::set<int> keep(equation.output.begin(), equation.output.end());
  for (std::size_t i = operand + 1; i < equation.inputs.size(); ++i) {
    keep.insert(equation.inputs[i].begin(), equation.inputs[i].end());
  }
  return keep;
}

Outputs convert_einsum(NodeContext& ctx) {
  const std::string text = ctx.attribute_string("equation", "");
  const std::vector<Variable> operands = ctx.inputs_from(0);
  if (operands.empty()) bad_equation(text, "no operands");
  const Equation equation = parse_equation(text, operands);
  for (int label : equation.output) {
    bool found = false;
    for (const Labels& labels : equation.inputs) found = found || contains(labels, label);
    if (!found) bad_equation(text, "an output label that no operand has");
  }
  Operand result;
  for (std::size_t i = 0; i < operands.size(); ++i) {
    std::set<int> keep = needed_after(equation, i);
    for (std::size_t j = 0; j < i; ++j)
      keep.insert(equation.inputs[j].begin(), equation.inputs[j].end());
    Operand next = sum_unneeded(take_diagonals(text, {operands[i], equation.inputs[i]}), keep);
    result = i == 0 ? next : contract(text, result, next, needed_after(equation, i));
  }
  std::set<int> output(equation.output.begin(), equation.output.end());
  result = sum_unneeded(result, output);
  return {permute(result.value, positions(result.labels, equation.output))};
}

}  // namespace

void register_einsum_converters(ConverterTable& table) { table.add("Einsum", 12, convert_einsum); }

}  // namespace tscope::onnx
