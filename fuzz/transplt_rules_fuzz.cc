// transplt's custom rule JSON (-r), added to the built-in rules.
#include "fuzz_input.h"
#include "rules.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const transplt::RuleSet builtin = transplt::RuleSet::Builtin(false);
  npu::fuzz::MemFile f({data, size});
  transplt::RuleSet rules = builtin;
  (void)rules.AddCustom(f.path());
  return 0;
}
