// The mma op, in Mosaic GPU's four steps, each a function below: (1) types and kind, (2)
// instruction shapes, (3) descriptors, tensor-memory addresses, scale-factor IDs and sparsity
// selectors, (4) issue order. tcgen05.mma: dense, block-scaled (§9.7.16.10.7) and sparse
// (§9.7.16.10.8), .cta_group::1 or a CTA pair's ::2, A from shared or tensor memory, M in 128-row
// groups (data-path layout D; a pair's 256, layout A) or 64-row groups (layout F, M = 64; a pair's
// dense 128, layout B), several of them side by side in the columns. wgmma (sm_90a): D in the
// registers of each warpgroup of the role, 64 rows each, A from shared memory or registers.
#include <algorithm>
#include <stdexcept>
#include <tuple>

#include "internal.hpp"

namespace ptxgen::plan::detail {

namespace {

std::string s(int64_t v) { return std::to_string(v); }
std::string dt(isa::DType t) { return std::string(isa::name(t)); }
std::string kn(isa::Kind k) { return ".kind::" + std::string(isa::name(k)); }
int ceil_div(int a, int b) { return (a + b - 1) / b; }

struct Operands {
  const SmemPlacement* a_tile = nullptr;
  const ResolvedView* a_view = nullptr;
  const SmemPlacement* b = nullptr;
  const ResolvedView* d = nullptr;
  const ResolvedView* sfa = nullptr;
  const ResolvedView* sfb = nullptr;
  const ResolvedView* meta = nullptr;
};

bool lookup(Ctx& c, const ir::Op& o, Operands& x) {
  bool ok = true;
  const std::string ak = c.kind_of(o.a.name);
  if (ak == "a tensor-memory view") {
    x.a_view = c.view(o.a, "mma A");
    ok &= x.a_view != nullptr;
  } else if (ak == "a global tensor") {
    c.problem("OP-OPERAND", o.a.ptr,
              "\"" + o.a.name + "\" is a global tensor; tcgen05.mma reads A from shared memory (a tile) or tensor memory (a view)",
              {"load it into a shared-memory tile first"});
    ok = false;
  } else {
    x.a_tile = c.tile(o.a, "mma A");
    ok &= x.a_tile != nullptr;
  }
  x.b = c.tile(o.b, "mma B (tcgen05.mma reads B from shared memory)");
  x.d = c.view(o.d, "mma D (the accumulator lives in tensor memory)");
  ok &= x.b && x.d;
  if (o.scale_a) {
    x.sfa = c.view(o.scale_a, "scale factors of A");
    x.sfb = c.view(o.scale_b, "scale factors of B");
    ok &= x.sfa && x.sfb;
  }
  if (o.metadata) {
    x.meta = c.view(o.metadata, "sparsity metadata");
    ok &= x.meta != nullptr;
  }
  return ok;
}

bool packed_e2m1(const Operands& x) {
  const bool a = x.a_tile ? (x.a_tile->dtype == isa::DType::e2m1 && x.a_tile->bits == 4)
                          : (x.a_view->dtype == isa::DType::e2m1 && x.a_view->packing == 8);
  const bool b = x.b->dtype == isa::DType::e2m1 && x.b->bits == 4;
  return a || b;
}



// What the four steps share: the op's operands and what each step derived.
struct Mma {
  Ctx& c;
  const ir::Op& o;
  Operands x;
  MmaStep m;
  // step 1
  isa::DType ta = isa::DType::bf16, tb = isa::DType::bf16, acc = isa::DType::f32;
  int f_align = -1;
  bool m64 = false, lb = false, pair = false;
  // step 2
  int M = 0, N = 0, KB = 0, m_instr = 128, m_idesc = 128, mg = 1, cg = 1;
  int64_t KA = 0;
  int a_row0 = 0, b_row0 = 0;  // first rows of A and B the op reads (a row range of the tile)
  std::vector<int> ng;
  int k_instr = 16, ka_instr = 16, ks = 1;
};

// ---- Step 1: types and kind ---------------------------------------------------------------------
bool step1_types(Mma& q) {
  Ctx& c = q.c;
  const ir::Op& o = q.o;
  Operands& x = q.x;
  MmaStep& m = q.m;
  q.ta = x.a_tile ? x.a_tile->dtype : x.a_view->dtype;
  q.tb = x.b->dtype;
  q.acc = x.d->dtype;
  const isa::DType ta = q.ta, tb = q.tb, acc = q.acc;
  m.sparse = x.meta != nullptr;
  m.scaled = x.sfa != nullptr;
  const bool packed = packed_e2m1(x);
  std::optional<isa::Kind> kind;
  if (m.scaled) {
    m.scale_dtype = x.sfa->dtype;
    if ((x.sfa->dtype != isa::DType::ue8m0 && x.sfa->dtype != isa::DType::ue4m3) || x.sfb->dtype != x.sfa->dtype) {
      c.problem("OP-MMA-SCALE", o.scale_b.ptr,
                "scale factors are ue8m0 or ue4m3, one type for A and B (Tables 43/44, bit 23); they are " +
                    dt(x.sfa->dtype) + " and " + dt(x.sfb->dtype),
                {"cast both scale views to ue8m0 (or both to ue4m3)"});
      return false;
    }
    kind = isa::scaled_kind(ta, tb, m.scale_dtype, o.vec, packed);
    if (kind && o.kind_override && *o.kind_override != *kind) {
      const bool nvf4_alias = *kind == isa::Kind::mxf4 && *o.kind_override == isa::Kind::mxf4nvf4;
      if (!nvf4_alias) kind.reset();
      else kind = isa::Kind::mxf4nvf4;
    }
    if (!kind) {
      c.problem("OP-MMA-KIND", o.kind_override ? o.kind_ptr : o.b.ptr,
                "A " + dt(ta) + " and B " + dt(tb) + (packed ? " (two e2m1 per byte)" : "") + " with " + dt(m.scale_dtype) +
                    " scales form no block-scaled kind" + (o.kind_override ? " " + kn(*o.kind_override) : std::string()),
                {".kind::mxf8f6f4: any of e4m3 e5m2 e2m3 e3m2 e2m1 in padded 8-bit containers",
                 ".kind::mxf4 / .kind::mxf4nvf4: e2m1 x e2m1 stored two per byte (\"format\": \"packed\")"});
      return false;
    }
  } else {
    if (packed) {
      c.problem("OP-MMA-FORMAT", o.a.ptr,
                "two e2m1 per byte is the shared-memory format of the block-scaled mxf4 kinds (§9.7.16.10.4.6); without "
                "scale factors .kind::f8f6f4 reads 4-bit elements padded to 8-bit containers (§9.7.16.10.4.4)",
                {"store the operands with \"format\": \"padded\"", "or add \"scale\" for .kind::mxf4"});
      return false;
    }
    kind = isa::unscaled_kind(ta, tb);
    if (kind && o.kind_override && *o.kind_override != *kind) kind.reset();
    if (!kind) {
      c.problem("OP-MMA-KIND", o.kind_override ? o.kind_ptr : o.b.ptr,
                "A " + dt(ta) + " and B " + dt(tb) + " form no tcgen05.mma kind" +
                    (o.kind_override ? " " + kn(*o.kind_override) + (isa::is_block_scaled(*o.kind_override) ? " (it needs \"scale\")" : "") : std::string()),
                {"kind::f16: f16 x f16 or bf16 x bf16; kind::tf32; kind::f8f6f4: e4m3 e5m2 e2m3 e3m2 e2m1; kind::i8: s8 u8"});
      return false;
    }
  }
  m.kind = *kind;
  if (packed && m.kind == isa::Kind::mxf8f6f4) {
    c.problem("OP-MMA-FORMAT", o.a.ptr, ".kind::mxf8f6f4 reads 4-bit elements padded to 8-bit containers (§9.7.16.10.4.4), not two per byte");
    return false;
  }
  if (auto gap = isa::mma_target_gap(m.kind, m.sparse, c.target)) {
    c.problem("OP-MMA-TARGET", "/target", *gap, {"target sm_100a (or sm_110a), or choose other operand types"});
    return false;
  }
  if (!isa::accumulator_allowed(m.kind, ta, tb, acc)) {
    c.problem("OP-MMA-ACCUM", o.d.ptr,
              "D of " + kn(m.kind) + " with " + dt(ta) + " inputs is " + isa::accumulators_text(m.kind, ta) + ", not " + dt(acc),
              {"cast the accumulator view to " + isa::accumulators_text(m.kind, ta)});
    return false;
  }
  // D's data-path layout (§9.7.16.10.5) fixes the instruction M: all 128 lanes in the rows layout
  // for M = 128 (layout D, row i in lane i; a pair's M = 256, layout A), layout F for M = 64 (16
  // rows per 32-lane quarter; a pair's sparse M = 128, layout C), layout B for a pair's dense M =
  // 128 (64 rows per CTA, each row's second half of N in lanes 64-127).
  q.f_align = ir::layout_f_alignment(x.d->layout);
  q.m64 = q.f_align >= 0;
  q.lb = x.d->layout == ir::TmemLayout::layout_b;
  q.pair = c.k.cta_group == 2;
  const bool m64 = q.m64, lb = q.lb, pair = q.pair;
  if (x.d->packing != 1 || !(m64 || lb || (x.d->layout == ir::TmemLayout::rows && x.d->lanes == 128))) {
    c.problem("OP-MMA-D", o.d.ptr,
              "D lives one element per 32-bit column (§9.7.16.10.4.1), in a data-path layout of §9.7.16.10.5: 128 lanes, "
              "row i in lane i (layout D, M = 128), or layout F (M = 64: row i in lane 32 (i / 16) + i % 16 + an "
              "alignment of 0 or 16)" + std::string(pair ? ", or in a pair layout B (dense M = 128)" : "") + "; \"" + o.d.name +
                  "\" is " + x.d->describe(),
              {"use an unpacked (packing 1) view of all 128 lanes in the rows layout",
               "or, for M = 64, cast such a view to \"layout\": \"layout_f::0\" (or \"layout_f::16\")"});
    return false;
  }
  // Layout B is a pair's dense M = 128 only; layout F in a pair is the sparse M = 128 (layout C).
  if ((lb && (!pair || m.sparse)) || (pair && m64 && !m.sparse)) {
    c.problem("OP-MMA-D", o.d.ptr,
              lb ? (pair ? "layout B is the dense M = 128 of a CTA pair (§9.7.16.10.5.2); a sparse pair's M = 128 keeps D in "
                           "layout C, layout F's half-datapath organization (§9.7.16.10.5.3)"
                         : "layout B is where a CTA pair's dense M = 128 keeps D (§9.7.16.10.5.2); this program is one CTA")
                 : "a CTA pair's dense M = 128 keeps each CTA's 64 rows of D in layout B (§9.7.16.10.5.2: the second half "
                   "of N in lanes 64-127); layout F in a pair is the sparse M = 128 (layout C)",
              {lb ? (pair ? "cast D to \"layout\": \"layout_f::0\" (or \"layout_f::16\") for the sparse M = 128"
                          : "use a rows view (M = 128) or a layout-F view (M = 64), or make the program a pair")
                  : "cast D to \"layout\": \"layout_b\" (64 rows; its columns hold half of N)"});
    return false;
  }
  // A CTA pair (§9.7.16.5): CTA 0 issues .cta_group::2 for both; each CTA supplies its rows of A
  // and half of B's rows. Block scaling at M = 256: each CTA's scale-factor views hold A's factors
  // for its own rows and B's for all of N (docs/architecture.md, ISA reading 13). At M = 128
  // (layout B) where B's factors sit is not planned.
  if (pair && m.scaled && lb) {
    c.problem("PAIR-MMA", o.scale_ptr,
              "ptxgen does not plan block-scaled MMAs for a pair's M = 128 (layout B): where each CTA's tensor memory "
              "holds B's scale factors for that layout is not stated by the ISA",
              {"use M = 256 per pair (128 rows of A and a 128-lane rows D in each CTA)", "or \"cta_group\": 1"});
    return false;
  }
  // Majors and swizzles (Tables 51, 54).
  for (const SmemPlacement* t : {x.a_tile, x.b}) {
    if (!t) continue;
    const ir::Tile& decl = *c.tiles.at(t->name);
    const bool mn = t->layout.major == isa::Major::mn;
    if (mn && (isa::value_bits(t->dtype) < 8 || m.kind == isa::Kind::mxf4 || m.kind == isa::Kind::mxf4nvf4)) {
      c.problem("OP-MMA-MAJOR", decl.major_ptr,
                "\"" + t->name + "\" is MN-major; " + (isa::value_bits(t->dtype) < 8 ? "4- and 6-bit operands" : kn(m.kind) + " operands") +
                    " cannot be transposed (Tables 51, 54)",
                {"store it K-major"});
      return false;
    }
    const bool tf32_mn = mn && t->dtype == isa::DType::tf32;
    if (tf32_mn != (t->layout.swizzle == isa::Swizzle::b128_base32b)) {
      c.problem("OP-MMA-SWIZZLE", decl.swizzle_ptr,
                tf32_mn ? "a transposed tf32 operand needs 128-byte swizzling with 32-byte atomicity (§9.7.16.10.1)"
                        : "128-byte swizzling with 32-byte atomicity is for transposed tf32 operands only (Table 54)",
                {tf32_mn ? "write \"swizzle\": \"128_base32b\"" : "use 128, 64, 32 or 0"});
      return false;
    }
  }
  return true;
}

// ---- Step 2: instruction shapes -----------------------------------------------------------------
bool step2_shapes(Mma& q) {
  Ctx& c = q.c;
  const ir::Op& o = q.o;
  Operands& x = q.x;
  MmaStep& m = q.m;
  const isa::DType ta = q.ta;
  const bool m64 = q.m64, lb = q.lb, pair = q.pair;
  // A (and B) may be a range of the tile's rows: an instruction group the lowering placed.
  if (o.a_rows) q.a_row0 = (*o.a_rows)[0];
  if (o.b_rows) q.b_row0 = (*o.b_rows)[0];
  const int M = o.a_rows ? (*o.a_rows)[1] - (*o.a_rows)[0] : x.a_tile ? x.a_tile->layout.mn : x.a_view->rows;
  const int64_t KA = x.a_tile ? x.a_tile->layout.k : x.a_view->row_elements();
  // In a pair each CTA's B tile holds half of N (§9.7.16.10: "B ... in Shared Memory of the
  // current CTA and optionally in peer CTA").
  const int N = (o.b_rows ? (*o.b_rows)[1] - (*o.b_rows)[0] : x.b->layout.mn) * (pair ? 2 : 1);
  const int KB = x.b->layout.k;
  if (x.d->rows != M || x.d->row_elements() != N) {
    c.problem("OP-MMA-SHAPE", o.d.ptr,
              "A is " + s(M) + " rows and B " + (pair ? s(N / 2) + " rows in each CTA of the pair (N = " + s(N) + ")" : s(N) + " rows (N)") +
                  ", so D is " + s(M) + " x " + s(N) + (pair ? " in each CTA" : "") + "; \"" + o.d.name + "\" is " +
                  s(x.d->rows) + " x " + s(x.d->row_elements()),
              m64 || M % 128 == 0 || M % 64 != 0
                  ? std::vector<std::string>{"slice the accumulator to " + s(N) + " columns per M group" +
                                             (M > (m64 ? 64 : 128) ? ", and cast it to " + s(M) + " rows" : std::string())}
                  : std::vector<std::string>{"for M = " + s(M) + " (M = 64 instructions, data-path layout F), cast the "
                                             "accumulator to \"layout\": \"layout_f::0\" (or \"layout_f::16\")" +
                                             (M > 64 ? " with \"rows\": " + s(M) : std::string())});
    return false;
  }
  if ((m.sparse ? KA * 2 : KA) != KB) {
    c.problem("OP-MMA-SHAPE", o.a.ptr,
              m.sparse ? "sparse A holds K/2 elements per row (§9.7.16.10.8): A has " + s(KA) + ", B has K = " + s(KB)
                       : "A has K = " + s(KA) + ", B has K = " + s(KB));
    return false;
  }
  if (m64 && m.scaled) {
    c.problem("OP-MMA-SHAPE", o.d.ptr,
              "the block-scaled kinds have M = 128 only at .cta_group::1 (Table 39: " + kn(m.kind) +
                  " 128xNxK); a layout-F accumulator means M = 64",
              {"use 128 rows of A and a rows-layout accumulator of 128 lanes"});
    return false;
  }
  const int m_instr = m64 || lb ? 64 : 128;        // rows of each CTA per instruction
  const int m_idesc = pair ? 2 * m_instr : m_instr;  // the instruction's M (§9.7.16.10.1 Table 39)
  if (M % m_instr != 0) {
    c.problem("OP-MMA-SHAPE", o.a.ptr,
              "M = " + s(M) + " is not a multiple of the instruction M = " + s(m_instr) + " the accumulator's layout gives",
              {"use a multiple of 128 rows (rows layout) or of 64 (layout F)"});
    return false;
  }
  const int mg = M / m_instr;
  if (x.a_view) {
    // A in tensor memory sits like D: row i in lane i (layout D), or layout F at D's lane
    // alignment for M = 64 (§9.7.16.10.5: "must use the same Tensor Memory lane alignment across
    // matrices A, D and the sparsity metadata").
    const int want_pack = 32 / isa::tmem_bits(m.kind, ta);
    // Layout B (a pair's dense M = 128): each CTA's 64 rows of A twice, row i at lanes i and 64 + i,
    // which is what tcgen05.cp .64x128b.warpx2::02_13 writes (docs/architecture.md, ISA reading 13).
    const bool lanes_ok = m64  ? x.a_view->layout == x.d->layout
                          : lb ? x.a_view->layout == ir::TmemLayout::warpx2_02_13
                               : (x.a_view->layout == ir::TmemLayout::rows && x.a_view->lanes == 128);
    if (!lanes_ok || x.a_view->blocks() != mg || x.a_view->packing != want_pack) {
      c.problem("OP-MMA-A-TMEM", o.a.ptr,
                "A in tensor memory is row i where D's row i is (" +
                    (m64 ? "layout " + std::string(spec::name(x.d->layout)) + ", D's layout and lane alignment, §9.7.16.10.5"
                     : lb ? std::string("lanes i and 64 + i for layout B's D: a warpx2::02_13 view")
                         : std::string("lane i of 128")) +
                    "), K along the columns, packed " + s(want_pack) + " elements per column for " + kn(m.kind) +
                    " (§9.7.16.10.4.3-5), one " + s(m_instr) + "-row block per M group; \"" + o.a.name + "\" is " +
                    x.a_view->describe(),
                {"cast the view to packing " + s(want_pack) +
                 (m64 ? " in layout " + std::string(spec::name(x.d->layout))
                  : lb ? std::string(" in layout warpx2::02_13") : std::string(" over 128 lanes")) +
                 ", with \"rows\": " + s(M)});
      return false;
    }
  }
  const bool b8mn = x.b->layout.major == isa::Major::mn && x.b->bits == 8;
  const int align = x.b->layout.major == isa::Major::mn ? x.b->layout.atom_mn : 8;
  // A pair's N group of width n reads n / 2 rows of each CTA's B tile, from B row n0 / 2 on.
  const int cg = pair ? 2 : 1;
  const std::vector<int> ng = isa::split_n(m.kind, cg, b8mn, N, align * cg);
  if (ng.empty()) {
    c.problem("OP-MMA-SHAPE", o.b.ptr,
              "N = " + s(N) + " cannot be split into " + kn(m.kind) + (pair ? " .cta_group::2" : "") +
                  " instructions: N = " + isa::legal_n_text(m.kind, cg, b8mn) + ", at most 256 each" +
                  (pair ? ", each reading half its rows from each CTA's B at a multiple of " + s(align) + " rows" : ""));
    return false;
  }
  if (pair && ng.size() > 1) {
    // One instruction writes N contiguous columns of D from n / 2 rows of each CTA's B: with one N
    // group, D column j is CTA 0's B row j (j < N / 2) or CTA 1's row j - N / 2. Several groups
    // would interleave the two halves group by group; ptxgen keeps a pair's mma op to one group.
    c.problem("OP-MMA-SHAPE", o.b.ptr,
              "a CTA pair's mma op is one instruction wide in N: N = " + s(N) + " (" + s(N / 2) + " rows of B in each CTA) "
              "needs " + s(static_cast<int64_t>(ng.size())) + " instructions, whose halves of B would interleave in D",
              {"use at most 128 rows of B in each CTA per mma op (N <= 256), and one mma op per further slice of D"});
    return false;
  }
  const int k_instr = isa::instr_k(m.kind) * (m.sparse ? 2 : 1);
  const int ka_instr = m.sparse ? k_instr / 2 : k_instr;
  if (KB % k_instr != 0) {
    c.problem("OP-MMA-SHAPE", o.b.ptr,
              "K = " + s(KB) + " is not a multiple of " + s(k_instr) + ", the K of one " + (m.sparse ? "sparse " : "") + kn(m.kind) +
                  " instruction (Table 39)");
    return false;
  }
  const int ks = KB / k_instr;
  for (const SmemPlacement* t : {x.a_tile, x.b}) {
    if (!t || t->layout.major != isa::Major::k || t->layout.swizzle == isa::Swizzle::none) continue;
    const int kbytes = (t == x.b ? k_instr : ka_instr) * t->bits / 8;
    if (kbytes <= isa::bytes(t->layout.swizzle)) continue;
    c.problem("OP-MMA-SWIZZLE", c.tiles.at(t->name)->swizzle_ptr,
                "one instruction reads " + s(kbytes) + " bytes of K per row of \"" + t->name + "\"; a descriptor of a K-major " +
                    std::string(isa::name(t->layout.swizzle)) + " tile spans one swizzle atom row (" +
                    s(isa::bytes(t->layout.swizzle)) + " bytes) of K",
                {"use a 64- or 128-byte swizzle (or none) for the sparse B operand"});
    return false;
  }
  // Block scaling: Tables 56/57 and the layout of scale factors in tensor memory.
  auto sf_cols = [&](int rows) { return ceil_div(ks * m.scale.factors, 4) * 4 * ceil_div(rows, 128); };
  if (m.scaled) {
    const auto f = isa::scale_factors_per_instr(m.kind, m.scale_dtype, o.vec);
    if (!f) {
      c.problem("OP-MMA-SCALE-VEC", o.vec_ptr.empty() ? o.scale_ptr : o.vec_ptr,
                kn(m.kind) + " has no block size " + s(o.vec) + " with " + dt(m.scale_dtype) + " scales (Table 57): " +
                    isa::scale_combinations_text(m.kind));
      return false;
    }
    m.scale.factors = *f;
    m.scale.vec = o.vec;
    for (auto [v, ref, rows] : {std::tuple{x.sfa, &o.scale_a, M}, std::tuple{x.sfb, &o.scale_b, N}}) {
      const int need = sf_cols(rows);
      if (v->layout != ir::TmemLayout::warpx4 || v->packing != 4 || static_cast<int>(v->columns) < need) {
        c.problem("OP-MMA-SCALE", ref->ptr,
                  "scale factors sit four per 32-bit column, row r's in lane r % 32 of every quarter and column r / 32 "
                  "(§9.7.16.10.7: duplicated to all 32-lane partitions), " + s(m.scale.factors) + " per instruction: " +
                      s(ks) + " K steps x " + s(rows) + " rows need " + s(need) + " columns of a warpx4 view packed 4; \"" +
                      ref->name + "\" is " + v->describe(),
                  {"cast a 128-lane slice of " + s(need) + " columns to " + dt(m.scale_dtype) + " packing 4 layout warpx4"});
        return false;
      }
    }
  }
  if (m.sparse) {
    // Metadata row i sits where D's row i does: lane i of 128 (layout D), or layout F at D's lane
    // alignment for M = 64 (§9.7.16.10.8.5: layouts F and C "must use the same alignment across
    // matrices A, D and the sparsity metadata matrix"); the bits per row follow K (§9.7.16.10.8).
    const int per = isa::sparse_metadata_columns(m.kind);
    const int need = isa::sparse_selector_used(m.kind) ? (ks + 1) / 2 * 2 : ks * per;
    const ResolvedView& v = *x.meta;
    const bool lanes_ok = m64 ? v.layout == x.d->layout : (v.layout == ir::TmemLayout::rows && v.lanes == 128);
    if (!lanes_ok || v.blocks() != mg || static_cast<int>(v.block_columns()) < need) {
      const std::string where = m64 ? "in layout " + std::string(spec::name(x.d->layout)) + " (D's lane alignment, §9.7.16.10.8.5)"
                                     : std::string("with row i in lane i");
      c.problem("OP-MMA-SPARSE", o.metadata.ptr,
                "sparsity metadata sits " + where + ", " + s(per) + " column(s) per instruction (" + kn(m.kind) +
                    ", §9.7.16.10.8): " + s(ks) + " K steps need " + s(need) + " columns per " + s(m_instr) + "-row M group; \"" +
                    o.metadata.name + "\" is " + v.describe(),
                {m64 ? "cast a view of " + s(need) + " columns per M group to \"layout\": \"" + std::string(spec::name(x.d->layout)) + "\""
                     : "use a rows-layout view of 128 lanes with " + s(need) + " columns per M group"});
      return false;
    }
  }
  // D must not overlap what the same instructions read.
  const Region rd = region_of(*x.d);
  for (auto [v, ref] : {std::pair{x.a_view, &o.a}, std::pair{x.sfa, &o.scale_a}, std::pair{x.sfb, &o.scale_b}, std::pair{x.meta, &o.metadata}}) {
    if (v && overlap(rd, region_of(*v))) {
      c.problem("OP-MMA-OVERLAP", o.d.ptr,
                "D (" + describe(rd) + ") overlaps \"" + ref->name + "\" (" + describe(region_of(*v)) +
                    "), which the same tcgen05.mma reads");
      return false;
    }
  }
  // B's scale factors sit 32 rows per column: an N group starts on such a column.
  if (m.scaled)
    for (size_t ni = 0, n0 = 0; ni < ng.size(); n0 += static_cast<size_t>(ng[ni]), ++ni)
      if (n0 % 32 != 0) {
        c.problem("OP-MMA-SCALE", o.scale_b.ptr,
                  "the N group at column " + s(static_cast<int64_t>(n0)) + " does not start on a column of 32 rows of scale factors");
        return false;
      }
  q.M = M;
  q.N = N;
  q.KA = KA;
  q.KB = KB;
  q.m_instr = m_instr;
  q.m_idesc = m_idesc;
  q.mg = mg;
  q.cg = cg;
  q.ng = ng;
  q.k_instr = k_instr;
  q.ka_instr = ka_instr;
  q.ks = ks;
  return true;
}

// ---- Step 3: descriptors, tensor-memory addresses, scale-factor IDs, sparsity selectors --------
MmaInstr step3_descriptors(const Mma& q, int mi, int ni, int n0, int ki) {
  const Operands& x = q.x;
  const MmaStep& m = q.m;
  const ir::Op& o = q.o;
  // The lane field of D's and A's addresses: layout F's alignment (§9.7.16.10.5), else lane 0.
  const uint32_t lane0 = q.m64 ? static_cast<uint32_t>(q.f_align) : 0u;
  MmaInstr in;
  in.mi = mi;
  in.ni = ni;
  in.ki = ki;
  in.m = q.m_idesc;
  in.n = q.ng[static_cast<size_t>(ni)];
  in.k = q.k_instr;
  isa::InstrDesc& id = in.idesc;
  id.kind = m.kind;
  id.m = static_cast<unsigned>(q.m_idesc);  // §9.7.16.4.2: the descriptor holds M >> 4
  id.n = static_cast<unsigned>(in.n);
  id.atype = *isa::idesc_ab_code(m.kind, q.ta);
  id.btype = *isa::idesc_ab_code(m.kind, q.tb);
  id.transpose_a = x.a_tile && x.a_tile->layout.major == isa::Major::mn;
  id.transpose_b = x.b->layout.major == isa::Major::mn;
  id.sparse = m.sparse;
  if (!m.scaled) id.dtype = isa::idesc_dtype_code(q.acc);
  if (x.a_tile) {
    in.a_tile = x.a_tile->name;
    in.a_desc = operand_desc(*x.a_tile, isa::DescFormat::sm100, q.a_row0 + mi * q.m_instr, ki * q.ka_instr);
  } else {
    in.a_tmem = true;
    in.a_alloc = x.a_view->alloc;
    // 256 bits of K per instruction (128 when sparse) = 8 (4) columns of packed A (§9.7.16.10.4).
    const uint32_t col = x.a_view->column + static_cast<uint32_t>(mi) * x.a_view->block_columns() +
                         static_cast<uint32_t>(ki * q.ka_instr * isa::tmem_bits(m.kind, q.ta) / 32);
    in.a_taddr = isa::encode(isa::TmemAddr{lane0, col});
  }
  in.b_tile = x.b->name;
  in.b_desc = operand_desc(*x.b, isa::DescFormat::sm100, q.b_row0 + n0 / q.cg, ki * q.k_instr);
  in.d_alloc = x.d->alloc;
  in.d_taddr = isa::encode(isa::TmemAddr{lane0, x.d->column + static_cast<uint32_t>(mi) * x.d->block_columns() + static_cast<uint32_t>(n0)});
  in.enable_input_d = ki > 0 || o.accumulate;
  if (m.scaled) {
    // Scale factors of K step k: factors [k*F, (k+1)*F) of each row; four per column, the
    // block of 4 factors of all rows (4 columns per 128 rows) after the previous block.
    const int kg0 = ki * m.scale.factors;
    id.scale_type = isa::scale_type_code(m.scale_dtype);
    id.a_sf_id = static_cast<unsigned>(kg0 % 4);
    id.b_sf_id = static_cast<unsigned>(kg0 % 4);
    in.sfa_alloc = x.sfa->alloc;
    in.sfb_alloc = x.sfb->alloc;
    in.sfa_taddr = isa::encode(isa::TmemAddr{0, x.sfa->column + static_cast<uint32_t>(kg0 / 4 * 4 * ceil_div(q.M, 128) + mi * 4)});
    in.sfb_taddr = isa::encode(isa::TmemAddr{0, x.sfb->column + static_cast<uint32_t>(kg0 / 4 * 4 * ceil_div(q.N, 128) + n0 / 32)});
  }
  if (m.sparse) {
    in.meta_alloc = x.meta->alloc;
    uint32_t col = x.meta->column + static_cast<uint32_t>(mi) * x.meta->block_columns();
    if (isa::sparse_selector_used(m.kind)) {
      // One metadata column per instruction; the selector picks the column of an even pair
      // (CUTLASS: id2 = address & 1, address & ~1; Mosaic GPU: selector = column % 2).
      col += static_cast<uint32_t>(ki & ~1);
      if (!m.scaled) id.sparse_selector = static_cast<unsigned>(ki & 1);
    } else {
      col += static_cast<uint32_t>(2 * ki);  // two columns per instruction, selector 0 (§9.7.16.10.8.4)
    }
    in.meta_taddr = isa::encode(isa::TmemAddr{lane0, col});
  }
  if (!isa::encode(id)) throw std::logic_error("instruction descriptor does not encode");
  return in;
}

// ---- Step 4: issue order ------------------------------------------------------------------------
// K step outermost, then M group, then N group: consecutive MMAs share A, and every accumulator
// receives its K steps in order (§9.7.16.6.2: tcgen05.mma to one accumulator pipeline in order).
// The N groups of one (K step, M group) read the same A back to back: the first fills the
// collector buffer, the next use it, the last uses and discards it (§9.7.16.10.9.1).
void step4_issue(Mma& q) {
  for (int ki = 0; ki < q.ks; ++ki)
    for (int mi = 0; mi < q.mg; ++mi) {
      int n0 = 0;
      for (size_t ni = 0; ni < q.ng.size(); ++ni) {
        MmaInstr in = step3_descriptors(q, mi, static_cast<int>(ni), n0, ki);
        if (q.ng.size() > 1)
          in.collector = ni == 0 ? Collector::fill : ni + 1 == q.ng.size() ? Collector::lastuse : Collector::use;
        q.m.instrs.push_back(in);
        n0 += q.ng[ni];
      }
    }
}

}  // namespace

std::optional<MmaStep> plan_mma(Ctx& c, const ir::Op& o) {
  if (c.k.engine == ir::Engine::wgmma) return plan_wgmma(c, o);
  Mma q{c, o, {}, {}, isa::DType::bf16, isa::DType::bf16, isa::DType::f32, -1, false, false, false, 0, 0, 0, 128, 128, 1, 1, 0, 0, 0, {}, 16, 16, 1};
  if (!lookup(c, o, q.x)) return std::nullopt;
  if (!step1_types(q) || !step2_shapes(q)) return std::nullopt;
  step4_issue(q);
  q.m.first_iteration_overwrites = o.accumulate_after_first_iteration;
  return q.m;
}

}  // namespace ptxgen::plan::detail
