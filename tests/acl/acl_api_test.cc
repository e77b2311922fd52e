// libascendcl's error handling, through its C interface only: every bad call returns CANN's documented code and
// leaves a message for aclGetRecentErrMsg; none crashes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "acl/acl.h"

namespace {

std::string Message() { return aclGetRecentErrMsg(); }

// AscendCL initialised with device 0 set for the test, finalised after it.
class Acl : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS) << Message();
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS) << Message();
  }
  void TearDown() override {
    EXPECT_EQ(aclrtResetDevice(0), ACL_SUCCESS) << Message();
    EXPECT_EQ(aclFinalize(), ACL_SUCCESS) << Message();
  }
};

TEST(AclInit, CallsBeforeInitOrContextSaySo) {
  EXPECT_EQ(aclrtSetDevice(0), ACL_ERROR_UNINITIALIZE);
  EXPECT_NE(Message().find("aclInit"), std::string::npos);
  EXPECT_EQ(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);
  ASSERT_EQ(aclInit(""), ACL_SUCCESS);
  EXPECT_EQ(aclInit(""), ACL_ERROR_REPEAT_INITIALIZE);
  aclrtStream s = nullptr;
  EXPECT_EQ(aclrtCreateStream(&s), ACL_ERROR_RT_CONTEXT_NULL) << "no device set on this thread";
  EXPECT_EQ(aclrtSetDevice(1), ACL_ERROR_RT_INVALID_DEVICEID);
  EXPECT_NE(Message().find("device 0 only"), std::string::npos) << Message();
  EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
}

TEST(AclInit, AMalformedConfigIsAParseError) {
  char path[] = "/tmp/acl_json_XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "{\"dump\": ", 9), 9);
  ::close(fd);
  EXPECT_EQ(aclInit(path), ACL_ERROR_PARSE_FILE);
  EXPECT_NE(Message().find(path), std::string::npos);
  EXPECT_EQ(aclInit("/no/such/acl.json"), ACL_ERROR_INVALID_FILE);
  ::unlink(path);
}

TEST_F(Acl, DeviceMemoryIsCheckedNotTrusted) {
  void* dev = nullptr;
  ASSERT_EQ(aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  char host[128] = {};
  EXPECT_EQ(aclrtMemcpy(dev, 64, host, 64, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
  // Past the allocation's end.
  EXPECT_EQ(aclrtMemcpy(dev, 128, host, 128, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID);
  EXPECT_NE(Message().find("run past the end"), std::string::npos) << Message();
  // More than destMax.
  EXPECT_EQ(aclrtMemcpy(dev, 32, host, 64, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
  // A host pointer where the kind says device, and the other way round.
  EXPECT_EQ(aclrtMemcpy(host, 64, dev, 64, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID);
  EXPECT_NE(Message().find("not device memory"), std::string::npos) << Message();
  EXPECT_EQ(aclrtMemcpy(dev, 64, host, 64, ACL_MEMCPY_DEVICE_TO_HOST), ACL_ERROR_RT_PARAM_INVALID);
  // Freed twice, used after the free.
  ASSERT_EQ(aclrtFree(dev), ACL_SUCCESS);
  EXPECT_EQ(aclrtFree(dev), ACL_ERROR_RT_PARAM_INVALID);
  EXPECT_NE(Message().find("double free"), std::string::npos) << Message();
  EXPECT_EQ(aclrtMemcpy(dev, 64, host, 64, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID);
  EXPECT_NE(Message().find("use after free"), std::string::npos) << Message();
  EXPECT_EQ(aclrtMemset(dev, 64, 0, 64), ACL_ERROR_RT_PARAM_INVALID);
  // Host memory from aclrtMallocHost is not device memory either, and is freed with its own call.
  void* pinned = nullptr;
  ASSERT_EQ(aclrtMallocHost(&pinned, 32), ACL_SUCCESS);
  EXPECT_EQ(aclrtFree(pinned), ACL_ERROR_RT_PARAM_INVALID);
  EXPECT_NE(Message().find("aclrtFreeHost"), std::string::npos) << Message();
  EXPECT_EQ(aclrtFreeHost(pinned), ACL_SUCCESS);
  EXPECT_EQ(aclrtMalloc(nullptr, 8, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtMalloc(&dev, 0, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
}

TEST_F(Acl, CopiesMoveTheBytes) {
  void *a = nullptr, *b = nullptr;
  ASSERT_EQ(aclrtMalloc(&a, 16, ACL_MEM_MALLOC_NORMAL_ONLY), ACL_SUCCESS);
  ASSERT_EQ(aclrtMalloc(&b, 16, ACL_MEM_MALLOC_NORMAL_ONLY), ACL_SUCCESS);
  const char in[16] = "npukit acl copy";
  char out[16] = {};
  ASSERT_EQ(aclrtMemcpy(a, 16, in, 16, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
  ASSERT_EQ(aclrtMemcpy(b, 16, a, 16, ACL_MEMCPY_DEVICE_TO_DEVICE), ACL_SUCCESS);
  ASSERT_EQ(aclrtMemcpy(out, 16, b, 16, ACL_MEMCPY_DEFAULT), ACL_SUCCESS);  // the runtime tells the sides apart
  EXPECT_STREQ(out, in);
  ASSERT_EQ(aclrtMemset(b, 16, 0x41, 4), ACL_SUCCESS);
  ASSERT_EQ(aclrtMemcpy(out, 16, b, 16, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  EXPECT_EQ(std::string(out, 6), "AAAAit");
  EXPECT_EQ(aclrtFree(a), ACL_SUCCESS);
  EXPECT_EQ(aclrtFree(b), ACL_SUCCESS);
}

TEST_F(Acl, ANullHandleSlotIsAnErrorNotACrash) {
  EXPECT_EQ(aclrtCreateContext(nullptr, 0), ACL_ERROR_INVALID_PARAM);
  EXPECT_NE(Message().find("context is null"), std::string::npos) << Message();
  EXPECT_EQ(aclrtCreateStream(nullptr), ACL_ERROR_INVALID_PARAM);
  EXPECT_NE(Message().find("stream is null"), std::string::npos) << Message();
  EXPECT_EQ(aclrtCreateEvent(nullptr), ACL_ERROR_INVALID_PARAM);
  EXPECT_NE(Message().find("event is null"), std::string::npos) << Message();
}

TEST_F(Acl, HandlesAreValidatedAndDestroyedOnce) {
  aclrtStream s = nullptr;
  ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
  EXPECT_EQ(aclrtSynchronizeStream(s), ACL_SUCCESS);
  EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
  EXPECT_EQ(aclrtDestroyStream(s), ACL_ERROR_RT_PARAM_INVALID);
  EXPECT_EQ(aclrtSynchronizeStream(s), ACL_ERROR_RT_PARAM_INVALID);
  aclDataBuffer* b = aclCreateDataBuffer(nullptr, 0);
  EXPECT_EQ(aclDestroyDataBuffer(b), ACL_SUCCESS);
  EXPECT_EQ(aclDestroyDataBuffer(b), ACL_ERROR_INVALID_PARAM);
  aclmdlDataset* d = aclmdlCreateDataset();
  EXPECT_EQ(aclmdlAddDatasetBuffer(d, b), ACL_ERROR_INVALID_PARAM) << "a destroyed buffer";
  EXPECT_EQ(aclmdlDestroyDataset(d), ACL_SUCCESS);
  EXPECT_EQ(aclmdlDestroyDataset(d), ACL_ERROR_INVALID_PARAM);
  aclrtEvent e = nullptr;
  ASSERT_EQ(aclrtCreateEvent(&e), ACL_SUCCESS);
  float ms = 0;
  EXPECT_EQ(aclrtEventElapsedTime(&ms, e, e), ACL_ERROR_RT_PARAM_INVALID) << "not recorded";
  ASSERT_EQ(aclrtRecordEvent(e, nullptr), ACL_SUCCESS);
  EXPECT_EQ(aclrtEventElapsedTime(&ms, e, e), ACL_SUCCESS);
  EXPECT_EQ(ms, 0.0f);
  EXPECT_EQ(aclrtDestroyEvent(e), ACL_SUCCESS);
  EXPECT_EQ(aclrtDestroyEvent(e), ACL_ERROR_RT_PARAM_INVALID);
}

TEST_F(Acl, TensorDescriptionsAreCheckedAndCopiedIntoTheDataset) {
  const int64_t dims[] = {2, 3, 5};
  aclTensorDesc* d = aclCreateTensorDesc(ACL_FLOAT16, 3, dims, ACL_FORMAT_ND);
  ASSERT_NE(d, nullptr) << Message();
  EXPECT_EQ(aclGetTensorDescType(d), ACL_FLOAT16);
  EXPECT_EQ(aclGetTensorDescFormat(d), ACL_FORMAT_ND);
  EXPECT_EQ(aclGetTensorDescNumDims(d), 3u);
  EXPECT_EQ(aclGetTensorDescElementCount(d), 30u);
  EXPECT_EQ(aclGetTensorDescSize(d), 60u);
  int64_t dim = 0;
  EXPECT_EQ(aclGetTensorDescDimV2(d, 2, &dim), ACL_SUCCESS);
  EXPECT_EQ(dim, 5);
  EXPECT_EQ(aclGetTensorDescDimV2(d, 3, &dim), ACL_ERROR_INVALID_PARAM);
  EXPECT_NE(Message().find("past the 3 dims"), std::string::npos);
  EXPECT_EQ(aclGetTensorDescDimV2(d, 0, nullptr), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclCreateTensorDesc(ACL_FLOAT, 2, nullptr, ACL_FORMAT_ND), nullptr);
  const int64_t bad[] = {4, -3};
  EXPECT_EQ(aclCreateTensorDesc(ACL_FLOAT, 2, bad, ACL_FORMAT_ND), nullptr);
  EXPECT_NE(Message().find("dims[1] is -3"), std::string::npos);

  aclmdlDataset* set = aclmdlCreateDataset();
  EXPECT_EQ(aclmdlSetDatasetTensorDesc(set, d, 0), ACL_ERROR_INVALID_PARAM) << "no buffer 0 yet";
  aclDataBuffer* b = aclCreateDataBuffer(nullptr, 0);
  ASSERT_EQ(aclmdlAddDatasetBuffer(set, b), ACL_SUCCESS);
  EXPECT_EQ(aclmdlGetDatasetTensorDesc(set, 0), nullptr) << "none set";
  ASSERT_EQ(aclmdlSetDatasetTensorDesc(set, d, 0), ACL_SUCCESS);
  aclDestroyTensorDesc(d);  // the dataset holds its own copy
  EXPECT_EQ(aclGetTensorDescNumDims(d), 0u) << "a destroyed description";
  aclTensorDesc* kept = aclmdlGetDatasetTensorDesc(set, 0);
  ASSERT_NE(kept, nullptr);
  EXPECT_EQ(aclGetTensorDescElementCount(kept), 30u);
  EXPECT_EQ(aclmdlDestroyDataset(set), ACL_SUCCESS);
  EXPECT_EQ(aclGetTensorDescNumDims(kept), 0u) << "gone with its dataset";
  EXPECT_EQ(aclDestroyDataBuffer(b), ACL_SUCCESS);
}

TEST_F(Acl, ModelCallsCheckIdsAndFiles) {
  uint32_t id = 0;
  EXPECT_EQ(aclmdlLoadFromFile("/no/such/model.om", &id), ACL_ERROR_GE_EXEC_MODEL_PATH_INVALID);
  char path[] = "/tmp/acl_om_XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "not an om file at all", 21), 21);
  ::close(fd);
  EXPECT_EQ(aclmdlLoadFromFile(path, &id), ACL_ERROR_DESERIALIZE_MODEL);
  EXPECT_FALSE(Message().empty());
  EXPECT_EQ(aclmdlLoadFromMem("garbage", 7, &id), ACL_ERROR_DESERIALIZE_MODEL);
  ::unlink(path);
  aclmdlDataset* in = aclmdlCreateDataset();
  aclmdlDataset* out = aclmdlCreateDataset();
  EXPECT_EQ(aclmdlExecute(42, in, out), ACL_ERROR_GE_EXEC_MODEL_ID_INVALID);
  EXPECT_EQ(aclmdlUnload(42), ACL_ERROR_GE_EXEC_MODEL_ID_INVALID);
  aclmdlDesc* desc = aclmdlCreateDesc();
  EXPECT_EQ(aclmdlGetDesc(desc, 42), ACL_ERROR_GE_EXEC_MODEL_ID_INVALID);
  EXPECT_EQ(aclmdlGetInputSizeByIndex(desc, 0), 0u) << "an unfilled description";
  EXPECT_EQ(aclmdlDestroyDesc(desc), ACL_SUCCESS);
  EXPECT_EQ(aclmdlDestroyDataset(in), ACL_SUCCESS);
  EXPECT_EQ(aclmdlDestroyDataset(out), ACL_SUCCESS);
}

TEST_F(Acl, SubscriptionChecksItsConfigModelAndBuffers) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  EXPECT_EQ(aclprofCreateSubscribeConfig(2, ACL_AICORE_NONE, &fds[1]), nullptr) << "timeInfoSwitch is 0 or 1";
  EXPECT_EQ(aclprofCreateSubscribeConfig(1, ACL_AICORE_NONE, nullptr), nullptr);
  aclprofSubscribeConfig* cfg = aclprofCreateSubscribeConfig(1, ACL_AICORE_PIPE_UTILIZATION, &fds[1]);
  ASSERT_NE(cfg, nullptr) << Message();
  EXPECT_EQ(aclprofModelSubscribe(42, cfg), ACL_ERROR_INVALID_MODEL_ID);
  EXPECT_NE(Message().find("42"), std::string::npos);
  EXPECT_EQ(aclprofModelUnSubscribe(42), ACL_ERROR_INVALID_MODEL_ID);
  size_t size = 0;
  ASSERT_EQ(aclprofGetOpDescSize(&size), ACL_SUCCESS);
  std::string junk(2 * size, 'x');
  uint32_t n = 7;
  EXPECT_EQ(aclprofGetOpNum(junk.data(), junk.size(), &n), ACL_ERROR_INVALID_PARAM) << "bytes that are not records";
  EXPECT_EQ(aclprofGetOpNum(junk.data(), size + 1, &n), ACL_ERROR_INVALID_PARAM) << "not a whole number of records";
  EXPECT_EQ(aclprofGetOpNum(nullptr, size, &n), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(n, 7u) << "untouched on failure";
  EXPECT_EQ(aclprofGetOpStart(junk.data(), junk.size(), 5), 0u);
  EXPECT_NE(Message().find("past the 2"), std::string::npos) << Message();
  char name[4];
  EXPECT_EQ(aclprofGetOpName(junk.data(), junk.size(), 0, name, sizeof name), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclprofDestroySubscribeConfig(cfg), ACL_SUCCESS);
  EXPECT_EQ(aclprofDestroySubscribeConfig(cfg), ACL_ERROR_INVALID_PARAM);
  ::close(fds[0]);
  ::close(fds[1]);
}

TEST(AclBase, Float16AndTypeSizes) {
  EXPECT_EQ(aclFloatToFloat16(1.0f), 0x3C00);
  EXPECT_EQ(aclFloat16ToFloat(0xC000), -2.0f);
  EXPECT_EQ(aclDataTypeSize(ACL_FLOAT16), 2u);
  EXPECT_EQ(aclDataTypeSize(ACL_INT64), 8u);
  EXPECT_EQ(aclDataTypeSize(static_cast<aclDataType>(99)), 0u);
}

}  // namespace
