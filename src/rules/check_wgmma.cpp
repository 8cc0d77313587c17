// The wgmma (sm_90a) checks of the rule table. PTX ISA 9.1 §9.7.15.
#include <string>

#include "context.hpp"
#include "ptxgen/plan.hpp"

namespace ptxgen::rules {

namespace {
const spec::Gemm* wg(const Context& c) { return c.target.wgmma ? c.gemm : nullptr; }
std::string tn(isa::DType t) { return std::string(isa::name(t)); }
std::string num(int64_t v) { return std::to_string(v); }
std::optional<isa::Kind> kind(const spec::Gemm& g) { return isa::wgmma_kind(g.a.dtype, g.b.dtype); }
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
      .help = {"change \"accumulator\" to one the message lists"};
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
      .help = {"use a tile.m of 64, 128, 192 or 256"};
}

void check_wgmma_n(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = wg(c);
  if (!g) return;
  auto k = kind(*g);
  if (!k || !isa::wgmma_split_n(*k, static_cast<int>(g->tile.n)).empty()) return;
  d.error("WGMMA-N", "/gemm/tile/n",
          "tile.n=" + num(g->tile.n) + " cannot be split into wgmma instructions: N = " + isa::wgmma_legal_n_text(*k) +
              ", at most 256 per instruction")
      .help = {"round tile.n to a multiple of 8 (of 16 above 32 for s8/u8)"};
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
  if (!verified(c, d)) return;
  // Accumulators (and A fragments, when A comes from registers) plus about 24 registers of
  // addressing and loop state must fit the per-thread share of the register file (.maxnreg).
  const int64_t acc = g->accumulator == isa::DType::f16 ? g->tile.n / 4 : g->tile.n / 2;
  const int64_t k_steps = g->tile.k / (256 / isa::value_bits(g->a.dtype));
  const int64_t a_regs = g->a_source == spec::ASource::registers ? 4 * k_steps : 0;
  const int64_t need = acc + a_regs + 24;
  if (need <= c.kernel->max_registers) return;
  d.error("WGMMA-REGISTERS", "/gemm/tile/n",
          "each consumer thread needs " + num(acc) + " accumulator" + (a_regs ? " and " + num(a_regs) + " A-fragment" : std::string()) +
              " registers (+~24), but " + num(c.kernel->threads) + " threads get at most " + num(c.kernel->max_registers) + " each")
      .help = {"reduce tile.n (accumulators: tile.n/2 per thread for f32 and s32, tile.n/4 for f16)",
               "or reduce tile.m (one warpgroup of 128 threads per 64 rows)"};
}

}  // namespace ptxgen::rules
