// GE IR (CANN's ge.proto.ModelDef, npukit's schema in ge_ir.proto) as an npukit graph. One reader for the two
// places the format comes from: the MODEL_DEF of an .om CANN's ATC built (weights in WEIGHTS_DATA, located by
// data_offset / weight_size, in device formats) and MindSpore's AIR export (a bare ModelDef; each Const's bytes
// inline in its TensorDef).
//
// The graph it gives is one npukit's kernels compute:
// - a value the device holds in NC1HWC0 is its channels-first origin; an NHWC one is permuted, and its producer
//   marked _framework_layout NHWC (so dumps and golden data give TF's layout);
// - Const weights come back in their origin layouts (FRACTAL_Z from HWCN becomes OIHW), the device format kept;
// - where GE removed a shape-only op (a consumer's input desc has a shape its producer does not make, with as
//   many elements), a Reshape stands in again;
// - each op is mapped to the npukit kernel that computes it (ge_ops.cc); those it cannot map keep their GE type
//   and are listed.
#pragma once
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "frontend/importer.h"
#include "ge_ir.pb.h"
#include "ir/graph.h"

namespace npu {

struct GeSource {
  std::string param, path;  // for messages: "--om" / "--model" and the file
  std::string corrupt_code;  // the error code of a file that lies ("E10003" for an .om, "E10041" for AIR)
  // WEIGHTS_DATA of an .om (empty for AIR, whose Consts hold their data), and what keeps its bytes alive.
  std::span<const std::byte> weights;
  std::shared_ptr<const void> owner;
};

struct GeGraph {
  Graph graph;
  std::vector<UnsupportedNode> unrunnable;  // ops no npukit kernel computes (graph keeps their GE type)
};

Result<GeGraph> ReadGeGraph(const npukit::ge::GraphDef& gd, const GeSource& src);

// Newer CANN compresses attributes (model attr om_compress_version = 1): each op's and desc's attribute name
// becomes an index into the model attr attr_name_enum, and a string value of a name marked in
// attrs_use_string_value an index into attr_value_enum. Restores the names and values in place; an index past
// its list is an error. Facts: Ascend/metadef proto/ge_ir.proto (the encoding of an index, below, was
// confirmed against GE's EnumAttrUtils; Netron's om.js reads the same three lists).
Status ExpandGeAttrs(npukit::ge::ModelDef& md, const GeSource& src);

// An attribute as npukit's IR holds it (scalars and lists; a list of int lists flattened row by row); nullopt
// for tensors, graphs and functions.
std::optional<Attr> GeAttrValue(const npukit::ge::AttrDef& a);

}  // namespace npu
