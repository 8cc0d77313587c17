// `ptxgen simulate`: the kernel a spec compiles to (or a PTX file given for it), run on the CPU by
// the kernel simulator (ptxgen/sim.hpp) on random inputs, every output compared with a float64
// evaluation of the spec (docs/simulate.md).
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "load.hpp"
#include "ptxgen/sim.hpp"

namespace ptxgen::cli {

struct SimulateOptions {
  bool sizes_given = false;
  std::string sizes;  // --size: "m=256,n=512,k=320" (a program: its size names)
  int64_t grid = 0;   // --grid: a persistent kernel's units (CTAs, pairs or clusters); 0 the default
  unsigned seed = 1;  // --seed: the random inputs'
  std::string ptx;    // --ptx: simulate this PTX file instead of the emitted PTX
  std::string print;  // --print: an output tensor to print beside its reference
  std::string inputs; // --inputs: a folder of NAME.npy files, input tensors' values
  uint64_t schedules = 1;        // --schedules: run schedules 0 .. N-1 (ksim::policy_of), stop at the first failure
  bool schedule_given = false;   // --schedule: run that one only (a failure's, to replay it)
  uint64_t schedule = 0;
  bool json = false;
  // The documented budget (docs/simulate.md): a run past it stops with an error, never a hang.
  uint64_t max_instructions = 400'000'000;
};

// A run's problem sizes by name.
using Sizes = std::map<std::string, int64_t>;

// "" when `sizes` reads as NAME=VALUE,...; else what is wrong with it (a usage error).
std::string simulate_usage_problem(const SimulateOptions& o);

// Simulates l's one unit; prints the report (text, or one JSON object) on standard output. Exit 0
// when every output is within its bound and the simulator found nothing wrong, else 1.
int simulate(const Loaded& l, const SimulateOptions& o);

// ---- the report (simulate_report.cpp) ----
struct SimReport {
  std::string spec_path, ptx_name;  // what ran
  std::string sizes_how;            // how the sizes were chosen, in words
  Sizes sizes;
  bool persistent = false;
  int64_t units = 0;         // a persistent kernel's units
  std::string cause, error;  // "" when it passed; error in the spec's terms (with_names, with_steps)
  std::vector<std::string> ops;  // the spec's ops the failing thread was in (failing_ops)
  std::vector<std::string> from_files;  // the inputs --inputs gave (the others random)
  std::vector<sim::TensorReport> tensors;
  ksim::Stats stats;
  const sim::TensorReport* shown = nullptr;  // --print
  uint64_t schedule = 0;     // the schedule of the run reported (the failing one, if any)
  size_t schedules_run = 1;  // how many ran (up to and including a failing one)
};
// A run's outcome in the report's terms: a simulator error's cause in one word (cause_of), the error
// in the spec's terms (with_names, with_steps) and the failing thread's ops; else "wrong_value" when
// an output is outside its bound.
void explain_failure(SimReport& r, const plan::Plan& p, const std::string& ptx, uint64_t max_instructions);
// What `simulate` writes on standard error for a failed run, "error[CAUSE]: ...\n"; "" for a pass.
std::string verdict(const SimReport& r);
// The report (standard output): text, or one JSON object with --json (docs/simulate.md).
void print_report(const plan::Plan& p, const SimulateOptions& o, const SimReport& r, std::ostream& out);
// "m=256 n=512 k=320": m, n and k first, then any other names.
std::string sizes_text(const Sizes& z);
// What a simulator error is, from its wording: deadlock, race, budget, unwritten, out_of_bounds, error.
std::string cause_of(const std::string& e);
// A simulator message in the spec's terms: roles of warps, names of mbarriers and tiles.
std::string with_names(const std::string& e, const plan::Plan& p);

// Where a line of the PTX is in the spec: the plan's steps that the emitter heads with a comment
// "// [i] KIND (POINTER): ...". Consecutive step comments head one block of code (functions over
// the same elements, written register by register), so a line in that block is in all of them.
struct PtxPlace {
  std::string where;              // "step [18] tcgen05.mma of /program/ops/0/ops/2", "the prologue", ...
  std::vector<std::string> ops;   // the spec's JSON pointers of those steps, each once
};
PtxPlace ptx_place(const std::string& ptx, long line);
// `e` with each "ptx line N" followed by where line N is in the spec: "ptx line N (step ...)".
std::string with_steps(const std::string& e, const std::string& ptx);
// The failing thread's place in `e` ("... (warp W, lane L[, role R]) at ptx line N"): its steps' pointers.
std::vector<std::string> failing_ops(const std::string& e, const std::string& ptx);

}  // namespace ptxgen::cli
