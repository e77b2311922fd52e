// One kernel registration function per kernel family file (called by RegisterBuiltinOps). The schemas of
// the same ops register apart, in ops/.
#pragma once
namespace npu {
void RegisterElementwiseKernels();
void RegisterConvKernels();
void RegisterMatMulKernels();
void RegisterNormKernels();
void RegisterPoolKernels();
void RegisterShapeKernels();
void RegisterReduceKernels();
void RegisterResizeKernels();
void RegisterAippKernels();
void RegisterQuantKernels();
void RegisterRnnKernels();
void RegisterDetectionKernels();
}  // namespace npu
