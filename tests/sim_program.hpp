// Program-level kernels run by the simulator against a float64 evaluation of the spec's ops: the
// library's (ptxgen/sim.hpp, src/sim/program.cpp), under the names the sim suites use.
#pragma once

#include "ptxgen/sim.hpp"

namespace simtest {

using ptxgen::sim::ProgramResult;
using ptxgen::sim::run_program;

}  // namespace simtest
