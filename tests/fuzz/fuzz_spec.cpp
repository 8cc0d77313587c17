// libFuzzer target: any bytes as a spec, through parse -> check -> plan -> emit (tools/fuzz runs it).
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "pipeline.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  if (auto bad = ptxgen::fuzz::run_pipeline(input)) {
    std::fprintf(stderr, "ptxgen fuzz: property broken: %s\n", bad->c_str());
    std::abort();
  }
  return 0;
}
