// Program-level kernels over a grid of output tiles (docs/spec.md, "Sizes and a grid", "Loops and
// roles"), run whole by the kernel simulator at several problem sizes the kernel takes at run time:
// several tiles in M and N with ragged edges, more K blocks than the rings have stages, and a K
// that ends inside a block; a CTA pair's programs run as clusters of two CTAs, one pair per tile.
// Every stored element is compared with the float64 evaluation of the spec's ops over the same
// tiles and iterations (src/sim/program.cpp).
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>

#include "ptxgen/emit.hpp"
#include "sim_program.hpp"
#include "support.hpp"

using namespace ptxgen;

namespace {

// The sizes a tiled program runs at: its own, and three more around its tiles and K blocks.
std::vector<std::map<std::string, int64_t>> run_sizes(const spec::Program& p) {
  std::vector<std::map<std::string, int64_t>> out{{}};
  const sim::ProgramSteps steps = sim::program_steps(p);
  const int64_t tm = steps.tile_m, tn = steps.tile_n, block = steps.block;
  int64_t stages = 1;
  for (const auto& t : p.smem) stages = std::max<int64_t>(stages, t.stages);
  auto sizes = [&](int64_t m, int64_t n, int64_t kblocks, int64_t kpart) { return steps.sizes(m, n, kblocks, kpart); };
  out.push_back(sizes(2 * tm, 2 * tn, stages + 2, 0));            // whole tiles, the ring wraps
  out.push_back(sizes(2 * tm - 24, tn + 8, 2 * stages + 1, 16));  // ragged M, N and K
  out.push_back(sizes(tm / 2 + 8, tn / 2, 1, block / 2));         // less than one tile and one block
  return out;
}

}  // namespace

TEST_SUITE("sim_tiled") {
TEST_CASE("every tiled program golden, simulated at several sizes, stores what its ops compute") {
  int n = 0;
  for (const auto& file : support::spec_files()) {
    nlohmann::json doc = nlohmann::json::parse(support::slurp(file));
    if (!doc.contains("program") || !(doc["program"].contains("sizes") || doc["program"].contains("roles"))) continue;
    if (const char* only = std::getenv("KSIM_ONLY"); only && support::stem(file) != only) continue;
    CAPTURE(file);
    const spec::Spec s = support::checked_spec(doc.dump());
    const plan::Plan p = support::plan_of(s);
    const auto manifest = nlohmann::json::parse(plan::manifest(p));
    const ksim::KernelPtr k = ksim::parse(support::slurp(support::source_root() + "/golden/" + support::stem(file) + ".ptx"));
    for (const auto& sizes : run_sizes(*s.program)) {
      std::string at;
      for (const auto& [name, v] : sizes) at += " " + name + "=" + std::to_string(v);
      CAPTURE(at);
      const simtest::ProgramResult r = simtest::run_program(*k, *s.program, manifest, 7 + static_cast<unsigned>(n), {}, sizes);
      CHECK_MESSAGE(r.error.empty(), r.error);
      CHECK(r.checked == r.outputs);
      CHECK_MESSAGE(r.worst <= 1.0, "max error " << r.max_err << " exceeds the bound (" << r.worst << " of it) at " << r.where);
      std::printf("sim tiled %-32s%s: %ld elements, %lu CTAs, max |err| %.2g (%.2g of the bound)\n", support::stem(file).c_str(),
                  at.empty() ? " (its own sizes)" : at.c_str(), r.checked, static_cast<unsigned long>(r.stats.ctas), r.max_err, r.worst);
      ++n;
    }
  }
  if (!std::getenv("KSIM_ONLY")) CHECK(n >= 36);  // 9 programs x 4 sizes (three of them CTA pairs)
}
}
