// msaccucmp: compare NPU dumps with golden data, convert dumps, inspect overflows, merge shard results.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <iostream>

#include "base/cli.h"
#include "base/version.h"
#include "base/log.h"
#include "base/status.h"
#include "commands.h"
#include "compare.h"

int main(int argc, char** argv) {
  npu::log::InitFromEnv();
  CLI::App app{"msaccucmp: compare NPU dump data with golden data, convert dumps, analyse overflows", "msaccucmp"};
  app.set_version_flag("--version", NPUKIT_TOOL_VERSION("msaccucmp"));
  app.require_subcommand(1);
  app.fallthrough();  // --log may come after the subcommand, as every other tool's flags do
  std::string log_level;
  app.add_option("--log", log_level, "debug, info, warning, error, null (also ASCEND_GLOBAL_LOG_LEVEL)");

  npu::cmp::CompareOptions c;
  auto* cmp = app.add_subcommand("compare", "compare NPU dumps with golden data (npy, NPU dumps, h5), or two files");
  cmp->add_option("-m,--my_dump_path", c.npu, "NPU dump folder or file (or .h5)")->required();
  cmp->add_option("-g,--golden_dump_path", c.golden, "golden .npy folder, NPU dump folder, or file (or .h5)")->required();
  cmp->add_option("-f,--fusion_rule_file", c.fusion, "fusion rule JSON from atc --mode=1");
  cmp->add_option("-q,--quant_fusion_rule_file", c.quant_fusion, "AMCT's quantization record (JSON) of a quantized model: names its ops after the model before quantization");
  cmp->add_option("--cf,--close_fusion_rule_file", c.close_fusion, "fusion rule JSON of the same model converted with fusion off (-g: its dump)");
  cmp->add_option("--out,--output", c.out, "result folder (default: current folder)");
  cmp->add_option("-c,--custom_script_path", c.custom, "folder with algorithm/alg_<Name>.py custom metrics (compare(my, golden, args)) and format_convert/convert_<SRC>_to_<DST>.py layout conversions");
  cmp->add_option("--alg,--algorithm", c.alg, "metrics: names or indices 0-9, comma-separated (default all)");
  cmp->add_option("--max,--max_cmp_size", c.max_cmp, "compare only the first N elements of each tensor (0 = all)");
  cmp->add_option("-r,--range", c.range, "op range start,end,step over the fusion rule's op sequence");
  cmp->add_option("-s,--select", c.select, "op sequence numbers i,j,k");
  cmp->add_option("--op,--op_name", c.op_name, "single-op detail for this op");
  cmp->add_option("-i,--input_tensor", c.input_index, "with -op: input index");
  cmp->add_option("-o,--output_tensor", c.output_index, "with -op: output index (default 0)");
  cmp->add_option("-n,--topn", c.topn, "with -op: rows in the top-N error files (default 20)");
  cmp->add_flag("--map,--mapping", c.mapping, "write only the NPU-golden mapping table");
  cmp->add_flag("--overflow_detection", c.overflow, "add the OverFlow column (fp16 tensors)");
  cmp->add_option("-p,--post_process", c.post_process, "h5 only: 1 writes <result>_filtered/ with the rows of cosine <= 0.95 or NaN and their tensors");
  cmp->add_flag("--advisor", c.advisor, "run the expert advisor after the comparison");
  cmp->add_option("--format", c.format, "csv (default) or json");
  cmp->add_option("--report", c.report, "html: also a self-contained page, result_<ts>.html, beside the CSV (charts and the worst ops)");
  cmp->add_option("--shard", c.shard, "K/N, auto or auto/N (from a Slurm array or Kubernetes Indexed Job): compute only this shard of the rows (merge the shards afterwards)");
  cmp->add_option("--precision", c.precision, "metric digits: 6 (default, as msaccucmp) or full");
  cmp->add_option("--thresholds", c.thresholds, "JSON of per-dtype verdict thresholds");

  npu::cmp::ConvertOptions v;
  auto* conv = app.add_subcommand("convert", "convert dump files to .npy, .bin or .txt");
  conv->add_option("-d,--dump_file", v.dump, "dump file, folder, or comma-separated files")->required();
  conv->add_option("--out,--output", v.out, "output folder (default: current folder)");
  conv->add_option("-t,--type", v.type, "npy (default), bin or txt");
  conv->add_option("-f,--format", v.format, "convert to this layout (NCHW or ND; others through -c scripts)");
  conv->add_option("-s,--shape", v.shape, "original shape for FRACTAL_NZ when the dump lacks it");
  conv->add_option("-o,--output_tensor", v.output_index, "only this output");
  conv->add_option("-i,--input_tensor", v.input_index, "only this input");
  conv->add_option("-c,--custom_script_path", v.custom, "folder with format_convert/convert_<SRC>_to_<DST>.py (convert(shape_from, shape_to, array))");

  std::string fm, fg, fout;
  auto* fc = app.add_subcommand("file_compare", "compare two .npy files");
  fc->add_option("-m,--my_dump_path", fm, "NPU .npy")->required();
  fc->add_option("-g,--golden_dump_path", fg, "golden .npy")->required();
  fc->add_option("--out,--output", fout, "result folder")->required();

  std::string od, oout, on = "1";
  auto* of = app.add_subcommand("overflow", "summarise overflow records (Opdebug files)");
  of->add_option("-d,--dump_path", od, "dump folder")->required();
  of->add_option("--out,--output", oout, "result folder");
  of->add_option("-n,--top_num", on, "how many overflow ops to detail (1-5, default 1)");

  std::vector<std::string> mi;
  std::string mout, mformat = "csv";
  auto* mg = app.add_subcommand("merge", "merge the shard results of compare --shard into one result");
  mg->add_option("-d,--dir", mi, "shard result files or folders")->required();
  mg->add_option("--out,--output", mout, "result folder");
  mg->add_option("--format", mformat, "csv (default) or json");
  std::string mreport;
  mg->add_option("--report", mreport, "html: also the merged result's page, result_<ts>.html");

  std::vector<std::string> ri;
  std::string rout;
  auto* rp = app.add_subcommand("report", "HTML pages of compare results (result_<ts>.csv files or folders), and an index of several");
  rp->add_option("-d,--dir", ri, "result files or folders")->required();
  rp->add_option("--out,--output", rout, "where the index page goes (default: current folder)");

  const std::vector<std::string> args = npu::cli::ArgsInOrder(argc, argv);

  try {
    app.parse(npu::cli::Args(argc, argv));  // CANN spells -out, -alg, ... with one dash
  } catch (const CLI::ParseError& e) {
    return npu::cli::ParseFailed(app, e, "msaccucmp", std::cout, args);
  }
  if (npu::Status s = npu::cli::ApplyLogFlag(log_level); !s.ok()) {
    npu::cli::PrintError(std::cout, s);
    return npu::cli::kUsage;
  }
  auto start = std::chrono::steady_clock::now();
  int rc = npu::cli::RunGuarded("msaccucmp", std::cout, [&] {
    if (*cmp) {
      c.progress = isatty(2);
      return npu::cmp::RunCompare(c, std::cout);
    }
    if (*conv) return npu::cmp::RunConvert(v, std::cout);
    if (*fc) return npu::cmp::RunFileCompare(fm, fg, fout, std::cout);
    if (*of) return npu::cmp::RunOverflow(od, oout, on, std::cout);
    if (*rp) return npu::cmp::RunReport(ri, rout, std::cout);
    return npu::cmp::RunMerge(mi, mout, mformat, mreport, std::cout);
  });
  // CANN's closing line, which batch scripts read for the run time.
  auto seconds = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - start).count();
  if (npu::log::ShowInfo()) std::cout << "[INFO] The command was completed and took " << seconds << " seconds.\n";
  return rc;
}
