// Graph-edit helpers for passes: find consumers, rewire uses, add nodes and constants, drop nodes, and
// restore topological order afterwards. Passes edit through these instead of touching indices by hand.
#pragma once
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

}  // namespace npu
