// The gemm template's kernels run by the simulator against a float64 product: the library's
// (ptxgen/sim.hpp, src/sim/gemm.cpp), under the names the sim suites use.
#pragma once

#include "ptxgen/sim.hpp"

namespace simtest {

using ptxgen::sim::d_row_unit;
using ptxgen::sim::gemm_sizes;
using ptxgen::sim::GemmResult;
using ptxgen::sim::run_gemm;

// The rows run_gemm checks for capacity m: each group's valid rows, masked_m clamped to [0, m].
inline int64_t masked_groups_rows(const nlohmann::json& manifest, int64_t m) {
  int64_t rows = 0;
  for (int64_t x : ptxgen::sim::masked_m(manifest, m)) rows += x < 0 ? 0 : x > m ? m : x;
  return rows;
}

}  // namespace simtest
