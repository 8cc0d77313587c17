// ptxgen/ir/views.hpp — the IR's geometry: tensor-memory views resolved through their chains
// (src/ir/views.cpp), the regions of lanes x columns they occupy, a tile's canonical layout and a
// global's bytes. What the verifiers (src/rules/verify*.cpp), the pipeliner (src/lower/pipeline.cpp)
// and the planner read of the buffers; geometry, not diagnostics, and no choices.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ptxgen/ir/kernel.hpp"
#include "ptxgen/isa.hpp"

namespace ptxgen::ir {

// A tensor-memory view resolved through its chain of slices, casts and aliases.
struct ResolvedView {
  std::string name;                    // "" for an inline view
  std::string alloc;                   // the allocation it lies in
  uint32_t lane = 0, lanes = 128;      // physical lanes [lane, lane + lanes)
  uint32_t column = 0, columns = 0;    // physical 32-bit columns, relative to the allocation base
  isa::DType dtype = isa::DType::f32;  // element type
  int packing = 1;                     // elements per 32-bit column
  TmemLayout layout = TmemLayout::rows;
  int rows = 128;                      // logical rows (several blocks of rows_per_block(), side by side)
  int stages = 1;                      // a ring (spec::TmemView::stages): copy s `stage_columns` columns on
  uint32_t stage_columns = 0;
  std::string of;                      // the named view it derives from ("" for an allocation)
  std::vector<std::string> chain;      // its own links since that view (an allocation: itself)

  int rows_per_block() const;          // lanes (rows layout), 64 (warpx2, layout F, layout B), 32 (warpx4)
  int blocks() const { return rows / rows_per_block(); }
  uint32_t block_columns() const { return columns / static_cast<uint32_t>(blocks()); }
  // Layout B holds a row in two lane halves: twice the elements of its columns.
  int64_t row_elements() const { return int64_t{block_columns()} * packing * (layout == TmemLayout::layout_b ? 2 : 1); }
  // Elements of a row before its second lane half (layout B: lanes 64-127); 0 for other layouts.
  int64_t half_elements() const { return layout == TmemLayout::layout_b ? int64_t{block_columns()} * packing : 0; }
  // Allocation lanes holding logical row `r` (every replica); its block is r / rows_per_block().
  std::vector<uint32_t> lanes_of_row(int r) const;
  // Logical row (within its block) that allocation lane `l` holds, or -1.
  int row_of_lane(uint32_t l) const;
  std::string describe() const;        // "t lanes 0-127 columns 0-127, f32 x1, rows, 128 rows"
};


// Why a view has no cells. Geometry, not a diagnostic: the view verifier
// (src/rules/verify_views.cpp) reports each fault under its rule with the field's pointer.
struct ViewFault {
  enum Kind { unknown_parent, cycle, packing, lanes_outside, columns_outside, lane_slice_replicated, layout_partial, rows_split };
  Kind kind = unknown_parent;
  size_t view = 0;                    // index into the kernel's views
  std::vector<size_t> ring;           // cycle: the views on it, in chain order
  std::optional<ResolvedView> cells;  // what the link starts from: the parent (rows_split: after the cast's layout)
};
struct ViewResolution {
  std::map<std::string, ResolvedView> views;  // named views that resolve
  std::vector<ViewFault> faults;              // one per view that stops its chain (its dependants have none)
};
ViewResolution resolve_views(const std::vector<TmemView>& views);

// A rectangle of one allocation's lanes x columns; a layout-F view's region keeps only the
// 16-lane piece of each 32-lane quarter at its alignment (so the two alignments share columns).
struct Region {
  std::string alloc;
  uint32_t lane0 = 0, lane1 = 0, col0 = 0, col1 = 0;
  int piece = -1;  // -1: every lane of [lane0, lane1); 0 or 16: lanes l with l % 32 in [piece, piece + 16)
  bool has_lane(uint32_t l) const {
    return l >= lane0 && l < lane1 && (piece < 0 || (l % 32 >= static_cast<uint32_t>(piece) && l % 32 < static_cast<uint32_t>(piece) + 16));
  }
};
bool overlap(const Region& a, const Region& b);
Region region_of(const ResolvedView& v);  // every lane the view's rows occupy (replicas included)
std::string describe(const Region& r);

// A tile's layout before isa::make_tile_layout fills it (major, swizzle, storage bits, shape).
isa::TileLayout tile_layout(const Tile& t);
// A global tensor's bytes (0 with run-time extents), at most kGlobalBytesMax: every byte offset
// the kernel and the planner compute (row x row bytes, a pair's per_cta offset) then stays far
// inside 64-bit arithmetic.
uint64_t global_bytes(const Global& g);
inline constexpr uint64_t kGlobalBytesMax = uint64_t{1} << 48;

}  // namespace ptxgen::ir
