// A program-level kernel run by the simulator from its launch manifest on random inputs (and
// random scale factors, valid 2:4 / 1:2 sparsity metadata), every stored element compared with a
// float64 evaluation of the ops as docs/spec.md defines them (tests/sim_program.cpp), which
// reads the spec only -- views through refmodel_views.hpp, none of the planner's results.
#pragma once

#include <nlohmann/json.hpp>
#include <map>
#include <string>

#include "ptxgen/program.hpp"
#include "sim/sim.hpp"

namespace simtest {

struct ProgramResult {
  std::string error;   // the simulator's Error, if it failed
  long checked = 0;    // stored elements compared (those the evaluation defines)
  long outputs = 0;    // elements of the globals the kernel stores
  double max_err = 0;  // max |got - reference| of the float outputs
  double worst = 0;    // max |got - reference| / bound (<= 1 passes; raw outputs must be equal: 0 or infinity)
  std::string where;
  ksim::Stats stats;
};

// `sizes`: the run's problem sizes where they differ from the spec's (the kernel takes them as
// parameters; a grid launches one CTA per tile of them, and tensors of run-time extents follow).
ProgramResult run_program(const ksim::Kernel& k, const ptxgen::spec::Program& p, const nlohmann::json& manifest,
                          unsigned seed, const ksim::Options& o = {}, const std::map<std::string, int64_t>& sizes = {});

}  // namespace simtest
