// Reading a spec and checking it for every target a command generates for.
#pragma once

#include <string>
#include <vector>

#include "ptxgen/compile.hpp"
#include "ptxgen/spec.hpp"

namespace ptxgen::cli {

struct Source {
  std::string path;                  // "-" reads standard input
  std::string diagnostics = "text";  // or "json"
  std::vector<std::string> targets;  // --target, in order given; empty: the spec's own target
};

struct Loaded {
  int exit = 0;                     // 0, or the exit code (diagnostics printed; nothing else set)
  // The spec compiled once per target (its target replaced): checked, lowered and planned once.
  std::vector<Compiled> units;
  std::vector<std::string> inputs;  // the files read, for --depfile
  // For the diagnostics found after the check (ptxas's report, print_diagnostics): the spec as
  // read, where each of its members is, and whether --target chose the targets.
  Source source;
  SourceMap positions;
  bool overridden = false;
};

// Resolves the --target names (kUnknownTarget for a name ptxgen does not know), reads and parses
// the spec, then compiles it once per target (ptxgen/compile.hpp): rules differ per target
// (.kind::i8 is not on sm_100f), so each target's diagnostics are printed under a note naming it.
Loaded load(const Source& src);

// Prints diagnostics about units[i] found after the check (PTXAS-SPILL, from ptxas's report) as
// the check's are printed: at the spec's positions, in its --diagnostics format, each JSON object
// naming its target where --target chose the targets.
void print_diagnostics(const Loaded& l, size_t i, const Diagnostics& d);

// "sm_100a, sm_103a": the targets of the loaded specs, for messages.
std::string target_names(const std::vector<Compiled>& units);

}  // namespace ptxgen::cli
