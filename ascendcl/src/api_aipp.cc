// The C interface of acl_mdl.h's dynamic AIPP: a parameter set per model batch, its setters, and writing it into
// the model's ACL_DYNAMIC_AIPP_NAME input (the block layout is ir/aipp_config.h's, which the Aipp kernel reads).
// The setters check the ranges CANN documents for them: CSC matrix [-32677, 32676], source image sides [1, 4096],
// paddings [0, 32], means [0, 255], mins [0, 255], variance reciprocals [-65504, 65504].
#include <algorithm>
#include <array>
#include <cstring>
#include <tuple>
#include <utility>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "errors.h"
#include "handles.h"
#include "ir/aipp_config.h"
#include "models.h"
#include "runtime.h"

using npu::acl::Fail;

struct aclmdlAIPP {
  npu::AippDynamicCommon common;
  std::vector<npu::AippDynamicImage> images;  // one per image of the batch
};

namespace npu::acl {
Handles<aclmdlDataset>& Datasets();  // api_mdl.cc
}  // namespace npu::acl

namespace {

npu::acl::Handles<aclmdlAIPP>& AippSets() {
  static auto* h = new npu::acl::Handles<aclmdlAIPP>();
  return *h;
}

constexpr int64_t kCscMin = -32677, kCscMax = 32676, kImageMax = 4096, kPaddingMax = 32, kPixelMax = 255;
constexpr float kVarReciLimit = 65504.0f;  // the largest fp16

aclError NotLive(const char* call) { return Fail(ACL_ERROR_INVALID_PARAM, call, "aippParmsSet is not a live parameter set (aclmdlCreateAIPP)"); }

// A range check: ACL_SUCCESS, or ACL_ERROR_INVALID_PARAM naming the parameter and its range.
template <typename T>
aclError InRange(const char* call, const char* what, T v, T lo, T hi) {
  if (v >= lo && v <= hi) return ACL_SUCCESS;
  return Fail(ACL_ERROR_INVALID_PARAM, call, std::string(what) + " " + std::to_string(v) + " is outside [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
}

aclError Switch(const char* call, const char* what, int8_t v) { return InRange<int64_t>(call, what, v, 0, 1); }

// The parameter set's image `batchIndex`, or null with the failure recorded.
npu::AippDynamicImage* Image(aclmdlAIPP* a, uint64_t batchIndex, const char* call) {
  if (!AippSets().Live(a)) return NotLive(call), nullptr;
  if (batchIndex >= a->images.size())
    return Fail(ACL_ERROR_INVALID_PARAM, call, "batchIndex " + std::to_string(batchIndex) + " is past the set's batch of " + std::to_string(a->images.size())), nullptr;
  return &a->images[batchIndex];
}

// One value per channel into image `batchIndex`'s `field`, each checked against [lo, hi] first.
template <typename T, typename Field>
aclError SetChannels(aclmdlAIPP* a, uint64_t batchIndex, const char* call, const char* what, std::array<T, 4> values, T lo, T hi,
                     Field npu::AippDynamicImage::*field) {
  npu::AippDynamicImage* im = Image(a, batchIndex, call);
  if (!im) return ACL_ERROR_INVALID_PARAM;
  for (T v : values)
    if (aclError e = InRange<T>(call, what, v, lo, hi)) return e;
  std::copy(values.begin(), values.end(), im->*field);
  return ACL_SUCCESS;
}

aclError WriteParams(uint32_t modelId, aclmdlDataset* dataset, size_t index, const aclmdlAIPP* a, bool data_index, const char* call) {
  auto l = std::unique_lock(npu::acl::Runtime::Get().mu);
  npu::acl::ApiTrace trace(call);
  if (aclError e = npu::acl::Runtime::Get().RequireInit(call)) return e;
  if (!AippSets().Live(a)) return NotLive(call);
  if (!npu::acl::Datasets().Live(dataset)) return Fail(ACL_ERROR_INVALID_PARAM, call, "dataset is not a live dataset (aclmdlCreateDataset)");
  if (npu::AippInputFormatName(a->common.input_format).empty()) return Fail(ACL_ERROR_INVALID_PARAM, call, "the input format is not set (aclmdlSetAIPPInputFormat)");
  if (a->common.src_w == 0) return Fail(ACL_ERROR_INVALID_PARAM, call, "the source image size is not set (aclmdlSetAIPPSrcImageSize)");
  std::vector<std::byte> block(npu::AippDynamicSize(a->images.size()));
  std::memcpy(block.data(), &a->common, sizeof a->common);
  std::memcpy(block.data() + sizeof a->common, a->images.data(), a->images.size() * sizeof(npu::AippDynamicImage));
  return npu::acl::Models::Get().SetAippParams(modelId, dataset, index, data_index, a->images.size(), block, call);
}

void FillDims(const npu::Value& v, aclmdlIODims& d, size_t& bytes) {
  std::memset(&d, 0, sizeof d);
  std::strncpy(d.name, v.name.c_str(), sizeof d.name - 1);
  d.dimCount = std::min(v.shape.size(), static_cast<size_t>(ACL_MAX_DIM_CNT));
  std::copy_n(v.shape.begin(), d.dimCount, d.dims);
  bytes = static_cast<size_t>(std::max<int64_t>(npu::NumElements(v.shape), 0)) * npu::DTypeSize(v.dtype);
}

// The static config as aclAippInfo holds it; `in` is the image input, `out` what the Aipp node writes.
void FillAippInfo(const npu::AippConfig& c, const npu::Value& in, const npu::Value& out, aclAippInfo& a) {
  std::memset(&a, 0, sizeof a);
  for (int32_t f = ACL_YUV420SP_U8; f <= ACL_YUV400_U8; ++f)
    if (npu::AippInputFormatName(f) == c.input_format) a.inputFormat = static_cast<aclAippInputFormat>(f);
  a.srcImageSizeW = static_cast<int32_t>(c.src_w), a.srcImageSizeH = static_cast<int32_t>(c.src_h);
  // The node keeps the crop window, not the switch: a window smaller than the image is a crop.
  a.cropSwitch = c.crop_x || c.crop_y || c.crop_w != c.src_w || c.crop_h != c.src_h;
  a.loadStartPosW = static_cast<int32_t>(c.crop_x), a.loadStartPosH = static_cast<int32_t>(c.crop_y);
  a.cropSizeW = static_cast<int32_t>(c.crop_w), a.cropSizeH = static_cast<int32_t>(c.crop_h);
  a.paddingSwitch = c.pad_top || c.pad_bottom || c.pad_left || c.pad_right;
  a.leftPaddingSize = static_cast<int32_t>(c.pad_left), a.rightPaddingSize = static_cast<int32_t>(c.pad_right);
  a.topPaddingSize = static_cast<int32_t>(c.pad_top), a.bottomPaddingSize = static_cast<int32_t>(c.pad_bottom);
  a.cscSwitch = c.csc, a.rbuvSwapSwitch = c.rbuv_swap, a.axSwapSwitch = c.ax_swap;
  int32_t* matrix[] = {&a.matrixR0C0, &a.matrixR0C1, &a.matrixR0C2, &a.matrixR1C0, &a.matrixR1C1, &a.matrixR1C2, &a.matrixR2C0, &a.matrixR2C1, &a.matrixR2C2};
  for (size_t i = 0; i < 9; ++i) *matrix[i] = static_cast<int32_t>(c.matrix[i]);
  int32_t* out_bias[] = {&a.outputBias0, &a.outputBias1, &a.outputBias2};
  int32_t* in_bias[] = {&a.inputBias0, &a.inputBias1, &a.inputBias2};
  for (size_t i = 0; i < 3; ++i) *out_bias[i] = static_cast<int32_t>(c.output_bias[i]), *in_bias[i] = static_cast<int32_t>(c.input_bias[i]);
  int32_t* mean[] = {&a.meanChn0, &a.meanChn1, &a.meanChn2, &a.meanChn3};
  float* min[] = {&a.minChn0, &a.minChn1, &a.minChn2, &a.minChn3};
  float* reci[] = {&a.varReciChn0, &a.varReciChn1, &a.varReciChn2, &a.varReciChn3};
  for (size_t i = 0; i < 4; ++i) *mean[i] = static_cast<int32_t>(c.mean[i]), *min[i] = c.min[i], *reci[i] = c.var_reci[i];
  a.srcFormat = ACL_FORMAT_NHWC;  // the image comes as N, H, W, C bytes
  a.srcDatatype = ACL_UINT8;
  a.srcDimNum = in.shape.size();
  a.shapeCount = 1;  // the model's one shape (shape-profile models report their first)
  FillDims(in, a.outDims[0].srcDims, a.outDims[0].srcSize);
  FillDims(out, a.outDims[0].aippOutdims, a.outDims[0].aippOutSize);
}

}  // namespace

extern "C" {

aclmdlAIPP* aclmdlCreateAIPP(uint64_t batchSize) {
  if (batchSize == 0 || batchSize > ACL_MAX_BATCH_NUM)
    return Fail(ACL_ERROR_INVALID_PARAM, "aclmdlCreateAIPP", "batchSize " + std::to_string(batchSize) + " is outside [1, " + std::to_string(ACL_MAX_BATCH_NUM) + "]"), nullptr;
  aclmdlAIPP a;
  a.common.batch = static_cast<uint32_t>(batchSize);
  a.images.resize(batchSize);
  return AippSets().Make(std::move(a));
}

aclError aclmdlDestroyAIPP(const aclmdlAIPP* aippParmsSet) { return AippSets().Destroy(aippParmsSet) ? ACL_SUCCESS : NotLive("aclmdlDestroyAIPP"); }

aclError aclmdlGetAippDataSize(uint64_t batchSize, size_t* size) {
  if (!size || batchSize == 0 || batchSize > ACL_MAX_BATCH_NUM)
    return Fail(ACL_ERROR_INVALID_PARAM, "aclmdlGetAippDataSize", "size is null or batchSize " + std::to_string(batchSize) + " is outside [1, 128]");
  *size = npu::AippDynamicSize(batchSize);
  return ACL_SUCCESS;
}

aclError aclmdlSetAIPPInputFormat(aclmdlAIPP* aippParmsSet, aclAippInputFormat inputFormat) {
  constexpr const char* kCall = "aclmdlSetAIPPInputFormat";
  if (!AippSets().Live(aippParmsSet)) return NotLive(kCall);
  if (npu::AippInputFormatName(inputFormat).empty())
    return Fail(ACL_ERROR_INVALID_PARAM, kCall, "inputFormat " + std::to_string(static_cast<int>(inputFormat)) + " is not one npukit's AIPP takes (YUV420SP_U8, XRGB8888_U8, RGB888_U8, YUV400_U8)");
  aippParmsSet->common.input_format = inputFormat;
  return ACL_SUCCESS;
}

aclError aclmdlSetAIPPCscParams(aclmdlAIPP* aippParmsSet, int8_t cscSwitch, int16_t r0c0, int16_t r0c1, int16_t r0c2, int16_t r1c0, int16_t r1c1, int16_t r1c2,
                                int16_t r2c0, int16_t r2c1, int16_t r2c2, uint8_t outBias0, uint8_t outBias1, uint8_t outBias2, uint8_t inBias0,
                                uint8_t inBias1, uint8_t inBias2) {
  constexpr const char* kCall = "aclmdlSetAIPPCscParams";
  if (!AippSets().Live(aippParmsSet)) return NotLive(kCall);
  if (aclError e = Switch(kCall, "cscSwitch", cscSwitch)) return e;
  npu::AippDynamicCommon& c = aippParmsSet->common;
  c.csc = cscSwitch;
  if (!cscSwitch) return ACL_SUCCESS;  // the other values mean nothing then, as CANN has it
  const int16_t m[9] = {r0c0, r0c1, r0c2, r1c0, r1c1, r1c2, r2c0, r2c1, r2c2};
  for (int16_t v : m)
    if (aclError e = InRange<int64_t>(kCall, "a CSC matrix value", v, kCscMin, kCscMax)) return e;
  std::copy(std::begin(m), std::end(m), c.matrix);
  const uint8_t out[3] = {outBias0, outBias1, outBias2}, in[3] = {inBias0, inBias1, inBias2};
  std::copy(std::begin(out), std::end(out), c.output_bias);
  std::copy(std::begin(in), std::end(in), c.input_bias);
  return ACL_SUCCESS;
}

aclError aclmdlSetAIPPRbuvSwapSwitch(aclmdlAIPP* aippParmsSet, int8_t rbuvSwapSwitch) {
  if (!AippSets().Live(aippParmsSet)) return NotLive("aclmdlSetAIPPRbuvSwapSwitch");
  if (aclError e = Switch("aclmdlSetAIPPRbuvSwapSwitch", "rbuvSwapSwitch", rbuvSwapSwitch)) return e;
  aippParmsSet->common.rbuv_swap = rbuvSwapSwitch;
  return ACL_SUCCESS;
}

aclError aclmdlSetAIPPAxSwapSwitch(aclmdlAIPP* aippParmsSet, int8_t axSwapSwitch) {
  if (!AippSets().Live(aippParmsSet)) return NotLive("aclmdlSetAIPPAxSwapSwitch");
  if (aclError e = Switch("aclmdlSetAIPPAxSwapSwitch", "axSwapSwitch", axSwapSwitch)) return e;
  aippParmsSet->common.ax_swap = axSwapSwitch;
  return ACL_SUCCESS;
}

aclError aclmdlSetAIPPSrcImageSize(aclmdlAIPP* aippParmsSet, int32_t srcImageSizeW, int32_t srcImageSizeH) {
  constexpr const char* kCall = "aclmdlSetAIPPSrcImageSize";
  if (!AippSets().Live(aippParmsSet)) return NotLive(kCall);
  if (aclError e = InRange<int64_t>(kCall, "srcImageSizeW", srcImageSizeW, 1, kImageMax)) return e;
  if (aclError e = InRange<int64_t>(kCall, "srcImageSizeH", srcImageSizeH, 1, kImageMax)) return e;
  aippParmsSet->common.src_w = srcImageSizeW;
  aippParmsSet->common.src_h = srcImageSizeH;
  return ACL_SUCCESS;
}

aclError aclmdlSetAIPPScfParams(aclmdlAIPP* aippParmsSet, int8_t scfSwitch, int32_t, int32_t, int32_t, int32_t, uint64_t batchIndex) {
  constexpr const char* kCall = "aclmdlSetAIPPScfParams";
  if (!Image(aippParmsSet, batchIndex, kCall)) return ACL_ERROR_INVALID_PARAM;
  if (aclError e = Switch(kCall, "scfSwitch", scfSwitch)) return e;
  if (scfSwitch) return Fail(ACL_ERROR_INVALID_PARAM, kCall, "npukit's AIPP does not resize (scf); crop and pad the image to the model's input instead");
  return ACL_SUCCESS;
}

aclError aclmdlSetAIPPCropParams(aclmdlAIPP* aippParmsSet, int8_t cropSwitch, int32_t cropStartPosW, int32_t cropStartPosH, int32_t cropSizeW,
                                 int32_t cropSizeH, uint64_t batchIndex) {
  constexpr const char* kCall = "aclmdlSetAIPPCropParams";
  npu::AippDynamicImage* im = Image(aippParmsSet, batchIndex, kCall);
  if (!im) return ACL_ERROR_INVALID_PARAM;
  if (aclError e = Switch(kCall, "cropSwitch", cropSwitch)) return e;
  if (cropSwitch) {
    for (auto [what, v, lo] : {std::tuple{"cropStartPosW", cropStartPosW, 0}, {"cropStartPosH", cropStartPosH, 0}, {"cropSizeW", cropSizeW, 1}, {"cropSizeH", cropSizeH, 1}})
      if (aclError e = InRange<int64_t>(kCall, what, v, lo, kImageMax)) return e;
  }
  im->crop = cropSwitch;
  im->crop_x = cropStartPosW, im->crop_y = cropStartPosH, im->crop_w = cropSizeW, im->crop_h = cropSizeH;
  return ACL_SUCCESS;
}

aclError aclmdlSetAIPPPaddingParams(aclmdlAIPP* aippParmsSet, int8_t paddingSwitch, int32_t top, int32_t bottom, int32_t left, int32_t right,
                                    uint64_t batchIndex) {
  constexpr const char* kCall = "aclmdlSetAIPPPaddingParams";
  npu::AippDynamicImage* im = Image(aippParmsSet, batchIndex, kCall);
  if (!im) return ACL_ERROR_INVALID_PARAM;
  if (aclError e = Switch(kCall, "paddingSwitch", paddingSwitch)) return e;
  if (paddingSwitch)
    for (auto [what, v] : {std::pair{"paddingSizeTop", top}, {"paddingSizeBottom", bottom}, {"paddingSizeLeft", left}, {"paddingSizeRight", right}})
      if (aclError e = InRange<int64_t>(kCall, what, v, 0, kPaddingMax)) return e;
  im->padding = paddingSwitch;
  im->pad_top = top, im->pad_bottom = bottom, im->pad_left = left, im->pad_right = right;
  return ACL_SUCCESS;
}

aclError aclmdlSetAIPPDtcPixelMean(aclmdlAIPP* aippParmsSet, int16_t mean0, int16_t mean1, int16_t mean2, int16_t mean3, uint64_t batchIndex) {
  return SetChannels<int64_t>(aippParmsSet, batchIndex, "aclmdlSetAIPPDtcPixelMean", "a channel mean", {mean0, mean1, mean2, mean3}, 0, kPixelMax,
                              &npu::AippDynamicImage::mean);
}

aclError aclmdlSetAIPPDtcPixelMin(aclmdlAIPP* aippParmsSet, float min0, float min1, float min2, float min3, uint64_t batchIndex) {
  return SetChannels<float>(aippParmsSet, batchIndex, "aclmdlSetAIPPDtcPixelMin", "a channel min", {min0, min1, min2, min3}, 0.0f,
                            static_cast<float>(kPixelMax), &npu::AippDynamicImage::min);
}

aclError aclmdlSetAIPPPixelVarReci(aclmdlAIPP* aippParmsSet, float reci0, float reci1, float reci2, float reci3, uint64_t batchIndex) {
  return SetChannels<float>(aippParmsSet, batchIndex, "aclmdlSetAIPPPixelVarReci", "a channel variance reciprocal", {reci0, reci1, reci2, reci3},
                            -kVarReciLimit, kVarReciLimit, &npu::AippDynamicImage::var_reci);
}

aclError aclmdlSetInputAIPP(uint32_t modelId, aclmdlDataset* dataset, size_t index, const aclmdlAIPP* aippParmsSet) {
  return WriteParams(modelId, dataset, index, aippParmsSet, false, "aclmdlSetInputAIPP");
}

aclError aclmdlSetAIPPByInputIndex(uint32_t modelId, aclmdlDataset* dataset, size_t index, const aclmdlAIPP* aippParmsSet) {
  return WriteParams(modelId, dataset, index, aippParmsSet, true, "aclmdlSetAIPPByInputIndex");
}

aclError aclmdlGetAippType(uint32_t modelId, size_t index, aclmdlInputAippType* type, size_t* dynamicAttachedDataIndex) {
  auto l = std::unique_lock(npu::acl::Runtime::Get().mu);
  if (aclError e = npu::acl::Runtime::Get().RequireInit("aclmdlGetAippType")) return e;
  return npu::acl::Models::Get().AippType(modelId, index, type, dynamicAttachedDataIndex, "aclmdlGetAippType");
}

aclError aclmdlGetFirstAippInfo(uint32_t modelId, size_t index, aclAippInfo* aippInfo) {
  constexpr const char* kCall = "aclmdlGetFirstAippInfo";
  auto l = std::unique_lock(npu::acl::Runtime::Get().mu);
  if (aclError e = npu::acl::Runtime::Get().RequireInit(kCall)) return e;
  if (!aippInfo) return Fail(ACL_ERROR_INVALID_PARAM, kCall, "aippInfo is null");
  const npu::Graph* g = nullptr;
  const npu::Node* node = nullptr;
  if (aclError e = npu::acl::Models::Get().StaticAippOf(modelId, index, &node, &g, kCall)) return e;
  FillAippInfo(npu::AippFromAttrs(*node), g->values[node->inputs[0]], g->values[node->outputs[0]], *aippInfo);
  return ACL_SUCCESS;
}

}  // extern "C"
