// The ops that move data into the kernel: global loads into shared-memory tiles (plain 16-byte
// loads or TMA boxes) and tcgen05.cp from tiles into tensor memory (§9.7.16.9). Each op's operands
// are declared and of their kind; a load copies bytes inside the tensor, in 16-byte chunks (plain
// loads and byte maps) or boxes a tensor map can address; a copy reads a K-major range of whole
// 128-bit pieces of its rows into a view of its format and width that a shape writes. The numbers
// the planner decides (the map's geometry, the copy's format and shape) come from narrow calls
// (plan.hpp); this verifier words them. An op's first problem is its only one, as it stops there.
#include <algorithm>
#include <array>
#include <cstdint>

#include "verify.hpp"

#include "ptxgen/spec.hpp"

namespace ptxgen::rules::verify {

namespace {

std::string s(int64_t v) { return std::to_string(v); }
std::string dt(isa::DType t) { return std::string(isa::name(t)); }
std::string range(int64_t a, int64_t b) { return "[" + s(a) + ", " + s(b) + ")"; }

// LOAD-TMA: "via": "tma" (or a typed map) addresses a row in signed 32-bit coordinates and needs a
// box height that starts every box 128-byte aligned in shared memory.
bool tma(Ctx& c, const ir::Load& o, const ir::Global& g, const plan::SmemPlacement& t, int gbits, int rows) {
  const plan::TmaGeometry geo = plan::tma_geometry(g, t.layout.swizzle, rows);
  if (geo.dim_inner > INT32_MAX) {
    const int64_t row_bytes = (g.ld ? g.ld : g.cols) * gbits / 8;
    c.problem("LOAD-TMA", o.via_ptr,
              "rows of \"" + g.name + "\" are " + s(row_bytes) + " bytes: a TMA load addresses them in " +
                  (geo.unit == 1 ? "bytes" : "4-byte words") + " with signed 32-bit coordinates, at most 2^31 - 1",
              {"describe the part of the tensor the kernel reads (narrower rows)", "or load with \"via\": \"ld\""});
    return false;
  }
  if (!geo.box_rows) {
    c.problem("LOAD-TMA", o.via_ptr,
              "the tile \"" + t.name + "\" has " + s(rows) + " rows of " + s(geo.box_bytes) +
                  "-byte boxes: no box height of at most " + s(isa::kTmaBoxMax) +
                  " rows divides them and starts every box " + s(isa::kTmaSmemAlign) + "-byte aligned "
                  "(a multiple of " + s(geo.step) + " rows)",
              {"give the tile a row count that is a multiple of " + s(geo.step), "or load with \"via\": \"ld\""});
    return false;
  }
  return true;
}

bool load(Ctx& c, const ir::Op& op) {
  const ir::Load& o = *op.as<ir::Load>();
  const ir::Global* g = c.global(o.src, "load source");
  const plan::SmemPlacement* t = c.tile(o.dst, "load destination");
  if (!g || !t) return false;
  const int gbits = g->bits ? g->bits : isa::storage_bits(g->dtype, g->format);
  // A typed map's TMA unpacks dense 4- and 6-bit elements into 8-bit containers (16U4/16U6 types).
  const bool unpacks = g->typed_map && gbits < 8 && t->bits == 8 && isa::value_bits(g->dtype) == gbits;
  if (g->dtype != t->dtype || (gbits != t->bits && !unpacks)) {
    c.problem("LOAD-DTYPE", o.dst.ptr,
              "load copies bytes: the global tensor \"" + g->name + "\" holds " + dt(g->dtype) + " (" + s(gbits) +
                  " bits each), the tile \"" + t->name + "\" " + dt(t->dtype) + " (" + s(t->bits) + " bits each)",
              {"give both the same dtype (and, for 4-bit types, the same \"format\")"});
    return false;
  }
  // A K-major tile reads rows of the global as its rows; an MN-major tile reads rows of the global
  // (K of them) as its columns. Only a lowering places rows, and only in K-major tiles (the planner
  // asserts it).
  const bool kmaj = t->layout.major == isa::Major::k;
  const bool placed_rows = o.tile_row0 >= 0;
  if (placed_rows && !kmaj) return false;
  const int64_t grows = placed_rows ? o.load_rows : (kmaj ? t->layout.mn : t->layout.k);
  const int64_t gcols = kmaj ? t->layout.k : t->layout.mn;
  // Static extents: the load lies inside the tensor (a pair's CTA 1 at + per_cta; both below 2^31,
  // so no sum overflows). Run-time extents: TMA zero-fills what lies outside.
  const bool runtime = !g->rows_param.empty() || !g->cols_param.empty();
  const int ctas = c.k.cta_group;
  for (int r = 0; r < ctas && !runtime; ++r) {
    const int64_t r0 = o.pos.at[0].base + r * o.pos.at[0].rank, c0 = o.pos.at[1].base + r * o.pos.at[1].rank;
    if (r0 + grows > g->rows || c0 + gcols > g->cols) {
      c.problem("LOAD-BOUNDS", r ? o.pos.per_cta_ptr : o.pos.at_ptr,
                "the tile \"" + t->name + "\" (" + (kmaj ? "K" : "MN") + "-major) reads global rows " + range(r0, r0 + grows) +
                    " and columns " + range(c0, c0 + gcols) + " of \"" + g->name + "\"" + (ctas > 1 ? " in CTA " + s(r) : "") +
                    ", which is " + s(g->rows) + " x " + s(g->cols),
                {r ? "shrink \"per_cta\" so CTA 1's tile lies inside the global tensor"
                   : "move \"at\" or shrink the tile so it lies inside the global tensor"});
      return false;
    }
  }
  // Plain loads have no bounds: a tensor of run-time extents is read through a tensor map, which
  // zero-fills past them.
  if (runtime && !o.tma && !g->typed_map) {
    c.problem("LOAD-TMA", o.via_ptr.empty() ? op.ptr : o.via_ptr,
              "\"" + g->name + "\" has extents the kernel takes at run time; a load by every thread's 16-byte loads would "
              "read past them, a TMA load zero-fills there",
              {"add \"via\": \"tma\""});
    return false;
  }
  // Plain loads and byte maps move 16-byte chunks (a typed map counts elements), the steps of a
  // position too: each tile or iteration further on starts a whole number of chunks into a row.
  if (!g->typed_map)
    for (int64_t step : {o.pos.at[1].m_tile, o.pos.at[1].n_tile, o.pos.at[1].k_block})
      if (step * gbits % 128 != 0) {
        c.problem("LOAD-ALIGN", o.pos.at_ptr + "/1",
                  "loads move 16-byte chunks: the column steps " + s(step) + " elements (" + s(step * gbits) +
                      " bits) per tile or iteration, not a multiple of 128 bits",
                  {"step by a multiple of " + s(128 / std::min(gbits, 128)) + " elements"});
        return false;
      }
  if (!g->typed_map) {
    if (ctas > 1 && o.pos.at[1].rank * gbits % 128 != 0) {
      c.problem("LOAD-ALIGN", o.pos.per_cta_ptr + "/1",
                "loads move 16-byte chunks: CTA 1's tile starts " + s(o.pos.at[1].rank * gbits) +
                    " bits further into a row than CTA 0's; that must be a multiple of 128",
                {"make per_cta's column a multiple of " + s(128 / gbits) + " elements"});
      return false;
    }
    if (g->cols * gbits % 128 != 0 || o.pos.at[1].base * gbits % 128 != 0) {
      c.problem("LOAD-ALIGN", g->cols * gbits % 128 != 0 ? g->ptr + "/shape/1" : o.pos.at_ptr + "/1",
                "loads move 16-byte chunks: rows of \"" + g->name + "\" are " + s(g->cols * gbits) +
                    " bits apart and the tile starts " + s(o.pos.at[1].base * gbits) + " bits into a row; both must be multiples of 128",
                {"pad the global rows to a multiple of 16 bytes", "start the tile at a column that is a multiple of " +
                                                                      s(128 / gbits) + " elements"});
      return false;
    }
  }
  if ((o.tma || g->typed_map) && !tma(c, o, *g, *t, gbits, static_cast<int>(grows))) return false;
  return true;
}

// CP-SHAPE: why no tcgen05.cp shape writes the rows into the destination's lanes.
std::string no_shape(plan::CpShapes::Miss m, const ir::Copy& o, const ir::ResolvedView& v, int rows) {
  using M = plan::CpShapes;
  switch (m) {
    case M::four_rows: return "4 rows go with .4x256b, which writes 256-bit rows to lanes 0, 32, 64 and 96 of a 128-lane view";
    case M::rows_differ: return "the copy moves " + s(rows) + " rows; \"" + o.dst.name + "\" holds " + s(v.rows) + " rows";
    case M::layout_b:
      return "no shape writes layout B's two lane halves of a row; layout B is where a pair's dense M = 128 tcgen05.mma "
             "leaves D (§9.7.16.10.5.2): read it with tmem_load, or copy into a rows view";
    case M::layout_f:
      // Copying 128 rows into a rows view that a layout-F view casts reaches the same cells (source
      // row 32 (r / 16) + r % 16 + alignment is row r).
      return "no shape writes layout F's 16-lane pieces of each quarter; copy 128 rows into the rows view the layout-F "
             "view is cast from (row r of the layout-F view is row 32 (r / 16) + r % 16 + its alignment there)";
    case M::fits:  // asked only without a shape
    case M::lane_set: break;
  }
  return "a destination of " + s(v.lanes) + " lanes starting at lane " + s(v.lane) +
         " is none of the lane sets a shape writes (64 rows: lanes 0-63 or 64-127 with .warpx2::02_13, 32-95 with "
         ".warpx2::01_23; 32 rows: one 32-lane quarter with .warpx4)";
}

bool copy(Ctx& c, const ir::Copy& o) {
  const plan::SmemPlacement* t = c.tile(o.src, "copy source");
  const ir::ResolvedView* v = c.view(o.dst, "copy destination");
  if (!t || !v) return false;
  const isa::TileLayout& L = t->layout;
  if (L.major != isa::Major::k) {
    c.problem("CP-SOURCE", o.src.ptr,
              "tcgen05.cp reads K-major core matrices (8 rows x 16 bytes, §9.7.16.9.2 with §9.7.16.3.3); \"" + t->name +
                  "\" is MN-major",
              {"declare the tile with \"major\": \"k\" (a row of the tile becomes a lane of tensor memory)"});
    return false;
  }
  std::array<int64_t, 2> rows{0, L.mn}, cols{0, L.k};
  if (o.rows) rows = *o.rows;
  if (o.cols) cols = *o.cols;
  const bool bad_rows = rows[0] >= rows[1] || rows[1] > L.mn;
  if (bad_rows || cols[0] >= cols[1] || cols[1] > L.k) {
    c.problem("CP-SOURCE", bad_rows ? o.rows_ptr : o.cols_ptr,
              "rows " + range(rows[0], rows[1]) + " and columns " + range(cols[0], cols[1]) + " are not inside the " +
                  s(L.mn) + " x " + s(L.k) + " tile \"" + t->name + "\"");
    return false;
  }
  const int R = static_cast<int>(rows[1] - rows[0]);
  const int64_t W = (cols[1] - cols[0]) * t->bits;
  if (cols[0] * t->bits % 128 != 0 || W % 128 != 0) {
    c.problem("CP-WIDTH", o.cols ? o.cols_ptr : o.src.ptr,
              "tcgen05.cp moves 128 or 256 bits of each row; the copy takes " + s(W) + " bits of each row starting " +
                  s(cols[0] * t->bits) + " bits in",
              {"copy a multiple of " + s(128 / t->bits) + " elements starting at such a multiple"});
    return false;
  }
  const plan::CpFormat fmt = plan::cp_format(t->dtype, t->bits, *v);
  if (!fmt.fits) {
    const std::string want =
        fmt.decompress != isa::CpDecompress::none
            ? dt(t->dtype) + " with \"packing\": 4 (16 padded elements decompress into 16 8-bit containers, " +
                  std::string(isa::qualifier(fmt.decompress)) + ")"
            : dt(t->dtype) + " with \"packing\": " + s(32 / t->bits) + " (the bits land as they are)";
    c.problem("CP-FORMAT", o.dst.ptr,
              "tcgen05.cp of " + dt(t->dtype) + " (" + s(t->bits) + " bits each in shared memory) cannot fill a view of " +
                  dt(v->dtype) + " packed " + s(v->packing) + " per column",
              {"cast the destination to " + want});
    return false;
  }
  if (v->row_elements() != cols[1] - cols[0]) {
    c.problem("CP-WIDTH", o.dst.ptr,
              "the copy brings " + s(cols[1] - cols[0]) + " elements per row; each row of \"" + o.dst.name + "\" holds " +
                  s(v->row_elements()) + " (" + s(v->block_columns()) + " columns x " + s(v->packing) + ")",
              {"slice the destination to " + s(W / 32) + " columns per row block, or copy fewer columns"});
    return false;
  }
  const plan::CpShapes ch = plan::cp_shapes(*v, R, W);
  if (ch.shapes.empty()) {
    c.problem("CP-SHAPE", o.dst.ptr, "no tcgen05.cp shape fits: " + no_shape(ch.miss, o, *v, R),
              {"tcgen05.cp writes 128 rows (.128x256b/.128x128b into 128 lanes), 64 rows (.64x128b.warpx2: each row to "
               "two lanes), 32 rows (.32x128b.warpx4: each row to four lanes) or 4 rows (.4x256b: lanes 0, 32, 64, 96)"});
    return false;
  }
  if (ch.shapes[0] == isa::CpShape::s4x256b && rows[0] % 4 != 0) {
    c.problem("CP-SOURCE", o.rows_ptr, "a 4-row copy starts at a multiple of 4 rows of the source");
    return false;
  }
  if (ch.shapes[0] != isa::CpShape::s4x256b && rows[0] % 8 != 0)
    c.problem("CP-SOURCE", o.rows_ptr,
              "the source descriptor starts at an 8-row core matrix (§9.7.16.3.3); rows start at " + s(rows[0]));
  return true;
}

}  // namespace

void loads(Ctx& c) {
  for (const ir::Op* o : all_ops(c.k))
    if (o->kind() == ir::OpKind::load && !load(c, *o)) c.refused.insert(o);
}

void copies(Ctx& c) {
  for (const ir::Op* o : all_ops(c.k))
    if (const ir::Copy* cp = o->as<ir::Copy>(); cp && !copy(c, *cp)) {
      c.refused.insert(o);
      // The ops reading the view it was to fill are not judged again (verify_mma.cpp, verify_order.cpp).
      if (c.views.count(cp->dst.name)) c.refused_copies.insert(cp->dst.name);
    }
}

}  // namespace ptxgen::rules::verify
