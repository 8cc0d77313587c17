// Checks for the limits of this build and of the hardware's address arithmetic: every number the
// planner and the launch compute from a spec that passes these fits the field it goes into.
//
// The planner's other sums are bounded by the parser's ranges (tile extents <= 1024, stages <= 32,
// cluster extents <= 16) and by the budget rules: TMEM-BUDGET keeps tensor-memory columns below 512
// (the 16-bit column field of a TMEM address), SMEM-BUDGET keeps one CTA's shared memory below
// 227 KB, hence every descriptor start address below 2^18 and every stage's expect-tx byte count
// (at most two CTAs' stages for a pair) below the mbarrier tx-count limit of 2^20 - 1 (PTX ISA 9.1
// §9.7.13.15.2). tests/limits_test.cpp sweeps the extremes to hold this to account.
#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "context.hpp"
#include "ptxgen/plan.hpp"
#include "ptxgen/rules.hpp"

namespace ptxgen::rules {

namespace {
std::string num(int64_t v) { return std::to_string(v); }

// %nctaid (PTX ISA 9.1 §10.7) on sm_9x and sm_10x.
constexpr int64_t kGridMaxX = (int64_t{1} << 31) - 1;
constexpr int64_t kGridMaxYZ = 65535;
}  // namespace

namespace {
// One stage of an operand's tile in shared memory at a tile.k: its rows per CTA in the kind's
// container bits (what a matrix descriptor must address, < 2^18 bytes).
int64_t stage_bytes(const Context& c, const spec::Operand& op, int64_t rows, int64_t k) {
  return isa::tile_bytes(rows, k, c.kind ? isa::smem_bits(*c.kind, op.dtype) : isa::value_bits(op.dtype));
}
}  // namespace

std::optional<DeepStageFix> passing_tile_k(const Context& c) {
  const spec::Gemm* g = c.gemm;
  if (!g) return std::nullopt;
  // The candidates: the halvings of tile.k (at most ten: tile.k <= 1024) within the descriptor's
  // range, so that a candidate's check never searches again.
  std::vector<int64_t> ks;
  for (int64_t k = g->tile.k / 2; k >= 1; k /= 2) {
    if (stage_bytes(c, g->a, g->tile.m / g->cta_group, k) < isa::kSmemDescRange &&
        stage_bytes(c, g->b, g->tile.n / g->cta_group, k) < isa::kSmemDescRange)
      ks.push_back(k);
  }
  auto errors = [&](int64_t k, int64_t stages) {
    spec::Spec fewer = c.spec;
    fewer.gemm->tile.k = k;
    fewer.gemm->stages = stages;
    Diagnostics quiet;
    rules::check(fewer, quiet);
    std::vector<std::string> rules;
    for (const auto& x : quiet.list())
      if (x.severity == Severity::error) rules.push_back(x.rule);
    return rules;
  };
  // The spec's stages at the largest tile.k that holds them. Else the most stages (two at least: a
  // pipeline; else one) at the largest tile.k refused for its budget alone, by bisection (fewer
  // stages take less memory). At most 10 + 2 x 10 x 5 checks.
  std::vector<int64_t> budget_only;
  for (const int64_t k : ks) {
    const auto why = errors(k, g->stages);
    if (why.empty()) return DeepStageFix{k, g->stages};
    if (std::all_of(why.begin(), why.end(), [](const std::string& r) { return r == "SMEM-BUDGET"; })) budget_only.push_back(k);
  }
  for (const int64_t least : {2, 1})
    for (const int64_t k : budget_only) {
      int64_t lo = least, hi = g->stages - 1;  // the largest passing count in [lo, hi], if any
      std::optional<int64_t> best;
      while (lo <= hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (errors(k, mid).empty()) best = mid, lo = mid + 1;
        else hi = mid - 1;
      }
      if (best) return DeepStageFix{k, *best};
    }
  return std::nullopt;
}

std::string DeepStageFix::help(const spec::Gemm& g) const {
  return "use \"tile\": {\"k\": " + num(k) + "}" + (stages != g.stages ? " and \"stages\": " + num(stages) : std::string()) +
         ": a stage of tile.k " + num(k) + " fits a matrix descriptor, and " + num(stages) +
         (stages == 1 ? " stage fits" : " stages fit") + " shared memory";
}

void check_smem_desc_range(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = c.gemm;
  if (!g) return;
  std::string over;
  for (const auto& [name, op, rows] : {std::tuple{"A", g->a, g->tile.m / g->cta_group},
                                       std::tuple{"B", g->b, g->tile.n / g->cta_group}}) {
    const int64_t bytes = stage_bytes(c, op, rows, g->tile.k);
    if (bytes < isa::kSmemDescRange) continue;
    over += std::string(over.empty() ? "" : "; ") + name + " (" + num(rows) + " x " + num(g->tile.k) + " " +
            std::string(isa::name(op.dtype)) + " per CTA) takes " + num(bytes) + " bytes";
  }
  if (over.empty()) return;
  auto& e = d.error("SMEM-DESC-RANGE", "/gemm/tile/k",
                    over + " per stage; a shared-memory matrix descriptor addresses at most " + num(isa::kSmemDescRange) +
                        " bytes (18 bits)");
  // A stage this large is also more shared memory than a CTA has, so "reduce tile.k" alone led to
  // SMEM-BUDGET in the next round: the help names the tile.k that passes both.
  if (const auto fix = passing_tile_k(c)) {
    e.help = {fix->help(*g), "or reduce tile.m / tile.n"};
    return;
  }
  e.help = {"reduce tile.k (each stage holds tile.k columns of A and B)", "or reduce tile.m / tile.n"};
}

void check_launch_grid(const Context& c, Diagnostics& d) {
  if (!c.gemm) return;
  const spec::Gemm& g = *c.gemm;
  const ir::Kernel* k = verified(c, d);
  if (!k) return;
  const plan::Grid& grid = launch_grid(c, *k);
  if (grid.x > kGridMaxX)
    d.error("LAUNCH-GRID", "/gemm/n",
            "the grid needs " + num(grid.x) + " CTAs along N (x); at most " + num(kGridMaxX) + " are launched")
        .help = {"use a wider tile.n"};
  if (grid.y > kGridMaxYZ) {
    auto& diag = d.error("LAUNCH-GRID", "/gemm/m",
                         "the grid needs " + num(grid.y) + " CTAs along M (y): " + num(g.m) + " / tile.m " +
                             num(g.tile.m) + " rounded up to whole clusters; at most " + num(kGridMaxYZ) +
                             " are launched along y");
    const int64_t min_tile_m = (g.m + kGridMaxYZ - 1) / kGridMaxYZ;
    // A tile.m the shape rules take (MMA-M, WGMMA-M): the least multiple of the instruction M.
    const int64_t step = c.target.tcgen05 && c.kind ? isa::smallest_legal_m(*c.kind, g.cta_group) : 64;
    const int64_t named = (min_tile_m + step - 1) / step * step;
    if (named <= 1024) diag.help.push_back("use a tile.m of " + num(named) + " (at least " + num(min_tile_m) + ")");
    diag.help.push_back(std::string(diag.help.empty() ? "" : "or ") + "split the problem along M into launches of at most " +
                        num(kGridMaxYZ) + " x tile.m rows");
  }
  // z is the cluster's z (at most 16, SPEC-INT-RANGE): always within kGridMaxYZ.
}

// PROGRAM-LAUNCH-GRID: a program's grid of tiles (one CTA, or pair, per tile: x = ceil(n / TN) *
// cta_group, y = ceil(m / TM), z = 1; a program without a grid launches one cluster) against the
// same limits. The pointer is the size whose value the grid cannot cover; the help names the
// smallest grid.tile that would.
void check_program_launch_grid(const Context& c, Diagnostics& d) {
  if (!c.spec.program || !c.spec.program->grid) return;
  const spec::Program& p = *c.spec.program;
  const spec::Grid& pg = *p.grid;
  const ir::Kernel* k = verified(c, d);
  if (!k) return;
  const plan::Grid& grid = launch_grid(c, *k);
  auto size_of = [&](const std::string& name) -> const spec::Size* {
    for (const auto& z : p.sizes)
      if (z.name == name) return &z;
    return nullptr;
  };
  auto value_of = [&](const std::string& name) {
    for (const auto& z : k->size_params)
      if (z.name == name) return z.value;
    return int64_t{0};
  };
  // The pointer: the size's value where the spec writes one, else the grid's field naming it.
  auto where = [&](const spec::Ref& r, const char* field) {
    const spec::Size* z = size_of(r.name);
    return z ? z->ptr : r.ptr == pg.ptr ? pg.ptr + "/" + field : r.ptr;
  };
  // The tile extent that fits: the smallest power of two of at least `need` (grid.tile takes at
  // most 1024), or nothing.
  auto tile_for = [](int64_t need) {
    int64_t t = 1;
    while (t < need) t *= 2;
    return t <= 1024 ? t : 0;
  };
  const int64_t cg = k->cta_group;
  if (grid.x > kGridMaxX) {
    const int64_t n = value_of(pg.n.name), tiles = kGridMaxX / cg, need = (n + tiles - 1) / tiles;
    auto& diag = d.error("PROGRAM-LAUNCH-GRID", where(pg.n, "n"),
                         "the grid needs " + num(grid.x) + " CTAs along x: ceil(" + pg.n.name + " " + num(n) + " / grid.tile[1] " +
                             num(pg.tile_n) + ")" + (cg > 1 ? " x cta_group " + num(cg) : "") + "; at most " + num(kGridMaxX) +
                             " are launched along x");
    if (const int64_t t = tile_for(need))
      diag.help.push_back("use \"grid\": {\"tile\": [" + num(pg.tile_m) + ", " + num(t) + "]} (a tile of at least " + num(need) +
                          " columns fits), and step the ops' \"n_tile\" with it");
    diag.help.push_back(std::string(diag.help.empty() ? "" : "or ") + "split the problem along " + pg.n.name +
                        " into launches of at most " + num(tiles) + " x grid.tile[1] columns");
  }
  if (grid.y > kGridMaxYZ) {
    const int64_t m = value_of(pg.m.name), need = (m + kGridMaxYZ - 1) / kGridMaxYZ;
    auto& diag = d.error("PROGRAM-LAUNCH-GRID", where(pg.m, "m"),
                         "the grid needs " + num(grid.y) + " CTAs along y: ceil(" + pg.m.name + " " + num(m) + " / grid.tile[0] " +
                             num(pg.tile_m) + "); at most " + num(kGridMaxYZ) + " are launched along y");
    if (const int64_t t = tile_for(need))
      diag.help.push_back("use \"grid\": {\"tile\": [" + num(t) + ", " + num(pg.tile_n) + "]} (a tile of at least " + num(need) +
                          " rows fits), and step the ops' \"m_tile\" with it");
    diag.help.push_back(std::string(diag.help.empty() ? "" : "or ") + "split the problem along " + pg.m.name +
                        " into launches of at most " + num(kGridMaxYZ) + " x grid.tile[0] rows");
  }
  // z is 1: a program's cluster is its CTA pair, along x.
}

}  // namespace ptxgen::rules

namespace ptxgen::rules {

// OUTPUT-SIZE: the narrow call output_bound counts each op's instructions (an upper bound of what
// the emitter writes) and stops at the op whose steps pass a bound; that op is the pointer.
void check_output_size(const Context& c, Diagnostics& d) {
  if (c.gemm && d.has_errors()) return;
  const ir::Kernel* k = verified(c, d);
  if (!k) return;
  const std::optional<plan::SizeCrossing>& over = output_bound(c, *k);
  if (!over) return;
  const plan::OutputSize& z = over->size;
  const plan::OutputSize& m = plan::kMaxOutput;
  std::string what, fix = "move fewer registers per op: smaller tmem_load, tmem_store and store views, or fewer such ops";
  if (z.instructions > m.instructions) what = num(z.instructions) + " PTX instructions, more than the " + num(m.instructions) + " a kernel may have";
  else if (z.ptx_bytes > m.ptx_bytes) what = num(z.ptx_bytes) + " bytes of PTX, more than the " + num(m.ptx_bytes) + " a kernel may have";
  else {
    what = num(z.async) + " tcgen05.cp/tcgen05.mma instructions, more than the " + num(m.async) + " a kernel may have";
    fix = "use fewer or smaller copy and mma ops (each M group x N group x K step of an mma is one tcgen05.mma)";
  }
  d.error("OUTPUT-SIZE", over->ptr, "with this op the kernel reaches " + what + ": ptxgen bounds what one spec makes it write")
      .help = {"split the work into several kernels (specs)", fix};
}

}  // namespace ptxgen::rules
