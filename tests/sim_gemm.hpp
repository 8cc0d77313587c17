// The gemm template's kernels run by the simulator against a float64 product: the library's
// (ptxgen/sim.hpp, src/sim/gemm.cpp), under the names the sim suites use.
#pragma once

#include "ptxgen/sim.hpp"

namespace simtest {

using ptxgen::sim::d_row_unit;
using ptxgen::sim::gemm_sizes;
using ptxgen::sim::GemmResult;
using ptxgen::sim::run_gemm;

// The rows of D run_gemm checks for m (a grouped kernel: its groups' valid rows; else m).
inline int64_t checked_rows(const nlohmann::json& manifest, int64_t m) {
  const std::vector<int64_t> sizes = ptxgen::sim::group_sizes(manifest, m);
  const bool masked = manifest.contains("groups") && manifest.at("groups").at("layout") == "masked";
  int64_t rows = 0;
  for (int64_t r = 0; r < (masked ? static_cast<int64_t>(sizes.size()) : 1) * m; ++r) rows += ptxgen::sim::group_row(manifest, sizes, m, r).want == 1;
  return rows;
}

}  // namespace simtest
