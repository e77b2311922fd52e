// atc --singleop=ops.json --output=DIR: one .om per op description of CANN's single-op JSON, each a one-op
// model msame runs like any other. Every description is checked before anything is written.
#include <filesystem>
#include <ostream>

#include "atc.h"
#include "base/log.h"
#include "compile/compile.h"
#include "frontend/singleop/singleop_json.h"

namespace npu::atc {

int ConvertSingleOps(const AtcOptions& o, std::ostream& out) {
  auto config = SingleOpConfig(o);
  if (!config.ok()) return Fail(out, {config.status()});
  auto ops = ImportSingleOps(o.singleop);
  if (!ops.ok()) return Fail(out, {ops.status()});
  std::vector<OmModel> models;
  for (SingleOp& op : ops.value()) {
    auto m = CompileSingleOp(config.value(), std::move(op.graph));
    if (!m.ok()) return Fail(out, {m.status()});
    m.value().header.name = op.name;
    m.value().header.platform_version = config.value().soc->name;
    models.push_back(std::move(m).value());
  }
  std::error_code ec;
  std::filesystem::create_directories(o.output, ec);
  if (ec) return Fail(out, {Status::Error("E13004", "--output", o.output, "cannot create the folder: " + ec.message())});
  for (const OmModel& m : models) {
    std::string path = o.output + "/" + m.header.name + ".om";
    if (Status s = SaveOm(path, m); !s.ok()) return Fail(out, {s.param() == "output" ? s.with_param("--output") : s});
    if (log::ShowInfo()) out << "[INFO] " << path << "\n";
  }
  out << "ATC run success, welcome to the next use.\n";
  return 0;
}

}  // namespace npu::atc
