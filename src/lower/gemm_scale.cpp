// Block scaling in the gemm template: D = (A * SFA) . (B * SFB) with the block-scaled tcgen05.mma
// kinds (§9.7.16.10.7). What it adds to the pipelined kernel of gemm.cpp:
//
//   tensors   SFA and SFB, kernel inputs in the 128x4 layout cuBLAS, CUTLASS and torch use
//             (docs/spec.md, "Block scaling"): 512-byte blocks of 128 rows (of A; columns of B)
//             by 4 factors, K-block-fastest, row r of a block at byte 16 (r % 32) + 4 (r / 32) + the
//             factor's column % 4. Seen by TMA as 3-D: planes of 128 rows, each lines of 16 bytes
//             (32 lines per block), so a CTA's factors of one K block are one box per 128 rows
//   memory    a ring of shared-memory tiles beside A's and B's (the producer's TMA loads, on the
//             stage's full barrier), and per stage a tensor-memory buffer of the K block's factors
//             (a ring of views, ir::TmemView::stages)
//   order     the MMA issuer copies each 512-byte block with tcgen05.cp.32x128b.warpx4 (row r to
//             lane r % 32 of every lane quarter, §9.7.16.10.7: "duplicated to all 32 lane
//             partitions"; column r / 32) after waiting for the stage, then issues the MMAs: a
//             tcgen05.cp -> tcgen05.mma pair executes in order (§9.7.16.6.2). The buffer of stage s is
//             overwritten only by the copy of K block kb + stages, which the issuer issues after the
//             stage's full barrier completed, that is after the producer saw its empty barrier
//             complete, which the commit after K block kb's MMAs arrives on once they (and every
//             earlier tcgen05.mma/cp of the thread) completed: no MMA still reads what a copy writes.
//
// Tensor memory per K block (as the planner's step 3 reads it, src/plan/mma.cpp): 4-factor column
// g of stripe t (128 rows) at columns 4 (g * stripes + t) of the stage's buffer, A's buffers after
// the accumulator, B's after A's.
#include "gemm_scale.hpp"

#include <string>

namespace ptxgen::lower::detail {

namespace {

const char* kPtr = "/gemm/scale";
std::string s(int64_t v) { return std::to_string(v); }
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

ir::TmemView view(ir::TmemView::Kind kind, const std::string& name, const std::string& of, const char* ptr = kPtr) {
  ir::TmemView v;
  v.kind = kind;
  v.name = name;
  v.ptr = ptr;
  v.of = {of, ptr};
  return v;
}

}  // namespace

isa::Kind mma_kind(const spec::Gemm& g) {
  return g.scale ? *isa::gemm_scaled_kind(g.a.dtype, g.b.dtype, g.scale->dtype, isa::stored_scale_vec(g.scale->vec, g.sparse), g.scale->kind)
                 : *isa::unscaled_kind(g.a.dtype, g.b.dtype);
}

ScaleLayout scale_layout(const spec::Gemm& g, isa::Kind kind) {
  ScaleLayout l;
  l.kind = kind;
  l.dtype = g.scale->dtype;
  l.vec = g.scale->vec;
  l.groups = static_cast<int>(g.tile.k / (4 * l.vec));
  l.stripes_a = static_cast<int>(g.tile.m / g.cta_group / 128);
  l.stripes_b = static_cast<int>(g.tile.n / 128);
  l.stages = static_cast<int>(g.stages);
  return l;
}

StagedOps lower_scales(const spec::Gemm& g, const ScaleLayout& sl, ir::Kernel& k, uint32_t first_column) {
  StagedOps out;
  const int64_t tm = g.tile.m, tn = g.tile.n;
  // Lines of 16 bytes per 128-row plane at the spec's k: 32 per 4 factors of a row.
  const int64_t lines = ceil_div(ceil_div(g.k, sl.vec), 4) * 32;
  struct Side {
    const char* global;  // "SFA"
    const char* view;    // "sfa": the tensor-memory buffer (its shared-memory tile "sfa_s")
    const char* scales;  // "A"
    const char* dim;     // "m"
    int64_t extent;      // m or n
    int stripes;
    uint32_t column;
  };
  const uint32_t ca = sl.columns_a();
  const Side sides[] = {{"SFA", "sfa", "A", "m", g.m, sl.stripes_a, first_column},
                        {"SFB", "sfb", "B", "n", g.n, sl.stripes_b, first_column + static_cast<uint32_t>(sl.stages) * ca}};
  for (const Side& x : sides) {
    StagedInput in;
    in.global.name = x.global;
    in.global.dtype = sl.dtype;
    in.global.rows = lines;
    in.global.planes = ceil_div(x.extent, 128);
    in.global.rows_param = "k";
    in.global.planes_param = x.dim;
    in.global.dims = {x.dim, "k"};
    in.global.scale_vec = sl.vec;
    in.global.scales = x.scales;
    in.view = x.view;
    in.ptr = kPtr;
    in.block_rows = 32;
    in.blocks = sl.groups * x.stripes;
    in.column = x.column;
    in.stages = sl.stages;
    in.layout = ir::TmemLayout::warpx4;
    // One box per stripe: its `groups` blocks, stripe after stripe in the tile; block g of stripe t
    // goes to buffer block g * stripes + t (the order the MMAs read, src/plan/mma.cpp).
    std::vector<StagedLoad> loads;
    std::vector<int> place;
    for (int t0 = 0; t0 < x.stripes; ++t0) {
      StagedLoad ld;
      ld.row.k_block = 32 * sl.groups;  // this K block's first line in the plane
      // The plane: A's rows of this CTA (a pair's CTA r the half from r * tm / 2), all of B's N.
      if (x.scales[0] == 'A') {
        ld.plane.m_tile = tm / 128;
        ld.plane.rank = g.cta_group == 2 ? x.stripes : 0;
      } else {
        ld.plane.n_tile = tn / 128;
      }
      ld.plane.base = t0;
      ld.block0 = sl.groups * t0;
      ld.blocks = sl.groups;
      loads.push_back(ld);
      for (int gi = 0; gi < sl.groups; ++gi) place.push_back(gi * x.stripes + t0);
    }
    add_staged(k, in, loads, place, g.cta_group == 2, out);
  }
  out.scale_a = {"sfa", kPtr};
  out.scale_b = {"sfb", kPtr};
  return out;
}

void add_staged(ir::Kernel& k, const StagedInput& in, const std::vector<StagedLoad>& loads, const std::vector<int>& place,
                bool pair, StagedOps& out) {
  const char* ptr = in.ptr.c_str();
  ir::Global t = in.global;
  t.ptr = in.ptr;
  t.bits = 8;
  t.cols = 16;
  t.ld = 16;
  k.globals.push_back(t);

  const std::string tname = in.view + "_s";
  ir::Tile tile;
  tile.name = tname;
  tile.ptr = in.ptr;
  tile.dtype = t.dtype;
  tile.rows = in.block_rows * in.blocks;
  tile.cols = 16;
  tile.major = isa::Major::k;
  tile.swizzle = isa::Swizzle::none;
  tile.stages = in.stages;
  tile.shape_ptr = tile.swizzle_ptr = tile.major_ptr = in.ptr;
  k.tiles.push_back(tile);

  // The ring of tensor-memory buffers (4 columns a block), the MMAs' view of it, a view per block.
  const std::string cells = in.view + "_cells";
  const int width = 4 * in.blocks;
  ir::TmemView ring = view(ir::TmemView::Kind::slice, cells, "tmem", ptr);
  ring.cols = std::array<int64_t, 2>{in.column, in.column + width};
  ring.stages = in.stages;
  ring.stage_columns = width;
  k.views.push_back(ring);
  ir::TmemView all = view(ir::TmemView::Kind::cast, in.view, cells, ptr);
  all.dtype = t.dtype;
  all.packing = 4;
  all.layout = in.layout;
  all.rows = in.rows;
  k.views.push_back(all);

  for (const StagedLoad& x : loads) {
    ir::Load ld;
    ld.src = {t.name, ptr};
    ld.dst = {tname, ptr};
    ld.tma = true;
    ld.map_param = "tmap_" + in.view;
    ld.barrier = {"full", ptr};
    ld.to_leader = pair;
    ld.pos.at[0] = x.row;
    ld.plane = x.plane;
    ld.tile_row0 = x.lines ? x.line0 : in.block_rows * x.block0;
    ld.load_rows = x.lines ? x.lines : in.block_rows * x.blocks;
    ir::Op o;
    o.ptr = in.ptr;
    o.body = std::move(ld);
    out.loads.push_back(std::move(o));
  }
  for (size_t b = 0; b < place.size(); ++b) {
    const int j = place[b];
    const std::string name = in.view + "_" + s(j);
    ir::TmemView c4 = view(ir::TmemView::Kind::slice, name + "_cells", cells, ptr);
    c4.cols = std::array<int64_t, 2>{4 * j, 4 * j + 4};
    k.views.push_back(c4);
    ir::TmemView v4 = view(ir::TmemView::Kind::cast, name, name + "_cells", ptr);
    v4.dtype = t.dtype;
    v4.packing = 4;
    v4.layout = in.layout;
    k.views.push_back(v4);
    ir::Copy cp;
    cp.src = {tname, ptr};
    cp.dst = {name, ptr};
    const int64_t row0 = in.block_rows * static_cast<int64_t>(b);
    cp.rows = std::array<int64_t, 2>{row0, row0 + in.block_rows};
    ir::Op o;
    o.ptr = in.ptr;
    o.body = std::move(cp);
    out.copies.push_back(std::move(o));
  }
}

}  // namespace ptxgen::lower::detail
