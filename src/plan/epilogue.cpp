// The TMA store of a tcgen05 epilogue box: registers a tcgen05.ld filled with one box of D (its
// rows x one 128-byte swizzle row of columns) go through one stage of the staging ring and leave
// with cp.async.bulk.tensor (§9.7.9.25.5.1), which writes only what lies inside D (§5.5).
#include <stdexcept>

#include "internal.hpp"

namespace ptxgen::plan::detail {

std::optional<StoreStep> plan_box_store(Ctx& c, const ir::Store& o, const ir::Global& g, StoreStep st) {
  const SmemPlacement* t = c.find_tile(o.via);
  if (!t) return std::nullopt;  // the kernel verifier reports the tile
  // The stage is a K-major tile of 128-byte rows with the 128-byte swizzle (Table 41: 16-byte chunk
  // c of row r at chunk c ^ (r % 8)), which is what a box of the map reads (§5.5.7).
  const int es = isa::value_bits(g.dtype) / 8, row = isa::bytes(isa::Swizzle::b128);
  const RegDef& d = st.src;
  // Registers of a partial box (EPILOGUE-TMA) are not stored: the box would write past them.
  // A 4-bit D (e2m1, two a byte) is stored directly (D-FP8).
  const bool whole = o.piece_col == 0 && o.piece_last;
  if (es < 1 || (whole && d.row_elements * es != row)) return std::nullopt;
  // A piece: whole 16-byte chunks of the row (each thread's st.shared of a chunk stays inside it),
  // the last one ending where the row does.
  const int64_t at = int64_t{o.piece_col} * es, bytes = d.row_elements * es;
  if (!whole && (o.piece_col < 0 || at % 16 || bytes % 16 || at + bytes > row || (o.piece_last && at + bytes != row)))
    throw std::logic_error("a piece of a TMA store box that is not whole 16-byte chunks of its row");
  if (t->layout.swizzle != isa::Swizzle::b128 || t->layout.major != isa::Major::k || t->layout.k * es != row ||
      d.rows > t->layout.mn || o.via_stage < 0 || o.via_stage >= t->stages || o.pending < 0 || o.pending >= t->stages)
    throw std::logic_error("a TMA store of tcgen05.ld registers needs a stage of a 128-byte swizzled staging ring");
  st.tma = true;
  st.stage = t->name;
  st.stage_offset = t->offset + static_cast<uint32_t>(o.via_stage) * t->stage_bytes;
  st.box_cols = row / es;
  st.box_rows = d.rows;
  st.boxes = o.piece_last ? 1 : 0;  // the last piece stores the box
  st.piece_col = o.piece_col;
  st.piece_last = o.piece_last;
  st.box_stride = 0;
  st.pending = o.pending;
  st.overlay = !t->overlay.empty();
  st.reuse = c.k.grid.persistent;
  st.map = store_map(o, g, st.box_cols, st.box_rows);
  return st;
}

}  // namespace ptxgen::plan::detail
