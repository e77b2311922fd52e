// Graph-edit helpers for passes: find consumers, rewire uses, add nodes and constants, drop nodes, and
// restore topological order afterwards. Passes edit through these instead of touching indices by hand.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace npu {

// Indices of the nodes that read value v (a node reading it twice is listed once).
std::vector<int> Consumers(const Graph& g, int v);
bool IsGraphOutput(const Graph& g, int v);
// The single node reading v, or -1 when v has several readers or is a graph output.
int SoleConsumer(const Graph& g, int v);
// Every input of every node and every graph output that reads `from` reads `to` instead.
void ReplaceAllUses(Graph& g, int from, int to);
// Rewires only node `consumer`'s reads of `from`.
void ReplaceUse(Graph& g, int consumer, int from, int to);
// A value name not yet used in the graph, derived from `base`.
std::string UniqueValueName(const Graph& g, const std::string& base);
std::string UniqueNodeName(const Graph& g, const std::string& base);
// Adds a named constant value.
int AddConstant(Graph& g, const std::string& name, Tensor t);
// Appends a node (anywhere in the order; call SortTopologically when done) and marks its outputs' producer.
int AppendNode(Graph& g, Node n);
// Drops the marked nodes (their outputs must be unused or rewired), keeping the others' order.
void EraseNodes(Graph& g, const std::vector<bool>& dead);
// Stable topological order (a node keeps its place unless an input forces it later); recomputes producers.
Status SortTopologically(Graph& g);
// The constant behind value v, or nullptr.
inline const Tensor* ConstantOf(const Graph& g, int v) { return v >= 0 && g.values[v].constant ? &*g.values[v].constant : nullptr; }
// The value of a constant float scalar v, or nullopt.
std::optional<double> ScalarConst(const Graph& g, int v);
// A Clip as a one-input node: from opset 11 its bounds are inputs; given as constant scalars they become the
// opset-6 `min`/`max` attributes (as a fused epilogue or an in-place form takes them). Nullopt: a bound is computed.
// Any other node comes back as it is.
std::optional<Node> ClipWithBoundAttributes(const Graph& g, const Node& clip);

}  // namespace npu
