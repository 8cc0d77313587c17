// Block scaling in the gemm template (internal to src/lower): what "scale" adds to the tcgen05
// kernel of src/lower/gemm.cpp. See gemm_scale.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ptxgen/ir.hpp"
#include "ptxgen/spec.hpp"

namespace ptxgen::lower::detail {

// The factors of one K block, per CTA: `groups` 4-factor columns of the 128x4 layout (tile.k /
// (4 vec)), for `stripes_a` blocks of 128 rows of A (this CTA's rows) and `stripes_b` blocks of 128
// columns of B (all of the tile's N, in each CTA of a pair). One 512-byte block of the layout is
// 4 tensor-memory columns, so a stage takes 4 * groups * stripes columns of A's and of B's.
// The tcgen05 kind of the template's MMAs: the block-scaled kind of "scale" (its .blockN counting A's
// stored elements with sparse A), else the types' own. The rules have checked that there is one.
isa::Kind mma_kind(const spec::Gemm& g);

struct ScaleLayout {
  isa::Kind kind = isa::Kind::mxf8f6f4;
  isa::DType dtype = isa::DType::ue8m0;
  int vec = 32;
  int groups = 1;
  int stripes_a = 1, stripes_b = 1;
  int stages = 1;
  uint32_t columns_a() const { return static_cast<uint32_t>(4 * groups * stripes_a); }
  uint32_t columns_b() const { return static_cast<uint32_t>(4 * groups * stripes_b); }
  // Tensor-memory columns of every stage's buffers.
  uint32_t columns() const { return static_cast<uint32_t>(stages) * (columns_a() + columns_b()); }
};
ScaleLayout scale_layout(const spec::Gemm& g, isa::Kind kind);

// The loads of one stage (the producer's, after its expect_tx on full), the copies of one K block
// (the MMA issuer's, before its MMAs) and the views the MMAs read the factors (or the metadata) through.
struct StagedOps {
  std::vector<ir::Op> loads, copies;
  ir::Ref scale_a, scale_b, metadata;
};

// Adds the factor tensors SFA and SFB (kernel inputs, after D), their ring of shared-memory tiles
// and the tensor-memory rings from column `first_column` of the allocation "tmem" to `k`.
StagedOps lower_scales(const spec::Gemm& g, const ScaleLayout& s, ir::Kernel& k, uint32_t first_column);

// ---- An input staged per K block (the factors; the sparsity metadata, gemm_sparse.cpp) ----------
// A 3-D global of 16-byte lines (ir::Global::planes), a ring of shared-memory tiles "VIEW_s" of
// 16-byte rows that the producer fills with TMA boxes on the stage's full barrier, and a ring of
// tensor-memory buffers "VIEW_cells" the MMA issuer copies each block of `block_rows` tile rows
// into (4 columns each, through a view "VIEW_j" of buffer block j), read by the MMAs through "VIEW".
struct StagedInput {
  ir::Global global;                     // its name, type, lines, planes and meaning; the rest is set here
  std::string view, ptr;                 // "sfa", "/gemm/scale"
  int block_rows = 32;                   // rows of one block: 32 (a warpx4 copy) or 128
  int blocks = 1;                        // blocks of one stage
  uint32_t column = 0;                   // the ring's first column in "tmem"
  int stages = 1;
  std::optional<ir::TmemLayout> layout;  // of each block's view and of "VIEW" (none: rows)
  std::optional<int> rows;               // "VIEW"'s rows (several M groups side by side)
};
// One TMA box: tile blocks [block0, block0 + blocks) from this line (row) and plane of the global.
struct StagedLoad {
  ir::Affine row, plane;
  int block0 = 0, blocks = 1;
  // Rows placed inside the stage's tile (layout F's 16-row pieces): its first line and line count;
  // 0 lines: whole blocks from block0.
  int line0 = 0, lines = 0;
};
// Adds the global, the tile, the ring and its views; appends the loads (completing on CTA 0's
// barrier in a pair) and the copies, tile block b into buffer block place[b].
void add_staged(ir::Kernel& k, const StagedInput& in, const std::vector<StagedLoad>& loads, const std::vector<int>& place,
                bool pair, StagedOps& out);

// Sparse A (src/lower/gemm_sparse.cpp): the metadata tensor META, its tiles and buffers from column
// `first_column`, and the tensor-memory columns they take.
// Sparse A at M = 64 (data-path layout F): an M group's metadata rows sit where its D rows do, lane
// 32 q + alignment + i for row 16 q + i (§9.7.16.10.8.5, docs/architecture.md item 12), in the
// 128-lane slab the group shares with the group at the other alignment.
struct SparseRowsF {
  int row0 = 0;       // the M group's first row in the CTA's tile
  int alignment = 0;  // D's lane alignment: 0 or 16
  int slab = 0;       // the slab of two M groups
};
std::string sparse_view_f(int slab, int alignment);  // the metadata view an MMA of that piece reads
uint32_t sparse_columns(const spec::Gemm& g);
// Without `layout_f`, 128 rows per M group (layouts D and A); with it, the pieces of layout F.
StagedOps lower_sparse(const spec::Gemm& g, ir::Kernel& k, uint32_t first_column, const std::vector<SparseRowsF>& layout_f = {});

}  // namespace ptxgen::lower::detail
