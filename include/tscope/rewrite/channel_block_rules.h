// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Runs float32 2-D convolutions with constant weights, and the pooling and elementwise ops that
/// follow them, on oneDNN's channel-blocked layout nChw8c or nChw16c, which its fastest CPU
/// kernels need (docs/conv.md, "Channel-blocked layout"). A blocked tensor is an ordinary
/// (N, C/B, H, W, B) tensor, so the change stays visible in the graph and the profile:
/// ToChannelBlocks and FromChannelBlocks nodes mark where data enters and leaves the layout,
/// PackConvWeights nodes rearrange the weights (folded at compile time, as they are constants).
/// Two steps in the pipeline:
///   - use_channel_blocks (a whole-graph pass): layout assignment, one read-only sweep that decides
///     per value plain or blocked (block and padded channel count) and per convolution its weight
///     layout; then materialisation, which rebuilds the nodes that run blocked and puts a reorder
///     wherever neighbouring layouts differ;
///   - three local rules that fold what follows a BlockedConv into it as oneDNN post-ops:
///     fuse_conv_bias, fuse_conv_residual (a skip connection's add of a blocked value) and
///     fuse_conv_clamp (the ReLU / clip); fuse_batch_norm_relu, which folds the ReLU after a
///     blocked inference batch norm into it, and fuse_join_batch_norm, which lets that norm read
///     the pieces of the concatenation it normalises.
/// Every new node carries the provenance of the node it stands for; a fused convolution keeps the
/// convolution's.
#include <cstdint>
#include <vector>

#include "tscope/graph/function_graph.h"
#include "tscope/rewrite/rule.h"

#pragma GCC visibility push(default)

namespace tscope::rewrite {

/// Applies the layout change over `graph` with blocks of `block` channels (8 or 16; 0:
/// preferred_channel_block()). A groups-1 convolution whose channels do not fit the block runs
/// blocked on zero-padded channels when padding adds at most half (its constant weights and bias
/// padded at compile time); otherwise it stays on plain data, as a BlockedConv with layout "oihw"
/// when it has a bias add for fuse_conv_bias to fold. Returns the number of nodes rebuilt
/// (convolutions, pools and elementwise ops). With `winograd`, a 3x3 stride-1 convolution on
/// blocked input and output gets attr winograd (oneDNN's Winograd F(2x2, 3x3)) where
/// winograd_available() and the block is 16.
std::int64_t use_channel_blocks(FunctionGraph& graph, std::int64_t block = 0, bool winograd = true);

/// fuse_conv_bias (tracks Add): a BlockedConv with no epilogue yet, read only by an add of a
/// channel vector in its layout ((1, C/B, 1, 1, B) blocked, (1, C, 1, 1) plain), takes the vector
/// as its bias input.
[[nodiscard]] LocalRule conv_bias_rule();
/// fuse_conv_residual (tracks Add): a blocked BlockedConv with no residual and no clamp yet, read
/// only by an add of another value of its exact type (a skip connection), adds that value as a
/// post-op. When both operands qualify, the second one's convolution takes the add.
[[nodiscard]] LocalRule conv_residual_rule();
/// fuse_conv_clamp (tracks Maximum and Minimum): a blocked BlockedConv read only by max(., lower)
/// with no bound yet, or by min(., upper) with no upper bound and upper >= its lower bound, takes
/// the scalar constant bound (not NaN) as its clamp.
[[nodiscard]] LocalRule conv_clamp_rule();

/// fuse_batch_norm_relu (tracks Maximum): a BlockedBatchNormInference (an inference batch norm
/// on blocked data) read only by max(., 0) takes the ReLU (attr relu, oneDNN's fuse_norm_relu).
[[nodiscard]] LocalRule batch_norm_relu_rule();

/// fuse_join_batch_norm (tracks BlockedBatchNormInference): a blocked inference batch norm of a
/// Join along the channel blocks that nothing else reads takes the Join's inputs as pieces of x
/// (inputs 0, 5, 6, ...), reading each where it is instead of a copy.
[[nodiscard]] LocalRule join_batch_norm_rule();

/// The five rules above, in that order.
[[nodiscard]] std::vector<LocalRule> channel_block_fusion_rules();

}  // namespace tscope::rewrite

#pragma GCC visibility pop
