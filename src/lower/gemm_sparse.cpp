// Sparse A in the gemm template: tcgen05.mma.sp without block scaling, 2:4 sparsity for .kind::f16,
// .kind::f8f6f4 and .kind::i8, 1:2 for .kind::tf32 (§9.7.16.10.8.1-2). What it adds to the
// pipelined kernel of gemm.cpp (A itself is the compressed M x K/2 tensor, its tile half of tile.k
// wide):
//
//   tensor    META, a kernel input in CUTLASS's sm_100 layout for the kind (docs/spec.md, "Sparse
//             A"): 4 bits per chunk of K (the kept positions), in atoms of 128 rows by 16 bytes, so
//             128 elements of K an atom (2:4) or 64 (tf32: chunks of 2); atom (i, j) of rows 128 i..
//             and the j-th atom of K at byte (j ceil(m / 128) + i) x 2048. The 8-bit kinds' atom is
//             row-major (16 bytes a row); the f16 and tf32 atoms are permuted the way the MMA reads
//             them (docs/architecture.md item 17). Seen by TMA as 3-D: planes of one atom of K,
//             each m padded to 128 rows of 16 bytes
//   memory    a ring of tiles of the stage's atoms beside A's and B's, and per stage a tensor-memory
//             buffer: the M group's 128 rows at lanes 0-127 (layouts D and A), the atoms of a K
//             block side by side, 4 columns each. At M = 64 (layout F) a slab of 128 lanes holds
//             two M groups (or one group's rows twice, when its N is split over both alignments):
//             TMA places row 16 q + i of the group at alignment h in line 32 q + h + i of the
//             slab's atom, 16-row boxes, so the atom's copy puts each row in D's lane of it. An
//             instruction reads two columns (8-bit kinds, K = 64, selector 0) or one (f16 K = 32,
//             tf32 K = 16: the even column its address names plus the sparsity selector,
//             §9.7.16.10.8.4), so an atom serves 2 or 4 K steps
//   order     as the block-scale factors (gemm_scale.cpp): each atom copied by tcgen05.cp.128x128b
//             (lane r <- the atom's bytes 16 r .. 16 r + 15) before the K block's MMAs, a buffer per
//             stage, no wait added.
#include <algorithm>
#include <string>

#include "gemm_scale.hpp"

namespace ptxgen::lower::detail {

namespace {
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
// The sparse MMA's kind and its atom's elements of K.
isa::Kind kind(const spec::Gemm& g) { return mma_kind(g); }
int atom_k(const spec::Gemm& g) { return isa::sparse_atom_k(kind(g)); }
// 128-lane blocks of metadata per CTA (M groups of 128 rows, or slabs of two M = 64 groups) and
// metadata atoms per K block (SPARSE-TILE: whole atoms).
int stripes(const spec::Gemm& g) { return static_cast<int>((g.tile.m / g.cta_group + 127) / 128); }
int atoms(const spec::Gemm& g) { return static_cast<int>(g.tile.k / atom_k(g)); }
std::string s(int64_t v) { return std::to_string(v); }
}  // namespace

std::string sparse_view_f(int slab, int alignment) { return "meta_slab" + s(slab) + "_f" + s(alignment); }

uint32_t sparse_columns(const spec::Gemm& g) { return static_cast<uint32_t>(g.stages * 4 * atoms(g) * stripes(g)); }

StagedOps lower_sparse(const spec::Gemm& g, ir::Kernel& k, uint32_t first_column, const std::vector<SparseRowsF>& layout_f) {
  StagedOps out;
  const int s = stripes(g), a = atoms(g);
  StagedInput in;
  in.global.name = "META";
  in.global.dtype = isa::DType::b8;
  in.global.rows = ceil_div(g.m, 128) * 128;
  in.global.planes = ceil_div(g.k, atom_k(g));
  in.global.rows_param = "m";
  in.global.planes_param = "k";
  in.global.dims = {"m", "k"};
  in.global.metadata_of = "A";
  in.global.sparse_kind = kind(g);
  in.view = "meta";
  in.ptr = "/gemm/sparse";
  in.block_rows = 128;
  in.blocks = s * a;
  in.column = first_column;
  in.stages = static_cast<int>(g.stages);
  if (s > 1 && layout_f.empty()) in.rows = 128 * s;  // M group i's metadata in the i-th block of columns
  std::vector<StagedLoad> loads;
  std::vector<int> place;
  if (!layout_f.empty()) {
    // Layout F: each piece's 64 rows in four boxes of 16 into lines 32 q + alignment of its slab's
    // atoms; slab j's atoms are blocks j * a .. j * a + a - 1, copied whole.
    for (const SparseRowsF& p : layout_f)
      for (int j = 0; j < a; ++j)
        for (int q = 0; q < 4; ++q) {
          StagedLoad ld;
          ld.row.m_tile = g.tile.m;
          ld.row.rank = g.cta_group == 2 ? g.tile.m / 2 : 0;  // layout C: each CTA's own rows
          ld.row.base = p.row0 + 16 * q;
          ld.plane.k_block = a;
          ld.plane.base = j;
          ld.line0 = 128 * (p.slab * a + j) + 32 * q + p.alignment;
          ld.lines = 16;
          loads.push_back(ld);
        }
    for (int b = 0; b < s * a; ++b) place.push_back(b);
    add_staged(k, in, loads, place, g.cta_group == 2, out);
    // The view each piece's MMAs read: its slab's atoms at its alignment.
    for (const SparseRowsF& p : layout_f) {
      const std::string name = sparse_view_f(p.slab, p.alignment);
      if (std::any_of(k.views.begin(), k.views.end(), [&](const ir::TmemView& v) { return v.name == name; })) continue;
      ir::TmemView cells;
      cells.kind = ir::TmemView::Kind::slice;
      cells.name = name + "_cells";
      cells.ptr = in.ptr;
      cells.of = {"meta_cells", in.ptr};
      cells.cols = std::array<int64_t, 2>{4 * a * p.slab, 4 * a * (p.slab + 1)};
      k.views.push_back(cells);
      ir::TmemView v;
      v.kind = ir::TmemView::Kind::cast;
      v.name = name;
      v.ptr = in.ptr;
      v.of = {cells.name, in.ptr};
      v.dtype = isa::DType::b8;
      v.packing = 4;
      v.layout = p.alignment ? ir::TmemLayout::layout_f_16 : ir::TmemLayout::layout_f_0;
      k.views.push_back(v);
    }
    out.metadata = {"meta", "/gemm/sparse"};
    return out;
  }
  for (int i = 0; i < s; ++i)
    for (int j = 0; j < a; ++j) {
      // Rows of this CTA's M group i (a pair's CTA r the half from r * tile.m / 2), atom j of the K block.
      StagedLoad ld;
      ld.row.m_tile = g.tile.m;
      ld.row.rank = g.cta_group == 2 ? g.tile.m / 2 : 0;
      ld.row.base = 128 * i;
      ld.plane.k_block = a;
      ld.plane.base = j;
      ld.block0 = i * a + j;
      loads.push_back(ld);
      place.push_back(i * a + j);
    }
  add_staged(k, in, loads, place, g.cta_group == 2, out);
  out.metadata = {"meta", "/gemm/sparse"};
  return out;
}

}  // namespace ptxgen::lower::detail
