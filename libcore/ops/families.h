// One schema registration function per op family file of ops/ (called by RegisterBuiltinSchemas).
#pragma once
#include <utility>

#include "ir/op_schema.h"

namespace npu {

inline void RegisterSchema(OpSchema schema) { OpSchemaRegistry::Get().Register(std::move(schema)); }

void RegisterElementwiseSchemas();
void RegisterConvSchemas();
void RegisterMatMulSchemas();
void RegisterNormSchemas();
void RegisterPoolSchemas();
void RegisterShapeSchemas();
void RegisterReduceSchemas();
void RegisterResizeSchemas();
void RegisterAippSchemas();
void RegisterQuantSchemas();
void RegisterRnnSchemas();
void RegisterDetectionSchemas();

}  // namespace npu
