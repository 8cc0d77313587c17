// What the gemm template chooses where a spec is silent: the tile and the pipeline depth
// (docs/spec.md, "Chosen when left out"). An explicit field always wins. Each choice is recorded
// in Gemm::chosen, which `ptxgen plan` prints, with the reason.
//
// The rule, from tools/bench-h200.py on the H200 (the measurements are in docs/spec.md):
//   tile.k   128 bytes of each row: one 128-byte swizzle atom of K per stage (64 16-bit elements,
//            32 tf32, 128 8-bit and smaller, which sit in 8-bit containers; 256 e2m1 for the
//            block-scaled kinds that store them two per byte; twice as many with sparse A, whose
//            rows hold half of them)
//   tile.m   128 (one CTA), 256 (a CTA pair: 128 rows in each); 64 for contiguous groups whose
//            segments start on 64 rows (a tile in one group)
//   tile.n   256, or 128 when 256 would leave multiprocessors without a tile (the skinny-M shapes:
//            m = 128, n = 16384 has 64 tiles of 128 x 256 for 132 multiprocessors); on sm_90a only
//            when 256 leaves more than half of them without one (m = 256: 128 tiles keep 256); not
//            where 128 would store D by TMA in part of a box (an 8-bit D gated or in a CTA pair)
//   stages   as many as shared memory holds, at most 4 (deeper pipelines measured no faster; 5 for
//            ping-pong consumers, which measured 3 % faster with 5); a persistent kernel's TMA
//            epilogue takes its staging memory first (tcgen05: a 32 KB ring; wgmma: D's tile, one
//            per ping-pong consumer; a gated activation's is tile.n / 2 wide)
// sm_90a, where the planner chooses the tile (tile left out), it chooses the rest of the kernel's
// shape too, each field the spec leaves out:
//   schedule   persistent, or data_parallel for one wave of 128 x 256 tiles (m = 256: the staging
//              tile lies over the ring, 4 stages against 3; 3 % faster); grouped GEMM persistent
//              (the walk over (group, tile): 1.5-5 % faster than its data-parallel kernel)
//   epilogue   auto: TMA stores where D's rows are 16-byte multiples apart at run time (+10-13 %
//              on the large shapes), the direct store otherwise, so that any n still runs
//   consumers  pingpong with tile.n 128 (few tiles: one tile's epilogue would leave the
//              multiprocessor idle; +4 % at m = 128), cooperative otherwise
//   registers  a producer warpgroup of 40 and consumers of 232 (tile.m 128: 128 accumulators)
// Block-wise f32 factors (any tile): scale.partials 2 where two sets of partial sums fit
// (two_partials_miss), so that a block's promotion overlaps the next block's wgmmas; else 1.
#include <algorithm>
#include <string>

#include "ptxgen/ir/staging.hpp"
#include "ptxgen/spec.hpp"

namespace ptxgen::spec {

namespace {
// Multiprocessors of the GPUs the targets name (H100/H200: 132; B200: 148): the tiles one wave needs.
int64_t multiprocessors(isa::Arch a) { return isa::target_info(a).tcgen05 ? 148 : 132; }
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int container_bytes(isa::DType t) { return std::max(1, isa::value_bits(t) / 8); }
int64_t kb(int64_t bytes) { return (bytes + 1023) / 1024 * 1024; }
}  // namespace

bool d_subtiles(const Gemm& g, isa::Arch target) {
  // A gated activation's D tile is tile.n / 2 wide (docs/spec.md, "Epilogues"); the template's
  // wgmma N groups split it in whole 16-column steps where it is a multiple of 16 (the planner
  // asks again with the groups it chose, src/plan/ops.cpp); C and a residual are its element-wise
  // reads (src/lower/gemm_epilogue.hpp).
  const int64_t d_cols = g.glu ? g.tile.n / 2 : g.tile.n;
  const isa::TargetInfo& t = isa::target_info(target);
  return t.wgmma && !t.tcgen05 && g.epilogue != Epilogue::direct &&
         ir::d_staging(isa::value_bits(g.d), d_cols % 16 == 0, g.c.has_value() || g.residual.has_value(), d_cols).subtiles;
}

int64_t stage_bytes(const Gemm& g, isa::Arch target) {
  // Every shared-memory tile of one stage, as the lowering lays the stage out (src/lower/gemm.cpp,
  // gemm_scale.cpp, gemm_sparse.cpp; the planner places each at 1 KB or less, src/plan/kernel.cpp):
  const bool tc = isa::target_info(target).tcgen05;
  // Block-wise f32 factors are no block-scaled kind: the operands' own (wgmma's) kind.
  const std::optional<isa::Kind> kind =
      g.scale && !g.scale->blockwise() ? isa::gemm_scaled_kind(g.a.dtype, g.b.dtype, g.scale->dtype, isa::stored_scale_vec(g.scale->vec, g.sparse), g.scale->kind)
              : isa::unscaled_kind(g.a.dtype, g.b.dtype);
  // Elements as shared memory stores them: 4- and 6-bit types in 8-bit containers (f8f6f4), or two
  // e2m1 a byte (mxf4, mxf4nvf4).
  const auto bits = [&](isa::DType t) { return tc && kind ? isa::smem_bits(*kind, t) : std::max(8, isa::value_bits(t)); };
  const int64_t rows_a = g.tile.m / g.cta_group;
  // A: this CTA's rows (with A in tensor memory at M = 64, layout F's 128-row slabs), half of the K
  // block with sparse A.
  const bool slabs = tc && g.a_source == ASource::tmem && (g.cta_group == 1 || g.sparse);
  const int64_t a = (slabs ? (rows_a + 127) / 128 * 128 : rows_a) * (g.sparse ? g.tile.k / 2 : g.tile.k) * bits(g.a.dtype) / 8;
  // B: tcgen05, this CTA's half of N in a pair; wgmma, the tile's.
  const int64_t b = g.tile.n / (tc ? g.cta_group : 1) * g.tile.k * bits(g.b.dtype) / 8;
  int64_t bytes = kb(a) + kb(b);
  // Block scaling: the K block's factors in the 128x4 layout, 512 bytes per 128 rows (of A's rows of
  // this CTA; of all of B's N) and 4 factors of each.
  if (g.scale && !g.scale->blockwise() && g.scale->vec > 0) {
    const int64_t groups = g.tile.k / (4 * g.scale->vec);
    bytes += kb(512 * groups * (rows_a / 128)) + kb(512 * groups * (g.tile.n / 128));
  }
  // Sparse A: the K block's metadata atoms, 128 rows of 16 bytes each, per 128 of this CTA's rows.
  if (g.sparse && kind && isa::sparse_atom_k(*kind) > 0)
    bytes += kb(2048 * (g.tile.k / isa::sparse_atom_k(*kind)) * ((rows_a + 127) / 128));
  return bytes;
}

PartialsMiss two_partials_miss(const Gemm& g) {
  if (g.stages < 2) return PartialsMiss::stages;
  if (g.a_source != ASource::smem) return PartialsMiss::a_source;
  if (!g.registers || g.registers->consumer < kTwoPartialsRegisters) return PartialsMiss::registers;
  return PartialsMiss::fits;
}

const std::string* chosen_note(const Gemm& g, std::string_view member) {
  for (const auto& c : g.chosen)
    if (c.size() > member.size() && c.compare(0, member.size(), member) == 0 && c[member.size()] == ' ') return &c;
  return nullptr;
}

void choose_gemm_defaults(Gemm& g, isa::Arch target) {
  const auto s = [](int64_t v) { return std::to_string(v); };
  // Block scaling with two e2m1 per byte (.kind::mxf4, .kind::mxf4nvf4): 128 bytes are 256 elements.
  const std::optional<isa::Kind> scaled =
      g.scale && !g.scale->blockwise()
          ? isa::gemm_scaled_kind(g.a.dtype, g.b.dtype, g.scale->dtype, isa::stored_scale_vec(g.scale->vec, g.sparse), g.scale->kind)
          : std::nullopt;
  const bool blockwise = g.scale && g.scale->blockwise();
  const bool packed = scaled && isa::smem_bits(*scaled, g.a.dtype) == 4;
  const bool chose_tile = g.tile.m == 0;
  if (chose_tile) {
    const int bytes = std::max(container_bytes(g.a.dtype), container_bytes(g.b.dtype));
    g.tile.k = packed ? 256 : 128 / bytes;
    if (g.sparse) g.tile.k *= 2;  // sparse A keeps half of K: 128 bytes of its rows
    g.tile.m = g.cta_group == 2 ? 256 : 128;
    // Contiguous groups whose segments start on 64 rows: tiles of 64 rows, so that no tile takes
    // rows of two groups (GROUPS-ALIGN; 128 there would refuse the spec over a chosen value).
    const bool align_64 = g.groups && g.groups->layout == GroupsLayout::contiguous && g.cta_group == 1 && g.groups->align % 128 != 0 &&
                          g.groups->align % 64 == 0;
    if (align_64) g.tile.m = 64;
    // sm_90a: 256 down to half a wave of tiles (m = 256 on the H200: 128 tiles of 128 x 256 for 132
    // multiprocessors measured 3 % faster than 256 tiles of 128 x 128; m = 128, 64 tiles, 2 % slower).
    // A grouped GEMM's tiles are every group's (the groups are the grid's z).
    const int64_t wide = ceil_div(g.m, g.tile.m) * ceil_div(g.n, 256) * (g.groups ? g.groups->count : 1);
    const int64_t enough = isa::target_info(target).tcgen05 ? multiprocessors(target) : ceil_div(multiprocessors(target), 2);
    // Block-wise f32 factors: one B factor per 128 columns of a tile (SCALE-BLOCK-TILE).
    // D stored by TMA (written, or chosen on sm_90a) in boxes of 128 bytes of a row: tile.n 128 can
    // leave a run of D's columns part of a box (EPILOGUE-TMA: a gated activation's D is tile.n / 2
    // wide, a CTA pair's halves are stored apart), where 256 stays whole boxes.
    const int d_bits = isa::value_bits(g.d);
    const bool tma_store = g.epilogue_given ? g.epilogue != Epilogue::direct : isa::target_info(target).wgmma && d_bits >= 8;
    const int64_t run_128 = (g.glu ? 64 : 128) / (isa::target_info(target).tcgen05 && g.cta_group == 2 ? 2 : 1);
    const bool half_box = tma_store && d_bits >= 8 && run_128 * d_bits % 1024 != 0;
    g.tile.n = blockwise || (wide < enough && !half_box) ? 128 : 256;
    g.chosen.push_back("tile " + s(g.tile.m) + " x " + s(g.tile.n) + " x " + s(g.tile.k) + ": tile.k one 128-byte swizzle row of K, tile.m " +
                       (align_64 ? "64, which divides the groups' align " + s(g.groups->align) : g.cta_group == 2 ? "256 for the pair" : "128") +
                       (blockwise ? std::string(", tile.n 128: one of B's block-wise factors per tile and K block")
                        : half_box && wide < enough ? ", tile.n 256: at 128 a run of D's columns would be " + s(run_128) + ", part of a 128-byte TMA box"
                        : g.tile.n == 128 ? ", tile.n 128 because 256 would give " + s(wide) + " tiles for " + s(multiprocessors(target)) + " multiprocessors" +
                                              (enough < multiprocessors(target) ? " (fewer than half a wave)" : "")
                                        : ", tile.n 256"));
  }
  if (chose_tile && isa::target_info(target).wgmma) {
    if (!g.schedule_given && g.groups) {
      // The walk over (group, tile) measured 1.5-5 % faster than the data-parallel kernel (4 stages)
      // on four MoE shapes (H100, tools/bench-h200.py run --grouped): no CTA launched for an empty
      // group or padding, the epilogue overlapping the next tile's loads.
      g.schedule = Schedule::persistent;
      g.chosen.push_back("schedule persistent: one CTA per multiprocessor walking every group's tiles in order (measured 1.5-5 % faster than one CTA per tile of each group)");
    } else if (!g.schedule_given) {
      // One wave of 128 x 256 tiles (m = 256): a data-parallel CTA's staging tile lies over its
      // ring, leaving 4 stages to a persistent CTA's 3 (704 against 683 TF/s on the H200).
      const int64_t tiles = ceil_div(g.m, g.tile.m) * ceil_div(g.n, g.tile.n);
      const bool one_wave = g.tile.n == 256 && tiles <= multiprocessors(target);
      g.schedule = one_wave ? Schedule::data_parallel : Schedule::persistent;
      g.chosen.push_back(one_wave ? "schedule data_parallel: " + s(tiles) + " tiles fit one wave; the TMA staging tile then lies over the ring, leaving room for 4 stages"
                                  : std::string("schedule persistent: one CTA per multiprocessor walking the tiles (what ping-pong and the TMA epilogue's overlap need)"));
    }
    if (!g.epilogue_given && isa::value_bits(g.d) < 8) {
      // A 4-bit D (e2m1, two a byte) is stored directly: the TMA epilogue of such a D is not built
      // (D-FP8). An 8-bit D (e4m3, e5m2) takes the TMA store as 16- and 32-bit D do.
      g.chosen.push_back("epilogue direct: a " + s(isa::value_bits(g.d)) + "-bit D is stored from the registers (the TMA epilogue takes 8-, 16- and 32-bit D)");
    } else if (!g.epilogue_given) {
      g.epilogue = Epilogue::automatic;
      g.chosen.push_back("epilogue auto: TMA stores where D's rows are 16-byte multiples apart at run time (10-13 % faster on the H200), "
                         "the direct store otherwise");
    }
    const bool persistent = g.schedule == Schedule::persistent;
    // Block-wise f32 factors keep two accumulators (the K block's partial sums and the scaled sum):
    // a ping-pong consumer's whole 128-row tile would need 256 registers (SCALE-BLOCK-TILE).
    if (!g.consumers_given && persistent && g.tile.n == 128 && g.a_source == ASource::smem && !blockwise) {
      g.consumers = Consumers::pingpong;
      g.chosen.push_back("consumers pingpong: with few tiles each consumer warpgroup takes whole tiles, one storing while the other computes");
    }
    if (!g.registers && g.tile.m == 128 && g.a_source != ASource::registers) {
      g.registers = Gemm::Registers{40, 232};
      g.chosen.push_back("registers 40 / 232: a producer warpgroup lowered to 40, the consumers raised to 232 (128 accumulators each)");
    }
  }
  if (!g.cluster_given) {
    // The CTA's own cluster (its pair's with cta_group 2): on sm_90a a cluster multicasting the
    // shared operand measured 1-10 % slower on the H200 (docs/spec.md, "Clusters and multicast").
    g.chosen.push_back("cluster [" + s(g.cluster[0]) + ", 1, 1]: " +
                       (g.cta_group == 2 ? std::string("the CTA pair") : std::string("the CTA alone")) +
                       (isa::target_info(target).tcgen05 ? "" : "; a multicasting cluster ([1, 2, 1]) measured 1-10 % slower on the H200"));
  }
  if (g.stages == 0) {
    const bool tc = isa::target_info(target).tcgen05, pingpong = g.consumers == Consumers::pingpong;
    // A persistent kernel's TMA epilogue has staging memory of its own: tcgen05, a ring of at most
    // two stages of 128 bytes of D's row by the CTA's 128 rows; wgmma, D's tile, one per ping-pong
    // consumer. A data-parallel kernel's lies over the ring (or needs none).
    const bool staging = g.schedule == Schedule::persistent && g.epilogue != Epilogue::direct;
    // A gated activation's D tile is tile.n / 2 wide (docs/spec.md, "Epilogues").
    const int64_t d_cols = g.glu ? g.tile.n / 2 : g.tile.n;
    // wgmma with subtiles (d_subtiles): two buffers of one 128-byte box of each row.
    const int64_t staged_cols = d_subtiles(g, target) ? 2 * 64 : d_cols;
    const int64_t staged = !staging ? 0 : tc ? 2 * 128 * 128 : (pingpong ? 2 : 1) * kb(g.tile.m * staged_cols * std::max(1, isa::value_bits(g.d) / 8));
    // 2 KB once for the base alignment, the barriers and the tensor-memory address slot.
    const int64_t fit = (isa::target_info(target).smem_per_block_max - 2048 - staged) / std::max<int64_t>(1, stage_bytes(g, target));
    const int64_t most = pingpong ? 5 : 4;
    g.stages = std::clamp<int64_t>(fit, 1, most);
    g.chosen.push_back("stages " + s(g.stages) + ": as many as shared memory holds, at most " + s(most) +
                       (!staging ? std::string()
                        : tc     ? std::string(" beside the TMA epilogue's staging ring")
                        : d_subtiles(g, target) ? std::string(" beside the TMA epilogue's two staging subtiles") + (pingpong ? " per consumer" : "")
                                 : std::string(" beside the TMA epilogue's staging tile") + (pingpong ? "s" : "")));
  }
  if (blockwise && !g.scale->partials) {
    // Two sets where they fit: block kb's partial sums are promoted while block kb + 1's wgmmas
    // run, instead of the tensor pipe idling through the wait and the promotion.
    const PartialsMiss miss = two_partials_miss(g);
    g.scale->partials = miss == PartialsMiss::fits ? 2 : 1;
    g.chosen.push_back(miss == PartialsMiss::fits ? std::string("partials 2: block kb's partial sums are promoted while block kb + 1's wgmmas run")
                       : "partials 1: " + std::string(miss == PartialsMiss::stages     ? "one stage cannot hold block kb + 1 while block kb is promoted"
                                                  : miss == PartialsMiss::a_source ? "A in registers is reloaded every K block"
                                                                                   : "a second set of 64 partial sums needs a consumer register budget of " +
                                                                                         s(kTwoPartialsRegisters) + " (\"registers\")"));
  }
}

}  // namespace ptxgen::spec
