// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Umbrella header: the whole public API.
#include "tscope/core/dtype.h"
#include "tscope/core/error.h"
#include "tscope/core/tensor.h"
#include "tscope/grad/grad.h"
#include "tscope/graph/constructors.h"
#include "tscope/graph/function_graph.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/elementwise_more.h"
#include "tscope/ops/indexing.h"
#include "tscope/ops/linalg.h"
#include "tscope/ops/reduce.h"
#include "tscope/ops/registry.h"
#include "tscope/ops/shape.h"
#include "tscope/profile/profile_collector.h"
#include "tscope/profile/report_text.h"
#include "tscope/runtime/function.h"
