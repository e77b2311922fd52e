/* npukit's AscendCL: offline models (CANN's acl_mdl.h interface): loading an .om, its description, datasets of
 * buffers, and execution on the simulated NPU with the numerics and clock msame gives. */
#ifndef NPUKIT_ACL_ACL_MDL_H_
#define NPUKIT_ACL_ACL_MDL_H_

#include "acl_base.h"
#include "acl_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ACL_MAX_DIM_CNT 128
#define ACL_MAX_TENSOR_NAME_LEN 128
/* The input a model converted with shape profiles (atc --dynamic_batch_size, --dynamic_image_size,
 * --dynamic_dims) takes its profile from; the setters below fill it. */
#define ACL_DYNAMIC_TENSOR_NAME "ascend_mbatch_shape_data"

typedef struct aclmdlDataset aclmdlDataset;
typedef struct aclmdlDesc aclmdlDesc;

#define ACL_MAX_BATCH_NUM 128
#define ACL_MAX_HW_NUM 128

/* The batch sizes / image sizes of a model converted with --dynamic_batch_size / --dynamic_image_size. */
typedef struct aclmdlBatch {
  size_t batchCount;
  uint64_t batch[ACL_MAX_BATCH_NUM];
} aclmdlBatch;

typedef struct aclmdlHW {
  size_t hwCount;
  uint64_t hw[ACL_MAX_HW_NUM][2];
} aclmdlHW;

typedef struct aclmdlIODims {
  char name[ACL_MAX_TENSOR_NAME_LEN];
  size_t dimCount;
  int64_t dims[ACL_MAX_DIM_CNT];
} aclmdlIODims;

/* Loading. A model id names the model until aclmdlUnload. */
ACL_FUNC_VISIBILITY aclError aclmdlLoadFromFile(const char *modelPath, uint32_t *modelId);
ACL_FUNC_VISIBILITY aclError aclmdlLoadFromMem(const void *model, size_t modelSize, uint32_t *modelId);
ACL_FUNC_VISIBILITY aclError aclmdlLoadFromFileWithMem(const char *modelPath, uint32_t *modelId, void *workPtr, size_t workSize,
                                                       void *weightPtr, size_t weightSize);
ACL_FUNC_VISIBILITY aclError aclmdlQuerySize(const char *fileName, size_t *workSize, size_t *weightSize);
ACL_FUNC_VISIBILITY aclError aclmdlUnload(uint32_t modelId);

/* The description of a loaded model. */
ACL_FUNC_VISIBILITY aclmdlDesc *aclmdlCreateDesc(void);
ACL_FUNC_VISIBILITY aclError aclmdlDestroyDesc(aclmdlDesc *modelDesc);
ACL_FUNC_VISIBILITY aclError aclmdlGetDesc(aclmdlDesc *modelDesc, uint32_t modelId);
ACL_FUNC_VISIBILITY size_t aclmdlGetNumInputs(aclmdlDesc *modelDesc);
ACL_FUNC_VISIBILITY size_t aclmdlGetNumOutputs(aclmdlDesc *modelDesc);
ACL_FUNC_VISIBILITY size_t aclmdlGetInputSizeByIndex(aclmdlDesc *modelDesc, size_t index);
ACL_FUNC_VISIBILITY size_t aclmdlGetOutputSizeByIndex(aclmdlDesc *modelDesc, size_t index);
ACL_FUNC_VISIBILITY aclError aclmdlGetInputDims(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims *dims);
ACL_FUNC_VISIBILITY aclError aclmdlGetOutputDims(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims *dims);
ACL_FUNC_VISIBILITY aclError aclmdlGetCurOutputDims(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims *dims);
ACL_FUNC_VISIBILITY const char *aclmdlGetInputNameByIndex(const aclmdlDesc *modelDesc, size_t index);
ACL_FUNC_VISIBILITY const char *aclmdlGetOutputNameByIndex(const aclmdlDesc *modelDesc, size_t index);
ACL_FUNC_VISIBILITY aclFormat aclmdlGetInputFormat(const aclmdlDesc *modelDesc, size_t index);
ACL_FUNC_VISIBILITY aclFormat aclmdlGetOutputFormat(const aclmdlDesc *modelDesc, size_t index);
ACL_FUNC_VISIBILITY aclDataType aclmdlGetInputDataType(const aclmdlDesc *modelDesc, size_t index);
ACL_FUNC_VISIBILITY aclDataType aclmdlGetOutputDataType(const aclmdlDesc *modelDesc, size_t index);
ACL_FUNC_VISIBILITY aclError aclmdlGetInputIndexByName(const aclmdlDesc *modelDesc, const char *name, size_t *index);
ACL_FUNC_VISIBILITY aclError aclmdlGetOutputIndexByName(const aclmdlDesc *modelDesc, const char *name, size_t *index);

/* Datasets: the buffers of a model's inputs or outputs, in order. */
ACL_FUNC_VISIBILITY aclmdlDataset *aclmdlCreateDataset(void);
ACL_FUNC_VISIBILITY aclError aclmdlDestroyDataset(const aclmdlDataset *dataset);
ACL_FUNC_VISIBILITY aclError aclmdlAddDatasetBuffer(aclmdlDataset *dataset, aclDataBuffer *dataBuffer);
ACL_FUNC_VISIBILITY size_t aclmdlGetDatasetNumBuffers(const aclmdlDataset *dataset);
ACL_FUNC_VISIBILITY aclDataBuffer *aclmdlGetDatasetBuffer(const aclmdlDataset *dataset, size_t index);
/* The description of buffer `index` (copied into the dataset): a dynamic-shape input's dims. After aclmdlExecute
 * the output dataset holds each output's description (its dims as this execution made them). */
ACL_FUNC_VISIBILITY aclError aclmdlSetDatasetTensorDesc(aclmdlDataset *dataset, aclTensorDesc *tensorDesc, size_t index);
ACL_FUNC_VISIBILITY aclTensorDesc *aclmdlGetDatasetTensorDesc(const aclmdlDataset *dataset, size_t index);

/* Shape profiles: write the profile into the dataset's buffer `index` (the ACL_DYNAMIC_TENSOR_NAME input);
 * the input buffers hold the largest profile, aclmdlGetCurOutputDims gives the dims the last execution had.
 * aclmdlSetInputDynamicDims: dims holds every input's dims in order (dimCount in all), as the profile has them. */
ACL_FUNC_VISIBILITY aclError aclmdlGetDynamicBatch(const aclmdlDesc *modelDesc, aclmdlBatch *batch);
ACL_FUNC_VISIBILITY aclError aclmdlGetDynamicHW(const aclmdlDesc *modelDesc, size_t index, aclmdlHW *hw);
ACL_FUNC_VISIBILITY aclError aclmdlSetDynamicBatchSize(uint32_t modelId, aclmdlDataset *dataset, size_t index, uint64_t batchSize);
ACL_FUNC_VISIBILITY aclError aclmdlSetDynamicHWSize(uint32_t modelId, aclmdlDataset *dataset, size_t index, uint64_t height, uint64_t width);
ACL_FUNC_VISIBILITY aclError aclmdlSetInputDynamicDims(uint32_t modelId, aclmdlDataset *dataset, size_t index, const aclmdlIODims *dims);

/* Execution: inputs and outputs are device buffers of at least the model's sizes. An output buffer made with
 * aclCreateDataBuffer(nullptr, 0) is allocated by the runtime to the size the execution gives the output (a
 * dynamic-shape model's); the program frees it with aclrtFree and resets the buffer with aclUpdateDataBuffer. */
ACL_FUNC_VISIBILITY aclError aclmdlExecute(uint32_t modelId, const aclmdlDataset *input, aclmdlDataset *output);
ACL_FUNC_VISIBILITY aclError aclmdlExecuteAsync(uint32_t modelId, const aclmdlDataset *input, aclmdlDataset *output, aclrtStream stream);

/* The dump API (the older form of aclInit's dump section): models loaded after aclmdlSetDump(path) dump as the
 * dump section of that JSON file says, until aclmdlFinalizeDump. Not with a dump section in aclInit's file. */
ACL_FUNC_VISIBILITY aclError aclmdlInitDump();
ACL_FUNC_VISIBILITY aclError aclmdlSetDump(const char *dumpCfgPath);
ACL_FUNC_VISIBILITY aclError aclmdlFinalizeDump();

/* Dynamic AIPP: a model converted with aipp_mode: dynamic (max_src_image_size bytes per image) takes its AIPP
 * parameters in the input named ACL_DYNAMIC_AIPP_NAME. Create a parameter set for the model's batch, set it, and
 * write it into that input's buffer with aclmdlSetInputAIPP before each aclmdlExecute that changes them. npukit's
 * AIPP takes YUV420SP_U8, XRGB8888_U8, RGB888_U8 and YUV400_U8 and does not resize (scf). */
#define ACL_DYNAMIC_AIPP_NAME "ascend_dynamic_aipp_data"
#define ACL_INVALID_NODE_INDEX 0xFFFFFFFF

typedef struct aclmdlAIPP aclmdlAIPP;

typedef enum {
  ACL_YUV420SP_U8 = 1,
  ACL_XRGB8888_U8,
  ACL_RGB888_U8,
  ACL_YUV400_U8,
  ACL_NC1HWC0DI_FP16,
  ACL_NC1HWC0DI_S8,
  ACL_ARGB8888_U8,
  ACL_YUYV_U8,
  ACL_YUV422SP_U8,
  ACL_AYUV444_U8,
  ACL_RAW10,
  ACL_RAW12,
  ACL_RAW16,
  ACL_RAW24,
  ACL_AIPP_RESERVED = 0xffff
} aclAippInputFormat;

typedef enum { ACL_DATA_WITHOUT_AIPP = 0, ACL_DATA_WITH_STATIC_AIPP, ACL_DATA_WITH_DYNAMIC_AIPP, ACL_DYNAMIC_AIPP_NODE } aclmdlInputAippType;

ACL_FUNC_VISIBILITY aclmdlAIPP *aclmdlCreateAIPP(uint64_t batchSize);
ACL_FUNC_VISIBILITY aclError aclmdlDestroyAIPP(const aclmdlAIPP *aippParmsSet);
ACL_FUNC_VISIBILITY aclError aclmdlGetAippDataSize(uint64_t batchSize, size_t *size);
ACL_FUNC_VISIBILITY aclError aclmdlSetAIPPInputFormat(aclmdlAIPP *aippParmsSet, aclAippInputFormat inputFormat);
ACL_FUNC_VISIBILITY aclError aclmdlSetAIPPCscParams(aclmdlAIPP *aippParmsSet, int8_t cscSwitch, int16_t cscMatrixR0C0, int16_t cscMatrixR0C1,
                                                    int16_t cscMatrixR0C2, int16_t cscMatrixR1C0, int16_t cscMatrixR1C1, int16_t cscMatrixR1C2,
                                                    int16_t cscMatrixR2C0, int16_t cscMatrixR2C1, int16_t cscMatrixR2C2, uint8_t cscOutputBiasR0,
                                                    uint8_t cscOutputBiasR1, uint8_t cscOutputBiasR2, uint8_t cscInputBiasR0, uint8_t cscInputBiasR1,
                                                    uint8_t cscInputBiasR2);
ACL_FUNC_VISIBILITY aclError aclmdlSetAIPPRbuvSwapSwitch(aclmdlAIPP *aippParmsSet, int8_t rbuvSwapSwitch);
ACL_FUNC_VISIBILITY aclError aclmdlSetAIPPAxSwapSwitch(aclmdlAIPP *aippParmsSet, int8_t axSwapSwitch);
ACL_FUNC_VISIBILITY aclError aclmdlSetAIPPSrcImageSize(aclmdlAIPP *aippParmsSet, int32_t srcImageSizeW, int32_t srcImageSizeH);
ACL_FUNC_VISIBILITY aclError aclmdlSetAIPPScfParams(aclmdlAIPP *aippParmsSet, int8_t scfSwitch, int32_t scfInputSizeW, int32_t scfInputSizeH,
                                                    int32_t scfOutputSizeW, int32_t scfOutputSizeH, uint64_t batchIndex);
ACL_FUNC_VISIBILITY aclError aclmdlSetAIPPCropParams(aclmdlAIPP *aippParmsSet, int8_t cropSwitch, int32_t cropStartPosW, int32_t cropStartPosH,
                                                     int32_t cropSizeW, int32_t cropSizeH, uint64_t batchIndex);
ACL_FUNC_VISIBILITY aclError aclmdlSetAIPPPaddingParams(aclmdlAIPP *aippParmsSet, int8_t paddingSwitch, int32_t paddingSizeTop,
                                                        int32_t paddingSizeBottom, int32_t paddingSizeLeft, int32_t paddingSizeRight,
                                                        uint64_t batchIndex);
ACL_FUNC_VISIBILITY aclError aclmdlSetAIPPDtcPixelMean(aclmdlAIPP *aippParmsSet, int16_t dtcPixelMeanChn0, int16_t dtcPixelMeanChn1,
                                                       int16_t dtcPixelMeanChn2, int16_t dtcPixelMeanChn3, uint64_t batchIndex);
ACL_FUNC_VISIBILITY aclError aclmdlSetAIPPDtcPixelMin(aclmdlAIPP *aippParmsSet, float dtcPixelMinChn0, float dtcPixelMinChn1, float dtcPixelMinChn2,
                                                      float dtcPixelMinChn3, uint64_t batchIndex);
ACL_FUNC_VISIBILITY aclError aclmdlSetAIPPPixelVarReci(aclmdlAIPP *aippParmsSet, float dtcPixelVarReciChn0, float dtcPixelVarReciChn1,
                                                       float dtcPixelVarReciChn2, float dtcPixelVarReciChn3, uint64_t batchIndex);
ACL_FUNC_VISIBILITY aclError aclmdlSetInputAIPP(uint32_t modelId, aclmdlDataset *dataset, size_t index, const aclmdlAIPP *aippParmsSet);
ACL_FUNC_VISIBILITY aclError aclmdlSetAIPPByInputIndex(uint32_t modelId, aclmdlDataset *dataset, size_t index, const aclmdlAIPP *aippParmsSet);
ACL_FUNC_VISIBILITY aclError aclmdlGetAippType(uint32_t modelId, size_t index, aclmdlInputAippType *type, size_t *dynamicAttachedDataIndex);

/* A static AIPP's configuration (atc --insert_op_conf) as the model holds it, for input `index`;
 * ACL_ERROR_GE_AIPP_NOT_EXIST when the input has none (or takes dynamic AIPP, whose parameters are the program's). */
#define ACL_MAX_SHAPE_COUNT 128
typedef struct aclAippExtendInfo aclAippExtendInfo;
typedef struct aclAippDims {
  aclmdlIODims srcDims;     /* the input before AIPP (the image) */
  size_t srcSize;
  aclmdlIODims aippOutdims; /* what AIPP writes: the model's input */
  size_t aippOutSize;
} aclAippDims;
typedef struct aclAippInfo {
  aclAippInputFormat inputFormat;
  int32_t srcImageSizeW;
  int32_t srcImageSizeH;
  int8_t cropSwitch;
  int32_t loadStartPosW;
  int32_t loadStartPosH;
  int32_t cropSizeW;
  int32_t cropSizeH;
  int8_t resizeSwitch;
  int32_t resizeOutputW;
  int32_t resizeOutputH;
  int8_t paddingSwitch;
  int32_t leftPaddingSize;
  int32_t rightPaddingSize;
  int32_t topPaddingSize;
  int32_t bottomPaddingSize;
  int8_t cscSwitch;
  int8_t rbuvSwapSwitch;
  int8_t axSwapSwitch;
  int8_t singleLineMode;
  int32_t matrixR0C0;
  int32_t matrixR0C1;
  int32_t matrixR0C2;
  int32_t matrixR1C0;
  int32_t matrixR1C1;
  int32_t matrixR1C2;
  int32_t matrixR2C0;
  int32_t matrixR2C1;
  int32_t matrixR2C2;
  int32_t outputBias0;
  int32_t outputBias1;
  int32_t outputBias2;
  int32_t inputBias0;
  int32_t inputBias1;
  int32_t inputBias2;
  int32_t meanChn0;
  int32_t meanChn1;
  int32_t meanChn2;
  int32_t meanChn3;
  float minChn0;
  float minChn1;
  float minChn2;
  float minChn3;
  float varReciChn0;
  float varReciChn1;
  float varReciChn2;
  float varReciChn3;
  aclFormat srcFormat;
  aclDataType srcDatatype;
  size_t srcDimNum;
  size_t shapeCount;
  aclAippDims outDims[ACL_MAX_SHAPE_COUNT];
  aclAippExtendInfo *aippExtend; /* reserved: NULL */
} aclAippInfo;
ACL_FUNC_VISIBILITY aclError aclmdlGetFirstAippInfo(uint32_t modelId, size_t index, aclAippInfo *aippInfo);

#ifdef __cplusplus
}
#endif

#endif /* NPUKIT_ACL_ACL_MDL_H_ */
