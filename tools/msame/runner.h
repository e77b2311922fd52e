// How msame runs its inferences. An .om runs through AscendCL's C interface (acl_runner.cc), as CANN's msame
// does, so everything msame shows (dumps, overflow, profiling, shape profiles) is what a program gets from the
// library. A framework model runs directly on the fp32 reference path (reference_runner.cc): it has no device.
#pragma once
#include <iosfwd>
#include <memory>
#include <vector>

#include "msame.h"
#include "prof/collector.h"

namespace npu::msame {

class Runner {
 public:
  virtual ~Runner() = default;
  // The session of the shape profile that runs: inputs are read for its graph.
  virtual const Session& session() const = 0;
  // Hands an input set to the model for the inferences that follow: an .om's are copied into its device buffers
  // once, as CANN's msame copies its input files before its loop.
  virtual Status SetInputs(const std::vector<Tensor>& inputs) = 0;
  // One inference of the inputs set last: what msame times (CANN's msame times aclmdlExecute alone).
  virtual Status Infer() = 0;
  // The outputs of the last inference.
  virtual Result<std::vector<Tensor>> Outputs() = 0;
  // After the last inference: prints what the dumps wrote, finishes the profile and releases the model.
  virtual Status Finish(std::ostream& out) = 0;
};

// `first_files`: the first input set's files (they choose a shape profile when no --dym flag does).
// `first_step`: the dump step of the first inference (a shard's steps are numbered as in one whole run).
Result<std::unique_ptr<Runner>> OpenAclRunner(const MsameOptions& o, const std::vector<std::string>& first_files, uint64_t first_step,
                                              std::ostream& out);
Result<std::unique_ptr<Runner>> OpenReferenceRunner(const MsameOptions& o, uint64_t first_step, std::ostream& out);
// The model as a session of its own, with --soc_spec applied and the shape profile chosen (the reference path
// and --sim_mode=timing, which run without AscendCL).
Result<Session> OpenSession(const MsameOptions& o, const std::vector<std::string>& first_files, std::ostream& out);
// acl.json's profiler section, else PROFILING_MODE/PROFILING_OPTIONS, for a session run without AscendCL; null
// when profiling is off.
Result<std::unique_ptr<prof::Collector>> StartProfiler(const MsameOptions& o, Session& s, std::ostream& out);
Status FinishProfiler(prof::Collector* c, std::ostream& out);

}  // namespace npu::msame
