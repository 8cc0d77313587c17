// A GEMM kernel (the gemm template) run by the simulator from its launch manifest, checked
// against a float64 product.
#pragma once

#include <array>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/sim.hpp"

namespace simtest {

struct GemmResult {
  std::string error;   // the simulator's Error, if it failed
  long checked = 0;    // elements of D compared
  double max_err = 0;  // max |D - reference|
  double worst = 0;    // max |D - reference| / bound (<= 1 passes)
  std::string where;   // the element at `worst`
  uint64_t ctas = 0;
  ksim::Stats stats;
};

// Problem sizes for a kernel with the manifest's tile and `stages` pipeline stages: two tiles in M
// and N with ragged edges (odd n: the one-element stores) and two K blocks, the second partial; then
// one tile, short of the edge in M and N (even n: the paired stores), with more K blocks than
// stages (the ring wraps, every barrier changes phase; k's tail partial).
std::vector<std::array<int64_t, 3>> gemm_sizes(const nlohmann::json& manifest, int stages);

GemmResult run_gemm(const ksim::Kernel& k, const nlohmann::json& manifest, int64_t m, int64_t n, int64_t kk, unsigned seed,
                    const ksim::Options& o = {});

}  // namespace simtest
