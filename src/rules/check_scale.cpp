// The checks of the rule table for block scaling in the gemm template ("scale", docs/spec.md
// "Block scaling"). Each reports under its own rule id with the pointer of the field to change.
#include <algorithm>
#include <string>

#include "context.hpp"

namespace ptxgen::rules {

namespace {

std::string tn(isa::DType t) { return std::string(isa::name(t)); }
std::string kn(isa::Kind k) { return ".kind::" + std::string(isa::name(k)); }
std::string num(int64_t v) { return std::to_string(v); }

// The scale and its kind on a tcgen05 target, when the kind takes this scale (Table 57).
struct Scaled {
  const spec::Gemm& g;
  const spec::Scale& s;
  isa::Kind kind;
  int factors;
};
std::optional<Scaled> scaled(const Context& c) {
  const spec::Gemm* g = c.gemm;
  if (!g || !g->scale || g->scale->blockwise() || !c.target.tcgen05 || !c.kind) return std::nullopt;
  const auto f = isa::scale_factors_per_instr(*c.kind, g->scale->dtype, isa::stored_scale_vec(g->scale->vec, g->sparse));
  if (!f) return std::nullopt;
  return Scaled{*g, *g->scale, *c.kind, *f};
}

// The least change of the factors' type and block size that kind `k` takes (Table 57), as spec
// members: keep the type and change the block size, else the reverse, else both (ue8m0 first, the
// type every block-scaled kind takes). Empty when `k` takes them as they are.
std::string factors_for(isa::Kind k, const spec::Gemm& g) {
  auto takes = [&](isa::DType t, int vec) {
    return isa::stored_scale_vec(vec, g.sparse) && isa::scale_factors_per_instr(k, t, isa::stored_scale_vec(vec, g.sparse));
  };
  const spec::Scale& s = *g.scale;
  if (takes(s.dtype, s.vec)) return "";
  for (int v : {32, 16})
    if (takes(s.dtype, v)) return "\"vec\": " + num(v);
  for (isa::DType t : {isa::DType::ue8m0, isa::DType::ue4m3})
    if (takes(t, s.vec)) return "\"dtype\": \"" + tn(t) + "\"";
  for (isa::DType t : {isa::DType::ue8m0, isa::DType::ue4m3})
    for (int v : {32, 16})
      if (takes(t, v)) return "\"dtype\": \"" + tn(t) + "\", \"vec\": " + num(v);
  return "";
}

}  // namespace

void check_scale_target(const Context& c, Diagnostics& d) {
  if (c.gemm && c.gemm->scale && c.gemm->scale->blockwise()) {
    // Block-wise f32 factors are built on wgmma (sm_90a) only.
    if (!c.target.tcgen05) return;
    d.error("SPEC-NOT-BUILT", "/gemm/scale/dtype",
            "block-wise f32 scale factors (A's per row and 128 of K, B's per 128 x 128) are built for sm_90a's wgmma only, not "
            "yet for tcgen05 (" + std::string(c.target.name) + ")")
        .help = {"target sm_90a for block-wise f32 factors (docs/spec.md, \"Block scaling\")",
                 "or use the block-scaled tcgen05 kinds: \"scale\": {\"dtype\": \"ue8m0\"} (MXFP8, one factor per 32 of K)"};
    return;
  }
  if (!c.gemm || !c.gemm->scale || c.target.tcgen05) return;
  d.error("SCALE-TARGET", "/gemm/scale",
          "block-scaled MMAs (.kind::mxf8f6f4, .kind::mxf4, .kind::mxf4nvf4) are tcgen05 instructions, which " +
              std::string(c.target.name) + " does not have")
      .help = {"target sm_100a, sm_100f, sm_103a or sm_110a", "or drop \"scale\" (wgmma has no block scaling)"};
}

void check_scale_kind(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = c.gemm;
  if (!g || !g->scale || g->scale->blockwise() || !c.target.tcgen05 || c.kind) return;
  const std::string types = "A " + tn(g->a.dtype) + " and B " + tn(g->b.dtype);
  auto& diag = g->scale->kind
                   ? d.error("SCALE-KIND", "/gemm/scale/kind",
                             kn(*g->scale->kind) + " does not take " + types +
                                 (*g->scale->kind == isa::Kind::mxf8f6f4 ? ": its operands are e4m3, e5m2, e2m3, e3m2 or e2m1"
                                                                         : ": its operands are e2m1, two per byte"))
                   : d.error("SCALE-KIND", "/gemm/scale",
                             types + " form no block-scaled kind: .kind::mxf8f6f4 takes e4m3, e5m2, e2m3, e3m2 and e2m1 "
                                     "in any mix, .kind::mxf4 and .kind::mxf4nvf4 e2m1 x e2m1");
  const bool e2m1_kind = g->scale->kind && *g->scale->kind != isa::Kind::mxf8f6f4;
  diag.help = {e2m1_kind ? "use e2m1 operands for A and B (" + kn(*g->scale->kind) + ")" : "use 8-, 6- or 4-bit float operands (e4m3, e5m2, e2m3, e3m2, e2m1)",
               "or drop \"scale\""};
  // Leaving "kind" out helps where the types choose a kind; with the factors it takes, if those
  // as written are not (one round, not two: SCALE-TYPE would follow).
  if (g->scale->kind)
    if (const auto k = isa::gemm_scaled_kind(g->a.dtype, g->b.dtype, g->scale->dtype, isa::stored_scale_vec(g->scale->vec, g->sparse), std::nullopt)) {
      const std::string f = factors_for(*k, *g);
      diag.help[1] = "or leave \"kind\" out: the types choose " + kn(*k) + (f.empty() ? "" : ", with " + f);
    }
}

void check_scale_type(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = c.gemm;
  if (!g || !g->scale || g->scale->blockwise() || !c.target.tcgen05 || !c.kind || scaled(c)) return;
  // The dtype is wrong when no block size takes it for this kind; else the block size is (with
  // sparse A that is SPARSE-KIND's).
  const bool dtype_wrong = !isa::scale_factors_per_instr(*c.kind, g->scale->dtype, 16) &&
                           !isa::scale_factors_per_instr(*c.kind, g->scale->dtype, 32);
  if (g->sparse && !dtype_wrong) return;
  const std::string f = factors_for(*c.kind, *g);
  const std::string fix = "use " + f + " (what " + kn(*c.kind) + " takes" + (dtype_wrong ? ": it has no " + tn(g->scale->dtype) + " factors)" : ")");
  Diagnostic& e = d.error("SCALE-TYPE", dtype_wrong ? "/gemm/scale/dtype" : "/gemm/scale/vec",
          kn(*c.kind) + " has no block size " + num(g->scale->vec) + " with " + tn(g->scale->dtype) +
              " scale factors (Table 57): it takes " + isa::scale_combinations_text(*c.kind, g->sparse));
  e.help = {fix};
  // Another kind only where one takes these operand types with the factors as written (e4m3
  // operands have none: .kind::mxf4 and .kind::mxf4nvf4 take e2m1 alone, §9.7.16.10.4).
  const int vec = isa::stored_scale_vec(g->scale->vec, g->sparse);
  for (isa::Kind k : {isa::Kind::mxf8f6f4, isa::Kind::mxf4, isa::Kind::mxf4nvf4}) {
    if (k == *c.kind || isa::gemm_scaled_kind(g->a.dtype, g->b.dtype, g->scale->dtype, vec, k) != k ||
        !isa::scale_factors_per_instr(k, g->scale->dtype, vec))
      continue;
    const bool by_types = isa::gemm_scaled_kind(g->a.dtype, g->b.dtype, g->scale->dtype, vec, std::nullopt) == k;
    e.help.push_back("or \"kind\": \"" + std::string(isa::name(k)) + "\", which takes A " + tn(g->a.dtype) + " and B " +
                     tn(g->b.dtype) + " with " + tn(g->scale->dtype) + " factors for blocks of " + num(g->scale->vec) +
                     (by_types ? " (or leave \"kind\" out: the types choose it)" : ""));
    break;
  }
}

void check_scale_k(const Context& c, Diagnostics& d) {
  const auto x = scaled(c);
  if (!x || x->g.k % x->s.vec == 0) return;
  d.error("SCALE-K", "/gemm/k",
          "k = " + num(x->g.k) + " is not a multiple of the scale vector (" + num(x->s.vec) +
              " elements of K per scale factor): the last block of every row would be partial")
      .help = {"pad K to a multiple of " + num(x->s.vec) + " (zeros in A and B, any factor)"};
}

void check_scale_tile(const Context& c, Diagnostics& d) {
  const auto x = scaled(c);
  if (!x) return;
  const spec::Gemm& g = x->g;
  const int cta = g.cta_group;
  // tile.m: 128 rows of A's factors per CTA per M group (layout D; a pair's M = 256, layout A).
  // MMA-M reports a tile.m no instruction M divides; a pair's M = 128 (layout B) is left here.
  if (isa::instr_m_for_tile(x->kind, cta, static_cast<int>(g.tile.m)) != 0 && g.tile.m % (128 * cta) != 0) {
    d.error("SCALE-TILE", "/gemm/tile/m",
            "tile.m = " + num(g.tile.m) + " at cta_group 2 is made of M = 128 instructions (data-path layout B), where "
            "ptxgen does not place scale factors: a block-scaled pair computes M = 256 (128 rows of A per CTA)")
        .help = {"use a tile.m that is a multiple of 256 with cta_group 2", "or cta_group 1 with tile.m 128"};
    return;
  }
  if (g.tile.n % 128 != 0 || (cta == 2 && g.tile.n > 256)) {
    d.error("SCALE-TILE", "/gemm/tile/n",
            g.tile.n % 128 != 0
                ? "tile.n = " + num(g.tile.n) + " is not whole 128-row blocks of B's scale factors: the 128x4 layout keeps 128 "
                  "columns of B per 512-byte block, which one tcgen05.cp.32x128b.warpx4 copies whole, and a tile starting inside "
                  "a block would need its factors moved across lanes"
                : "tile.n = " + num(g.tile.n) + " at cta_group 2: each CTA holds B's scale factors for the pair's whole N, "
                  "and ptxgen plans one block-scaled instruction of at most 256 columns per pair")
        .help = {cta == 2 ? "use tile.n 128 or 256" : "use a tile.n that is a multiple of 128"};
    return;
  }
  const int64_t block_k = 4 * int64_t{x->s.vec};
  if (g.tile.k % block_k != 0) {
    d.error("SCALE-TILE", "/gemm/tile/k",
            "tile.k = " + num(g.tile.k) + " is not whole 4-factor columns of the 128x4 layout (4 x vec = " + num(block_k) +
                " elements of K): each K block copies whole 512-byte blocks of factors into tensor memory")
        .help = {"use a tile.k that is a multiple of " + num(block_k)};
  }
}

// Block-wise f32 factors on sm_90a (docs/spec.md, "Block scaling"): what the wgmma kernel takes.
void check_scale_block_type(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = c.gemm;
  if (!g || !g->scale || !g->scale->blockwise() || c.target.tcgen05) return;
  auto fp8 = [](isa::DType t) { return t == isa::DType::e4m3 || t == isa::DType::e5m2; };
  for (const auto& [op, name] : {std::pair{&g->a, "a"}, std::pair{&g->b, "b"}})
    if (!fp8(op->dtype)) {
      d.error("SCALE-BLOCK-TYPE", std::string("/gemm/") + name + "/dtype",
              std::string(name[0] == 'a' ? "A" : "B") + " is " + tn(op->dtype) +
                  ": block-wise f32 factors scale FP8 operands (e4m3, e5m2: wgmma's .e4m3/.e5m2 types, §9.7.15.5.2)")
          .help = {"use e4m3 or e5m2 operands", "or drop \"scale\" (16-bit operands need no factors)"};
      return;
    }
  if (g->accumulator != isa::DType::f32)
    d.error("SCALE-BLOCK-TYPE", "/gemm/accumulator",
            "the accumulator is " + tn(g->accumulator) + ": each K block's partial sums are multiplied by f32 factors and added "
            "in f32 registers")
        .help = {"use \"accumulator\": \"f32\""};
}

void check_scale_block_vec(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = c.gemm;
  if (!g || !g->scale || !g->scale->blockwise() || c.target.tcgen05) return;
  if (g->scale->vec != 128) {
    d.error("SCALE-BLOCK-VEC", "/gemm/scale/vec",
            "block-wise f32 factors cover 128 elements of K (A's 1 x 128, B's 128 x 128, DeepSeek-V3's recipe); vec = " +
                num(g->scale->vec) + " is not built")
        .help = {"leave \"vec\" out (128)"};
    return;
  }
  if (g->scale->kind)
    d.error("SCALE-BLOCK-VEC", "/gemm/scale/kind",
            "\"kind\" names a block-scaled tcgen05 kind; block-wise f32 factors scale wgmma's partial sums in registers, of no kind")
        .help = {"drop \"kind\""};
}

void check_scale_block_tile(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = c.gemm;
  // Another vec is SCALE-BLOCK-VEC's (the tile is judged against the 128 that is built).
  if (!g || !g->scale || !g->scale->blockwise() || c.target.tcgen05 || g->scale->vec != 128) return;
  const int64_t vec = g->scale->vec;
  if (g->tile.k != vec) {
    d.error("SCALE-BLOCK-TILE", "/gemm/tile/k",
            "tile.k = " + num(g->tile.k) + ": a K block of the main loop is one block of the factors (" + num(vec) +
                " elements of K), whose partial sums are scaled once it completes")
        .help = {"use tile.k " + num(vec)};
    return;
  }
  if (g->tile.n != vec) {
    d.error("SCALE-BLOCK-TILE", "/gemm/tile/n",
            "tile.n = " + num(g->tile.n) + ": B's factors are one per " + num(vec) + " columns, and the kernel reads one per tile and K "
            "block")
        .help = {"use tile.n " + num(vec)};
    return;
  }
  // Two sets of accumulators per thread (the K block's partial sums and the scaled sum): a
  // warpgroup's rows x tile.n / 128 f32 registers each (§9.7.15.5.1.1: N / 2 per m64 row block).
  const int64_t rows = g->consumers == spec::Consumers::pingpong ? g->tile.m : 64;
  if (2 * rows * g->tile.n / 128 > 128)
    d.error("SCALE-BLOCK-TILE", "/gemm/consumers",
            "each ping-pong consumer computes the whole tile.m = " + num(g->tile.m) + " rows: two sets of accumulators would be " +
                num(2 * rows * g->tile.n / 128) + " registers per thread, beyond what fits beside the addresses and factors")
        .help = {"use \"consumers\": \"cooperative\" (64 rows per warpgroup)", "or tile.m 64"};
}

// scale.partials (docs/spec.md, "Block-wise f32 factors"): only of block-wise f32 factors, and 2
// only where the second set of partial sums fits (spec::two_partials_miss).
void check_scale_block_partials(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = c.gemm;
  if (!g || !g->scale || !g->scale->partials) return;
  if (!g->scale->blockwise()) {
    d.error("SCALE-BLOCK-PARTIALS", "/gemm/scale/partials",
            "\"partials\" counts the sets of partial sums of block-wise f32 factors (\"dtype\": \"f32\"); " + tn(g->scale->dtype) +
                " factors scale the MMA itself")
        .help = {"drop \"partials\""};
    return;
  }
  if (c.target.tcgen05 || g->scale->partials != 2) return;  // f32 factors on tcgen05: SPEC-NOT-BUILT
  const spec::PartialsMiss miss = spec::two_partials_miss(*g);
  if (miss == spec::PartialsMiss::fits) return;
  // The launch's share of registers, for the budget the help names (lowered while no error is out).
  const ir::Kernel* k = miss == spec::PartialsMiss::registers ? verified(c, d) : nullptr;
  Diagnostic& e = d.error("SCALE-BLOCK-PARTIALS", "/gemm/scale/partials",
                          "two sets of partial sums: " +
                              std::string(miss == spec::PartialsMiss::stages ? "with stages = 1 block kb + 1's stage cannot be loaded while block kb's "
                                                                               "is held for its promotion"
                                          : miss == spec::PartialsMiss::a_source
                                              ? "A in registers is reloaded from the stage every K block, so the stage is released only once "
                                                "its wgmmas completed"
                                              : "each consumer thread holds the scaled sum and both sets (192 registers) beside its addresses "
                                                "and factors, which needs a setmaxnreg budget (\"registers\": {\"consumer\"}) of at least " +
                                                    num(spec::kTwoPartialsRegisters) +
                                                    (g->registers ? ", not " + num(g->registers->consumer) : std::string(", and none is given"))));
  e.help = {"use \"partials\": 1 (or leave it out)"};
  if (miss == spec::PartialsMiss::stages) e.help.push_back("or 2 or more stages");
  if (miss == spec::PartialsMiss::a_source) e.help.push_back("or A from shared memory (\"a_source\": \"smem\")");
  if (miss == spec::PartialsMiss::registers) {
    // A budget REGISTERS-BUDGET takes too: at least the launch's share (setmaxnreg.inc only raises
    // it; 255 with one consumer warpgroup), at most 256, within the register file beside a producer of 40.
    const int64_t launch = k ? (k->max_registers + 7) / 8 * 8 : 0, consumers = k ? k->threads - 128 : 0;
    const int64_t budget = std::max(spec::kTwoPartialsRegisters, launch);
    if (k && budget <= 256 && 128 * 40 + consumers * budget <= 65536)
      e.help.push_back("or \"registers\": {\"producer\": 40, \"consumer\": " + num(budget) + "}");
  }
}

}  // namespace ptxgen::rules
