// The wgmma (sm_90a) checks of the rule table. PTX ISA 9.1 §9.7.15.
#include <algorithm>
#include <string>
#include <vector>

#include "context.hpp"
#include "ptxgen/plan.hpp"

namespace ptxgen::rules {

namespace {
const spec::Gemm* wg(const Context& c) { return c.target.wgmma ? c.gemm : nullptr; }
std::string tn(isa::DType t) { return std::string(isa::name(t)); }
std::string num(int64_t v) { return std::to_string(v); }
std::optional<isa::Kind> kind(const spec::Gemm& g) { return isa::wgmma_kind(g.a.dtype, g.b.dtype); }
bool pingpong(const spec::Gemm& g) { return g.consumers == spec::Consumers::pingpong; }
// What the lowered kernel gives the consumers: their warpgroups (the roles of several threads: one
// per 64 rows, or the two ping-pong ones), and the rows of D each warpgroup's wgmmas cover.
int64_t consumer_warpgroups(const ir::Kernel& k) {
  int64_t n = 0;
  for (const auto& r : k.roles) n += r.single_thread ? 0 : r.warps / 4;
  return n;
}
int64_t warpgroup_rows(const ir::Kernel& k) {
  for (const auto& r : k.roles)
    for (const auto& node : r.nodes)
      for (const ir::Op& o : node.is_loop ? node.loop.body : std::vector<ir::Op>{node.op})
        if (const ir::Mma* m = o.as<ir::Mma>()) return m->warpgroup_rows ? m->warpgroup_rows : 64;
  return 64;
}
}  // namespace

void check_wgmma_types(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = wg(c);
  if (!g || kind(*g)) return;
  d.error("WGMMA-TYPES", "/gemm/b/dtype",
          "wgmma has no A " + tn(g->a.dtype) + " x B " + tn(g->b.dtype) + " variant")
      .help = {"wgmma takes f16.f16, bf16.bf16, tf32.tf32, any mix of e4m3/e5m2, or s8.s8 / u8.u8 (integer "
               "multiplicands must have the same type)",
               "6- and 4-bit types need tcgen05 (target sm_100a)"};
}

void check_wgmma_accumulator(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = wg(c);
  if (!g || !kind(*g) || isa::wgmma_accumulator_allowed(g->a.dtype, g->accumulator)) return;
  d.error("WGMMA-ACCUM", "/gemm/accumulator",
          "wgmma with " + tn(g->a.dtype) + " multiplicands accumulates in " +
              std::string(isa::wgmma_accumulator_allowed(g->a.dtype, isa::DType::f16) ? "f16 or f32"
                          : g->a.dtype == isa::DType::s8 || g->a.dtype == isa::DType::u8 ? "s32"
                                                                                            : "f32") +
              ", not " + tn(g->accumulator))
      // The integer accumulator for integers, else f32 (which every float type takes), as a value to write.
      .help = {std::string("use \"accumulator\": ") + (g->a.dtype == isa::DType::s8 || g->a.dtype == isa::DType::u8 ? "\"s32\"" : "\"f32\"")};
}

void check_wgmma_major(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = wg(c);
  if (!g) return;
  const struct {
    const char* name;
    const spec::Operand& op;
  } ops[] = {{"a", g->a}, {"b", g->b}};
  for (const auto& o : ops) {
    const bool sixteen = o.op.dtype == isa::DType::f16 || o.op.dtype == isa::DType::bf16;
    if (o.op.major != isa::Major::mn || sixteen) continue;
    d.error("WGMMA-MAJOR", "/gemm/" + std::string(o.name) + "/major",
            "wgmma transposes only 16-bit operands (imm-trans-a/b); " + tn(o.op.dtype) + " " +
                (o.name[0] == 'a' ? "A must be K-major" : "B must be K-major"))
        .help = {"store the operand with K contiguous (\"major\": \"k\")",
                 "or target sm_100a, where tcgen05 also transposes 8-bit and tf32 operands"};
  }
}

void check_wgmma_m(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = wg(c);
  if (!g || g->tile.m % 64 == 0) return;
  d.error("WGMMA-M", "/gemm/tile/m",
          "tile.m=" + num(g->tile.m) + " is not a multiple of 64, the M of every wgmma (one warpgroup per 64 rows)")
      .help = {"use a tile.m of " + num(std::min<int64_t>(256, (g->tile.m + 63) / 64 * 64)) + " (64, 128, 192 or 256)"};
}

void check_wgmma_n(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = wg(c);
  if (!g) return;
  auto k = kind(*g);
  if (!k || !isa::wgmma_split_n(*k, static_cast<int>(g->tile.n)).empty()) return;
  int next = static_cast<int>(g->tile.n) + 1;  // the next width that splits
  while (isa::wgmma_split_n(*k, next).empty()) ++next;
  d.error("WGMMA-N", "/gemm/tile/n",
          "tile.n=" + num(g->tile.n) + " cannot be split into wgmma instructions: N = " + isa::wgmma_legal_n_text(*k) +
              ", at most 256 per instruction")
      .help = {"use a tile.n of " + num(next) + " (a multiple of 8; of 16 above 32 for s8/u8)"};
}

void check_wgmma_k(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = wg(c);
  if (!g || !kind(*g)) return;
  const int k = 256 / isa::value_bits(g->a.dtype);
  if (g->tile.k % k == 0) return;
  d.error("WGMMA-K", "/gemm/tile/k",
          "tile.k=" + num(g->tile.k) + " is not a multiple of K=" + num(k) + ", the K of one wgmma on " +
              tn(g->a.dtype))
      .help = {"use a tile.k that is a multiple of " + num(k)};
}

void check_wgmma_swizzle(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = wg(c);
  if (!g) return;
  for (auto [name, sw] : {std::pair<const char*, isa::Swizzle>{"a", g->swizzle_a}, {"b", g->swizzle_b}}) {
    if (sw != isa::Swizzle::b128_base32b) continue;
    d.error("WGMMA-SWIZZLE", "/gemm/swizzle/" + std::string(name),
            "the wgmma matrix descriptor has no 128-byte swizzle with 32-byte atomicity (2-bit swizzle field)")
        .help = {"use 0, 32, 64 or 128"};
  }
}

void check_wgmma_registers(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = wg(c);
  if (!g || d.has_errors()) return;
  const ir::Kernel* k = verified(c, d);
  if (!k) return;
  // Accumulators (and A fragments, when A comes from registers) plus about 24 registers of
  // addressing and loop state must fit the per-thread share of the register file (.maxnreg). A
  // warpgroup's wgmmas cover 64 rows, or a ping-pong consumer's whole tile (M groups stacked).
  const int64_t acc = (g->accumulator == isa::DType::f16 ? g->tile.n / 4 : g->tile.n / 2) * (warpgroup_rows(*k) / 64);
  const int64_t k_steps = g->tile.k / (256 / isa::value_bits(g->a.dtype));
  const int64_t a_regs = g->a_source == spec::ASource::registers ? 4 * k_steps : 0;
  const int64_t need = acc + a_regs + 24;
  // With register budgets the consumers hold what they raise theirs to (REGISTERS-BUDGET).
  const int64_t have = g->registers ? g->registers->consumer : k->max_registers;
  if (need <= have) return;
  // The widest tile.n whose accumulators fit, in whole steps of 16 (wgmma's N for every type) or,
  // where D is stored by TMA, of its 128-byte boxes (EPILOGUE-TMA).
  const int64_t per_col_x4 = (g->accumulator == isa::DType::f16 ? 1 : 2) * (warpgroup_rows(*k) / 64);  // registers per 4 columns
  const int64_t box = g->epilogue == spec::Epilogue::direct || isa::value_bits(g->d) < 8 ? 16 : 1024 / isa::value_bits(g->d) * (g->glu ? 2 : 1);
  const int64_t step = std::max<int64_t>(16, box);
  const int64_t fit_n = std::max<int64_t>(0, have - 24 - a_regs) * 4 / per_col_x4 / step * step;
  d.error("WGMMA-REGISTERS", g->registers ? "/gemm/registers/consumer" : "/gemm/tile/n",
          "each consumer thread needs " + num(acc) + " accumulator" + (a_regs ? " and " + num(a_regs) + " A-fragment" : std::string()) +
              " registers (+~24), but " +
              (g->registers ? "its budget is " + num(have)
                            : num(k->threads) + " threads get at most " + num(k->max_registers) + " each"))
      .help = {fit_n > 0 ? "use a tile.n of " + num(fit_n) + " (accumulators: tile.n/2 per thread for f32 and s32, tile.n/4 for f16" +
                               std::string(pingpong(*g) ? ", times tile.m/64 for a ping-pong consumer)" : ")")
                         : "reduce tile.n (accumulators: tile.n/2 per thread for f32 and s32, tile.n/4 for f16" +
                               std::string(pingpong(*g) ? ", times tile.m/64 for a ping-pong consumer)" : ")"),
               pingpong(*g) ? "or reduce tile.m (a ping-pong consumer holds the whole tile)" : "or reduce tile.m (one warpgroup of 128 threads per 64 rows)"};
}

void check_registers_target(const Context& c, Diagnostics& d) {
  if (!c.gemm || !c.gemm->registers || c.target.wgmma) return;
  d.error("REGISTERS-TARGET", "/gemm/registers",
          "register budgets (setmaxnreg) are planned for the wgmma template's producer and consumer warpgroups; " +
              std::string(c.target.name) + " runs the tcgen05 template, whose accumulator is in tensor memory")
      .help = {"remove \"registers\"", "or target sm_90a"};
}

void check_registers_budget(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = wg(c);
  if (!g || !g->registers || g->tile.m % 64 != 0) return;
  const auto& r = *g->registers;
  for (auto [key, v] : {std::pair<const char*, int64_t>{"producer", r.producer}, {"consumer", r.consumer}})
    if (v % 8 != 0) {
      d.error("REGISTERS-BUDGET", "/gemm/registers/" + std::string(key),
              std::string(key) + " budget " + num(v) + " is not a multiple of 8 (setmaxnreg takes 24 to 256 in steps of 8)")
          // The consumers' budget rounded up (a raise), the producer's down (a cut), within 24 to 256.
          .help = {"use " + num(std::clamp<int64_t>(key[0] == 'c' ? (v + 7) / 8 * 8 : v / 8 * 8, 24, 256)) + " (setmaxnreg's steps of 8)"};
      return;
    }
  // The launch gives every thread the same share, which the lowering computes (.maxnreg, four
  // banks of 16K registers, lower/gemm.cpp); the producer lowers its share and the consumers raise
  // theirs from it.
  const ir::Kernel* k = verified(c, d);
  if (!k) return;
  const int64_t warpgroups = consumer_warpgroups(*k), threads = k->threads, launch = k->max_registers;
  const int64_t total = 128 * r.producer + 128 * warpgroups * r.consumer;
  std::string why;
  if (total > 65536)
    why = "128 producer threads x " + num(r.producer) + " + " + num(128 * warpgroups) + " consumer threads x " + num(r.consumer) + " = " +
          num(total) + " registers, more than the multiprocessor's 65536";
  else if (r.producer > launch)
    why = "the producer's budget " + num(r.producer) + " is above the launch's " + num(launch) + " per thread (" + num(threads) +
          " threads): setmaxnreg.dec only lowers it";
  else if (r.consumer < launch)
    why = "the consumers' budget " + num(r.consumer) + " is below the launch's " + num(launch) + " per thread (" + num(threads) +
          " threads): setmaxnreg.inc only raises it";
  if (why.empty()) return;
  d.error("REGISTERS-BUDGET", "/gemm/registers", "register budgets that do not add up: " + why)
      .help = {"keep 128 x producer + " + num(128 * warpgroups) + " x consumer within 65536, producer <= " + num(launch) + " <= consumer",
               "e.g. \"registers\": {\"producer\": 40, \"consumer\": " + num(std::min<int64_t>(256, (65536 - 128 * 40) / (128 * warpgroups) / 8 * 8)) + "}"};
}

void check_consumers_pingpong(const Context& c, Diagnostics& d) {
  if (!c.gemm || !pingpong(*c.gemm)) return;
  const spec::Gemm& g = *c.gemm;
  std::string why, ptr = "/gemm/consumers";
  std::vector<std::string> help;
  if (!c.target.wgmma) {
    why = std::string(c.target.name) + " runs the tcgen05 template, whose accumulator is in tensor memory: a persistent tcgen05 GEMM overlaps the epilogue with the next tile through its double-buffered accumulator instead";
    help = {"remove \"consumers\"", "or target sm_90a"};
  } else if (g.schedule != spec::Schedule::persistent) {
    why = "ping-pong consumers take alternate tiles of a persistent CTA, but the schedule is data_parallel (one tile per CTA)";
    help = {"add \"schedule\": \"persistent\"", "or use \"consumers\": \"cooperative\""};
  } else if (g.a_source != spec::ASource::smem) {
    why = "a ping-pong consumer reads A's whole tile through descriptors; A from registers (\"a_source\": \"registers\") loads 64 rows per warpgroup";
    ptr = "/gemm/a_source";
    help = {"use \"a_source\": \"smem\"", "or \"consumers\": \"cooperative\""};
  }
  if (why.empty()) return;
  d.error("CONSUMERS-PINGPONG", ptr, "ping-pong consumers are not possible here: " + why).help = help;
}


}  // namespace ptxgen::rules
