// SPDX-License-Identifier: Apache-2.0
#include "composite_program.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tscope/core/error.h"
#include "tscope/ops/registry.h"
#include "tscope/ops/scalar_op.h"

namespace tscope::ops::detail {
namespace {

/// Recursive descent over the expression text; appends one step per op, operands first.
class Parser {
 public:
  Parser(std::string_view text, int num_inputs) : text_(text) { program_.num_inputs = num_inputs; }

  CompositeProgram run(std::span<const std::int64_t> outputs) {
    std::vector<int> statements;
    while (true) {
      skip_spaces();
      const std::size_t start = position_;
      const std::size_t steps_before = program_.steps.size();
      const int value = parse_operand(statements);
      if (program_.steps.size() == steps_before) fail(start, "a statement must apply an op");
      statements.push_back(value);
      skip_spaces();
      if (position_ == text_.size()) break;
      expect(';');
    }
    // Operands are parsed before their op, so the last statement's op is the last step.
    if (outputs.empty()) {
      program_.outputs.push_back(program_.value_count() - 1);
      return std::move(program_);
    }
    for (const std::int64_t statement : outputs) {
      if (statement < 0 || statement >= static_cast<std::int64_t>(statements.size())) {
        throw_error(ErrorKind::InvalidArgument,
                    "Composite: output t{} names no statement of expression '{}' ({} statements)",
                    statement, text_, statements.size());
      }
      const int value = statements[static_cast<std::size_t>(statement)];
      if (std::ranges::find(program_.outputs, value) != program_.outputs.end()) {
        throw_error(ErrorKind::InvalidArgument,
                    "Composite: output t{} of expression '{}' names a value already output",
                    statement, text_);
      }
      program_.outputs.push_back(value);
    }
    return std::move(program_);
  }

 private:
  [[noreturn]] void fail(std::size_t at, std::string_view what) const {
    throw_error(ErrorKind::InvalidArgument,
                "Composite: {} at offset {} of expression '{}'; expected statements such as "
                "'Mul(Exp(i0),i1)' separated by ';'",
                what, at, text_);
  }

  void skip_spaces() {
    while (position_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[position_]))) {
      ++position_;
    }
  }

  void expect(char c) {
    skip_spaces();
    if (position_ >= text_.size() || text_[position_] != c) {
      fail(position_, fmt::format("expected '{}'", c));
    }
    ++position_;
  }

  std::string_view identifier() {
    skip_spaces();
    const std::size_t start = position_;
    while (position_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[position_])) || text_[position_] == '_')) {
      ++position_;
    }
    if (start == position_) fail(start, "expected an op name or an operand");
    return text_.substr(start, position_ - start);
  }

  // `i<k>` or `t<j>` as (letter, index); index -1 when the identifier is not of that form.
  static std::pair<char, int> reference(std::string_view name) {
    if (name.size() < 2 || (name[0] != 'i' && name[0] != 't')) return {'\0', -1};
    int index = -1;
    const auto [end, error] = std::from_chars(name.data() + 1, name.data() + name.size(), index);
    if (error != std::errc() || end != name.data() + name.size() || index < 0) return {'\0', -1};
    return {name[0], index};
  }

  int parse_operand(const std::vector<int>& statements) {
    skip_spaces();
    const std::size_t start = position_;
    // The parser recurses once per nested call; a bound keeps a hand-written expression from
    // exhausting the stack (the fusion rule writes at most a few dozen levels).
    if (++depth_ > kMaxNesting) {
      fail(start, fmt::format("calls nested deeper than {}; name inner values with "
                              "';'-separated statements (t<j>)",
                              kMaxNesting));
    }
    const int value = parse_operand_at(start, statements);
    --depth_;
    return value;
  }

  int parse_operand_at(std::size_t start, const std::vector<int>& statements) {
    const std::string_view name = identifier();
    const auto [letter, index] = reference(name);
    if (letter == 'i') {
      if (index >= program_.num_inputs) {
        fail(start, fmt::format("input i{} out of range (the node has {} inputs)", index,
                                program_.num_inputs));
      }
      return index;
    }
    if (letter == 't') {
      if (index >= static_cast<int>(statements.size())) {
        fail(start, fmt::format("t{} names no earlier statement", index));
      }
      return statements[static_cast<std::size_t>(index)];
    }
    const OpDef* op = op_registry().find(name);
    if (op == nullptr) fail(start, fmt::format("unknown op '{}'", name));
    if (!op->block.available() || op->scalar == nullptr) {
      fail(start, fmt::format("op '{}' has no block kernel, so it cannot be fused", name));
    }
    CompositeStep step{.op = op, .arity = op->num_inputs};
    expect('(');
    int count = 0;
    while (true) {
      skip_spaces();
      if (count == 0 && position_ < text_.size() && text_[position_] == ')') break;
      if (count >= static_cast<int>(step.operands.size())) fail(position_, "too many operands");
      step.operands[static_cast<std::size_t>(count++)] = parse_operand(statements);
      skip_spaces();
      if (position_ < text_.size() && text_[position_] == ',') {
        ++position_;
        continue;
      }
      break;
    }
    expect(')');
    if (count != step.arity) {
      fail(start, fmt::format("{} takes {} operands, {} given", name, step.arity, count));
    }
    program_.steps.push_back(step);
    return program_.value_count() - 1;
  }

  std::string_view text_;
  std::size_t position_ = 0;
  static constexpr int kMaxNesting = 256;
  int depth_ = 0;
  CompositeProgram program_;
};

std::string_view infix_symbol(std::string_view scalar_name) {
  if (scalar_name == "add") return "+";
  if (scalar_name == "sub") return "-";
  if (scalar_name == "mul") return "*";
  if (scalar_name == "true_div") return "/";
  return {};
}

// Printing expands every value read twice where it is read, so a chain of squares of squares
// doubles with each step: past this many characters the body is printed as statements instead.
constexpr std::size_t kMaxExpandedLength = 2048;

struct TooLong {};

// `operand(k)` prints operand k of the step.
template <class Operand>
std::string print_step(const CompositeStep& step, Operand&& operand) {
  const std::string_view name = step.op->scalar->name;
  std::vector<std::string> operands;
  for (int k = 0; k < step.arity; ++k) operands.push_back(operand(k));
  const std::string_view symbol = infix_symbol(name);
  if (!symbol.empty() && step.arity == 2) {
    return fmt::format("({} {} {})", operands[0], symbol, operands[1]);
  }
  if (name == "neg") return fmt::format("(-{})", operands[0]);
  return fmt::format("{}({})", name, fmt::join(operands, ", "));
}

// The value fully expanded; throws TooLong once `length` (characters printed so far) passes the
// bound.
std::string print_value(const CompositeProgram& program, int value, std::size_t& length) {
  if (value < program.num_inputs) return fmt::format("i{}", value);
  const CompositeStep& step = program.steps[static_cast<std::size_t>(value - program.num_inputs)];
  std::string text = print_step(step, [&](int k) {
    return print_value(program, step.operands[static_cast<std::size_t>(k)], length);
  });
  length += text.size();
  if (length > kMaxExpandedLength) throw TooLong{};
  return text;
}

// Every step as a statement "t<s>=...", reading earlier ones by name: linear in the steps.
std::string print_statements(const CompositeProgram& program) {
  std::vector<std::string> statements;
  for (std::size_t s = 0; s < program.steps.size(); ++s) {
    const CompositeStep& step = program.steps[s];
    statements.push_back(fmt::format("t{}={}", s, print_step(step, [&](int k) {
      const int operand = step.operands[static_cast<std::size_t>(k)];
      return operand < program.num_inputs ? fmt::format("i{}", operand)
                                          : fmt::format("t{}", operand - program.num_inputs);
    })));
  }
  std::vector<std::string> outputs;
  for (const int value : program.outputs) outputs.push_back(fmt::format("t{}", value - program.num_inputs));
  return fmt::format("{}; {}", fmt::join(statements, "; "), fmt::join(outputs, ", "));
}

}  // namespace

CompositeReduction composite_reduction(const Attrs& attrs) {
  if (!attrs.has("reduce")) return CompositeReduction::None;
  const std::string& name = attrs.get_string("reduce");
  if (name == "add") return CompositeReduction::Add;
  if (name == "maximum") return CompositeReduction::Maximum;
  throw_error(ErrorKind::InvalidArgument,
              "Composite: unknown reduction '{}'; expected \"add\" or \"maximum\"", name);
}

double CompositeProgram::flops_per_element() const {
  double flops = 0;
  for (const CompositeStep& step : steps) flops += step.op->scalar->flops_per_element;
  return flops;
}

CompositeProgram parse_composite(std::string_view expression, int num_inputs,
                                 std::span<const std::int64_t> outputs) {
  return Parser(expression, num_inputs).run(outputs);
}

CompositeProgram parse_composite(const Attrs& attrs, int num_inputs) {
  if (!attrs.has("expression")) {
    throw_error(ErrorKind::InvalidArgument, "Composite: missing the \"expression\" attribute");
  }
  const std::string& expression = attrs.get_string("expression");
  if (!attrs.has("outputs")) return parse_composite(expression, num_inputs);
  return parse_composite(expression, num_inputs, attrs.get_ints("outputs"));
}

std::string print_composite_body(const CompositeProgram& program) {
  std::vector<std::string> bodies;
  std::size_t length = 0;
  try {
    for (const int value : program.outputs) bodies.push_back(print_value(program, value, length));
  } catch (const TooLong&) {
    return print_statements(program);
  }
  return fmt::format("{}", fmt::join(bodies, ", "));
}

}  // namespace tscope::ops::detail
