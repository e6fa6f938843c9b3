// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Runs float32 2-D convolutions with constant weights, and the pooling and elementwise ops that
/// follow them, on oneDNN's channel-blocked layout nChw8c or nChw16c, which its fastest CPU
/// kernels need (docs/conv.md, "Channel-blocked layout"). A blocked tensor is an ordinary
/// (N, C/B, H, W, B) tensor, so the change stays visible in the graph and the profile:
/// ToChannelBlocks and FromChannelBlocks nodes mark where data enters and leaves the layout, PackConvWeights nodes
/// rearrange the weights (folded at compile time, as they are constants), and each BlockedConv
/// absorbs the bias add, a skip connection's add of an already blocked value and the ReLU / clip
/// that follow it (oneDNN post-ops). Every replacement
/// carries the provenance of the node it replaces.
#include <cstdint>

#include "tscope/graph/function_graph.h"

namespace tscope::rewrite {

/// Applies the layout change over `graph` with blocks of `block` channels (8 or 16; 0:
/// preferred_channel_block()). A groups-1 convolution whose channels do not fit the block runs
/// blocked on zero-padded channels when padding adds at most half (its constant weights and bias
/// padded at compile time); otherwise it stays on plain data, as a BlockedConv with layout "oihw"
/// when it has a bias add to absorb. Returns the number
/// of nodes changed (convolutions, pools and elementwise ops, counting each absorbed bias add or
/// clamp). With `winograd`, a 3x3 stride-1 convolution on blocked input and output gets attr
/// winograd (oneDNN's Winograd F(2x2, 3x3)) where winograd_available() and the block is 16.
std::int64_t use_channel_blocks(FunctionGraph& graph, std::int64_t block = 0,
                                bool winograd = true);

}  // namespace tscope::rewrite
