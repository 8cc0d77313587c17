// The gemm template into the kernel IR: D[M,N] = A[M,K] . B[K,N] as a warp-specialized pipelined
// kernel over a grid of output tiles.
//
//   tensors   A, B through tensor maps (TMA zero-fills past the run-time extents), D through its
//             address, stores clipped to m x n; the kernel takes m, n, k at run time
//   memory    a ring of `stages` shared-memory stages of A's and B's tiles, with full[s] (the
//             stage's bytes arrived) and empty[s] (its MMAs completed) mbarriers; tcgen05: the
//             accumulator (and A, for a_source tmem) in tensor memory; wgmma: in registers
//   roles     tcgen05: warps 0-3 read D back and store it; warp 4 (one thread) loads; warp 5 (one
//             thread, CTA 0 of a pair) copies A into tensor memory and issues the MMAs
//             wgmma:   warpgroups 0..W-1 each issue the MMAs of their 64 rows and store them;
//             warp 4W (one thread) loads
//
// Where D and A sit in tensor memory follows the data-path layouts of §9.7.16.10.5: layout D
// (M = 128, row i in lane i) and the pair's layout A (M = 256) keep each M group's N columns side
// by side; the pair's layout B (dense M = 128) keeps each M group's N/2 columns with the second
// half of N in lanes 64-127. Layout F (M = 64) keeps 64 rows in a 16-lane piece of every 32-lane
// quarter at a lane alignment of 0 or 16, so two pieces share columns: M groups pair up (group 2j
// at alignment 0, 2j + 1 at 16), and a group left over splits its N in halves at the two alignments
// when both halves are legal instruction widths, which halves its columns. A in tensor memory for
// layout F is copied (.128x256b) from 128-row slabs whose rows TMA places in lane order: lane
// 32q + 16h + i holds row 16q + i of the piece at alignment 16h (docs/architecture.md). A pair's
// sparse M = 128 (layout C) keeps each CTA's 64 rows as layout F does, with one op per N group.
#include <algorithm>
#include <stdexcept>

#include "gemm_epilogue.hpp"
#include "gemm_scale.hpp"
#include "ptxgen/lower.hpp"

namespace ptxgen::lower {

namespace {

std::string s(int64_t v) { return std::to_string(v); }

uint32_t pow2_at_least_32(uint32_t v) {
  uint32_t p = 32;
  while (p < v) p <<= 1;
  return p;
}

const char* kPtr = "/gemm";

ir::TmemView alloc_view(const std::string& name, int columns) {
  ir::TmemView v;
  v.kind = ir::TmemView::Kind::alloc;
  v.name = name;
  v.ptr = kPtr;
  v.columns = columns;
  return v;
}

ir::TmemView slice_view(const std::string& name, const std::string& of, std::optional<std::array<int64_t, 2>> lanes,
                        std::array<int64_t, 2> cols) {
  ir::TmemView v;
  v.kind = ir::TmemView::Kind::slice;
  v.name = name;
  v.ptr = kPtr;
  v.of = {of, kPtr};
  v.lanes = lanes;
  v.cols = cols;
  return v;
}

ir::TmemView cast_view(const std::string& name, const std::string& of, std::optional<isa::DType> dtype, std::optional<int> packing,
                       std::optional<ir::TmemLayout> layout, std::optional<int> rows) {
  ir::TmemView v;
  v.kind = ir::TmemView::Kind::cast;
  v.name = name;
  v.ptr = kPtr;
  v.of = {of, kPtr};
  v.dtype = dtype;
  v.packing = packing;
  v.layout = layout;
  v.rows = rows;
  return v;
}

ir::Op op(ir::Op::Body body) {  // an op of the template: its pointer is the template's
  ir::Op o;
  o.ptr = kPtr;
  o.body = std::move(body);
  return o;
}

// A wait, arrive, commit or expect_tx on `bar`.
template <class T>
ir::Op barrier_op(const std::string& bar, int lag = 0, bool flip = false) {
  T b;
  b.barrier = {bar, kPtr};
  ir::Op o = op(std::move(b));
  o.phase.lag = lag;
  o.phase.flip = flip;
  return o;
}

ir::Node node(ir::Op o) {
  ir::Node n;
  n.op = std::move(o);
  return n;
}

// One mma op of the tile: rows [row0, row0 + rows) of this CTA's A (every M group: `blocks` of
// them), columns [n0, n0 + n) of the instruction N, D in tensor memory from `column` (blocks of
// `block_cols` columns side by side), at layout F's `alignment` (or -1).
struct Piece {
  int mi = -1;  // layout F: the M group; -1: every M group
  int row0 = 0, rows = 0, blocks = 1;
  int n0 = 0, n = 0;
  uint32_t column = 0, block_cols = 0;
  int alignment = -1;
};

struct Gemm {
  const spec::Spec& spec;
  const spec::Gemm& g;
  ir::Kernel k;
  isa::Kind kind = isa::Kind::f16;
  int cta = 1, tm = 0, tn = 0, tk = 0, stages = 1;
  int m_instr = 128, mg = 1, rows_cta = 128;  // instruction M, M groups, rows of D per CTA per M group
  bool a_tmem = false;
  bool persistent = false;
  ir::TmemLayout layout = ir::TmemLayout::rows;  // D's data-path layout (rows: D or A)
  std::vector<Piece> pieces;
  uint32_t d_columns = 0, a_columns = 0;
  // Persistent: the accumulator's buffers in tensor memory (acc_buffers) and the ring the MMAs and
  // the epilogue's tcgen05.ld follow over the CTA's tiles.
  int acc_stages = 1;
  ir::TmemRing acc_ring;

  Gemm(const spec::Spec& s) : spec(s), g(*s.gemm) {}

  // D's columns per tile: a gated activation pairs the tile's two halves into one (docs/spec.md, "Epilogues").
  int d_tile_n() const { return g.glu ? tn / 2 : tn; }

  void globals() {
    // A is M x K: K-major is row-major (rows m, cols k), M-major stored K x M. B is K x N: K-major
    // is stored N x K, N-major row-major. D is row-major M x N.
    auto operand = [&](const char* name, const spec::Operand& op, bool k_major, const char* mn) {
      ir::Global x;
      x.name = name;
      x.ptr = std::string(kPtr) + "/" + (name[0] == 'A' ? "a" : "b");
      x.dtype = op.dtype;
      x.bits = isa::value_bits(op.dtype);  // dense in global memory; TMA unpacks 4/6-bit types
      x.typed_map = true;
      const int64_t mn_size = name[0] == 'A' ? g.m : g.n;
      x.rows = k_major ? mn_size : g.k;
      x.cols = k_major ? g.k : mn_size;
      // Sparse A keeps half of the elements of K (2:4; tf32 1:2): M x K/2, K-major (SPARSE-TILE).
      x.compressed = name[0] == 'A' && g.sparse;
      if (x.compressed) {
        x.cols = g.k / 2;
        x.sparse_kind = detail::mma_kind(g);
      }
      x.rows_param = k_major ? mn : "k";
      x.cols_param = k_major ? "k" : mn;
      x.ld = spec::leading_dimension(op, x.cols);
      x.dims = name[0] == 'A' ? std::array<std::string, 2>{"m", "k"} : std::array<std::string, 2>{"k", "n"};
      k.globals.push_back(x);
    };
    operand("A", g.a, g.a.major == isa::Major::k, "m");
    operand("B", g.b, g.b.major == isa::Major::k, "n");
    ir::Global d;
    d.name = "D";
    d.ptr = std::string(kPtr) + "/d";
    d.dtype = g.d;
    if (g.d == isa::DType::e2m1) d.format = ir::SubByte::packed;  // MXFP4's elements: two a byte
    d.rows = g.m;
    // A gated activation's D is m x n/2 (the size "d" the kernel derives from n, GLU-N: n even).
    d.cols = g.glu ? g.n / 2 : g.n;
    d.ld = d.cols;
    d.rows_param = "m";
    d.cols_param = g.glu ? "d" : "n";
    d.ld_param = d.cols_param;
    d.param = "d";
    d.output = true;
    d.dims = {"m", d.cols_param};
    k.globals.push_back(d);
    // C and the residual: m x n like D, rows n elements apart (D's leading dimension), read by the
    // fused epilogue where it stores.
    auto like_d = [&](const char* name, const char* member, isa::DType dt) {
      ir::Global x = d;
      x.name = name;
      x.ptr = std::string(kPtr) + "/" + member;
      x.dtype = dt;
      x.output = false;
      x.param = member;
      k.globals.push_back(x);
    };
    if (g.c) like_d("C", "c", *g.c);
    if (g.bias) {
      // The fused epilogue's bias (docs/spec.md, "Epilogues"): one element per column of D (a row
      // of n, which a read broadcasts down the rows) or per row (a column of m).
      ir::Global b;
      b.name = "bias";
      b.ptr = std::string(kPtr) + "/bias";
      b.dtype = g.bias->dtype;
      b.rows = g.bias->along_m ? g.m : 1;
      b.cols = g.bias->along_m ? 1 : g.n;
      b.ld = b.cols;
      (g.bias->along_m ? b.rows_param : b.cols_param) = g.bias->along_m ? "m" : "n";
      b.param = "bias";
      b.dims = g.bias->along_m ? std::array<std::string, 2>{"m", "1"} : std::array<std::string, 2>{"1", "n"};
      k.globals.push_back(b);
    }
    if (g.residual) like_d("residual", "residual", *g.residual);
    // One f32 (docs/spec.md, "Epilogues"): D's per-tensor scale, which the kernel reads, and the
    // amax, which it raises to the largest |element| of D.
    auto scalar = [&](const char* name, const char* member, bool output) {
      ir::Global x;
      x.name = name;
      x.ptr = std::string(kPtr) + "/" + member;
      x.dtype = isa::DType::f32;
      x.rows = x.cols = x.ld = 1;
      x.param = name;
      x.output = output;
      x.dims = {"1", "1"};
      k.globals.push_back(x);
    };
    // alpha and beta as inputs (cuBLASLt's device pointer mode): read as D's scale is.
    if (g.alpha_input) scalar("alpha", "alpha", false);
    if (g.c && g.beta_input) scalar("beta", "beta", false);
    if (g.d_scale) scalar("d_scale", "d/scale", false);
    if (g.amax) scalar("amax", "amax", true);
    if (g.quantize) {
      // D's block-scale factors (docs/spec.md, "Epilogues"): ue8m0, one per 32 columns of each of
      // D's rows, in the 128x4 layout of the block-scaled kinds' inputs (ir::Global::scale_vec),
      // with D's rows as the factors' rows and D's columns as their K: planes of 128 rows, each 32
      // lines of 16 bytes per 4 factors of a row.
      ir::Global x;
      x.name = "SFD";
      x.ptr = std::string(kPtr) + "/quantize";
      const int vec = spec::quantize_vec(*g.quantize);
      x.dtype = spec::quantize_scale(*g.quantize);
      x.scale_vec = vec;
      x.scales = "D";
      x.rows = (d.cols + 4 * vec - 1) / (4 * vec) * 32;
      x.cols = x.ld = 16;
      x.planes = (g.m + 127) / 128;
      x.rows_param = d.cols_param;
      x.planes_param = "m";
      x.dims = {"m", d.cols_param};
      x.param = "sfd";
      x.output = true;
      k.globals.push_back(x);
    }
    k.size_params = {{"m", g.m, "", 1, 1}, {"n", g.n, "", 1, 1}, {"k", g.k, "", 1, 1}};
    if (g.glu) k.size_params.push_back({"d", g.n / 2, "n", 2, 1, true});  // D's columns, up's first row of B
    if (g.scale && g.scale->blockwise()) blockwise_globals();
  }

  // Block-wise f32 scale factors (docs/spec.md, "Block scaling"), read by plain loads where the
  // consumers fold a K block's partial sums in: SFA one f32 per row of A and K block of 128,
  // stored MN-major (row kb holds block kb's factors of every row of A: a K block's factors of a
  // tile's rows are contiguous, DeepGEMM's layout); SFB one f32 per 128 x 128 block of B, [n
  // blocks][k blocks]. "kb" and "nb" are sizes the kernel derives from k and n: ceil(x / 128).
  void blockwise_globals() {
    const int64_t vec = g.scale->vec, kb = (g.k + vec - 1) / vec, nb = (g.n + vec - 1) / vec;
    k.size_params.push_back({"kb", kb, "k", vec, 1});
    k.size_params.push_back({"nb", nb, "n", vec, 1});
    auto factors = [&](const char* name, const char* param, int64_t rows, int64_t cols, const char* rp, const char* cp) {
      ir::Global x;
      x.name = name;
      x.ptr = std::string(kPtr) + "/scale";
      x.dtype = isa::DType::f32;
      x.rows = rows;
      x.cols = x.ld = cols;
      x.rows_param = rp;
      x.cols_param = x.ld_param = cp;
      x.param = param;
      x.dims = {rp, cp};
      k.globals.push_back(x);
    };
    factors("SFA", "sfa", kb, g.m, "kb", "m");
    factors("SFB", "sfb", nb, kb, "nb", "kb");
  }

  ir::Tile tile(const char* name, const spec::Operand& op, isa::Swizzle sw, int rows, int bits) {
    ir::Tile t;
    t.name = name;
    t.ptr = std::string(kPtr) + "/tile";
    t.dtype = op.dtype;
    // 4/6-bit types sit in 8-bit containers (f8f6f4) or two e2m1 per byte (mxf4*); others are whole bytes.
    t.format = bits < 8 ? ir::SubByte::packed : ir::SubByte::padded;
    t.rows = rows;
    t.cols = tk;
    t.major = op.major;
    t.swizzle = sw;
    t.stages = stages;
    t.swizzle_ptr = std::string(kPtr) + "/swizzle/" + (name[0] == 'a' ? "a" : "b");
    t.major_ptr = std::string(kPtr) + "/" + (name[0] == 'a' ? "a" : "b") + "/major";
    t.shape_ptr = std::string(kPtr) + "/tile";
    if (bits != isa::storage_bits(op.dtype, t.format)) throw std::logic_error("tile bits");
    return t;
  }

  // The TMA loads of one stage (loads of each operand, completing on full[stage]).
  std::vector<ir::Op> loads() {
    std::vector<ir::Op> out;
    auto load = [&](const char* global, const char* tile, const char* map, std::array<ir::Affine, 2> at) {
      ir::Load o;
      o.src = {global, kPtr};
      o.dst = {tile, kPtr};
      o.tma = true;
      o.map_param = map;
      o.barrier = {"full", kPtr};
      o.to_leader = cta == 2;
      o.pos.at = at;
      return o;
    };
    // This CTA's rows of A: the tile's M rows, the pair's CTA r the half from r * tm / 2.
    ir::Affine a_mn, b_mn, kk;
    a_mn.m_tile = tm;
    a_mn.rank = cta == 2 ? tm / 2 : 0;
    b_mn.n_tile = tn;
    b_mn.rank = cta == 2 ? tn / 2 : 0;
    kk.k_block = tk;
    const bool ak = g.a.major == isa::Major::k, bk = g.b.major == isa::Major::k;
    if (a_tmem && layout_f()) {
      // Slab j holds the pieces of alignment 0 and 16: lane 32q + 16h + i <- row 16q + i of the
      // piece's M group (row-placed loads of 16 rows).
      for (const Piece& pc : pieces) {
        const int slab = slab_of(pc);
        for (int q = 0; q < 4; ++q) {
          ir::Affine r = a_mn;
          r.base = pc.row0 + 16 * q;
          ir::Load o = load("A", "a", "tmap_a", {r, kk});
          o.tile_row0 = 128 * slab + 32 * q + pc.alignment;
          o.load_rows = 16;
          out.push_back(op(std::move(o)));
        }
      }
    } else if (g.sparse) {  // half of each K block's elements (K-major: SPARSE-TILE)
      ir::Affine half = kk;
      half.k_block = tk / 2;
      out.push_back(op(load("A", "a", "tmap_a", {a_mn, half})));
    } else {
      out.push_back(op(load("A", "a", "tmap_a", ak ? std::array<ir::Affine, 2>{a_mn, kk} : std::array<ir::Affine, 2>{kk, a_mn})));
    }
    if (g.glu) {
      // Gated (K-major B, GLU-LAYOUT): the tile's first half the gate's rows n0 = n_tile tile.n / 2,
      // its second half up's, d = n / 2 rows on, so that accumulator column c + tile.n / 2 is up's
      // of gate column c. TMA zero-fills up's rows past n; the gate's past d are up's rows, whose
      // products land in D's columns past d, which the store clips.
      b_mn.n_tile = tn / 2;
      for (int h = 0; h < 2; ++h) {
        ir::Affine r = b_mn;
        if (h) r.size = "d", r.size_mul = 1;
        ir::Load o = load("B", "b", "tmap_b", {r, kk});
        o.tile_row0 = h * tn / 2;
        o.load_rows = tn / 2;
        out.push_back(op(std::move(o)));
      }
      return out;
    }
    out.push_back(op(load("B", "b", "tmap_b", bk ? std::array<ir::Affine, 2>{b_mn, kk} : std::array<ir::Affine, 2>{kk, b_mn})));
    return out;
  }

  // The stage's loads, a tile that the cluster's block shares marked multicast: A along the block's
  // tile rows (its CTAs, or pairs, of one M tile), B along its columns (CLUSTER-MULTICAST).
  std::vector<ir::Op> shared_loads() {
    std::vector<ir::Op> out = loads();
    for (auto& o : out) {
      ir::Load& l = *o.as<ir::Load>();
      if (l.src.name == "A" && k.grid.cluster_n > 1) l.multicast = k.grid.cluster_n;
      if (l.src.name == "B" && k.grid.cluster_m > 1) {
        l.multicast = k.grid.cluster_m;
        l.multicast_along_m = true;
      }
    }
    return out;
  }

  bool layout_f() const { return layout == ir::TmemLayout::layout_f_0; }
  int slab_of(const Piece& pc) const { return pc.mi / 2; }

  // The mma ops of the tile and their tensor-memory columns.
  void place_pieces() {
    if (layout_f()) {
      // M = 64: pairs of M groups share columns at alignments 0 and 16; a group left over splits
      // its N in halves at the two alignments when both are legal widths (Table 39).
      // A pair (layout C) does not fold: its instruction's N columns come half from each CTA's B.
      const int align = g.b.major == isa::Major::mn ? atom_mn_b() : 8;
      const bool fold = cta == 1 && mg % 2 == 1 && tn % 2 == 0 && tn / 2 % align == 0 &&
                        !isa::mma_n_groups(kind, 1, b_layout(), tn / 2).empty();
      for (int mi = 0; mi < mg; ++mi) {
        const uint32_t col = static_cast<uint32_t>(mi / 2) * static_cast<uint32_t>(tn);
        if (cta == 2) {
          // One op per N group (as layouts A and B), its columns at the group's offset.
          int n0 = 0;
          for (int n : isa::mma_n_groups(kind, 2, b_layout(), tn)) {
            pieces.push_back({mi, 64 * mi, 64, 1, n0, n, col + static_cast<uint32_t>(n0), static_cast<uint32_t>(n), mi % 2 ? 16 : 0});
            n0 += n;
          }
          d_columns = std::max<uint32_t>(d_columns, col + static_cast<uint32_t>(tn));
        } else if (mi == mg - 1 && mg % 2 == 1 && fold) {
          pieces.push_back({mi, 64 * mi, 64, 1, 0, tn / 2, col, static_cast<uint32_t>(tn / 2), 0});
          pieces.push_back({mi, 64 * mi, 64, 1, tn / 2, tn / 2, col, static_cast<uint32_t>(tn / 2), 16});
          d_columns = std::max<uint32_t>(d_columns, col + static_cast<uint32_t>(tn / 2));
        } else {
          pieces.push_back({mi, 64 * mi, 64, 1, 0, tn, col, static_cast<uint32_t>(tn), mi % 2 ? 16 : 0});
          d_columns = std::max<uint32_t>(d_columns, col + static_cast<uint32_t>(tn));
        }
      }
      return;
    }
    // Layouts D and A: each M group's N columns side by side; layout B: N/2 columns each. One mma
    // op reads every M group (K step outermost, then M group, then N group); a pair's op is one
    // instruction wide in N (its two CTAs' halves of B would interleave in D otherwise), so a pair
    // has one op per N group, each with its M groups' blocks.
    std::vector<std::pair<int, int>> nps;  // (n0, n)
    if (cta == 2) {
      int n0 = 0;
      for (int n : isa::mma_n_groups(kind, 2, b_layout(), tn)) {
        nps.push_back({n0, n});
        n0 += n;
      }
    } else {
      nps.push_back({0, tn});
    }
    uint32_t col = 0;
    for (auto [n0, n] : nps) {
      const uint32_t per = static_cast<uint32_t>(layout == ir::TmemLayout::layout_b ? n / 2 : n);
      pieces.push_back({-1, 0, rows_cta * mg, mg, n0, n, col, per, -1});
      col += per * static_cast<uint32_t>(mg);
    }
    d_columns = col;
  }

  // Each CTA's B tile, as the MMAs read it (before isa::make_tile_layout).
  isa::TileLayout b_layout() const {
    isa::TileLayout l;
    l.major = g.b.major;
    l.swizzle = g.swizzle_b;
    l.bits = isa::smem_bits(kind, g.b.dtype);
    l.mn = tn / cta;
    l.k = tk;
    return l;
  }
  int atom_mn_b() const {
    isa::TileLayout l = b_layout();
    if (isa::make_tile_layout(l)) return 8;
    return l.atom_mn;
  }

  void tcgen05() {
    kind = detail::mma_kind(g);
    m_instr = isa::instr_m_for_tile(kind, cta, tm);
    mg = tm / m_instr;
    rows_cta = m_instr / cta;
    // A pair's sparse M = 128 is layout C, which organizes each CTA's 64 rows as layout F does
    // (§9.7.16.10.5.3; docs/architecture.md item 7).
    if (cta == 1) layout = m_instr == 64 ? ir::TmemLayout::layout_f_0 : ir::TmemLayout::rows;
    else if (m_instr == 256) layout = ir::TmemLayout::rows;
    else layout = g.sparse ? ir::TmemLayout::layout_f_0 : ir::TmemLayout::layout_b;
    a_tmem = g.a_source == spec::ASource::tmem;
    place_pieces();
    const int abits = isa::smem_bits(kind, g.a.dtype), bbits = isa::smem_bits(kind, g.b.dtype);
    // Layout F with A in tensor memory: 128-row slabs of lane-ordered rows (see the top).
    const int slabs = (mg + 1) / 2;
    const int a_rows = a_tmem && layout_f() ? 128 * slabs : tm / cta;
    k.tiles.push_back(tile("a", g.a, g.swizzle_a, a_rows, abits));
    if (g.sparse) k.tiles.back().cols = tk / 2;  // sparse A: half of the K block
    k.tiles.push_back(tile("b", g.b, g.swizzle_b, tn / cta, bbits));
    // Tensor memory: D's pieces, then A.
    const int a_pack = 32 / isa::tmem_bits(kind, g.a.dtype);
    const int a_block_cols = tk / a_pack;
    const int a_blocks = layout_f() ? slabs : mg;
    if (a_tmem) a_columns = static_cast<uint32_t>(a_block_cols * a_blocks);
    // Block scaling: each stage's factors after D and A (src/lower/gemm_scale.cpp).
    std::optional<detail::ScaleLayout> sl;
    if (g.scale) sl = detail::scale_layout(g, kind);
    const uint32_t sf_columns = sl ? sl->columns() : 0;
    // Sparse A: each stage's metadata after them (src/lower/gemm_sparse.cpp).
    const uint32_t meta_columns = g.sparse ? detail::sparse_columns(g) : 0;
    if (persistent) acc_buffers(sf_columns + meta_columns);
    const isa::DType acc = g.accumulator;
    // D's buffers, then A, the factors, the metadata.
    const uint32_t d_all = d_columns * static_cast<uint32_t>(acc_stages);
    k.views.push_back(alloc_view("tmem", static_cast<int>(pow2_at_least_32(d_all + a_columns + sf_columns + meta_columns))));
    k.views.back().dtype = acc;  // every slice of it holds accumulators but A's, which are cast
    for (size_t i = 0; i < pieces.size(); ++i) {
      const Piece& pc = pieces[i];
      const std::string d = "d" + s(static_cast<int64_t>(i));
      k.views.push_back(slice_view(d + "_cells", "tmem", std::nullopt, {pc.column, pc.column + pc.block_cols * static_cast<uint32_t>(pc.blocks)}));
      std::optional<ir::TmemLayout> lay;
      std::optional<int> rows;
      if (layout_f()) lay = pc.alignment ? ir::TmemLayout::layout_f_16 : ir::TmemLayout::layout_f_0;
      if (layout == ir::TmemLayout::layout_b) lay = ir::TmemLayout::layout_b;
      if (pc.blocks > 1) rows = pc.rows;
      k.views.push_back(cast_view(d, d + "_cells", acc, 1, lay, rows));
    }
    if (a_tmem) {
      // A's rows where D's are: layouts D and A one 128-lane block per M group; layout B each CTA's
      // 64 rows at lanes r and 64 + r (.64x128b.warpx2::02_13); layout F a slab per pair of groups.
      const uint32_t c0 = d_all;
      k.views.push_back(slice_view("a_cells", "tmem", std::nullopt, {c0, c0 + a_columns}));
      if (layout_f()) {
        for (int j = 0; j < slabs; ++j) {
          const uint32_t cj = c0 + static_cast<uint32_t>(a_block_cols * j);
          const std::string sl = "a_slab" + s(j);
          k.views.push_back(slice_view(sl + "_cells", "tmem", std::nullopt, {cj, cj + static_cast<uint32_t>(a_block_cols)}));
          k.views.push_back(cast_view(sl, sl + "_cells", g.a.dtype, a_pack, std::nullopt, std::nullopt));
          for (int h : {0, 16})
            k.views.push_back(cast_view(sl + "_f" + s(h), sl, std::nullopt, std::nullopt,
                                        h ? ir::TmemLayout::layout_f_16 : ir::TmemLayout::layout_f_0, std::nullopt));
        }
      } else {
        std::optional<ir::TmemLayout> lay;
        if (layout == ir::TmemLayout::layout_b) lay = ir::TmemLayout::warpx2_02_13;
        k.views.push_back(cast_view("a_tmem", "a_cells", g.a.dtype, a_pack, lay,
                                    mg > 1 ? std::optional<int>((layout == ir::TmemLayout::layout_b ? 64 : 128) * mg) : std::nullopt));
      }
    }
    detail::StagedOps sf, sp;
    if (sl) sf = detail::lower_scales(g, *sl, k, d_all + a_columns);
    if (g.sparse) {
      std::vector<detail::SparseRowsF> f;
      // One placement per M group and alignment (a pair's N groups share theirs).
      if (layout_f())
        for (const Piece& pc : pieces)
          if (f.empty() || f.back().row0 != pc.row0 || f.back().alignment != pc.alignment) f.push_back({pc.row0, pc.alignment, slab_of(pc)});
      sp = detail::lower_sparse(g, k, d_all + a_columns + sf_columns, f);
    }
    // A cluster of pairs (CTAs) over a block of tiles shares A along the block's tile row and B
    // along its tile column: each CTA loads its part of the shared tile and multicasts it to the
    // CTAs of its own rank in the pair of that row (column) (CLUSTER-MULTICAST). A stage of this
    // CTA is then written by the producers of its row and column, and may be rewritten only once
    // the MMAs of every pair those producers write into have completed: each pair's issuer commits
    // the stage to the empty barrier of every CTA of its row and column, which counts one arrival
    // per such pair (row + column - 1, this pair being in both).
    const int share_n = k.grid.cluster_n, share_m = k.grid.cluster_m;
    k.barriers = {{"full", 1, stages}, {"empty", share_n + share_m - 1, stages}};
    acc_barriers();
    if (a_tmem) k.barriers.push_back({"a_free", 1, 1});

    // Roles.
    ir::Role epi, prod, mma_role;
    epi.name = "epilogue";
    epi.first_warp = 0;
    epi.warps = 4;
    prod.name = "producer";
    prod.first_warp = 4;
    prod.single_thread = true;
    mma_role.name = "mma";
    mma_role.first_warp = 5;
    mma_role.single_thread = true;
    mma_role.leader_cta_only = true;

    ir::Loop pl;
    pl.k_param = "k";
    pl.block = tk;
    pl.body.push_back(barrier_op<ir::Wait>("empty", 0, true));  // the first pass finds every stage empty
    ir::Op ex = barrier_op<ir::ExpectTx>("full");
    ex.as<ir::ExpectTx>()->leader_only = cta == 2;
    pl.body.push_back(ex);
    for (auto& o : shared_loads()) pl.body.push_back(o);
    for (auto& o : sf.loads) pl.body.push_back(o);
    for (auto& o : sp.loads) pl.body.push_back(o);
    prod.nodes.push_back(loop_node(pl));

    ir::Loop ml;
    ml.k_param = "k";
    ml.block = tk;
    if (persistent) mma_role.nodes.push_back(node(acc_empty_wait()));
    ml.body.push_back(barrier_op<ir::Wait>("full"));
    if (a_tmem) {
      // A in tensor memory is single-buffered: the next K block's copy waits until the MMAs that
      // read this one completed (tcgen05.mma then tcgen05.cp is not ordered, §9.7.16.6.2).
      ir::Op wait_free = barrier_op<ir::Wait>("a_free", 1);
      wait_free.note =
          "A in tensor memory is single-buffered: this K block's tcgen05.cp waits until the previous block's "
          "MMAs have read it (their tcgen05.commit arrives on a_free)";
      ml.body.push_back(wait_free);
      ir::Copy cpy;
      cpy.src = {"a", kPtr};
      if (layout_f()) {
        for (int j = 0; j < slabs; ++j) {
          ir::Copy c = cpy;
          c.rows = std::array<int64_t, 2>{128 * j, 128 * j + 128};
          c.dst = {"a_slab" + s(j), kPtr};
          ml.body.push_back(op(std::move(c)));
        }
      } else {
        cpy.dst = {"a_tmem", kPtr};
        ml.body.push_back(op(std::move(cpy)));
      }
    }
    for (auto& o : sf.copies) ml.body.push_back(o);
    for (auto& o : sp.copies) ml.body.push_back(o);
    for (size_t i = 0; i < pieces.size(); ++i) {
      const Piece& pc = pieces[i];
      ir::Mma m;
      if (sl) {
        m.scale_a = sf.scale_a;
        m.scale_b = sf.scale_b;
        m.vec = isa::stored_scale_vec(sl->vec, g.sparse);  // the .blockN: A's stored elements
        m.kind_override = kind;
        m.scale_ptr = "/gemm/scale";
        m.vec_ptr = "/gemm/scale/vec";
      }
      if (g.sparse) {
        m.metadata = layout_f() ? ir::Ref{detail::sparse_view_f(slab_of(pc), pc.alignment), "/gemm/sparse"} : sp.metadata;
        m.sparse_ptr = "/gemm/sparse";
      }
      m.d = {"d" + s(static_cast<int64_t>(i)), kPtr};
      m.b = {"b", kPtr};
      m.accumulate_after_first_iteration = true;
      if (a_tmem) m.a = {layout_f() ? "a_slab" + s(slab_of(pc)) + "_f" + s(pc.alignment) : std::string("a_tmem"), kPtr};
      else m.a = {"a", kPtr};
      if (!a_tmem && pc.mi >= 0 && (mg > 1 || pieces.size() > 1)) m.a_rows = std::array<int, 2>{pc.row0, pc.row0 + pc.rows};
      // B's rows of this op (each CTA of a pair holds half of N).
      if (pc.n != tn) m.b_rows = std::array<int, 2>{pc.n0 / cta, (pc.n0 + pc.n) / cta};
      m.tmem_ring = acc_ring;
      ml.body.push_back(op(std::move(m)));
    }
    ir::Op release = barrier_op<ir::Commit>("empty");
    release.as<ir::Commit>()->release_row = share_n > 1;
    release.as<ir::Commit>()->release_column = share_m > 1;
    ml.body.push_back(release);
    if (a_tmem) ml.body.push_back(barrier_op<ir::Commit>("a_free"));
    mma_role.nodes.push_back(loop_node(ml));
    // The accumulator is complete when every MMA issued so far is.
    mma_role.nodes.push_back(node(persistent ? acc_full_op<ir::Commit>() : barrier_op<ir::Commit>("acc")));

    epi.nodes.push_back(node(persistent ? acc_full_op<ir::Wait>() : barrier_op<ir::Wait>("acc")));
    epilogue(epi);
    // The TMA epilogue releases the buffer after its last tcgen05.ld (tma_epilogue); the direct
    // stores read registers the loads fill piece by piece up to the last store.
    if (persistent && g.epilogue != spec::Epilogue::tma) epi.nodes.push_back(node(acc_empty_arrive()));
    std::sort(k.views.begin(), k.views.end(), [](const ir::TmemView& a, const ir::TmemView& b) { return a.name < b.name; });

    epi.persistent = prod.persistent = mma_role.persistent = persistent;
    k.roles = {epi, prod, mma_role};
    k.threads = 192;
    k.alloc_warp = 5;
  }

  static ir::Node loop_node(ir::Loop l) {
    ir::Node n;
    n.is_loop = true;
    n.op = op(ir::Wait{});
    n.loop = std::move(l);
    return n;
  }

  // tcgen05 epilogue: every M group of every piece in chunks of at most 32 columns, read by warps
  // 0-3 (tcgen05.ld reaches a warp's own 32-lane quarter, §9.7.16.8.1) and stored to D, clipped.
  void epilogue(ir::Role& epi) {
    int chunk_id = 0;
    // Gated: the loops below walk the gate's columns (the accumulator's first half, GLU-LAYOUT's
    // layout D) and pair each chunk with up's, tile.n / 2 columns on.
    const int up = g.glu ? tn / 2 : 0;
    // "epilogue": "tma": the same runs of D's cells, stored box by box through shared memory.
    const bool tma = g.epilogue == spec::Epilogue::tma;
    std::vector<detail::Segment> segments;
    // Columns [c0, c1) of `cells` (a rows view), lanes [l0, l1), to D's row `row` and column `col`.
    auto chunks = [&](const std::string& cells, int c0, int c1, int l0, int l1, const ir::Affine& row, int64_t col,
                      std::optional<isa::LdShape> shape) {
      if (up) c1 = c0 + (c1 - c0) / 2;
      if (tma) {
        segments.push_back({cells, c0, c1, l0, l1, layout_f() ? 64 : l1 - l0, row, col, shape});
        return;
      }
      for (int c = c0; c < c1;) {
        int num = 32;
        while (num > c1 - c) num >>= 1;
        const std::string name = "chunk" + s(chunk_id++);
        if (l0 || l1 != 128) k.views.push_back(slice_view(name, cells, std::array<int64_t, 2>{l0, l1}, {c, c + num}));
        else k.views.push_back(slice_view(name, cells, std::nullopt, {c, c + num}));
        auto load = [&](const std::string& view, const std::string& regs) {
          ir::TmemLoad ld;
          ld.src = {view, kPtr};
          ld.regs = {regs, kPtr};
          ld.access.shape = shape;
          ld.tmem_ring = acc_ring;
          epi.nodes.push_back(node(op(std::move(ld))));
        };
        load(name, "acc_regs");
        if (up) {
          if (l0 || l1 != 128) throw std::logic_error("a gated epilogue over part of the lanes");
          k.views.push_back(slice_view(name + "_up", cells, std::nullopt, {c + up, c + up + num}));
          load(name + "_up", "up_regs");
        }
        ir::Store st;
        st.regs = {"acc_regs", kPtr};
        st.dst = {"D", kPtr};
        st.clip = true;
        st.pos.at[0] = row;
        st.pos.at[1].n_tile = d_tile_n();
        st.pos.at[1].base = col + (c - c0);
        for (ir::Op& f : detail::fused_epilogue(g, "acc_regs", st.pos, up ? "up_regs" : "")) epi.nodes.push_back(node(std::move(f)));
        epi.nodes.push_back(node(op(std::move(st))));
        c += num;
      }
    };
    for (size_t i = 0; i < pieces.size(); ++i) {
      const Piece& pc = pieces[i];
      const std::string d = "d" + s(static_cast<int64_t>(i));
      if (layout_f()) {
        // 16-lane pieces: .16x256b, each thread two adjacent columns of a row per register pair.
        ir::Affine row;
        row.m_tile = tm;
        row.base = pc.row0;
        if (cta == 1) {
          chunks(d, 0, pc.n, 0, 128, row, pc.n0, isa::LdShape::s16x256b);
        } else {
          // Layout C: each CTA's own rows; instruction column j < N/2 from CTA 0's B, as layout A.
          row.rank = tm / 2;
          chunks(d, 0, pc.n / 2, 0, 128, row, pc.n0 / 2, isa::LdShape::s16x256b);
          chunks(d, pc.n / 2, pc.n, 0, 128, row, tn / 2 + pc.n0 / 2, isa::LdShape::s16x256b);
        }
        continue;
      }
      for (int mi = 0; mi < pc.blocks; ++mi) {
        ir::Affine row;
        row.m_tile = tm;
        row.rank = cta == 2 ? tm / 2 : 0;
        row.base = rows_cta * mi;
        const int b0 = static_cast<int>(pc.block_cols) * mi;
        if (cta == 1) {
          chunks(d + "_cells", b0, b0 + pc.n, 0, 128, row, pc.n0, std::nullopt);
        } else if (layout == ir::TmemLayout::rows) {
          // Layout A: instruction column j < N/2 came from CTA 0's B rows n0/2 + j, the rest from CTA 1's.
          chunks(d + "_cells", b0, b0 + pc.n / 2, 0, 128, row, pc.n0 / 2, std::nullopt);
          chunks(d + "_cells", b0 + pc.n / 2, b0 + pc.n, 0, 128, row, tn / 2 + pc.n0 / 2, std::nullopt);
        } else {
          // Layout B: lanes 0-63 hold row r's first N/2 columns, lanes 64-127 its second N/2; read
          // each half through a rows view of its 64 lanes.
          chunks(d + "_cells", b0, b0 + pc.n / 2, 0, 64, row, pc.n0 / 2, std::nullopt);
          chunks(d + "_cells", b0, b0 + pc.n / 2, 64, 128, row, tn / 2 + pc.n0 / 2, std::nullopt);
        }
      }
    }
    if (tma)
      detail::tma_epilogue(k, epi, segments,
                           {g.d, d_tile_n(), persistent, acc_ring, &g, up,
                            persistent ? std::optional<ir::Op>(acc_empty_arrive()) : std::nullopt});
  }

  // A persistent CTA's accumulator: two buffers in tensor memory when 2 x D's columns (and A's)
  // fit, so that the epilogue of one tile reads one while the MMAs of the next fill the other;
  // otherwise one, which the next tile's MMAs wait for the epilogue to release. `ptxgen plan`
  // says which (Kernel::chosen).
  // `extra`: the columns of the block-scale factors and sparsity metadata beside D and A.
  void acc_buffers(uint32_t extra) {
    const uint32_t columns = static_cast<uint32_t>(isa::target_info(spec.target).tmem_columns);
    const std::string d = s(d_columns), a = (a_columns ? " and A's " + s(a_columns) : "") + (extra ? " and " + s(extra) + " of factors or metadata" : "");
    const uint32_t beside = a_columns + extra;  // what lies after D's buffers
    if (2 * d_columns + beside <= columns) {
      acc_stages = 2;
      acc_ring = {2, d_columns};
      k.views.push_back(slice_view("d_buffer1_cells", "tmem", std::nullopt, {d_columns, 2 * d_columns}));
      k.chosen.push_back("accumulator: two buffers of " + d + " tensor-memory columns (2 x " + d + a + " of " + s(columns) +
                         "): a tile's epilogue reads one while the next tile's MMAs fill the other");
    } else {
      k.chosen.push_back("accumulator: one buffer of " + d + " tensor-memory columns (two" + a + " would need " +
                         s(2 * d_columns + beside) + " of " + s(columns) +
                         "): the next tile's MMAs wait until the epilogue has read this one");
    }
  }

  // The persistent handshake of the accumulator ring over the CTA's tiles: the MMA issuer commits
  // a tile's MMAs to acc_full[b] and waits for acc_empty[b] before it writes buffer b again (the
  // first pass finds every buffer empty); the epilogue waits for acc_full[b] and, once its
  // tcgen05.ld of the buffer completed, every epilogue thread arrives on acc_empty[b] (in a pair
  // both CTAs' threads on CTA 0's, where the issuer waits). One "acc" barrier otherwise.
  void acc_barriers() {
    if (!persistent) {
      k.barriers.push_back({"acc", 1, 1});
      return;
    }
    k.barriers.push_back({"acc_full", 1, acc_stages});
    k.barriers.push_back({"acc_empty", 128 * cta, acc_stages});
  }
  template <class T>
  static ir::Op acc_full_op() {
    ir::Op o = barrier_op<T>("acc_full");
    o.phase.tile = true;
    return o;
  }
  static ir::Op acc_empty_wait() {
    ir::Op o = barrier_op<ir::Wait>("acc_empty", 0, true);
    o.phase.tile = true;
    o.note = "wait until this tile's accumulator buffer is free: the epilogue has read what an earlier tile left in it";
    return o;
  }
  ir::Op acc_empty_arrive() const {
    ir::Op o = barrier_op<ir::Arrive>("acc_empty");
    o.phase.tile = true;
    o.as<ir::Arrive>()->to_leader = cta == 2;
    o.note = std::string("release this tile's accumulator buffer to the MMA issuer") + (cta == 2 ? " (on CTA 0's barrier)" : "");
    return o;
  }

  void wgmma() {
    kind = *isa::wgmma_kind(g.a.dtype, g.b.dtype);
    // Cooperative: warpgroup w of the consumers computes rows [64 w, 64 w + 64) of every tile.
    // Ping-pong: two consumer warpgroups take alternate tiles of the persistent CTA, each the
    // whole tile (tile.m / 64 stacked m64 wgmmas), so that one's epilogue overlaps the other's
    // main loop; each stage of the ring is then read by one warpgroup.
    const bool pingpong = g.consumers == spec::Consumers::pingpong;
    const int warpgroups = pingpong ? 2 : tm / 64;
    const int readers = pingpong ? 1 : warpgroups;  // consumer warpgroups that read one stage
    k.tiles.push_back(tile("a", g.a, g.swizzle_a, tm, isa::value_bits(g.a.dtype)));
    k.tiles.push_back(tile("b", g.b, g.swizzle_b, tn, isa::value_bits(g.b.dtype)));
    const int consumers = 128 * warpgroups;
    // A cluster's CTAs cover a block of tiles: those of a tile row share A's tile, those of a tile
    // column B's. Each CTA loads its part of a shared tile and multicasts it to the CTAs that share
    // it (CLUSTER-MULTICAST), so a stage of this CTA is written by the producers of its block row
    // and column, and may be only once their CTAs' consumers released it: each consumer warpgroup
    // arrives on the stage's empty barrier in every CTA of its row and column (row + column - 1
    // CTAs, so as many arrivals per warpgroup; a wgmma group is the warpgroup's, so its completion
    // is seen by each of its warps).
    const int share_n = k.grid.cluster_n, share_m = k.grid.cluster_m;
    const int mc = share_n * share_m, sharers = share_n + share_m - 1;
    k.barriers = {{"full", 1, stages}, {"empty", mc > 1 ? sharers * readers : 128 * readers, stages}};
    // Ping-pong consumers hand the main loop to each other: a consumer waits on the full barriers
    // of its tile's K blocks only once the other has passed those of the tile before (its main
    // loop done). A parity wait tells only the two phases apart, so a consumer a whole tile of K
    // blocks ahead of the ring would pass on an earlier phase of the same parity; the hand-off also
    // alternates the main loops and the epilogues, as intended. mainloop<w>: consumer w may start.
    if (pingpong) k.barriers.insert(k.barriers.end(), {{"mainloop0", 128, 1}, {"mainloop1", 128, 1}});
    const bool a_regs = g.a_source == spec::ASource::registers;
    ir::Role prod;
    prod.name = "producer";
    prod.first_warp = 4 * warpgroups;
    prod.single_thread = true;
    int consumer_budget = 0;
    if (g.registers) {
      // setmaxnreg acts on whole warpgroups (§9.7.19.5): the producer is one, lowering its budget
      // so that the consumers can raise theirs; one thread of it issues.
      prod.warps = 4;
      prod.max_registers = static_cast<int>(g.registers->producer);
      consumer_budget = static_cast<int>(g.registers->consumer);
    }
    ir::Loop pl;
    pl.k_param = "k";
    pl.block = tk;
    pl.body.push_back(barrier_op<ir::Wait>("empty", 0, true));
    pl.body.push_back(barrier_op<ir::ExpectTx>("full"));
    for (auto& o : shared_loads()) pl.body.push_back(o);
    prod.nodes.push_back(loop_node(pl));
    // The consumer role: cooperative, all warpgroups; ping-pong, one warpgroup of turn `turn`.
    auto consumer = [&](const std::string& name, int first_warp, int wgs, int turn) {
      ir::Role cons;
      cons.name = name;
      cons.first_warp = first_warp;
      cons.warps = 4 * wgs;
      cons.max_registers = consumer_budget;
      cons.persistent = persistent;
      if (pingpong) {
        cons.turn = turn;
        cons.turns = 2;
      }
      if (pingpong) {
        // The role's i-th tile waits for the other's main loop of the tile before: phase i of
        // mainloop1 (consumer 0's i-th), phase i - 1 of mainloop0 (consumer 1's; the first passes).
        ir::Op w = barrier_op<ir::Wait>("mainloop" + s(turn), 0, turn == 0);
        w.phase.tile = true;
        w.note = "the other consumer's main loop of the tile before is done: this role's K blocks are the ring's next";
        cons.nodes.push_back(node(w));
      }
      ir::Loop cl;
      cl.k_param = "k";
      cl.block = tk;
      cl.body.push_back(barrier_op<ir::Wait>("full"));
      ir::Mma m;
      m.a = {"a", kPtr};
      m.b = {"b", kPtr};
      m.d = {pingpong ? "acc" + s(turn) : "acc", kPtr};
      m.acc_dtype = g.accumulator;
      m.a_registers = a_regs;
      m.accumulate_after_first_iteration = true;
      if (pingpong) m.warpgroup_rows = tm;
      // Gated: the gate's accumulators from the B tile's first half, up's from its second (the
      // loads put up's rows there), each its own register set of the same fragment layout, so
      // that register j of both holds the same row and column of the two halves.
      ir::Mma m_up = m;
      if (g.glu) {
        m.b_rows = std::array<int, 2>{0, tn / 2};
        m_up.b_rows = std::array<int, 2>{tn / 2, tn};
        m_up.d.name += "_up";
      }
      // Block-wise f32 scales (docs/spec.md, "Block scaling"): the K block's wgmmas into a set of
      // their own (scale-d 0 at the block's first, §9.7.15.5.2), then acc = partial * (sa sb) + acc
      // in registers, each row's sa (the rows a thread's fragment holds, §9.7.15.5.1.1) times the
      // tile's sb, loaded while the wgmmas run; acc starts at 0 (zeroed before the loop).
      const bool blockwise = g.scale && g.scale->blockwise();
      // Two sets of partial sums (scale.partials 2): the loop is unrolled by two and block kb's
      // wgmmas fill set kb % 2, its factors registers of their own beside it. Block kb waits for
      // block kb - 1's group (wgmma.wait_group 0, §9.7.15.7), releases its stage, issues its own
      // wgmmas and then promotes block kb - 1's set (lag 1) while they run. Waiting for the older
      // group with wait_group 1 after the issue would keep the tensor pipe fed across the block
      // boundary too, but ptxas 13.0 then serializes every wgmma (C7514: accumulator registers
      // read "between start and end of the pipeline stage"); after wait_group 0 it does not.
      const bool two = blockwise && g.scale->partials == 2;
      const std::string acc = m.d.name;
      const std::string t = pingpong ? s(turn) : "";
      auto set = [&](const char* name, int parity) { return std::string(name) + t + (two ? "_" + s(parity) : ""); };
      auto release = [&](int lag) {
        ir::Op o = barrier_op<ir::Arrive>("empty", lag);
        if (mc > 1) {
          ir::Arrive& a = *o.as<ir::Arrive>();
          a.per_warpgroup = true;
          a.cluster_ctas = mc;
          a.release_row = share_n > 1;
          a.release_column = share_m > 1;
        }
        return o;
      };
      if (two) {
        cl.unroll = 2;
        ir::Op w = op(ir::MmaWait{});
        w.note = "block kb - 1's wgmmas complete: their stage is free and their set is promoted while block kb's run";
        cl.body.push_back(w);
      }
      for (int parity = 0; parity < (two ? 2 : 1); ++parity) {
        ir::Mma mp = m;
        if (blockwise) {
          mp.d.name = set("partial", parity);
          mp.accumulate_after_first_iteration = false;
        }
        ir::Op o = op(mp);
        if (two) o.phase.parity = parity;
        cl.body.push_back(o);
      }
      if (g.glu) cl.body.push_back(op(m_up));
      if (two) cl.body.push_back(release(1));
      if (blockwise)
        for (int parity = 0; parity < (two ? 2 : 1); ++parity) blockwise_reads(cl, {set("partial", parity), kPtr}, set("", parity), two ? parity : -1);
      // At most one K block's wgmma groups in flight (one group, or the gate's and up's): the
      // previous K block's stage is no longer read, and is released; with one stage, or A in
      // registers (rewritten next block), the groups complete first; with one set of block-wise
      // partial sums, they are read right away.
      const bool serial = stages == 1 || a_regs || (blockwise && !two);
      if (!two) {
        ir::MmaWait wt;
        wt.pending = serial ? 0 : g.glu ? 2 : 1;
        cl.body.push_back(op(wt));
      }
      // acc = partial * (sa sb) + acc: the K block's set, or with two sets the previous block's
      // (lag 1), whose group the wait completed; after the loop the last block's (promote()).
      auto promote = [&](std::vector<ir::Op>& out, int lag) {
        for (int parity = 0; parity < (two ? 2 : 1); ++parity) {
          ir::Math f;
          f.fn = MathFn::fma;
          f.regs = f.c = {acc, kPtr};
          f.a = {set("partial", parity), kPtr};
          f.b = {set("sab", parity), kPtr};
          f.c_from_iteration_1 = true;
          ir::Op o = op(f);
          if (two) {
            o.phase.parity = parity;
            o.phase.lag = lag;
          }
          out.push_back(o);
        }
      };
      if (blockwise) promote(cl.body, two ? 1 : 0);
      m.d.name = acc;
      if (!two) cl.body.push_back(release(serial ? 0 : 1));
      cons.nodes.push_back(loop_node(cl));
      if (pingpong) {
        ir::Op h = barrier_op<ir::Arrive>("mainloop" + s(1 - turn));
        h.note = "hand the main loop to the other consumer: its tile's K blocks follow in the ring";
        cons.nodes.push_back(node(h));
      }
      ir::MmaWait w0;
      w0.pending = 0;
      cons.nodes.push_back(node(op(w0)));
      if (two) {  // the last K block's partial sums, of the set of its parity
        std::vector<ir::Op> last;
        promote(last, 1);
        for (ir::Op& o : last) cons.nodes.push_back(node(std::move(o)));
      }
      if (persistent && !serial) {
        // The loop released every stage but its last one's; the next tile's loads need that too.
        ir::Op rel = release(1);
        rel.note = "release the last K block's stage: the next tile's loads reuse it";
        cons.nodes.push_back(node(rel));
      }
      ir::Store st;
      st.regs = m.d;
      st.dst = {"D", kPtr};
      st.clip = true;
      st.pos.at[0].m_tile = tm;
      st.pos.at[1].n_tile = d_tile_n();
      for (ir::Op& f : detail::fused_epilogue(g, m.d.name, st.pos, g.glu ? m_up.d.name : "")) cons.nodes.push_back(node(std::move(f)));
      if (g.epilogue != spec::Epilogue::direct) {
        // D through shared memory: a K-major tile of tm x tn elements in 128-byte swizzled boxes
        // (what a TMA box of 128 bytes by a warpgroup's rows reads), stored by TMA. A data-parallel
        // CTA's ring is free once its consumers' last wgmma completed, so the tile may overlay it; a
        // persistent CTA's producer is already filling the ring for the next tile, and ping-pong
        // consumers each have their own tile, written while the other computes.
        ir::Tile d;
        d.name = pingpong ? "d_stage" + s(turn) : "d_stage";
        d.ptr = std::string(kPtr) + "/epilogue";
        d.dtype = g.d;
        d.rows = tm;
        // Two subtile buffers of one 128-byte box each (spec::d_subtiles), or the whole tile.
        st.subtiles = spec::d_subtiles(g, spec.target);
        d.cols = st.subtiles ? 2 * 128 / (isa::value_bits(g.d) / 8) : d_tile_n();
        d.major = isa::Major::k;
        d.swizzle = isa::Swizzle::b128;
        d.shape_ptr = d.swizzle_ptr = d.major_ptr = d.ptr;
        if (!persistent) {  // the planner lays it over the ring where it fits (else its own memory)
          d.overlay = "a";
          st.via_shared_by = consumers;
        }
        k.tiles.push_back(d);
        st.tma = true;
        st.via = {d.name, d.ptr};
        st.map_param = "tmap_d";
        // "auto": and the direct store where a tensor map cannot stride D's rows at run time.
        st.direct_fallback = g.epilogue == spec::Epilogue::automatic;
      }
      cons.nodes.push_back(node(op(std::move(st))));
      return cons;
    };
    prod.persistent = persistent;
    if (pingpong) k.roles = {consumer("consumer0", 0, 1, 0), consumer("consumer1", 4, 1, 1), prod};
    else k.roles = {consumer("consumer", 0, warpgroups, 0), prod};
    k.threads = 128 * warpgroups + 32 * prod.warps;
    // An SM's 64K registers are four banks of 16K, one per warp scheduler, and warps are spread over
    // the schedulers round-robin, so the busiest scheduler holds ceil(warps / 4) warps; registers are
    // allocated per thread in units of 8 (docs/architecture.md, ISA reading 10).
    const int warps = k.threads / 32;
    k.max_registers = std::min(255, 16384 / (32 * ((warps + 3) / 4)) / 8 * 8);
  }

  // The K block's factors beside its wgmmas: sa (A's, row_vector: each row of the tile its own, K
  // block kb's row of SFA) and sb (B's, one element: the tile's N block, K block kb), and their
  // product sab = sa * sb (mul.rn.f32), which the partial sums are multiplied by.
  // `t` ends the sets' names (the ping-pong turn, the parity); `parity` >= 0: the reads are of the
  // loop's iterations of that parity (Phase::parity).
  void blockwise_reads(ir::Loop& cl, const ir::Ref& partial, const std::string& t, int parity) {
    const size_t first = cl.body.size();
    ir::Read a;
    a.src = {"SFA", kPtr};
    a.regs = {"sa" + t, kPtr};
    a.like = partial;
    a.at = ir::ReadAt::row_vector;
    a.pos.at[0].k_block = 1;
    a.pos.at[1].m_tile = tm;
    cl.body.push_back(op(a));
    ir::Read b;
    b.src = {"SFB", kPtr};
    b.regs = {"sb" + t, kPtr};
    b.like = partial;
    b.at = ir::ReadAt::element;
    b.pos.at[0].n_tile = tn / g.scale->vec;  // SCALE-BLOCK-TILE: tile.n is the factors' 128
    b.pos.at[1].k_block = 1;
    cl.body.push_back(op(b));
    ir::Math p;
    p.fn = MathFn::mul;
    p.regs = {"sab" + t, kPtr};
    p.a = a.regs;
    p.b = b.regs;
    cl.body.push_back(op(p));
    for (size_t i = first; i < cl.body.size(); ++i) cl.body[i].phase.parity = parity;
  }

  ir::Kernel run() {
    k.name = spec.name;
    k.target = spec.target;
    k.source = "gemm";
    k.chosen = g.chosen;
    // The fused epilogue in its order (fused_epilogue), as launchers and references apply it; alpha
    // and beta of 1 are no step (the manifest's "epilogue_constants" give the others' values).
    // (An input alpha or beta is the same step, its value the input's: no constant.)
    if ((g.alpha && *g.alpha != 1) || g.alpha_input) k.epilogue_ops.push_back("alpha");
    if (g.c) k.epilogue_ops.push_back((g.beta && *g.beta != 1) || g.beta_input ? "beta_c" : "c");
    if (g.bias) k.epilogue_ops.push_back("bias");
    if (g.activation) k.epilogue_ops.push_back(std::string(info(*g.activation).name));
    if (g.glu) k.epilogue_ops.push_back(std::string(spec::name(*g.glu)));
    if (g.residual) k.epilogue_ops.push_back("residual");
    if (g.amax) k.epilogue_ops.push_back("amax");
    if (g.d_scale) k.epilogue_ops.push_back("d_scale");
    if (g.quantize) k.epilogue_ops.push_back(std::string(spec::name(*g.quantize)));
    if (g.alpha && *g.alpha != 1) k.epilogue_constants.emplace_back("alpha", *g.alpha);
    if (g.c && g.beta && *g.beta != 1) k.epilogue_constants.emplace_back("beta", *g.beta);
    cta = g.cta_group;
    tm = static_cast<int>(g.tile.m);
    tn = static_cast<int>(g.tile.n);
    tk = static_cast<int>(g.tile.k);
    stages = static_cast<int>(g.stages);
    k.cta_group = cta;
    k.cta_group_ptr = std::string(kPtr) + "/cta_group";
    k.cluster = {static_cast<int>(g.cluster[0]), static_cast<int>(g.cluster[1]), static_cast<int>(g.cluster[2])};
    persistent = g.schedule == spec::Schedule::persistent;
    // The grid walks D's tiles: a gated activation's are tile.n / 2 of D's n / 2 columns ("d").
    k.grid = {true, tm, g.glu ? tn / 2 : tn, tk, "m", g.glu ? "d" : "n", static_cast<int>(g.raster), persistent};
    if (g.cluster[0] * g.cluster[1] > cta) {
      // The cluster's CTAs (pairs) cover a block of tiles, cluster[1] rows by cluster[0] / cta_group
      // columns (the grid's y walks M tiles, x N tiles, cta_group CTAs a tile); a persistent grid
      // is one row of CTAs, so its clusters are launched as one row too and each CTA finds its place
      // in the block by its rank.
      k.grid.cluster_m = static_cast<int>(g.cluster[1]);
      k.grid.cluster_n = static_cast<int>(g.cluster[0]) / cta;
      if (persistent) k.cluster = {static_cast<int>(g.cluster[0] * g.cluster[1]), 1, 1};
    }
    k.smem_ptr = std::string(kPtr) + "/stages";
    k.tmem_ptr = std::string(kPtr) + "/tile/n";
    globals();
    const bool tc = isa::target_info(spec.target).tcgen05;
    k.engine = tc ? ir::Engine::tcgen05 : ir::Engine::wgmma;
    if (tc) tcgen05();
    else wgmma();
    if (g.groups) group();
    return std::move(k);
  }

  // Grouped GEMM (docs/spec.md, "Grouped GEMM"). Masked layout: A, B and D one plane per group
  // ([G, m, K], [G, N, K], [G, m, N] in their majors), the grid's z the group, and the int32
  // masked_m[G] each CTA reads its group's valid rows from. Contiguous layout: A and D one GEMM's
  // rows, the groups' segments in them; B one plane per group; the int32 ends[G] each CTA finds its
  // group's segment in. Every access of the kernel to a grouped tensor lies in its group's plane: TMA
  // loads and stores take it as their third coordinate, so one tensor map per operand addresses
  // every group and clips each group's rows at the capacity m.
  void group() {
    const bool masked = g.groups->layout == spec::GroupsLayout::masked;
    if (!masked && g.groups->layout != spec::GroupsLayout::contiguous) throw std::logic_error("a grouped layout that is not built");
    const int64_t count = g.groups->count;
    k.size_params.push_back({"groups", count, "", 1, 1});
    // A bias is each group's own: a row of n per group ([G, n], along N), or in the masked layout a
    // column of each group's capacity ([G, m], along M); the contiguous layout's bias along M is one
    // vector over A's rows, as A and D are.
    const bool group_bias = g.bias && (!g.bias->along_m || masked);
    for (ir::Global& x : k.globals) {
      if (x.name != "B" && (!masked || (x.name != "A" && x.name != "D")) && !(x.name == "bias" && group_bias)) continue;
      x.planes = count;
      x.planes_param = "groups";
      x.grouped = true;
    }
    ir::Global rows;
    rows.name = masked ? "masked_m" : "ends";
    rows.ptr = std::string(kPtr) + "/groups";
    rows.dtype = isa::DType::s32;
    rows.rows = 1;
    rows.cols = rows.ld = count;
    rows.cols_param = rows.ld_param = "groups";
    rows.param = rows.name;
    rows.dims = {"1", "groups"};
    k.globals.push_back(rows);
    k.grid.groups_param = "groups";
    (masked ? k.grid.group_rows : k.grid.group_ends) = rows.name;
    if (!masked) k.grid.group_align = g.groups->align;
    ir::Affine plane;
    plane.group = 1;
    auto grouped = [&](const Ref& r) {
      for (const ir::Global& x : k.globals)
        if (x.name == r.name) return x.grouped;
      return false;
    };
    auto place = [&](ir::Op& o) {
      if (auto* l = o.as<ir::Load>(); l && grouped(l->src)) l->plane = plane;
      if (auto* st = o.as<ir::Store>(); st && grouped(st->dst)) st->plane = plane;
    };
    for (ir::Role& r : k.roles)
      for (ir::Node& n : r.nodes) {
        if (!n.is_loop) place(n.op);
        for (ir::Op& o : n.loop.body) place(o);
      }
  }
};

}  // namespace

ir::Kernel lower_gemm(const spec::Spec& s) { return Gemm(s).run(); }

}  // namespace ptxgen::lower
