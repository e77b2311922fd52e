// The model-building flags atc and aoe share (precision modes and lists, output type, fusion switches), so
// both tools spell and document them the same way.
#pragma once
#include "atc.h"

namespace CLI {
class App;
}

namespace npu::atc {

void AddBuildFlags(CLI::App& app, AtcOptions& o);

}  // namespace npu::atc
