// The checks of the rule table for the gemm template. Each one reports under its own rule id
// (the table in table.cpp binds id and function) with the pointer of the field to change.
#include <string>

#include "context.hpp"
#include <algorithm>
#include <map>

#include "ptxgen/lower.hpp"
#include "ptxgen/plan.hpp"

namespace ptxgen::rules {

namespace {

using isa::DType;
using isa::Major;

std::string q(std::string_view s) { return "\"" + std::string(s) + "\""; }
std::string tn(DType t) { return std::string(isa::name(t)); }
std::string num(int64_t v) { return std::to_string(v); }

const spec::Gemm* tc(const Context& c) { return c.target.tcgen05 ? c.gemm : nullptr; }

struct OperandRef {
  const char* name;       // "a" / "b"
  const spec::Operand& op;
  isa::Swizzle swizzle;
  int64_t rows_per_cta;   // M or N extent one CTA holds
  char mn;                // 'm' / 'n'
  int64_t k;              // K extent of its tile (sparse A: half of tile.k)
};

std::vector<OperandRef> operands(const spec::Gemm& g) {
  return {{"a", g.a, g.swizzle_a, g.tile.m / g.cta_group, 'm', g.sparse ? g.tile.k / 2 : g.tile.k},
          {"b", g.b, g.swizzle_b, g.tile.n / g.cta_group, 'n', g.tile.k}};
}

int smem_bits(const Context& c, DType t) {
  return c.kind ? isa::smem_bits(*c.kind, t) : isa::value_bits(t);
}

bool sub_byte(DType t) { return isa::value_bits(t) < 8; }

}  // namespace

void check_target_a_tmem(const Context& c, Diagnostics& d) {
  if (!c.gemm || c.target.tcgen05 || c.gemm->a_source != spec::ASource::tmem) return;
  d.error("TARGET-A-TMEM", "/gemm/a_source",
          "a_source \"tmem\" needs tensor memory, which " + std::string(c.target.name) + " does not have")
      .help = {"on sm_90a, read A from \"smem\" or from \"registers\" (wgmma)",
               "or target sm_100a / sm_100f / sm_103a / sm_110a"};
}

void check_target_cta_pair(const Context& c, Diagnostics& d) {
  if (!c.gemm || c.target.tcgen05 || c.gemm->cta_group != 2) return;
  d.error("TARGET-CTA-PAIR", "/gemm/cta_group",
          "cta_group 2 (a CTA pair sharing one MMA) is a tcgen05 feature; " + std::string(c.target.name) +
              " has no tcgen05")
      .help = {"use \"cta_group\": 1 (clusters and multicast loads remain available)",
               "or target an sm_100a-family GPU"};
}

void check_schedule_persistent(const Context& c, Diagnostics& d) {
  if (!c.gemm || c.gemm->schedule != spec::Schedule::persistent) return;
  // The persistent grid is one row of clusters that walk blocks of tiles in M and N together (a
  // cluster of one CTA, or of one pair, walks single tiles): the cluster's x and y give the block,
  // and a z extent has no tiles to take.
  const auto& cl = c.gemm->cluster;
  if (cl[2] == 1) return;
  const int64_t own = c.target.tcgen05 ? c.gemm->cta_group : 1;
  // Only z = 1 passes: a data-parallel grid's z would compute the same tiles again (CLUSTER-MULTICAST).
  const bool chosen = spec::chosen_note(*c.gemm, "schedule") != nullptr;
  d.error("SCHEDULE-PERSISTENT", "/gemm/cluster/2",
          "a persistent grid is one row of clusters walking blocks of " + num(cl[0] / own) + " x " + num(cl[1]) +
              " tiles (x along N, y along M); the cluster's z = " + num(cl[2]) + " has no tiles to take" +
              (chosen ? " (the schedule persistent was chosen by ptxgen: the spec leaves \"schedule\" out)" : ""))
      .help = {"use \"cluster\": [" + num(cl[0]) + ", " + num(cl[1]) + ", 1] (a data-parallel grid's z would compute the same tiles again)"};
}

void check_cluster_multicast(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = c.gemm;
  if (!g) return;
  const auto& cl = g->cluster;
  const int64_t own = c.target.tcgen05 ? g->cta_group : 1;
  const int64_t ctas = cl[0] * cl[1] * cl[2];
  if (ctas <= own || ctas > 16 || cl[0] % own) return;  // the CTA or its pair; CLUSTER-SIZE; CLUSTER-PAIR
  if (cl[2] != 1 && g->schedule == spec::Schedule::persistent) return;  // SCHEDULE-PERSISTENT
  // The cluster's CTAs (pairs) cover a block of tiles: along N (x) they share A's tile, along M (y)
  // B's; each CTA loads a part of a shared tile and multicasts it to the CTAs that share it.
  if (cl[2] != 1) {
    d.error("CLUSTER-MULTICAST", "/gemm/cluster/2",
            "a cluster of " + num(cl[0]) + " x " + num(cl[1]) + " x " + num(cl[2]) +
                " CTAs: the cluster's CTAs cover a block of tiles along N (x) and M (y); its z would compute the same tiles again")
        .help = {"use \"cluster\": [" + num(cl[0]) + ", " + num(cl[1]) + ", 1]"};
    return;
  }
  const int64_t share[2] = {cl[0] / own, cl[1]};  // CTAs (pairs) sharing A, B
  for (int i = 0; i < 2; ++i) {
    const int64_t parts = share[i];
    if (parts <= 1) continue;
    const bool a = i == 0;
    const spec::Operand& op = a ? g->a : g->b;
    if (a && c.target.tcgen05 && g->a_source == spec::ASource::tmem && isa::instr_m_for_tile(c.kind.value_or(isa::Kind::f16), g->cta_group, static_cast<int>(g->tile.m)) == 64) {
      d.error("CLUSTER-MULTICAST", "/gemm/cluster/0",
              "the cluster's " + num(parts) + " CTAs along N would share A's tile, but A in tensor memory at M = 64 is loaded in 16-row pieces "
              "placed by lane quarter (layout F), which ptxgen does not multicast")
          .help = {"use \"cluster\": [" + num(own) + ", " + num(cl[1]) + ", 1] (B may still be shared along M)", "or \"a_source\": \"smem\", or a tile.m of 128"};
      continue;
    }
    const isa::Swizzle sw = a ? g->swizzle_a : g->swizzle_b;
    const int64_t mn = (a ? g->tile.m : g->tile.n) / (c.target.tcgen05 ? g->cta_group : 1);
    const int64_t kk = a && g->sparse ? g->tile.k / 2 : g->tile.k;
    const int64_t bits = c.target.tcgen05 ? smem_bits(c, op.dtype) : isa::value_bits(op.dtype);
    const int box = sw == isa::Swizzle::none ? 16 : isa::bytes(sw);
    // The CTA's tile as TMA boxes: K-major rows are M (N), each K x bits wide; MN-major rows are K.
    const bool kmaj = op.major == isa::Major::k;
    const int64_t rows = kmaj ? mn : kk, row_bytes = (kmaj ? kk : mn) * bits / 8;
    if (row_bytes % box != 0 || rows > 1024) continue;  // other rules speak of such tiles
    if (plan::multicast_split(static_cast<int>(rows), static_cast<int>(row_bytes / box), box, static_cast<int>(parts))) continue;
    d.error("CLUSTER-MULTICAST", std::string("/gemm/tile/") + (a ? "m" : "n"),
            "the " + num(parts) + (own == 2 ? " pairs" : " CTAs") + " of the cluster along " + (a ? "N" : "M") + " share " + (a ? "A" : "B") +
                "'s tile, but its " + num(row_bytes / box) + " box column(s) of " + num(rows) + " rows" +
                (own == 2 ? " (each CTA's half)" : "") + " do not split into " + num(parts) + " equal parts of whole TMA boxes (rows in multiples of " +
                num(isa::kTmaSmemAlign / box) + ")")
        .help = {"use a tile." + std::string(a ? "m" : "n") + " that splits (e.g. a multiple of " + num(8 * parts * own) + ")", "or a smaller cluster"};
  }
}

// An 8-bit D (e4m3, e5m2): converted from f32 accumulators two at a time (cvt.rn.satfinite.e4m3x2.f32,
// §9.7.9.21), stored directly or through the TMA epilogue's staging (1-byte elements, boxes of 128
// columns). A 4-bit D (e2m1, two elements a byte; QUANT-DTYPE: MXFP4/NVFP4 only) is stored directly:
// its staging, half a byte per element, is not built.
void check_d_fp8(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = c.gemm;
  if (!g || isa::value_bits(g->d) > 8) return;
  if (g->accumulator != isa::DType::f32) {
    d.error("D-FP8", "/gemm/d/dtype",
            "D in " + std::string(isa::name(g->d)) + " is converted from f32 accumulators (cvt.rn.satfinite." + std::string(isa::name(g->d)) +
                "x2.f32); the accumulator is " + std::string(isa::name(g->accumulator)))
        .help = {"use \"accumulator\": \"f32\""};
    return;
  }
  if (isa::value_bits(g->d) < 8 && g->epilogue != spec::Epilogue::direct)
    d.error("D-FP8", "/gemm/epilogue",
            "D in " + std::string(isa::name(g->d)) +
                " (4 bits, two elements a byte) is stored directly from the registers: the TMA epilogue stages 8-, 16- and 32-bit D only")
        .help = {"use \"epilogue\": \"direct\" (or leave it out)", "or an 8-bit D (\"quantize\": \"mxfp8\", e4m3 or e5m2) with \"epilogue\": \"tma\""};
}

// A gated activation (docs/spec.md, "Epilogues"): D[i][j] = act(P[i][j]) * P[i][j + n/2], so B's
// n rows are two halves of n/2 and a bias, if any, runs along them (N).
void check_glu_n(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = c.gemm;
  if (!g || !g->glu || g->n % 2 == 0) return;
  const std::string act(spec::name(*g->glu));
  d.error("GLU-N", "/gemm/n",
          "n = " + num(g->n) + " is odd: \"" + act + "\" pairs B's row j (the gate) with row j + n/2 (up), so B holds two halves of " +
              "n/2 rows and D has n/2 columns")
      .help = {"use \"n\": " + num(g->n + 1) + ", an even n (B's rows: the gate's d rows, then up's d; D is m x d for n = 2d)"};
}

void check_glu_bias(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = c.gemm;
  if (!g || !g->glu || !g->bias || !g->bias->along_m) return;
  d.error("GLU-BIAS", "/gemm/bias/along",
          "a bias along M with \"" + std::string(spec::name(*g->glu)) + "\": the gated epilogue adds a bias to the product's n columns " +
              "(gate and up halves) before pairing them, so it runs along N")
      .help = {"use \"along\": \"n\" (a row of n elements: the gate's n/2, then up's n/2)", "or add a per-row bias in a separate kernel"};
}

// What the gated lowering is built for: B's tile loaded as two K-major boxes of tile.n / 2 rows
// (gate rows, up rows) into the halves of one tile, one CTA per tile without multicast of B, the
// dense kinds, and on tcgen05 the accumulator in layout D (M = 128 per instruction), whose
// .32x32b fragments hold a row per thread so that column c and c + tile.n / 2 meet in a thread.
void check_glu_layout(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = c.gemm;
  if (!g || !g->glu) return;
  const std::string act = "\"" + std::string(spec::name(*g->glu)) + "\"";
  auto refuse = [&](const std::string& ptr, const std::string& what, std::vector<std::string> help) {
    d.error("GLU-LAYOUT", ptr, act + " is built for K-major B, tile.n a multiple of 16, one CTA per tile without B multicast, dense " +
                                   std::string("unscaled kinds, A from shared memory, on tcgen05 tile.m a multiple of 128, without alpha or C: ") +
                                   what)
        .help = std::move(help);
  };
  if (g->b.major != Major::k)
    return refuse("/gemm/b/major", "B is N-major (its gate and up halves would be column ranges of the K x N tile)",
                  {"store B K-major (n rows of k: \"major\": \"k\")"});
  if (g->tile.n % 16)
    return refuse("/gemm/tile/n", "tile.n = " + num(g->tile.n) + " does not split into two halves of whole 8-row swizzle atoms",
                  {"use a tile.n that is a multiple of 16 (e.g. 256: 128 gate and 128 up columns)"});
  if (g->cta_group != 1)
    return refuse("/gemm/cta_group", "a CTA pair splits B's tile between the two CTAs", {"use \"cta_group\": 1"});
  if (g->cluster[1] != 1)
    return refuse("/gemm/cluster/1", "a cluster with y = " + num(g->cluster[1]) + " multicasts B's tile along M",
                  {"use a cluster of y = 1 (x may multicast A)"});
  if (g->scale) return refuse("/gemm/scale", "block scaling's B factors follow B's rows, which the gated loads remap", {"drop \"scale\""});
  if (g->sparse) return refuse("/gemm/sparse", "sparse A is not built with a gated epilogue", {"drop \"sparse\""});
  if (g->a_source == spec::ASource::registers)
    return refuse("/gemm/a_source", "A from registers: the gate's and up's wgmmas of a K block would reload A's fragments while the other reads them",
                  {"use \"a_source\": \"smem\""});
  if (c.target.tcgen05 && g->tile.m % 128)
    return refuse("/gemm/tile/m", "tile.m = " + num(g->tile.m) + " takes M = 64 instructions, whose accumulator layout (F) splits a row's columns over lanes",
                  {"use a tile.m that is a multiple of 128"});
  // alpha and C come before the activation (docs/spec.md, "Epilogues"): on a gated product they
  // would act on the gate and up halves, which ptxgen does not define.
  if ((g->alpha && *g->alpha != 1) || g->alpha_input)
    return refuse("/gemm/alpha", "alpha would scale the gate and up halves before the activation",
                  {"drop \"alpha\" (scale A, or D with \"d\": {\"scale\": true})"});
  if (g->c) return refuse("/gemm/c", "C would be added to the product's halves before the activation", {"add it after the product as \"residual\""});
}

// A block-quantized D (docs/spec.md, "Epilogues"): MXFP8 stores e4m3 or e5m2 elements, one ue8m0
// factor per 32 columns of each of D's rows (n / 2 columns with a gated activation).
void check_quant_dtype(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = c.gemm;
  if (!g) return;
  const bool fp4 = g->d == isa::DType::e2m1;
  if (!g->quantize) {
    // An e2m1 D holds 15 values: only as MXFP4's or NVFP4's scaled elements.
    if (fp4)
      d.error("QUANT-DTYPE", "/gemm/d/dtype", "an e2m1 D (values 0, 0.5 .. 6 and their negatives) is stored only block-scaled, as MXFP4 or NVFP4")
          .help = {"add \"quantize\": \"mxfp4\" (or \"nvfp4\")", "or use \"d\": {\"dtype\": \"e4m3\"} (or bf16)"};
    return;
  }
  const bool e2m1_format = *g->quantize != spec::Quantize::mxfp8;
  if (e2m1_format ? fp4 : g->d == isa::DType::e4m3 || g->d == isa::DType::e5m2) return;
  if (e2m1_format)
    d.error("QUANT-DTYPE", "/gemm/d/dtype",
            "\"quantize\": \"" + std::string(spec::name(*g->quantize)) + "\" stores D's elements as e2m1, each block of " +
                num(spec::quantize_vec(*g->quantize)) + " over its " + std::string(isa::name(spec::quantize_scale(*g->quantize))) +
                " factor; d.dtype is " + std::string(isa::name(g->d)))
        .help = {"use \"d\": {\"dtype\": \"e2m1\"}", "or \"quantize\": \"mxfp8\" for e4m3 or e5m2 elements"};
  else
    d.error("QUANT-DTYPE", "/gemm/d/dtype",
            "\"quantize\": \"mxfp8\" stores D's elements as e4m3 or e5m2 (MXFP8), each block of 32 over its ue8m0 factor; d.dtype is " +
                std::string(isa::name(g->d)))
        .help = {"use \"d\": {\"dtype\": \"e4m3\"} (or e5m2)", "or drop \"quantize\" for an unquantized D"};
}

// MXFP4's elements come from cvt.rn.satfinite.e2m1x2.f32 (§9.7.9.21), which the tcgen05 targets
// have and sm_90a does not.
void check_quant_target(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = c.gemm;
  if (!g || !g->quantize || *g->quantize == spec::Quantize::mxfp8 || c.target.tcgen05) return;
  d.error("QUANT-TARGET", "/gemm/quantize",
          "\"" + std::string(spec::name(*g->quantize)) + "\" converts D's values to e2m1 with cvt.rn.satfinite.e2m1x2.f32, which " + std::string(c.target.name) + " lacks")
      // MXFP8's elements are e4m3 or e5m2: an e2m1 D changes with it (QUANT-DTYPE), in the same round.
      .help = {"use \"quantize\": \"mxfp8\"" + std::string(g->d == isa::DType::e2m1 ? " with \"d\": {\"dtype\": \"e4m3\"}" : " (e4m3 or e5m2 elements)") +
                   " on " + std::string(c.target.name),
               "or target sm_100a"};
}

void check_quant_n(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = c.gemm;
  if (!g || !g->quantize) return;
  const int64_t dn = g->glu ? g->n / 2 : g->n, vec = spec::quantize_vec(*g->quantize);
  if (dn % vec == 0) return;
  d.error("QUANT-N", "/gemm/n",
          "D has " + num(dn) + " columns" + (g->glu ? " (n / 2 with \"" + std::string(spec::name(*g->glu)) + "\")" : std::string()) +
              ", not a multiple of " + num(vec) + ": " + std::string(spec::name(*g->quantize)) + " gives every " + num(vec) +
              " consecutive columns of a row one factor, and the 128x4 layout has no partial block")
      .help = {"use an n whose D columns are a multiple of " + num(vec) + " (pad D's columns and the next GEMM's K)"};
}

// D's tile columns a whole number of blocks, each block whole in the registers one thread (or the
// 4 lanes of a row) quantizes: the spec's tile.n, then what the lowered epilogue gives each thread
// (its verifier's problems under this rule: plan::quantize_miss).
void check_quant_tile(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = c.gemm;
  if (c.spec.program) {  // a program's quantize op: the blocks of its registers (verify_regs.cpp)
    lowered(c, d);
    for (const auto& p : c.problems)
      if (p.rule == "QUANT-TILE") d.error(p.rule, p.pointer, p.message).help = p.help;
    return;
  }
  if (!g || !g->quantize) return;
  const int64_t dn = g->glu ? g->tile.n / 2 : g->tile.n, vec = spec::quantize_vec(*g->quantize);
  const int64_t step = g->glu ? 2 * vec : vec;  // tile.n's step: D's tile is tile.n / 2 with a gated activation
  if (dn % vec) {
    d.error("QUANT-TILE", "/gemm/tile/n",
            "D's tile is " + num(dn) + " columns wide" + (g->glu ? " (tile.n / 2)" : std::string()) + ", not a multiple of " +
                num(vec) + ": a block of " + num(vec) + " columns would span two tiles")
        .help = {"use a tile.n of " + num((g->tile.n + step - 1) / step * step) + " (D's columns a multiple of " + num(vec) + ")"};
    return;
  }
  if (d.has_errors()) return;
  lowered(c, d);
  for (const auto& p : c.problems)
    if (p.rule == "QUANT-TILE") d.error(p.rule, p.pointer, p.message).help = p.help;
}

void check_epilogue_auto(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = c.gemm;
  if (!g || g->epilogue != spec::Epilogue::automatic || !c.target.tcgen05) return;
  const int bits = isa::value_bits(g->d);
  const bool whole_boxes = bits >= 8 && (g->glu ? g->tile.n / 2 : g->tile.n) % (1024 / bits) == 0;
  d.error("EPILOGUE-AUTO", "/gemm/epilogue",
          "\"epilogue\": \"auto\" (TMA stores where D's rows allow at run time, else direct stores) is planned for the wgmma template; " +
              std::string(c.target.name) + " reads D from tensor memory, whose two epilogues are planned differently")
      // The TMA store only where its boxes are whole (EPILOGUE-TMA) and D is 8 bits or more (D-FP8).
      .help = {whole_boxes ? "use \"epilogue\": \"tma\" (the launch header then needs D's rows 16-byte multiples apart) or \"direct\""
                           : "use \"epilogue\": \"direct\" (tile.n is not whole boxes of the TMA store)",
               "or target sm_90a"};
}

void check_epilogue_tma(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = c.gemm;
  if (!g || g->epilogue == spec::Epilogue::direct || isa::value_bits(g->d) < 8) return;  // 4-bit D: D-FP8
  if (g->epilogue == spec::Epilogue::automatic && c.target.tcgen05) return;  // EPILOGUE-AUTO
  const int box = 128 / (isa::value_bits(g->d) / 8);
  // A gated activation's D tile is half of tile.n (gate and up columns make one D column).
  const int64_t dn = g->glu ? g->tile.n / 2 : g->tile.n;
  if (dn % box) {
    d.error("EPILOGUE-TMA", "/gemm/tile/n",
            "tile.n = " + num(g->tile.n) + ": the TMA epilogue stores D in boxes of " + num(box) + " " +
                std::string(isa::name(g->d)) + " columns (128 bytes, the swizzle's row), so a tile is whole boxes wide" +
                (g->glu ? " (D's tile is tile.n / 2 = " + num(dn) + " columns with \"" + std::string(spec::name(*g->glu)) + "\")" : std::string()) +
                "; a partial box would write into the next tile's columns")
        .help = {"use a tile.n that is a multiple of " + num(g->glu ? 2 * box : box), "or \"epilogue\": \"direct\""};
    return;
  }
  if (!c.target.tcgen05 || d.has_errors()) return;
  // tcgen05: the epilogue stores D in runs of columns as tensor memory holds them (a pair's N
  // groups in halves, a left-over M = 64 group's N in halves at the two lane alignments), each run
  // in boxes: every box whole. The lowering's boxes say it (a tcgen05.ld of a box's columns, then
  // its store); the lowering refuses nothing and runs here without the planner.
  const ir::Kernel* lk = lowered(c, d);
  if (!lk) return;
  const ir::Kernel& k = *lk;
  std::map<std::string, int64_t> widths;
  for (const auto& v : k.views)
    if (v.kind == ir::TmemView::Kind::slice && v.cols) widths[v.name] = (*v.cols)[1] - (*v.cols)[0];
  for (const auto& r : k.roles) {
    std::string loaded;
    for (const auto& n : r.nodes) {
      if (n.is_loop) continue;
      if (const ir::TmemLoad* ld = n.op.as<ir::TmemLoad>()) loaded = ld->src.name;
      const ir::Store* st = n.op.as<ir::Store>();
      // A piece of a box (a fused epilogue's narrower tcgen05.ld) is part of a whole one.
      const bool piece = st && (st->piece_col != 0 || !st->piece_last);
      if (!st || !st->tma || piece || !widths.count(loaded) || widths.at(loaded) == box) continue;
      d.error("EPILOGUE-TMA", "/gemm/tile/n",
              "the TMA epilogue stores D in boxes of " + num(box) + " " + std::string(isa::name(g->d)) + " columns, but " +
                  (g->cta_group == 2 ? "each CTA of the pair holds an N group's columns in two halves"
                                     : "an M = 64 group left over holds its N columns in two halves at the two lane alignments") +
                  ", which leaves a run ending in a box of " + num(widths.at(loaded)) + " columns; it would write into the next columns")
          .help = {"use a tile.n whose halves are whole boxes (a multiple of " + num(2 * box) + ")", "or \"epilogue\": \"direct\""};
      return;
    }
  }
}

void check_target_a_registers(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = tc(c);
  if (!g || g->a_source != spec::ASource::registers) return;
  d.error("TARGET-A-REGISTERS", "/gemm/a_source",
          "tcgen05.mma reads A from shared or tensor memory, not from registers")
      .help = {"use \"a_source\": \"tmem\" to copy A into tensor memory, or \"smem\"",
               "A from registers is wgmma (target sm_90a)"};
}

void check_target_kind_i8(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = tc(c);
  if (!g || !c.kind || *c.kind != isa::Kind::i8 || c.target.kind_i8) return;
  d.error("TARGET-KIND-I8", "/target",
          ".kind::i8 (" + tn(g->a.dtype) + " x " + tn(g->b.dtype) + ") is not available on " +
              std::string(c.target.name) + ": only sm_100a and sm_110a have it")
      .help = {"target sm_100a or sm_110a", "or use 8-bit floats (e4m3/e5m2) with .kind::f8f6f4"};
}

void check_mma_kind(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = tc(c);
  if (!g || c.kind || g->scale) return;  // with "scale": SCALE-KIND
  d.error("MMA-KIND", "/gemm/b/dtype",
          "A " + tn(g->a.dtype) + " and B " + tn(g->b.dtype) + " form no tcgen05.mma kind")
      .help = {"kind::f16: f16 x f16 or bf16 x bf16; kind::tf32: tf32 x tf32",
               "kind::f8f6f4: any two of e4m3, e5m2, e2m3, e3m2, e2m1; kind::i8: any two of s8, u8",
               "convert one operand so both fall in one kind"};
}

void check_mma_accumulator(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = tc(c);
  if (!g || !c.kind) return;
  if (isa::accumulator_allowed(*c.kind, g->a.dtype, g->b.dtype, g->accumulator)) return;
  const std::string accs = isa::accumulators_text(*c.kind, g->a.dtype);
  d.error("MMA-ACCUM", "/gemm/accumulator",
          "accumulator " + tn(g->accumulator) + " is not available for " + tn(g->a.dtype) + " inputs (.kind::" +
              std::string(isa::name(*c.kind)) + ")")
      // The first type the kind takes, as a value to write (the list "f32 or f16" is no JSON value).
      .help = {"use \"accumulator\": " + q(accs.substr(0, accs.find(' '))) + (accs.find(' ') == std::string::npos ? std::string() : " (the kind takes " + accs + ")")};
}

void check_mma_major(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = tc(c);
  if (!g) return;
  for (const auto& o : operands(*g)) {
    if (o.op.major != Major::mn || !sub_byte(o.op.dtype)) continue;
    d.error("MMA-MAJOR", "/gemm/" + std::string(o.name) + "/major",
            std::string(1, static_cast<char>(o.name[0] - 32)) + " of type " + tn(o.op.dtype) + " cannot be " +
                (o.mn == 'm' ? "M" : "N") + "-major: transposed operands are 8, 16 or 32 bits only")
        .help = {"store " + std::string(o.name == std::string("a") ? "A as M x K" : "B as N x K") +
                 " with K contiguous and write \"major\": \"k\""};
  }
}

void check_mma_swizzle_atomicity(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = tc(c);
  if (!g) return;
  for (const auto& o : operands(*g)) {
    const std::string p = "/gemm/swizzle/" + std::string(o.name);
    const bool tf32_mn = o.op.dtype == DType::tf32 && o.op.major == Major::mn;
    if (tf32_mn && o.swizzle != isa::Swizzle::b128_base32b) {
      d.error("MMA-SWIZZLE-ATOMICITY", p,
              "a transposed (" + std::string(o.mn == 'm' ? "M" : "N") + "-major) tf32 operand needs 128-byte "
              "swizzling with 32-byte atomicity, not " + std::string(isa::name(o.swizzle)))
          .help = {"write \"" + std::string(o.name) + "\": \"128_base32b\" under \"swizzle\"",
                   "or store the operand K-major (\"major\": \"k\"), which takes any swizzle"};
    } else if (!tf32_mn && o.swizzle == isa::Swizzle::b128_base32b) {
      d.error("MMA-SWIZZLE-ATOMICITY", p,
              "128-byte swizzling with 32-byte atomicity is only for transposed tf32 operands; this one is " +
                  tn(o.op.dtype) + (o.op.major == Major::k ? " K-major" : " MN-major"))
          .help = {"use 128 (16-byte atomicity), 64, 32 or 0"};
    }
  }
}

void check_mma_a_tmem_major(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = tc(c);
  if (!g || g->a_source != spec::ASource::tmem || g->a.major != Major::mn) return;
  d.error("MMA-A-TMEM-MAJOR", "/gemm/a/major",
          "A in tensor memory is row-major (K along the columns); an M-major A cannot be copied there")
      .help = {"store A as M x K with K contiguous (\"major\": \"k\")", "or keep A in shared memory (\"a_source\": \"smem\")"};
}

void check_mma_m(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = tc(c);
  if (!g || !c.kind) return;
  if (isa::instr_m_for_tile(*c.kind, g->cta_group, static_cast<int>(g->tile.m)) != 0) return;
  d.error("MMA-M", "/gemm/tile/m",
          "tile.m=" + num(g->tile.m) + " is not a multiple of a legal instruction M (" +
              isa::legal_m_text(*c.kind, g->cta_group) + " at cta_group::" + num(g->cta_group) + ")")
      .help = {"use a tile.m that is a multiple of " + num(isa::smallest_legal_m(*c.kind, g->cta_group)) +
               " (several M groups are planned when it is larger)"};
}

void check_mma_n(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = tc(c);
  if (!g || !c.kind) return;
  const int cta = g->cta_group;
  const int tile_n = static_cast<int>(g->tile.n);
  isa::TileLayout b{g->b.major, g->swizzle_b, smem_bits(c, g->b.dtype), std::max(1, tile_n / cta),
                    static_cast<int>(g->tile.k)};
  const bool b8mn = g->b.major == Major::mn && b.bits == 8;
  const auto splits = [&](int n) {
    isa::TileLayout bn = b;
    bn.mn = std::max(1, n / cta);
    return n % cta == 0 && !isa::mma_n_groups(*c.kind, cta, bn, n).empty();
  };
  if (splits(tile_n)) return;
  // The help names the next width that splits (one round: "a width the list allows" took a round
  // to find the steps of 16 or 32 that B's layout adds), or the largest below where none is.
  int next = tile_n + 1;
  while (next <= tile_n + 512 && !splits(next)) ++next;
  int below = tile_n - 1;
  while (below > 0 && !splits(below)) --below;
  const int named = next <= tile_n + 512 ? next : below;
  auto& e = d.error("MMA-N", "/gemm/tile/n",
          "tile.n=" + num(tile_n) + " cannot be split into tcgen05.mma instructions: .kind::" +
              std::string(isa::name(*c.kind)) + " at cta_group::" + num(cta) + " takes N = " +
              isa::legal_n_text(*c.kind, cta, b8mn) + ", at most 256 per instruction");
  if (named > 0) e.help = {"use a tile.n of " + num(named) + (below > 0 && named != below ? " (or " + num(below) + ")" : std::string())};
  else e.help = {"round tile.n to a width the list allows (or a sum of 256-wide groups and one such width)"};
}

void check_mma_k(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = tc(c);
  if (!g || !c.kind) return;
  const int k = isa::instr_k(*c.kind);
  if (g->tile.k % k == 0) return;
  d.error("MMA-K", "/gemm/tile/k",
          "tile.k=" + num(g->tile.k) + " is not a multiple of K=" + num(k) + ", the K of one .kind::" +
              std::string(isa::name(*c.kind)) + " instruction")
      .help = {"use a tile.k that is a multiple of " + num(k)};
}

void check_layout_atom(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = c.gemm;
  // Block scaling with no kind for the types is SCALE-KIND's alone: without a kind there is no
  // container size for the 4- and 6-bit types, so their atoms cannot be judged.
  if (!g || (g->scale && !c.kind)) return;
  for (const auto& o : operands(*g)) {
    if (o.op.major == Major::mn && sub_byte(o.op.dtype)) continue;  // MMA-MAJOR
    if (o.swizzle == isa::Swizzle::b128_base32b && !(o.op.dtype == DType::tf32 && o.op.major == Major::mn))
      continue;  // MMA-SWIZZLE-ATOMICITY
    if (isa::tile_bytes(o.rows_per_cta, g->tile.k, smem_bits(c, o.op.dtype)) >= isa::kSmemDescRange)
      continue;  // SMEM-DESC-RANGE
    // Why the operand's tile is not whole atoms of `sw`, or nothing.
    auto not_whole = [&](isa::Swizzle sw) -> std::optional<std::string> {
      isa::TileLayout t{o.op.major, sw, smem_bits(c, o.op.dtype), static_cast<int>(o.rows_per_cta), static_cast<int>(o.k)};
      if (auto why = isa::make_tile_layout(t)) return why;
      if (o.op.major == Major::mn && o.name == std::string("a") && c.kind) {
        const int m = isa::instr_m_for_tile(*c.kind, g->cta_group, static_cast<int>(g->tile.m));
        if (m && (m / g->cta_group) % t.atom_mn != 0)
          return "an instruction's " + num(m / g->cta_group) + " rows of M-major A are not whole " + num(t.atom_mn) +
                 "-element swizzle atoms";
      }
      return std::nullopt;
    };
    const std::optional<std::string> why = not_whole(o.swizzle);
    if (!why) continue;
    const std::string up(1, static_cast<char>(o.name[0] - 32));
    // The help names the widest smaller swizzle whose atoms the tile fills (one round, not a guess
    // per width); the check then passes with it (rules_test sweeps every refused tile).
    std::string fix = "use a smaller swizzle for " + up;
    for (isa::Swizzle sw : {isa::Swizzle::b64, isa::Swizzle::b32, isa::Swizzle::none}) {
      if (isa::bytes(sw) >= isa::bytes(o.swizzle) || not_whole(sw)) continue;
      fix = "use \"swizzle\": {\"" + std::string(o.name) + "\": " + num(sw == isa::Swizzle::none ? 0 : isa::bytes(sw)) +
            "}, the widest swizzle whose atoms " + up + "'s tile fills";
      break;
    }
    d.error("LAYOUT-ATOM", "/gemm/swizzle/" + std::string(o.name),
            up + " (" + tn(o.op.dtype) + ", " + (o.op.major == Major::k ? "K" : "MN") + "-major, " +
                num(o.rows_per_cta) + " x " + num(o.k) + " per CTA) is not made of whole " +
                std::string(isa::name(o.swizzle)) + " swizzle atoms: " + *why)
        .help = {fix, o.op.major == Major::k ? "or a tile.k whose bytes are a multiple of the swizzle width"
                                             : "or a tile extent along M/N that is a multiple of the atom"};
  }
}

void check_cluster_pair(const Context& c, Diagnostics& d) {
  if (!c.gemm || c.gemm->cta_group != 2 || c.gemm->cluster[0] % 2 == 0) return;
  d.error("CLUSTER-PAIR", "/gemm/cluster/0",
          "cta_group 2 needs CTA pairs (ranks differing in the last bit); cluster x = " +
              num(c.gemm->cluster[0]) + " is odd")
      .help = {"use an even cluster x, e.g. \"cluster\": [2, 1, 1]"};
}

void check_cluster_size(const Context& c, Diagnostics& d) {
  if (!c.gemm) return;
  const auto& cl = c.gemm->cluster;
  const int64_t size = cl[0] * cl[1] * cl[2];
  if (size <= 16) return;
  // The cluster the help names: z 1 (CLUSTER-MULTICAST), then the longer of x (in CTA pairs on
  // tcgen05) and y halved until 16 CTAs hold it.
  const int64_t own = c.target.tcgen05 ? c.gemm->cta_group : 1;
  int64_t x = std::max(own, cl[0] / own * own), y = cl[1];
  while (x * y > 16) {
    if (y > 1 && y >= x / own) y /= 2;
    else x = std::max(own, x / own / 2 * own);
  }
  d.error("CLUSTER-SIZE", "/gemm/cluster",
          "a cluster of " + num(size) + " CTAs exceeds 16, the largest cluster (8 is the portable size)")
      .help = {"use \"cluster\": [" + num(x) + ", " + num(y) + ", 1] (at most 16 CTAs; a cluster's z computes no other tiles)"};
}

void check_tma_stride(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = c.gemm;
  if (!g) return;
  // A TMA tensor map's global stride (bytes between consecutive rows) must be a multiple of 16
  // (cuTensorMapEncodeTiled), and a row must hold the whole contiguous extent.
  struct Row {
    const char* what;
    const char* name;
    const spec::Operand& op;
    int64_t extent;
    const char* dim;
  };
  const Row rows[] = {
      {"A", "a", g->a, g->a.major == Major::k ? (g->sparse ? g->k / 2 : g->k) : g->m,
       g->a.major == Major::k ? (g->sparse ? "k/2" : "k") : "m"},
      {"B", "b", g->b, g->b.major == Major::k ? g->k : g->n, g->b.major == Major::k ? "k" : "n"},
  };
  for (const Row& r : rows) {
    if (r.op.ld == 0) continue;  // the default is padded to 16 bytes
    const std::string p = "/gemm/" + std::string(r.name) + "/ld";
    const int64_t bits = r.op.ld * isa::value_bits(r.op.dtype);
    if (r.op.ld < r.extent) {
      d.error("TMA-STRIDE", p,
              std::string(r.what) + ".ld=" + num(r.op.ld) + " is shorter than a row: " + r.dim + "=" + num(r.extent))
          .help = {"use an ld of at least " + num(r.extent) + ", or leave ld out (the row length rounded up to 16 bytes)"};
    } else if (bits % 128 != 0) {
      d.error("TMA-STRIDE", p,
              std::string(r.what) + "'s rows are " + num(r.op.ld) + " " + tn(r.op.dtype) + " elements = " +
                  (bits % 8 ? num(bits) + " bits" : num(bits / 8) + " bytes") +
                  " apart; a TMA tensor's row stride must be a multiple of 16 bytes")
          .help = {"pad the rows: ld=" + num((bits + 127) / 128 * 128 / isa::value_bits(r.op.dtype)) +
                   " (or leave ld out, which pads to 16 bytes)"};
    }
  }
}

// The tensor-memory columns a lowered kernel placed: the end of the last slice of the allocation
// (a ring, the block-scale factors of every stage, spans all its copies), and each slice's width.
uint32_t tmem_columns(const ir::Kernel& k, std::string* table = nullptr) {
  uint32_t used = 0;
  for (const auto& v : k.views)
    if (v.kind == ir::TmemView::Kind::slice && v.of.name == "tmem" && v.cols && (v.name.rfind("_cells") == v.name.size() - 6)) {
      const int64_t width = (*v.cols)[1] - (*v.cols)[0], ring = int64_t{v.stages - 1} * v.stage_columns;
      used = std::max<uint32_t>(used, static_cast<uint32_t>((*v.cols)[1] + ring));
      if (table)
        *table += (table->empty() ? "" : ", ") + v.name.substr(0, v.name.size() - 6) + "=" + num(width + ring) +
                  (v.stages > 1 ? " (" + num(v.stages) + " stages)" : "");
    }
  return used;
}

void check_tmem_budget(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = tc(c);
  if (!g) return;
  lowered(c, d);  // the lowering is enough: the columns it placed, whatever the verifiers say
  if (!c.kernel) return;
  std::string table;
  const uint32_t used = tmem_columns(*c.kernel, &table);
  if (used <= static_cast<uint32_t>(c.target.tmem_columns)) return;
  // The widest smaller tile.n whose kernel fits (one round: "reduce tile.n" took a round per try),
  // in steps of 32 columns, whole boxes of any D and legal N at any kind. The columns grow with
  // tile.n, so a binary search finds it in log2(tile.n / 32) lowerings, not one per step (the
  // hostile-input sweep's cost).
  int64_t fit_n = 0;
  for (int64_t lo = 1, hi = (g->tile.n - 1) / 32; lo <= hi;) {  // in units of 32 columns
    const int64_t mid = (lo + hi) / 2;
    spec::Spec narrower = c.spec;
    narrower.gemm->tile.n = 32 * mid;
    if (tmem_columns(lower::lower(narrower)) <= static_cast<uint32_t>(c.target.tmem_columns)) fit_n = 32 * mid, lo = mid + 1;
    else hi = mid - 1;
  }
  auto& diag = d.error("TMEM-BUDGET", "/gemm/tile/n",
                       "the plan needs " + num(used) + " tensor-memory columns; a CTA has " + num(c.target.tmem_columns));
  diag.help = {"columns: " + table,
               fit_n ? "use a tile.n of " + num(fit_n) + ", the widest whose columns fit (each M group holds its own accumulator columns)"
                     : "reduce tile.m (each M group holds its own accumulator columns)",
               g->a_source == spec::ASource::tmem ? "or keep A in shared memory" : "or use cta_group 2 with M=256 to split rows across the pair"};
  if (g->scale) diag.help.push_back("or use fewer stages or a smaller tile.k: every stage holds its K block's scale factors");
}

void check_smem_budget(const Context& c, Diagnostics& d) {
  // Both engines: the wgmma pipeline holds its stages in shared memory too (fuzz finding: sm_90a
  // specs with 5 stages of 48 KB passed the check and failed at launch).
  const spec::Gemm* g = c.gemm;
  if (!g) return;
  const ir::Kernel* k = verified(c, d);
  if (!k) return;
  const plan::MemoryMap& p = memory_map(c, *k);
  const int64_t max = c.target.smem_per_block_max;
  if (p.smem_bytes <= max) return;
  // The pipeline's ring (a stage of A and B per stage), and the TMA epilogue's staging tile where
  // it has memory of its own (a persistent CTA's, or one that does not fit over the ring).
  int64_t stage = 0, tiles = 0, staging = 0, staging_tiles = 0;
  std::string parts;
  for (const auto& t : p.smem) {
    const auto ir_tile = std::find_if(k->tiles.begin(), k->tiles.end(), [&](const ir::Tile& x) { return x.name == t.name; });
    if (ir_tile != k->tiles.end() && ir_tile->ptr == "/gemm/epilogue") {
      if (t.overlay.empty()) staging += int64_t{t.stage_bytes} * t.stages, ++staging_tiles;
      continue;
    }
    stage += t.stage_bytes;
    tiles += int64_t{t.stage_bytes} * t.stages;
    parts += std::string(parts.empty() ? "" : " + ") + t.name + " " + num(t.layout.bytes);
  }
  const int64_t fixed = p.smem_bytes - tiles - staging;
  const int64_t fit = (max - fixed - staging) / std::max<int64_t>(1, stage);
  // Values ptxgen chose where the spec is silent (spec::choose_gemm_defaults) are said to be its
  // choice, and the diagnostic points at a member the spec has: the stages when written, else the
  // tile that drove the choice, else the template.
  const std::string* chose_stages = spec::chosen_note(*g, "stages");
  const std::string* chose_tile = spec::chosen_note(*g, "tile");
  const std::string at = !chose_stages ? "/gemm/stages" : !chose_tile ? "/gemm/tile" : "/gemm";
  std::string chosen;
  if (chose_tile) chosen += "; the tile " + num(g->tile.m) + " x " + num(g->tile.n) + " x " + num(g->tile.k) + " was chosen by ptxgen (the spec leaves \"tile\" out)";
  if (chose_stages)
    chosen += std::string(chose_tile ? ", and " : "; ") + num(g->stages) + (g->stages == 1 ? " stage was" : " stages were") + " chosen by ptxgen (the spec leaves \"stages\" out: " +
              chose_stages->substr(chose_stages->find(": ") + 2) + ")";
  auto& diag = d.error("SMEM-BUDGET", at,
                       num(g->stages) + " stages of " + num(stage) + " bytes (" + parts + ")" +
                           (staging ? ", the TMA epilogue's staging tile" + std::string(staging_tiles > 1 ? "s (one per ping-pong consumer)" : "") + " of " +
                                          num(staging) + " bytes," : "") + " plus " + num(fixed) +
                           " bytes of barriers and alignment need " + num(p.smem_bytes) + " bytes of shared memory; a CTA on " +
                           std::string(c.target.name) + " gets at most " + num(max) + chosen);
  // Not one stage fits: the tile.k that passes every rule, where a halving of it does.
  const std::optional<DeepStageFix> k_fits = fit > 0 ? std::nullopt : passing_tile_k(c);
  diag.help = {fit > 0    ? (chose_stages ? "write \"stages\": " + num(fit) + " or fewer in the spec" : "use \"stages\": " + num(fit) + " or fewer")
               : k_fits ? k_fits->help(*g) + " (one stage of this tile.k does not)"
                        : "reduce the tile: one stage does not fit",
               "or shrink tile.k (each stage holds tile.k columns of A and B)"};
  if (chose_tile) diag.help.push_back("or write the \"tile\" (ptxgen chose this one) with a smaller tile.n or tile.k");
  if (staging) diag.help.push_back("or \"epilogue\": \"direct\", which stores D from registers without a staging tile");
}

}  // namespace ptxgen::rules
