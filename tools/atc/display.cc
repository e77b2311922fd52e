// atc --mode=6: what a .om holds, in the layout of CANN's "Display Model Info".
#include <algorithm>
#include <ostream>

#include "atc.h"
#include "om/om_model.h"
#include "runtime/runtime.h"
#include "sim/schedule.h"

namespace npu::atc {
namespace {

// The layout a net input or output is exchanged in: its device format where atc set one, else its own.
std::string ShownLayout(const Value& v) { return v.device_format ? std::string(FormatName(*v.device_format)) : LayoutOf(v); }

void PrintProfilesAndRanges(const OmModel& om, std::ostream& out) {
  if (!om.profiles.empty()) {
    out << "dynamic  info: " << om.profiles.kind << " profiles[" << om.profiles.values.size() << "]: " << om.profiles.DescribeAll()
        << " (shown: profile " << om.profile << ")\n";
    for (const auto& [name, shape] : om.profiles.inputs) out << "  dynamic input " << name << ": " << ShapeToString(shape) << "\n";
  }
  for (const InputRange& r : om.input_ranges) {
    out << "  input range " << r.name << ": [";
    for (size_t d = 0; d < r.min.size(); ++d)
      out << (d ? "," : "") << (r.min[d] == r.max[d] ? std::to_string(r.min[d]) : std::to_string(r.min[d]) + "~" + std::to_string(r.max[d]));
    out << "]\n";
  }
}

void PrintIo(const Graph& g, std::ostream& out) {
  for (int i : g.inputs)
    out << "  input  " << g.values[i].name << ": " << DTypeName(g.values[i].dtype) << ShapeToString(DeviceShapeOf(g.values[i])) << " "
        << ShownLayout(g.values[i]) << "\n";
  for (int i : g.outputs)
    out << "  output " << g.values[i].name << ": " << DTypeName(g.values[i].dtype) << ShapeToString(DeviceShapeOf(g.values[i]))
        << (g.values[i].device_format ? " " + ShownLayout(g.values[i]) : std::string()) << "\n";
}

}  // namespace

int Display(const std::string& path, std::ostream& out) {
  auto m = LoadOm(path);
  if (!m.ok()) return Fail(out, {m.status()});
  const OmModel& om = m.value();
  auto attr = [&](const char* k) { auto it = om.attrs.find(k); return it == om.attrs.end() ? std::string("unknown") : it->second; };
  out << "============ Display Model Info start ============\n"
      << "Original Atc command line: " << attr("atc_cmdline") << "\n"
      << "system   info: atc_version[" << attr("atc_version") << "], soc_version[" << attr("soc_version")
      << "], framework_type[" << attr("framework_type") << "].\n"
      << "resource info: memory_size[" << (om.attrs.count("memory_size") ? attr("memory_size") : "0") << " B], weight_size[" << om.weight_size
      << " B], stream_num[" << (om.attrs.count("stream_num") ? attr("stream_num") : std::to_string(StreamCount(om.tasks)))
      << "], event_num[" << (om.attrs.count("event_num") ? attr("event_num") : std::to_string(EventCount(om.graph, om.tasks))) << "].\n"
      << "om       info: modeldef_size[" << om.model_def_size << " B], weight_data_size[" << om.weight_size
      << " B], tbe_kernels_size[" << om.tbe_kernels_size << " B], cust_aicpu_kernel_store_size[0 B], task_info_size[" << om.task_info_size << " B].\n"
      << "graph    info: ops[" << om.graph.nodes.size() << "], inputs[" << om.graph.inputs.size() << "], outputs[" << om.graph.outputs.size() << "].\n";
  PrintProfilesAndRanges(om, out);
  PrintIo(om.graph, out);
  // Views (a reshape in place) are tasks of the graph with no device work: counted apart, as they are not listed.
  const auto views = std::count_if(om.tasks.begin(), om.tasks.end(), [](const Task& t) { return !t.on_device(); });
  out << "task     info: tasks[" << om.tasks.size() - static_cast<size_t>(views) << "]";
  if (views > 0) out << ", and " << views << " in-place view(s) with no device work";
  out << "\n";
  for (const Task& t : om.tasks)
    if (t.on_device())
      out << "  task " << t.task_id << " " << t.kernel_name << " " << om.graph.nodes[t.op_index].name << ": " << WorkKindName(t.kind) << " "
          << TilingToString(TaskWork(om.graph, t, nullptr), t.tiling) << " (" << t.tiling_source << ")\n";
  if (om.attrs.count("om_model_num")) out << "The file holds " << attr("om_model_num") << " models; shown and run: the first (the root model).\n";
  if (om.cann_built) {
    out << "Built by CANN's ATC (" << attr("om_generation") << " header): npukit reads its graph, weights and attributes"
        << (om.unrunnable.empty() ? " and runs its ops with its own kernels (tasks lowered for the model's SoC).\n"
                                  : "; msame cannot run it, for lack of kernels for:" + UnsupportedList(om.unrunnable) + "\n");
  }
  if (auto soc = ModelSoc(om); soc.ok() && soc.value() && !om.tasks.empty()) {
    IterationTiming it = ScheduleIteration(om.graph, om.tasks, *soc.value());
    out << FormatSimulatedTime(it.total_ns, BatchOf(om.graph), *soc.value()) << "\n";
  }
  out << "============ Display Model Info end   ============\n";
  return 0;
}

}  // namespace npu::atc
