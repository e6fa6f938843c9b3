// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Specialises a power with a scalar constant exponent (Theano's local_pow_specialize):
/// x ** 2 -> sqr(x), x ** 0.5 -> sqrt(x), x ** -1 -> reciprocal(x), x ** -0.5 ->
/// reciprocal(sqrt(x)). A general power runs exp(y * log(x)) per element; the
/// specialised op is a multiply or one instruction, and, unlike Pow, fuses with its neighbours
/// (exported layer norms compute their variance as Pow(x - mean, 2)). A node whose result type
/// would change (an exponent with more axes than x, a dtype the power promotes) is left alone.
/// The new nodes carry the Pow node's provenance.
#include "tscope/rewrite/rule.h"

#pragma GCC visibility push(default)

namespace tscope::rewrite {

/// The local rule specialize_pow (tracks Pow).
[[nodiscard]] LocalRule pow_rule();

}  // namespace tscope::rewrite

#pragma GCC visibility pop
