// Internal to the gemm lowering (src/lower/gemm.cpp): the tcgen05 epilogue's TMA stores, in their
// own file (gemm_tma.cpp). The template's epilogue reads D's cells in runs ("segments": a block of
// rows, a range of columns) and hands them here when "epilogue" is "tma".
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ptxgen/ir.hpp"
#include "ptxgen/spec.hpp"

namespace ptxgen::lower::detail {

// Columns [c0, c1) and lanes [l0, l1) of the tensor-memory view `cells` (D's cells in a rows
// layout, or a layout-F view: `shape` .16x256b), `rows` rows of D from row `row`, column `col` of
// the CTA's output tile.
struct Segment {
  std::string cells;
  int c0 = 0, c1 = 0, l0 = 0, l1 = 128;
  int rows = 128;
  ir::Affine row;
  int64_t col = 0;
  std::optional<isa::LdShape> shape;
};

// The fused epilogue's ops over the register set `regs` a store at `pos` writes (docs/spec.md,
// "Epilogues"), in the order of application: times alpha; + beta C (C read where the store writes,
// ir::Read of the input "c", one rounding: fma); + bias (a vector that broadcasts); the
// activation's composition (ptxgen/math_fn.hpp); for a gated one (`up` not empty: swiglu,
// geglu; `up` holds the same elements of the product's up half, which lies the run-time d = n / 2
// columns of the bias after `pos`, and gets its own bias) regs = act(regs) * up; + residual; the
// amax (ir::Amax, inside D); times D's scale (the input "d_scale", one element). Each result is
// `regs` itself, the reads and an activation's temporaries in sets named after it (the template
// names no other sets). None without any of them.
std::vector<ir::Op> fused_epilogue(const spec::Gemm& g, const std::string& regs, const ir::Position& pos,
                                   const std::string& up = "");
// The position of a gated epilogue's up half: `pos` plus d = n / 2 columns (of B's rows, the bias).
ir::Position up_position(ir::Position pos);

struct TmaEpilogue {
  isa::DType d = isa::DType::bf16;  // D's type
  int tile_n = 0;                   // the CTA's (pair's) output tile columns
  bool persistent = false;          // the staging ring gets memory of its own
  ir::TmemRing ring;                // the accumulator's ring over the tiles
  const spec::Gemm* fused = nullptr;  // the fused epilogue's members (fused_epilogue)
  // Gated: the segments' columns are the gate's, up's lie `up_offset` columns further in the
  // accumulator (tile.n / 2); 0: not gated.
  int up_offset = 0;
  // A persistent CTA's release of the accumulator buffer (acc_empty): placed right after the tile's
  // last tcgen05.ld, so that the MMAs of the tile after next may write the buffer while this tile's
  // last piece is still computed, staged and stored from registers. None: the caller releases it.
  std::optional<ir::Op> release;
};

// D through shared memory by TMA: a staging ring `d_stage` of 128-byte swizzled boxes (one 128-byte
// row of D's columns by the segments' rows each); per box a tcgen05.ld of its columns and a store
// op through stage j % stages. Two stages when a tile has an even number of boxes, so that box j
// only waits for box j - 2's reads (over the tiles too), else one. Appends the tile to k.tiles,
// the views to k.views, the ops to `epi`. A segment's last box may be partial (EPILOGUE-TMA
// refuses it: it would write into the next columns). `release` follows the tile's last tcgen05.ld.
void tma_epilogue(ir::Kernel& k, ir::Role& epi, const std::vector<Segment>& segments, const TmaEpilogue& e);

}  // namespace ptxgen::lower::detail
