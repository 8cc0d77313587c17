// Every program-level golden, run whole by the kernel simulator on random inputs (random scale
// factors, valid sparsity metadata), its stored outputs against a float64 evaluation of the spec's
// ops (src/sim/program.cpp); and each once more with every load switched to TMA (emitted here).
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>

#include "ptxgen/emit.hpp"
#include "sim_program.hpp"
#include "support.hpp"

using namespace ptxgen;


TEST_SUITE("sim_program") {
TEST_CASE("every program golden, simulated whole, stores what its ops compute") {
  int n = 0;
  for (const auto& file : support::spec_files()) {
    nlohmann::json doc = nlohmann::json::parse(support::slurp(file));
    if (!doc.contains("program")) continue;
    if (const char* only = std::getenv("KSIM_ONLY"); only && support::stem(file) != only) continue;  // debugging one spec
    CAPTURE(file);
    std::string line;
    for (const bool all_tma : {false, true}) {
      CAPTURE(all_tma);
      if (all_tma)
        for (auto& o : doc["program"]["ops"])
          if (o["op"] == "load") o["via"] = "tma";
      const spec::Spec s = support::checked_spec(doc.dump());
      const plan::Plan p = support::plan_of(s);
      const auto manifest = nlohmann::json::parse(plan::manifest(p));
      const std::string ptx =
          all_tma ? emit::ptx(p) : support::slurp(support::source_root() + "/golden/" + support::stem(file) + ".ptx");
      const ksim::KernelPtr k = ksim::parse(ptx);
      const simtest::ProgramResult r = simtest::run_program(*k, *s.program, manifest, 99 + static_cast<unsigned>(n));
      CHECK_MESSAGE(r.error.empty(), r.error);
      // Every stored element is one the evaluation defines, but F_out of the decompression example:
      // its 4-row copy fills lanes 0, 32, 64, 96 only, and the kernel stores all 128 lanes.
      const long undefined = support::stem(file) == "prog_cp_shapes_decompress" ? 124 * 16 : 0;
      CHECK(r.checked == r.outputs - undefined);
      CHECK_MESSAGE(r.worst <= 1.0, "max error " << r.max_err << " exceeds the bound (" << r.worst << " of it) at " << r.where);
      char buf[128];
      std::snprintf(buf, sizeof buf, "  %s: %ld/%ld elements, max |err| %.2g (%.2g of the bound)", all_tma ? "tma" : "golden", r.checked, r.outputs,
                    r.max_err, r.worst);
      line += buf;
    }
    std::printf("sim %-34s%s\n", support::stem(file).c_str(), line.c_str());
    ++n;
  }
  if (!std::getenv("KSIM_ONLY")) CHECK(n >= 30);
}
}
