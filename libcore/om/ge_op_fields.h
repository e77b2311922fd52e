// The OpDef fields GE derives from a graph when it saves a model, filled in for the graphs npukit writes so
// that atc --mode=1 shows an npukit .om with the fields a CANN-built one has: op ids in graph order, each
// input's producer (src_name/src_index) and each output's consumers (dst_name/dst_index), which inputs are
// weights (is_input_const), the feature-map offset of every tensor (input_i/output_i, from a first-fit plan
// over the tensors' lifetimes in op order), has_out_attr, and the descs' device_type and real_dim_cnt.
#pragma once
#include <cstdint>

#include "ge_ir.pb.h"

namespace npu::om {

// Fills those fields in place; returns the bytes of feature-map memory the offsets need (512-byte blocks).
uint64_t FillGeOpFields(npukit::ge::GraphDef& g);

}  // namespace npu::om
