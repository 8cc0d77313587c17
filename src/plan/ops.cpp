// Program planner: the ops that move data. Global loads (plain 16-byte loads into the canonical
// layouts), tcgen05.cp (shape chosen from the destination's rows and lanes, §9.7.16.9.2),
// tcgen05.ld / tcgen05.st (warps, shape, .num, packing, §9.7.16.8) and global stores. Their
// verifiers (src/rules/verify_ops.cpp, verify_regs.cpp) word every reason such a step cannot be
// planned; the planner only skips it. The numbers both need (a TMA map's geometry, tcgen05.cp's
// formats and shapes, the tcgen05.ld/st instructions and a tcgen05.st's sources, with the reason
// where there are none) are narrow calls (plan.hpp).
#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include "internal.hpp"
#include "ptxgen/ir/staging.hpp"

// ---- Narrow calls (the verifiers' too) ---------------------------------------------------------
namespace ptxgen::plan {

TmaGeometry tma_geometry(const ir::Global& g, isa::Swizzle swizzle, int rows) {
  TmaGeometry out;
  const int gbits = g.bits ? g.bits : isa::storage_bits(g.dtype, g.format);
  if (g.typed_map) {
    out.unit = gbits >= 8 ? gbits / 8 : 0;
    out.dim_inner = g.cols;
  } else {
    out.unit = swizzle == isa::Swizzle::b128_base32b ? 4 : 1;
    out.dim_inner = (g.ld ? g.ld : g.cols) * gbits / 8 / out.unit;
  }
  out.box_bytes = isa::bytes(swizzle);
  out.step = isa::kTmaSmemAlign / out.box_bytes;
  out.box_rows = detail::box_extent(rows, out.step);
  return out;
}

CpFormat cp_format(isa::DType dtype, int bits, const ResolvedView& v) {
  CpFormat f;
  const int vb = isa::value_bits(dtype);
  if ((vb == 4 || vb == 6) && bits == 8) {  // 16 padded elements into 16 8-bit containers
    f.decompress = vb == 4 ? isa::CpDecompress::b4x16_p64 : isa::CpDecompress::b6x16_p32;
    f.fits = v.dtype == dtype && v.packing == 4;
    return f;
  }
  const bool same =
      v.dtype == dtype || (bits == 8 && (v.dtype == isa::DType::b8 || dtype == isa::DType::b8) && isa::value_bits(v.dtype) == 8);
  f.fits = same && v.packing * bits == 32;
  return f;
}

CpShapes cp_shapes(const ResolvedView& v, int rows, int64_t bits_per_row) {
  using isa::CpShape;
  using ir::TmemLayout;
  CpShapes out;
  if (rows == 4) {
    if (v.layout == TmemLayout::rows && v.lanes == 128 && bits_per_row % 256 == 0) out.shapes = {CpShape::s4x256b};
    else out.miss = CpShapes::four_rows;
  } else if (rows != v.rows) {
    out.miss = CpShapes::rows_differ;
  } else if (v.layout == TmemLayout::rows && v.lanes == 128) {
    out.shapes = {CpShape::s128x256b, CpShape::s128x128b};
  } else if (v.layout == TmemLayout::warpx2_02_13) {
    out.shapes = {CpShape::s64x128b_02_13};
  } else if (v.layout == TmemLayout::warpx2_01_23) {
    out.shapes = {CpShape::s64x128b_01_23};
  } else if (v.layout == TmemLayout::warpx4) {
    out.shapes = {CpShape::s32x128b_warpx4};
  } else if (v.layout == TmemLayout::layout_b) {
    out.miss = CpShapes::layout_b;
  } else if (ir::layout_f_alignment(v.layout) >= 0) {
    // §9.7.16.9.2: every shape writes whole 32-lane quarters (or lanes 0, 32, 64, 96); none
    // writes 16-lane pieces.
    out.miss = CpShapes::layout_f;
  } else {
    // A lane slice of 64 or 32 rows: the multicast shape whose lanes hold row r at lane0 + r (the
    // other lanes it writes are collateral; CP-MULTICAST-OVERLAP checks nothing else lives there).
    for (CpShape cand : {CpShape::s64x128b_02_13, CpShape::s64x128b_01_23, CpShape::s32x128b_warpx4}) {
      if (isa::info(cand).rows != rows) continue;
      std::set<uint32_t> written;
      bool in_order = true;
      for (int r = 0; r < rows; ++r) {
        const auto ls = isa::cp_lanes(cand, r);
        written.insert(ls.begin(), ls.end());
        in_order &= std::find(ls.begin(), ls.end(), static_cast<int>(v.lane) + r) != ls.end();
      }
      if (!in_order) continue;
      out.shapes = {cand};
      for (uint32_t l = 0; l < 128;) {  // collateral lanes as ranges
        if (!written.count(l) || (l >= v.lane && l < v.lane + v.lanes)) {
          ++l;
          continue;
        }
        uint32_t e = l;
        while (e < 128 && written.count(e) && !(e >= v.lane && e < v.lane + v.lanes)) ++e;
        out.collateral.emplace_back(l, e);
        l = e;
      }
      break;
    }
    if (out.shapes.empty()) out.miss = CpShapes::lane_set;
  }
  return out;
}

}  // namespace ptxgen::plan

namespace ptxgen::plan::detail {

uint32_t round_up(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }

isa::SmemDesc operand_desc(const SmemPlacement& t, isa::DescFormat f, int mn0, int k0) {
  isa::SmemDesc d;
  d.format = f;
  d.start_address = t.offset + isa::tile_offset(t.layout, mn0, k0);
  d.lbo = t.layout.lbo;
  d.sbo = t.layout.sbo;
  d.swizzle = t.layout.swizzle;
  return d;
}

int box_extent(int extent, int step) {
  for (int d = std::min(extent, isa::kTmaBoxMax); d > 0; --d)
    if (extent % d == 0 && d % step == 0) return d;
  return 0;
}

}  // namespace ptxgen::plan::detail

namespace ptxgen::plan {

int multicast_split(int rows, int columns, int box_bytes, int parts) {
  if (parts <= 1) return 3;
  if (columns % parts == 0) return 1;
  if (rows % parts == 0 && detail::box_extent(rows / parts, isa::kTmaSmemAlign / box_bytes) > 0) return 2;
  return 0;
}

}  // namespace ptxgen::plan

namespace ptxgen::plan::detail {

Ctx::Ctx(const ir::Kernel& kernel) : k(kernel), target(isa::target_info(kernel.target)) {
  for (const auto& g : k.globals) globals[g.name] = &g;
  for (const auto& t : k.tiles) tiles[t.name] = &t;
  for (const auto& v : k.views)
    if (!v.name.empty()) view_names.insert(v.name);
  for (const auto& b : k.barriers) barrier_stages[b.name] = b.stages;
}

std::string Ctx::kind_of(const std::string& n) const {
  if (globals.count(n)) return "a global tensor";
  if (tiles.count(n)) return "a shared-memory tile";
  if (view_names.count(n)) return "a tensor-memory view";
  return "";
}

const ir::Global* Ctx::find_global(const ir::Ref& r) const {
  if (kind_of(r.name) != "a global tensor" || oversized.count(r.name)) return nullptr;
  return globals.at(r.name);
}

const SmemPlacement* Ctx::find_tile(const ir::Ref& r) const {
  if (kind_of(r.name) != "a shared-memory tile") return nullptr;
  auto it = placed.find(r.name);
  return it == placed.end() ? nullptr : &it->second;
}

const ResolvedView* Ctx::find_view(const ir::Ref& r) const {
  if (kind_of(r.name) != "a tensor-memory view") return nullptr;
  auto it = views.find(r.name);
  return it == views.end() ? nullptr : &it->second;
}

Cell frag_cell(const LdInstr& f, int t, int reg, int elems_per_reg) {
  const isa::LdCell c = isa::ld_cell(f.shape, t, reg);
  // With .pack::16b each register holds the low halves of two adjacent columns (§9.7.16.8.2).
  uint32_t col = static_cast<uint32_t>(f.pack ? 2 * c.column : c.column) + (c.second_half ? static_cast<uint32_t>(f.split) : 0u);
  Cell out;
  out.row = f.row0 + c.lane;
  out.elem = f.elem0 + int64_t{col} * (f.pack ? 1 : elems_per_reg);
  out.lane = (f.taddr >> 16) + static_cast<uint32_t>(c.lane);
  out.column = (f.taddr & 0xFFFFu) + col;
  return out;
}

// ---- load -----------------------------------------------------------------------------------
namespace {

// The CUtensorMapDataType of a typed map: the tensor's own element type; 4- and 6-bit types are
// unpacked by TMA into the 8-bit containers of their 16-element groups (or kept two per byte).
std::string cu_data_type(isa::DType t, int smem_bits) {
  switch (t) {
    case isa::DType::f16: return "CU_TENSOR_MAP_DATA_TYPE_FLOAT16";
    case isa::DType::bf16: return "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16";
    case isa::DType::tf32: return "CU_TENSOR_MAP_DATA_TYPE_TFLOAT32";
    case isa::DType::f32: return "CU_TENSOR_MAP_DATA_TYPE_FLOAT32";
    case isa::DType::s32: return "CU_TENSOR_MAP_DATA_TYPE_INT32";  // a TMA store's D
    case isa::DType::e2m1: return smem_bits == 8 ? "CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B" : "CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B";
    case isa::DType::e2m3:
    case isa::DType::e3m2: return "CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B";
    default: return "CU_TENSOR_MAP_DATA_TYPE_UINT8";  // e4m3, e5m2, s8, u8, scale factors, metadata: bytes
  }
}

// "via": "tma": the arrangement of `l` as cp.async.bulk.tensor boxes. A box is one swizzle width
// (16 bytes without swizzle) of the row by up to 256 rows (the box-dimension limit), the same
// boxes the plain loads fill; each starts 128-byte aligned in shared memory (TMA's requirement), so
// the rows of a box are a multiple of 128 / width. A byte map sees the global tensor as bytes (or
// 4-byte words for the 32-byte-atom swizzle): coordinates are signed 32-bit and dimensions at most
// 2^32, so a row may hold at most 2^31 - 1 of them. A typed map counts elements of the tensor's type.
// False where no map reaches the rows or no box height fits (LOAD-TMA, src/rules/verify_ops.cpp).
bool plan_tma_load(const ir::Load& o, const ir::Global& g, int gbits, int tbits, LoadStep& l) {
  const TmaGeometry geo = tma_geometry(g, l.swizzle, l.box_rows);
  if (geo.dim_inner > INT32_MAX || !geo.box_rows) return false;
  TensorMap& m = l.map;
  m.global = l.global;
  m.tensor = g.name;
  m.swizzle = l.swizzle;
  m.stride_bytes = l.global_row_bytes;
  m.unit = geo.unit;
  m.dim_inner = geo.dim_inner;
  // Map elements per box byte, as a fraction: elements = bytes * num / den.
  int64_t num = 1, den = 1;
  if (g.typed_map) {
    m.data_type = cu_data_type(g.dtype, tbits);
    num = 8;
    den = tbits;  // a box row of box_bytes bytes in shared memory holds box_bytes * 8 / tbits elements
  } else {
    m.data_type = m.unit == 4 ? "CU_TENSOR_MAP_DATA_TYPE_UINT32" : "CU_TENSOR_MAP_DATA_TYPE_UINT8";
    den = m.unit;
  }
  m.dim_outer = g.rows;
  m.box_inner = static_cast<int>(l.box_bytes * num / den);
  m.box_outer = geo.box_rows;
  l.tma = true;
  // A multicast load's boxes fall into o.multicast equal parts (multicast_split), one per cluster rank.
  const int columns = l.row_bytes / l.box_bytes;
  const int parts = std::max(1, o.multicast);
  const int split = multicast_split(l.box_rows, columns, l.box_bytes, parts);
  if (!split) return false;
  if (split == 2) m.box_outer = tma_geometry(g, l.swizzle, l.box_rows / parts).box_rows;
  l.multicast = o.multicast;
  l.multicast_along_m = o.multicast_along_m;
  // The constant part of the column origin, in map elements.
  const int64_t col0 = g.typed_map ? l.col0.base : l.col0_bytes / m.unit;
  for (int q = 0; q < columns; ++q)
    for (int r0 = 0; r0 < l.box_rows; r0 += m.box_outer)
      l.boxes.push_back({l.tile_offset + static_cast<uint32_t>(int64_t{q} * l.column_bytes + int64_t{r0} * l.box_bytes),
                         col0 + int64_t{q} * l.box_bytes * num / den, l.row0.base + r0,
                         split == 1 ? q * parts / columns : split == 2 ? r0 * parts / l.box_rows : 0});
  // Run-time parts: in a typed map the column Affine counts elements; in a byte map bytes (the
  // rank part of a pair's per_cta, LOAD-ALIGN: a multiple of 16 bytes).
  l.cta_c1 = o.pos.at[0].rank;
  l.cta_c0 = g.typed_map ? o.pos.at[1].rank : o.pos.at[1].rank * gbits / 8 / m.unit;
  l.c1_rt = o.pos.at[0];
  l.c0_rt = o.pos.at[1];
  l.c1_rt.base = l.c0_rt.base = l.c1_rt.rank = l.c0_rt.rank = 0;
  if (!g.typed_map) {
    // A byte map counts bytes (or 4-byte words): the run-time column steps, in elements, become
    // map units (LOAD-ALIGN keeps each a whole number of 16-byte chunks).
    const int64_t per = int64_t{8} * m.unit;
    for (int64_t* c : {&l.c0_rt.m_tile, &l.c0_rt.n_tile, &l.c0_rt.k_block}) {
      if (*c * gbits % per != 0) throw std::logic_error("a run-time column step of a byte map that is no whole unit");
      *c = *c * gbits / per;
    }
  }
  if (g.planes > 0) {
    // A 3-D global: boxes one plane deep, the plane the load's own coordinate.
    m.rank = 3;
    m.dim_planes = g.planes;
    m.plane_stride_bytes = g.rows * l.global_row_bytes;
    l.c2 = o.plane.base;
    l.cta_c2 = o.plane.rank;
    l.c2_rt = o.plane;
    l.c2_rt.base = l.c2_rt.rank = 0;
  }
  return true;
}

}  // namespace

// The load verifier (src/rules/verify_ops.cpp) reports each load refused here: LOAD-DTYPE,
// LOAD-BOUNDS, LOAD-ALIGN, LOAD-TMA, and its operands' names.
std::optional<LoadStep> plan_load(Ctx& c, const ir::Load& o) {
  const ir::Global* g = c.find_global(o.src);
  const SmemPlacement* t = c.find_tile(o.dst);
  if (!g || !t) return std::nullopt;
  const int gbits = g->bits ? g->bits : isa::storage_bits(g->dtype, g->format);
  // A typed map's TMA unpacks dense 4- and 6-bit elements into 8-bit containers (16U4/16U6 types).
  const bool unpacks = g->typed_map && gbits < 8 && t->bits == 8 && isa::value_bits(g->dtype) == gbits;
  if (g->dtype != t->dtype || (gbits != t->bits && !unpacks)) return std::nullopt;  // load copies bytes
  LoadStep l;
  l.global = g->name;
  l.tile = t->name;
  l.row0 = o.pos.at[0];
  l.col0 = o.pos.at[1];
  const bool kmaj = t->layout.major == isa::Major::k;
  // A K-major tile reads rows of the global as its rows; an MN-major tile reads rows of the
  // global (K of them) as its columns (docs/spec.md). A row-placed load writes some of the rows.
  const bool placed_rows = o.tile_row0 >= 0;
  if (placed_rows && !kmaj) throw std::logic_error("a row-placed load into an MN-major tile");
  const int64_t grows = placed_rows ? o.load_rows : (kmaj ? t->layout.mn : t->layout.k);
  const int64_t gcols = kmaj ? t->layout.k : t->layout.mn;
  // Static extents: the load must lie inside the tensor (a pair's CTA 1 at + per_cta; both below
  // 2^31, so no sum overflows). Run-time extents: TMA zero-fills what lies outside.
  const bool runtime = !g->rows_param.empty() || !g->cols_param.empty();
  const int ctas = c.k.cta_group;
  for (int r = 0; r < ctas && !runtime; ++r) {
    const int64_t r0 = l.row0.base + r * o.pos.at[0].rank, c0 = l.col0.base + r * o.pos.at[1].rank;
    if (r0 + grows > g->rows || c0 + gcols > g->cols) return std::nullopt;
  }
  const int64_t ld = g->ld ? g->ld : g->cols;
  l.global_row_bytes = ld * gbits / 8;
  l.col0_bytes = l.col0.base * gbits / 8;
  if (!g->typed_map) {
    // Plain loads and byte maps move 16-byte chunks: CTA 1's column offset, the rows and the tile's
    // first column are multiples of 128 bits.
    if (ctas > 1 && o.pos.at[1].rank * gbits % 128 != 0) return std::nullopt;
    l.cta_bytes = o.pos.at[0].rank * l.global_row_bytes + o.pos.at[1].rank * gbits / 8;
    if (g->cols * gbits % 128 != 0 || l.col0.base * gbits % 128 != 0) return std::nullopt;
  }
  l.box_bytes = isa::bytes(t->layout.swizzle);
  l.tile_row0 = placed_rows ? o.tile_row0 : 0;
  l.column_bytes = (kmaj ? t->layout.mn : t->layout.k) * l.box_bytes;
  l.tile_offset = t->offset + static_cast<uint32_t>(l.tile_row0 * l.box_bytes);
  l.box_rows = static_cast<int>(grows);
  l.row_bytes = static_cast<int>(gcols * t->bits / 8);
  l.swizzle = t->layout.swizzle;
  l.chunks = static_cast<uint32_t>(int64_t{l.box_rows} * l.row_bytes / 16);
  l.to_leader = o.to_leader;
  if (g->planes > 0 && !(o.tma || g->typed_map)) throw std::logic_error("a 3-D global loaded without TMA");
  if ((o.tma || g->typed_map) && !plan_tma_load(o, *g, gbits, t->bits, l)) return std::nullopt;
  return l;
}

// ---- copy (tcgen05.cp) ----------------------------------------------------------------------
// The copy verifier (src/rules/verify_ops.cpp) reports each copy refused here: CP-SOURCE,
// CP-WIDTH, CP-FORMAT, CP-SHAPE, and its operands' names.
std::optional<std::vector<CpInstr>> plan_copy(Ctx& c, const ir::Copy& o, std::vector<Region>& collateral) {
  const SmemPlacement* t = c.find_tile(o.src);
  const ResolvedView* v = c.find_view(o.dst);
  if (!t || !v) return std::nullopt;
  const isa::TileLayout& L = t->layout;
  if (L.major != isa::Major::k) return std::nullopt;  // tcgen05.cp reads K-major core matrices
  std::array<int64_t, 2> rows{0, L.mn}, cols{0, L.k};
  if (o.rows) rows = *o.rows;
  if (o.cols) cols = *o.cols;
  if (rows[0] >= rows[1] || rows[1] > L.mn || cols[0] >= cols[1] || cols[1] > L.k) return std::nullopt;
  const int R = static_cast<int>(rows[1] - rows[0]);
  const int64_t W = (cols[1] - cols[0]) * t->bits;
  if (cols[0] * t->bits % 128 != 0 || W % 128 != 0) return std::nullopt;  // 128 or 256 bits of each row
  const CpFormat fmt = cp_format(t->dtype, t->bits, *v);
  if (!fmt.fits || v->row_elements() != cols[1] - cols[0]) return std::nullopt;
  const CpShapes ch = cp_shapes(*v, R, W);
  if (ch.shapes.empty()) return std::nullopt;
  // The source descriptor starts at a core matrix (8 rows, §9.7.16.3.3); .4x256b at 4 rows.
  if (rows[0] % (ch.shapes[0] == isa::CpShape::s4x256b ? 4 : 8) != 0) return std::nullopt;
  collateral.clear();
  for (const auto& [l0, l1] : ch.collateral) collateral.push_back({v->alloc, l0, l1, v->column, v->column + v->columns});
  // Instructions: each row block of the destination, each chunk of 256 (or 128) bits of a row.
  std::vector<CpInstr> out;
  const int rpb = R == 4 ? 4 : v->rows_per_block();
  const int blocks = R == 4 ? 1 : v->blocks();
  const uint32_t pitch = L.swizzle == isa::Swizzle::none ? 16u : static_cast<uint32_t>(isa::bytes(L.swizzle));
  for (int b = 0; b < blocks; ++b) {
    int64_t bit = 0;
    while (bit < W) {
      const bool wide = (W - bit >= 256) && isa::info(ch.shapes[0]).bits == 256;
      const isa::CpShape shape = wide || ch.shapes.size() == 1 ? ch.shapes[0] : ch.shapes[1];
      const int bits = isa::info(shape).bits;
      CpInstr ci;
      ci.shape = shape;
      ci.decompress = fmt.decompress;
      ci.tile = t->name;
      ci.src_row = static_cast<int>(rows[0]) + b * rpb;
      ci.src_col = static_cast<int>(cols[0] + bit / t->bits);
      const int r8 = ci.src_row % 8;
      ci.src.format = isa::DescFormat::sm100;
      ci.src.start_address = t->offset + isa::tile_offset(L, ci.src_row - r8, ci.src_col) + static_cast<uint32_t>(r8) * pitch;
      ci.src.lbo = L.lbo;
      ci.src.sbo = L.sbo;
      ci.src.swizzle = L.swizzle;
      ci.alloc = v->alloc;
      ci.ring = {v->stages, v->stage_columns};
      const uint32_t col = v->column + static_cast<uint32_t>(b) * v->block_columns() + static_cast<uint32_t>(bit / 32);
      ci.taddr = isa::encode(isa::TmemAddr{shape == isa::CpShape::s4x256b ? v->lane : 0u, col});
      ci.dst_row = b * rpb;
      ci.dst_elem = bit / 32 * v->packing;
      out.push_back(ci);
      bit += bits;
    }
  }
  return out;
}

}  // namespace ptxgen::plan::detail

// ---- tcgen05.ld / tcgen05.st and stores: narrow calls (the lanes verifier's too) -----------------
namespace ptxgen::plan {

TmemLanes tmem_lanes(const ir::TmemAccess& o, const std::string& set, const ResolvedView& v, int threads) {
  TmemLanes out;
  auto fail = [&](TmemLanes::Miss m) {
    out.miss = m;
    return out;
  };
  const isa::LdShape shape = o.shape.value_or(isa::LdShape::s32x32b);
  const isa::LdShapeInfo& si = isa::info(shape);
  if (o.pack && (isa::value_bits(v.dtype) != 16 || v.packing != 1)) return fail(TmemLanes::pack);
  // Lanes each quarter holds (§9.7.16.8.1: warp w reaches lanes 32*(w%4) .. +31).
  const bool replicated = v.layout != ir::TmemLayout::rows;
  const int f_align = ir::layout_f_alignment(v.layout);
  std::array<std::pair<uint32_t, uint32_t>, 4> q{};
  for (uint32_t i = 0; i < 4; ++i) {
    // Layout F (§9.7.16.10.5.6): the quarter's 16-lane piece at the alignment, for the 16-lane shapes.
    if (f_align >= 0) q[i] = {32 * i + static_cast<uint32_t>(f_align), 32 * i + static_cast<uint32_t>(f_align) + 16};
    else if (replicated) q[i] = {32 * i, 32 * i + 32};
    else q[i] = {std::max(v.lane, 32 * i), std::min(v.lane + v.lanes, 32 * i + 32)};
  }
  // What a quarter's lanes hold: rows, or for layout B (§9.7.16.10.5.2) rows of one lane half
  // (row r's first half at lane r, its second at lane 64 + r): counted as 64 * half + row.
  const bool layout_b = v.layout == ir::TmemLayout::layout_b;
  auto rows_of = [&](uint32_t qi) {
    std::set<int> r;
    for (uint32_t l = q[qi].first; l < q[qi].second; ++l) r.insert(layout_b ? static_cast<int>(l) : v.row_of_lane(l));
    return r;
  };
  const int nwarps = threads / 32;
  std::vector<int> warps = o.warps;
  if (warps.empty()) {
    std::set<int> seen;
    for (int i = 0; i < 4; ++i) {
      if (q[static_cast<size_t>(i)].first >= q[static_cast<size_t>(i)].second) continue;
      const auto r = rows_of(static_cast<uint32_t>(i));
      if (std::includes(seen.begin(), seen.end(), r.begin(), r.end())) continue;
      seen.insert(r.begin(), r.end());
      warps.push_back(i);
    }
  }
  std::set<int> covered;
  for (size_t i = 0; i < warps.size(); ++i) {
    const int w = warps[i];
    const uint32_t qi = static_cast<uint32_t>(w % 4);
    out.warp = w;
    out.index = i;
    if (w >= nwarps) return fail(threads % 32 != 0 ? TmemLanes::threads : TmemLanes::warp_absent);
    if (q[qi].first >= q[qi].second) return fail(TmemLanes::warp_quarter);
    for (int r : rows_of(qi)) {
      out.row = r;
      if (!covered.insert(r).second) return fail(TmemLanes::row_twice);
    }
  }
  if (static_cast<int>(covered.size()) != v.rows_per_block() * (layout_b ? 2 : 1)) {
    for (uint32_t i = 0; i < 4; ++i) {
      if (q[i].first >= q[i].second) continue;
      bool listed = false;
      for (int w : warps) listed |= static_cast<uint32_t>(w % 4) == i;
      if (!listed && (!replicated || f_align >= 0)) out.unreached.push_back(q[i]);
    }
    return fail(TmemLanes::rows_unreached);
  }
  // Shape: 32 lanes (a whole quarter) or 16 (half of one) per instruction.
  for (int w : warps) {
    const auto [a, e] = q[static_cast<size_t>(w % 4)];
    const uint32_t q0 = 32 * static_cast<uint32_t>(w % 4);
    const bool ok = si.lanes == 32 ? (a == q0 && e == q0 + 32) : ((a - q0) % 16 == 0 && (e - a) % 16 == 0);
    if (!ok) {
      out.warp = w;
      out.lane0 = a;
      out.lane1 = e;
      return fail(TmemLanes::shape_lanes);
    }
  }
  const int bc = static_cast<int>(v.block_columns());
  const bool x2 = shape == isa::LdShape::s16x32bx2;
  out.columns = bc;
  if (x2 && bc % 2 != 0) return fail(TmemLanes::shape_halves);
  const int span = x2 ? bc / 2 : bc;                                // columns each half covers
  const int per_num = si.columns_per_num * (o.pack ? 2 : 1);        // columns per unit of .num
  out.span = span;
  int num = 0;
  if (o.num) {
    if (isa::ld_regs(shape, *o.num) == 0) return fail(TmemLanes::num_illegal);
    out.columns = *o.num * per_num;
    if (span % (*o.num * per_num) != 0) return fail(TmemLanes::num_columns);
    num = *o.num;
  } else {
    for (int n = 128; n >= 1; n /= 2)
      if (isa::ld_regs(shape, n) && span % (n * per_num) == 0) {
        num = n;
        break;
      }
    out.columns = per_num;
    if (!num) return fail(TmemLanes::no_num);
  }
  RegDef& d = out.def;
  d.name = set;
  d.dtype = v.dtype;
  d.view_packing = v.packing;
  d.elems_per_reg = o.pack ? 2 : v.packing;
  d.elem_bits = o.pack ? 16 : (v.packing == 1 ? isa::value_bits(v.dtype) : 32 / v.packing);
  d.rows = v.rows;
  d.row_elements = v.row_elements();
  const int regs = isa::ld_regs(shape, num);
  const int rpb = v.rows_per_block();
  for (int w : warps) {
    int next = 0;
    const auto [a, e] = q[static_cast<size_t>(w % 4)];
    for (int b = 0; b < v.blocks(); ++b)
      for (uint32_t l = a; l < e; l += static_cast<uint32_t>(si.lanes))
        for (int col = 0; col < span; col += num * per_num) {
          LdInstr f;
          f.warp = w;
          f.shape = shape;
          f.num = num;
          f.pack = o.pack;
          f.split = x2 ? span : 0;
          f.alloc = v.alloc;
          const uint32_t tcol = v.column + static_cast<uint32_t>(b * bc + col);
          f.taddr = isa::encode(isa::TmemAddr{l, tcol});  // the lane bits: in the warp's own quarter
          f.first_reg = next;
          f.regs = regs;
          f.row0 = v.row_of_lane(l) + b * rpb;
          f.elem0 = int64_t{col} * v.packing + (l >= 64 ? v.half_elements() : 0);
          next += regs;
          d.frags.push_back(f);
        }
    d.regs = std::max(d.regs, next);
  }
  if (d.regs > 256) return fail(TmemLanes::too_many_regs);
  return out;
}

TmemStore tmem_store(const ir::TmemStore& o, const RegDef& src, const ResolvedView& v, int threads, Held& held) {
  using detail::Cell;
  TmemStore out;
  auto fail = [&](TmemStore::Miss m) {
    out.miss = m;
    return out;
  };
  if (src.rows != v.rows || src.row_elements != v.row_elements()) return fail(TmemStore::shape_differs);
  const bool convert = src.dtype != v.dtype;
  if (convert && !(src.dtype == isa::DType::f32 && (v.dtype == isa::DType::bf16 || v.dtype == isa::DType::f16)))
    return fail(TmemStore::dtype);
  out.lanes = tmem_lanes(o.access, o.regs.name, v, threads);
  if (out.lanes.miss != TmemLanes::fits) return fail(TmemStore::no_lanes);
  const RegDef& dst = out.lanes.def;
  TmemStStep st;
  st.src = src;
  st.dst = dst;
  st.convert = convert;
  // Where each thread holds each element of the register set (once per definition of the set).
  if (held.empty())
    for (const auto& g : src.frags)
      for (int t = 0; t < 32; ++t)
        for (int i = 0; i < g.regs; ++i) {
          const Cell cl = detail::frag_cell(g, t, i, src.elems_per_reg);
          for (int k = 0; k < src.elems_per_reg; ++k) held[{g.warp, t, cl.row, cl.elem + k}] = {g.first_reg + i, k};
        }
  for (const auto& f : dst.frags) {
    std::vector<std::vector<StSource>> regs;
    for (int j = 0; j < f.regs; ++j) {
      std::vector<StSource> elems;
      for (int e = 0; e < dst.elems_per_reg; ++e) {
        std::optional<StSource> first;
        for (int t = 0; t < 32; ++t) {
          const Cell cl = detail::frag_cell(f, t, j, dst.elems_per_reg);
          auto it = held.find({f.warp, t, cl.row, cl.elem + e});
          const bool same = it != held.end() && (!first || (it->second.reg == first->reg && it->second.elem == first->elem));
          if (!same) {
            out.thread = t;
            out.warp = f.warp;
            out.row = cl.row;
            out.elem = cl.elem + e;
            return fail(it == held.end() ? TmemStore::not_held : TmemStore::held_apart);
          }
          if (!first) first = it->second;
        }
        elems.push_back(*first);
      }
      // Elements narrower than 16 bits move only in the registers (and positions) they arrived in.
      if (!convert && dst.elem_bits < 16)
        for (int e = 0; e < static_cast<int>(elems.size()); ++e)
          if (elems[static_cast<size_t>(e)].reg != elems[0].reg || elems[static_cast<size_t>(e)].elem != e)
            return fail(TmemStore::narrow_moved);
      regs.push_back(elems);
    }
    st.sources.push_back(regs);
  }
  st.direct = !convert && src.elem_bits == dst.elem_bits && src.elems_per_reg == dst.elems_per_reg;
  for (const auto& f : st.sources)
    for (const auto& r : f)
      for (size_t e = 0; e < r.size(); ++e) st.direct = st.direct && r[e].reg == r[0].reg && r[e].elem == static_cast<int>(e);
  out.step = std::move(st);
  return out;
}

bool store_converts(isa::DType regs, isa::DType global, bool clip) {
  using isa::DType;
  const bool same = global == regs && isa::value_bits(global) >= 8;
  const bool narrow = (regs == DType::f32 && (global == DType::bf16 || global == DType::f16)) ||
                      // a clipped store (the gemm template's D) also widens or converts from the accumulator
                      (clip && (global == DType::f32 || global == DType::f16 || global == DType::bf16) &&
                       (regs == DType::f16 || regs == DType::s32 || regs == DType::f32)) ||
                      // and to 8-bit floats from f32 accumulators (cvt.rn.satfinite.e4m3x2.f32, §9.7.9.21)
                      (clip && regs == DType::f32 && (global == DType::e4m3 || global == DType::e5m2)) ||
                      // and to e2m1 pairs, two to a byte (an MXFP4 D: cvt.rn.satfinite.e2m1x2.f32)
                      (clip && regs == DType::f32 && global == DType::e2m1);
  return same || narrow;
}

}  // namespace ptxgen::plan

namespace ptxgen::plan::detail {

// The register verifier (src/rules/verify_regs.cpp) reports each store refused here: STORE-DTYPE,
// STORE-BOUNDS, PAIR-STORE-OVERLAP, and its operands' names.
}  // namespace ptxgen::plan::detail

namespace ptxgen::plan {

ReduceMiss reduce_miss(const RegDef& a) {
  if (a.dtype != isa::DType::f32 || a.elems_per_reg != 1) return ReduceMiss::dtype;
  for (const auto& f : a.frags)
    if (f.pack || (f.shape != isa::LdShape::s32x32b && f.shape != isa::LdShape::s16x256b)) return ReduceMiss::shape;
  return ReduceMiss::fits;
}

bool rows_shared_by_lanes(const RegDef& a) {
  if (a.wgmma) return true;
  for (const auto& f : a.frags)
    if (f.shape == isa::LdShape::s16x256b) return true;
  return false;
}

std::optional<int> uniform_warp_rows(const RegDef& d) {
  std::map<int, std::vector<const LdInstr*>> by_warp;
  for (const auto& f : d.frags) by_warp[f.warp].push_back(&f);
  if (by_warp.size() < 2) return std::nullopt;
  const int w0 = by_warp.begin()->first;
  const std::vector<const LdInstr*>& a = by_warp.begin()->second;
  int step = 0, i = 0;
  for (const auto& [wi, b] : by_warp) {
    if (wi != w0 + i || b.size() != a.size()) return std::nullopt;
    for (size_t k = 0; k < a.size(); ++k) {
      const int dr = b[k]->row0 - a[k]->row0;
      if (i == 1 && k == 0) step = dr;
      if (a[k]->shape != b[k]->shape || a[k]->num != b[k]->num || a[k]->regs != b[k]->regs || a[k]->first_reg != b[k]->first_reg ||
          a[k]->elem0 != b[k]->elem0 || dr != step * i)
        return std::nullopt;
    }
    ++i;
  }
  return step;
}

bool warps_hold_same_registers(const RegDef& d) {
  std::map<int, std::vector<int>> by_warp;
  for (const auto& f : d.frags)
    for (int j = f.first_reg; j < f.first_reg + f.regs; ++j) by_warp[f.warp].push_back(j);
  if (by_warp.empty()) return true;
  for (auto& [wi, js] : by_warp) std::sort(js.begin(), js.end());
  if (by_warp.rbegin()->first - by_warp.begin()->first + 1 != static_cast<int>(by_warp.size())) return false;
  for (const auto& [wi, js] : by_warp)
    if (js != by_warp.begin()->second) return false;
  return true;
}

uint32_t largest_finite_bits(isa::DType elem) {
  switch (elem) {
    case isa::DType::e4m3: return 0x43E00000u;  // 448 = 1.75 x 2^8 (0x7E: S.1111.110, §5.2.5.1)
    case isa::DType::e5m2: return 0x47600000u;  // 57344 = 1.75 x 2^15
    case isa::DType::e2m1: return 0x40C00000u;  // 6 = 1.5 x 2^2
    default: throw std::logic_error("a block quantization to " + std::string(isa::name(elem)));
  }
}

QuantizeMiss quantize_miss(const RegDef& a, const ir::Position& pos, int vec) {
  if (a.dtype != isa::DType::f32 || a.elems_per_reg != 1) return QuantizeMiss::dtype;
  bool s32 = false, s16 = false;
  for (const auto& f : a.frags) {
    if (f.pack || (f.shape != isa::LdShape::s32x32b && f.shape != isa::LdShape::s16x256b)) return QuantizeMiss::shape;
    (f.shape == isa::LdShape::s32x32b ? s32 : s16) = true;
  }
  if (s32 && s16) return QuantizeMiss::shape;
  // Every run-time term of the column a multiple of vec: a block's place among D's blocks is then
  // the thread's first column plus the cell's, over vec, the same in every CTA.
  const ir::Affine& c = pos.at[1];
  if (vec < 8 || c.base % vec || c.m_tile % vec || c.n_tile % vec || c.k_block % vec || c.rank % vec || c.size_mul) return QuantizeMiss::blocks;
  // The cells of each block, per warp (tcgen05) and row, relative to the thread's first row and
  // column: vec of them in one thread, or vec / 4 in each of the 4 lanes of a row (the columns of
  // lane 0; lane l's lie 2 (l % 4) further, inside the same 8 columns).
  const bool shared = rows_shared_by_lanes(a);
  std::map<std::tuple<int, int64_t, int64_t>, std::set<int64_t>> blocks;
  if (a.wgmma) {
    for (int row = 0; row < a.rows; row += 64) {
      int64_t n0 = 0;
      for (int ng : a.groups) {
        for (int i = 0; i < ng / 4; ++i)
          for (int e = 0; e < 2; ++e) {
            const int64_t col = n0 + 8 * (i / 2) + e;
            blocks[{0, row + 8 * (i % 2), col / vec}].insert(col);
          }
        n0 += ng;
      }
    }
  } else {
    for (const auto& f : a.frags)
      for (int j = 0; j < f.regs; ++j) {
        const isa::LdCell x = isa::ld_cell(f.shape, 0, j);
        const int64_t col = f.elem0 + x.column;
        blocks[{f.warp, f.row0 + x.lane, col / vec}].insert(col);
      }
  }
  const size_t want = static_cast<size_t>(shared ? vec / 4 : vec);
  for (const auto& [key, cols] : blocks)
    if (cols.size() != want) return QuantizeMiss::blocks;
  return QuantizeMiss::fits;
}

ReadMiss read_miss(const RegDef& like, const ir::Global& g) {
  if (like.dtype != isa::DType::f32 || like.elems_per_reg != 1) return ReadMiss::like_dtype;
  for (const auto& f : like.frags)
    if (f.pack || (f.shape != isa::LdShape::s32x32b && f.shape != isa::LdShape::s16x256b)) return ReadMiss::like_shape;
  if (g.dtype != isa::DType::f32 && g.dtype != isa::DType::bf16 && g.dtype != isa::DType::f16) return ReadMiss::global_dtype;
  return ReadMiss::fits;
}

}  // namespace ptxgen::plan

namespace ptxgen::plan::detail {

std::optional<StoreStep> plan_store(Ctx& c, const ir::Store& o, const RegDef& src) {
  const ir::Global* g = c.find_global(o.dst);
  if (!g || !store_converts(src.dtype, g->dtype, o.clip)) return std::nullopt;
  const int ctas = c.k.cta_group;
  // A clipped store lies where its CTA's tile does; elements at or past the run-time extents are
  // not written. Otherwise the registers must fit the (static) tensor.
  for (int r = 0; r < ctas && !o.clip; ++r) {
    const int64_t r0 = o.pos.at[0].base + r * o.pos.at[0].rank, c0 = o.pos.at[1].base + r * o.pos.at[1].rank;
    if (r0 + src.rows > g->rows || c0 + src.row_elements > g->cols) return std::nullopt;
  }
  // Both CTAs of a pair run the store: their elements must not overlap (the values differ).
  if (ctas > 1 && !o.clip && o.pos.at[0].rank < src.rows && o.pos.at[1].rank < src.row_elements) return std::nullopt;
  StoreStep st;
  st.src = src;
  st.global = g->name;
  st.row0 = o.pos.at[0];
  st.col0 = o.pos.at[1];
  st.plane = o.plane;
  st.cta_row = o.pos.at[0].rank;
  st.cta_col = o.pos.at[1].rank;
  st.to = g->dtype;
  st.global_cols = g->ld ? g->ld : g->cols;
  st.ld_param = g->ld_param;
  st.clip = o.clip;
  st.rows_param = g->rows_param;
  st.cols_param = g->cols_param;
  st.global_rows = g->rows;
  st.global_width = g->cols;
  if (o.tma && !src.wgmma) return plan_box_store(c, o, *g, std::move(st));  // epilogue.cpp
  if (o.tma) {
    // The lowering's TMA epilogue (wgmma accumulators, a K-major 128-byte swizzled tile).
    const SmemPlacement* t = c.find_tile(o.via);
    if (!t) return std::nullopt;
    // A box is one swizzle row (128 bytes) of a warpgroup's rows (64, or a ping-pong consumer's
    // whole tile): the tile's K-major layout of 128-byte columns of all its rows (§9.7.16.3.3), cut
    // at every warpgroup's first row.
    const int es = isa::value_bits(g->dtype) / 8, row = isa::bytes(isa::Swizzle::b128), wg_rows = src.rows;
    if (!src.wgmma || t->layout.swizzle != isa::Swizzle::b128 || es < 1 || wg_rows % 64 || wg_rows > isa::kTmaBoxMax || t->layout.mn % wg_rows ||
        t->layout.k % (row / es))
      throw std::logic_error("a TMA store needs wgmma registers and a 128-byte swizzled tile of whole boxes");
    st.tma = true;
    st.stage = t->name;
    st.stage_offset = t->offset;
    st.box_cols = row / es;
    st.subtiles = o.subtiles;
    st.boxes = static_cast<int>((o.subtiles ? src.row_elements : t->layout.k) / st.box_cols);
    if (o.subtiles && (t->layout.k != 2 * st.box_cols || src.row_elements % st.box_cols))
      throw std::logic_error("TMA store subtiles need a tile of two boxes and whole boxes of registers");
    st.box_stride = static_cast<uint32_t>(t->layout.mn * row);
    st.warpgroup_bytes = static_cast<uint32_t>(wg_rows * row);
    st.warpgroups = t->layout.mn / wg_rows;
    st.shared_by = t->overlay.empty() ? 0 : o.via_shared_by;  // the planner placed it over the ring, or not
    st.reuse = c.k.grid.persistent;
    st.map = store_map(o, *g, st.box_cols, wg_rows);
    st.map.optional = o.direct_fallback;
  }
  return st;
}

namespace {

// A read of a tensor element by element (not a vector or an element broadcast), anywhere in `steps`.
bool cell_reads(const std::vector<Step>& steps) {
  return std::any_of(steps.begin(), steps.end(), [](const Step& x) {
    return (x.kind == StepKind::read && x.read.at == ir::ReadAt::cells && !x.read.rows_broadcast && !x.read.cols_broadcast) ||
           cell_reads(x.body);
  });
}

void set_staging(std::vector<Step>& steps, bool reads) {
  for (Step& x : steps) {
    set_staging(x.body, reads);
    if (x.kind != StepKind::store || !x.store.tma || !x.store.src.wgmma) continue;
    StoreStep& st = x.store;
    const bool groups16 = std::all_of(st.src.groups.begin(), st.src.groups.end(), [](int n) { return n % 16 == 0; });
    const ir::DStaging d = ir::d_staging(isa::value_bits(st.to), groups16, reads, st.src.row_elements);
    st.stmatrix = d.stmatrix;
    st.staging = d.why;
    if (st.subtiles && !st.stmatrix) throw std::logic_error("TMA store subtiles are written by stmatrix (a 16-bit D, no element-wise reads)");
  }
}

}  // namespace

void decide_staging(std::vector<Step>& steps) { set_staging(steps, cell_reads(steps)); }

TensorMap store_map(const ir::Store& o, const ir::Global& g, int box_cols, int box_rows) {
  // D as its own type, n elements a row (its leading dimension apart), boxes of one 128-byte
  // swizzle row by the rows a store writes: TMA clips them at the extents (§5.5).
  const int es = isa::value_bits(g.dtype) / 8;
  TensorMap m;
  m.param = o.map_param;
  m.global = m.tensor = g.name;
  m.data_type = cu_data_type(g.dtype, isa::value_bits(g.dtype));
  m.unit = es;
  m.dim_inner = g.cols;
  m.dim_outer = g.rows;
  m.stride_bytes = (g.ld ? g.ld : g.cols) * es;
  m.box_inner = box_cols;
  m.box_outer = box_rows;
  m.swizzle = isa::Swizzle::b128;
  if (g.planes > 0) {
    // A 3-D global (a grouped D, [G, m, N]): boxes one plane deep, the plane the store's coordinate.
    if (o.plane.constant()) throw std::logic_error("a TMA store into a 3-D global without its plane");
    m.rank = 3;
    m.dim_planes = g.planes;
    m.plane_stride_bytes = g.rows * m.stride_bytes;
  }
  return m;
}

}  // namespace ptxgen::plan::detail
