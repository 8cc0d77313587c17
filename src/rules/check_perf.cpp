// Warnings about performance: what the spec does not say and ptxgen (or ptxas) made slow. Each is
// a warning, never an error: the kernel is correct, and the spec may have meant it. They fire only
// for what the spec left to ptxgen (a stage count it chose, a second accumulator buffer it dropped)
// or what ptxas did on its own (spills), and only once every rule has accepted the spec.
#include <regex>
#include <string>

#include "context.hpp"
#include "ptxgen/rules.hpp"

namespace ptxgen::rules {

namespace {

std::string num(int64_t v) { return std::to_string(v); }

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The pointer of the gemm's tile where the spec wrote it (what drove a choice), else the template.
std::string tile_or_gemm(const spec::Gemm& g) { return spec::chosen_note(g, "tile") ? "/gemm" : "/gemm/tile"; }

// The stages the chooser takes with tile.k (or tile.n) halved, the spec's other members as they
// are, where every rule accepts that spec (a smaller tile.k can break a layout atom, a scale's or
// metadata's block): what a help line can promise. 0 where it is refused.
int64_t stages_with(const spec::Spec& s, bool halve_k) {
  spec::Spec h = s;
  spec::Gemm& g = *h.gemm;
  (halve_k ? g.tile.k : g.tile.n) /= 2;
  g.stages = 0;
  g.chosen.clear();
  spec::choose_gemm_defaults(g, h.target);
  if (g.stages < 2) return 0;
  // Its own check cannot come back here: with two stages or more it draws no PLAN-SINGLE-STAGE.
  Diagnostics d;
  check(h, d);
  return d.has_errors() ? 0 : g.stages;
}

template <class F>
void each_op(const std::vector<ir::Node>& nodes, F&& f) {
  for (const auto& n : nodes) {
    if (!n.is_loop)
      f(n.op);
    else
      for (const auto& o : n.loop.body) f(o);
  }
}

}  // namespace

// PLAN-SINGLE-STAGE: the chooser (spec::choose_gemm_defaults) took one stage because a second does
// not fit; with several K blocks each block's loads then wait for the MMAs of the one before.
void check_plan_single_stage(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = c.gemm;
  if (!g || d.has_errors() || g->stages != 1) return;
  const std::string* note = spec::chosen_note(*g, "stages");
  if (!note) return;  // the spec wrote "stages": 1
  const int64_t blocks = ceil_div(g->k, g->tile.k);
  if (blocks < 2) return;  // one K block: nothing to overlap
  const int64_t bytes = spec::stage_bytes(*g, c.spec.target);
  // What shared it with the ring, as the chooser's note says (" beside the TMA epilogue's staging ring").
  const size_t beside = note->find(" beside ");
  const std::string staging = beside == std::string::npos ? "" : note->substr(beside);
  auto& w = d.warning("PLAN-SINGLE-STAGE", tile_or_gemm(*g),
                      "ptxgen chose 1 stage (the spec leaves \"stages\" out): one stage of " + num(bytes) +
                          " bytes (tile " + num(g->tile.m) + " x " + num(g->tile.n) + " x " + num(g->tile.k) +
                          ") is all " + std::string(c.target.name) + "'s shared memory holds" + staging +
                          ", so each of the " + num(blocks) +
                          " K blocks is loaded only after the MMAs have read the one before: no load overlaps an MMA");
  // Concrete tiles, each with the stages the chooser would then take (two or more).
  for (const bool halve_k : {true, false}) {
    const int64_t half = (halve_k ? g->tile.k : g->tile.n) / 2;
    const int64_t stages = stages_with(c.spec, halve_k);
    if (stages < 2) continue;
    w.help.push_back(std::string("write a smaller tile: tile.") + (halve_k ? "k " : "n ") + num(half) +
                     " leaves room for " + num(stages) + " stages");
  }
  w.help.push_back("or write \"stages\": 1 to say that one stage is meant");
}

// PLAN-ACC-SINGLE-BUFFER: a persistent tcgen05 kernel's accumulator, which the lowering gives two
// buffers in tensor memory when they fit (src/lower/gemm.cpp, acc_buffers), has one: the MMAs of a
// CTA's next tile wait for this tile's epilogue to read it.
void check_plan_acc_single_buffer(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = c.gemm;
  if (!g || d.has_errors() || g->schedule != spec::Schedule::persistent) return;
  const ir::Kernel* k = verified(c, d);
  if (!k || k->engine != ir::Engine::tcgen05 || !k->grid.persistent) return;
  bool single = false;
  for (const auto& r : k->roles)
    if (r.persistent)
      each_op(r.nodes, [&](const ir::Op& o) {
        if (const auto* m = o.as<ir::Mma>()) single = single || m->tmem_ring.stages < 2;
      });
  if (!single) return;
  // The lowering's note says how many columns two buffers would need (Kernel::chosen).
  std::string why;
  for (const auto& x : k->chosen)
    if (x.rfind("accumulator: ", 0) == 0) why = x.substr(13);
  auto& w = d.warning("PLAN-ACC-SINGLE-BUFFER", spec::chosen_note(*g, "tile") ? "/gemm" : "/gemm/tile/n",
                      "the persistent kernel's accumulator is single-buffered in tensor memory: " + why);
  w.help.push_back("a smaller tile.n: each buffer takes D's tile.n columns" +
                   std::string(g->tile.n > 128 ? " (two of tile.n 128 take 256 of the 512)" : ""));
  if (g->a_source == spec::ASource::tmem)
    w.help.push_back("or A in shared memory, whose columns in tensor memory then hold the second buffer");
}

// PTXAS-SPILL: ptxas -v reports, for the entry function, "N bytes spill stores, M bytes spill
// loads": registers kept in local memory, each a round trip through the L1 cache in the kernel's
// loop or epilogue.
void check_ptxas_report(const spec::Spec& s, std::string_view report, Diagnostics& d) {
  static const std::regex spill("([0-9]+) bytes spill stores, ([0-9]+) bytes spill loads");
  static const std::regex used("Used ([0-9]+) registers");
  int64_t stores = 0, loads = 0;
  const std::string text(report);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), spill); it != std::sregex_iterator(); ++it) {
    stores += std::stoll((*it)[1].str());
    loads += std::stoll((*it)[2].str());
  }
  if (stores == 0 && loads == 0) return;
  std::smatch m;
  const std::string regs = std::regex_search(text, m, used) ? " (" + m[1].str() + " registers a thread)" : "";
  const std::string target(isa::target_info(s.target).name);
  auto& w = d.warning("PTXAS-SPILL", s.program ? "/program" : "/gemm",
                      "ptxas spills registers to local memory in \"" + s.name + "\" for " + target + ": " +
                          num(stores) + " bytes of spill stores and " + num(loads) + " bytes of spill loads" + regs +
                          ", each a round trip through local memory where the kernel meant registers");
  if (s.program) {
    w.help = {
        "keep fewer registers live: load the accumulator in narrower tmem_load pieces and store each before loading "
        "the next",
        "or fewer elementwise ops between a tmem_load and its store"};
    return;
  }
  const spec::Gemm& g = *s.gemm;
  const bool wgmma = isa::target_info(s.target).wgmma;
  w.help.push_back(std::string("a smaller tile.n: fewer accumulator registers a thread") +
                   (wgmma ? " (f32: tile.n / 2 for each 64 rows a consumer warpgroup holds)" : ""));
  if (wgmma && g.consumers == spec::Consumers::pingpong)
    w.help.push_back(
        "or \"consumers\": \"cooperative\": each consumer warpgroup then holds 64 of the tile's rows, not all of them");
  if (wgmma && !g.registers && g.tile.m == 128 && g.a_source != spec::ASource::registers)
    w.help.push_back(
        "or \"registers\": {\"producer\": 40, \"consumer\": 232}: the consumer warpgroups raise their budget "
        "(setmaxnreg)");
  if (g.c || g.residual || g.bias || g.activation || g.glu || g.quantize)
    w.help.push_back(
        "or fuse less into the epilogue: C, the residual and the bias each hold registers beside the accumulators, as "
        "a quantized D's block maxima do");
}

}  // namespace ptxgen::rules
