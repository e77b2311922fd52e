// One registration function per kernel family file (called by RegisterBuiltinOps).
#pragma once
namespace npu {
void RegisterElementwiseOps();
void RegisterConvOps();
void RegisterMatMulOps();
void RegisterNormOps();
void RegisterPoolOps();
void RegisterShapeOps();
void RegisterReduceOps();
void RegisterResizeOps();
void RegisterAippOps();
}  // namespace npu
