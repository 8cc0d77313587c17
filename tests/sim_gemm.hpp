// The gemm template's kernels run by the simulator against a float64 product: the library's
// (ptxgen/sim.hpp, src/sim/gemm.cpp), under the names the sim suites use.
#pragma once

#include "ptxgen/sim.hpp"

namespace simtest {

using ptxgen::sim::d_row_unit;
using ptxgen::sim::gemm_sizes;
using ptxgen::sim::GemmResult;
using ptxgen::sim::run_gemm;

}  // namespace simtest
