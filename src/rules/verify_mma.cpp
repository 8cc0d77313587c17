// The mma op on tcgen05 (§9.7.16.10): operands of the right kinds; types that form a kind
// (Table 39, block scaling Tables 56/57, sparsity §9.7.16.10.8) on a target that has it; an
// accumulator type of that kind; D in a data-path layout of §9.7.16.10.5 that fits the CTA group;
// majors and swizzles (Tables 51, 54); shapes that split into instructions; A, scale factors and
// metadata in tensor memory where the instruction reads them; D apart from what it reads. The
// numbers come from the planner's narrow call plan::mma_shape (steps 1 and 2 of the MMA plan);
// the judgement and the words are here. (wgmma's rules read the gemm template: check_wgmma.cpp.)
#include <tuple>

#include "verify.hpp"

#include "ptxgen/spec.hpp"

namespace ptxgen::rules::verify {

namespace {

std::string s(int64_t v) { return std::to_string(v); }
std::string dt(isa::DType t) { return std::string(isa::name(t)); }
std::string kn(isa::Kind k) { return ".kind::" + std::string(isa::name(k)); }
int ceil_div(int a, int b) { return (a + b - 1) / b; }

bool lookup(Ctx& c, const ir::Mma& o, plan::MmaOperands& x) {
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

// Step 1: types and kind, D's layout, majors and swizzles.
bool types(Ctx& c, const ir::Mma& o, const plan::MmaOperands& x, const plan::MmaShape& q) {
  const isa::DType ta = q.ta, tb = q.tb, acc = q.acc;
  if (q.scaled) {
    if (!q.scale_types_ok) {
      c.problem("OP-MMA-SCALE", o.scale_b.ptr,
                "scale factors are ue8m0 or ue4m3, one type for A and B (Tables 43/44, bit 23); they are " +
                    dt(x.sfa->dtype) + " and " + dt(x.sfb->dtype),
                {"cast both scale views to ue8m0 (or both to ue4m3)"});
      return false;
    }
    if (!q.kind) {
      c.problem("OP-MMA-KIND", o.kind_override ? o.kind_ptr : o.b.ptr,
                "A " + dt(ta) + " and B " + dt(tb) + (q.packed ? " (two e2m1 per byte)" : "") + " with " + dt(x.sfa->dtype) +
                    " scales form no block-scaled kind" + (o.kind_override ? " " + kn(*o.kind_override) : std::string()),
                {".kind::mxf8f6f4: any of e4m3 e5m2 e2m3 e3m2 e2m1 in padded 8-bit containers",
                 ".kind::mxf4 / .kind::mxf4nvf4: e2m1 x e2m1 stored two per byte (\"format\": \"packed\")"});
      return false;
    }
  } else {
    if (q.packed) {
      c.problem("OP-MMA-FORMAT", o.a.ptr,
                "two e2m1 per byte is the shared-memory format of the block-scaled mxf4 kinds (§9.7.16.10.4.6); without "
                "scale factors .kind::f8f6f4 reads 4-bit elements padded to 8-bit containers (§9.7.16.10.4.4)",
                {"store the operands with \"format\": \"padded\"", "or add \"scale\" for .kind::mxf4"});
      return false;
    }
    if (!q.kind) {
      c.problem("OP-MMA-KIND", o.kind_override ? o.kind_ptr : o.b.ptr,
                "A " + dt(ta) + " and B " + dt(tb) + " form no tcgen05.mma kind" +
                    (o.kind_override ? " " + kn(*o.kind_override) + (isa::is_block_scaled(*o.kind_override) ? " (it needs \"scale\")" : "") : std::string()),
                {"kind::f16: f16 x f16 or bf16 x bf16; kind::tf32; kind::f8f6f4: e4m3 e5m2 e2m3 e3m2 e2m1; kind::i8: s8 u8"});
      return false;
    }
  }
  const isa::Kind kind = *q.kind;
  if (q.packed && kind == isa::Kind::mxf8f6f4) {
    c.problem("OP-MMA-FORMAT", o.a.ptr, ".kind::mxf8f6f4 reads 4-bit elements padded to 8-bit containers (§9.7.16.10.4.4), not two per byte");
    return false;
  }
  if (auto gap = isa::mma_target_gap(kind, q.sparse, c.target)) {
    c.problem("OP-MMA-TARGET", "/target", *gap, {"target sm_100a (or sm_110a), or choose other operand types"});
    return false;
  }
  if (!isa::accumulator_allowed(kind, ta, tb, acc)) {
    c.problem("OP-MMA-ACCUM", o.d.ptr,
              "D of " + kn(kind) + " with " + dt(ta) + " inputs is " + isa::accumulators_text(kind, ta) + ", not " + dt(acc),
              {"cast the accumulator view to " + isa::accumulators_text(kind, ta)});
    return false;
  }
  // D's data-path layout (§9.7.16.10.5) fixes the instruction M: all 128 lanes in the rows layout
  // for M = 128 (layout D, row i in lane i; a pair's M = 256, layout A), layout F for M = 64 (16
  // rows per 32-lane quarter; a pair's sparse M = 128, layout C), layout B for a pair's dense M =
  // 128 (64 rows per CTA, each row's second half of N in lanes 64-127).
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
  if ((lb && (!pair || q.sparse)) || (pair && m64 && !q.sparse)) {
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
  if (pair && q.scaled && lb) {
    c.problem("PAIR-MMA", o.scale_ptr,
              "ptxgen does not plan block-scaled MMAs for a pair's M = 128 (layout B): where each CTA's tensor memory "
              "holds B's scale factors for that layout is not stated by the ISA",
              {"use M = 256 per pair (128 rows of A and a 128-lane rows D in each CTA)", "or \"cta_group\": 1"});
    return false;
  }
  // Majors and swizzles (Tables 51, 54).
  for (const plan::SmemPlacement* t : {x.a_tile, x.b}) {
    if (!t) continue;
    const ir::Tile& decl = *c.tiles.at(t->name);
    const bool mn = t->layout.major == isa::Major::mn;
    if (mn && (isa::value_bits(t->dtype) < 8 || kind == isa::Kind::mxf4 || kind == isa::Kind::mxf4nvf4)) {
      c.problem("OP-MMA-MAJOR", decl.major_ptr,
                "\"" + t->name + "\" is MN-major; " + (isa::value_bits(t->dtype) < 8 ? "4- and 6-bit operands" : kn(kind) + " operands") +
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

// Step 2: instruction shapes, and where tensor memory holds what the instructions read.
bool shapes(Ctx& c, const ir::Mma& o, const plan::MmaOperands& x, const plan::MmaShape& q) {
  const isa::Kind kind = *q.kind;
  const bool m64 = q.m64, lb = q.lb, pair = q.pair;
  const int M = q.M, N = q.N, KB = q.KB, m_instr = q.m_instr, mg = q.mg, ks = q.ks, k_instr = q.k_instr;
  const int64_t KA = q.KA;
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
  if ((q.sparse ? KA * 2 : KA) != KB) {
    c.problem("OP-MMA-SHAPE", o.a.ptr,
              q.sparse ? "sparse A holds K/2 elements per row (§9.7.16.10.8): A has " + s(KA) + ", B has K = " + s(KB)
                       : "A has K = " + s(KA) + ", B has K = " + s(KB));
    return false;
  }
  if (m64 && q.scaled) {
    c.problem("OP-MMA-SHAPE", o.d.ptr,
              "the block-scaled kinds have M = 128 only at .cta_group::1 (Table 39: " + kn(kind) +
                  " 128xNxK); a layout-F accumulator means M = 64",
              {"use 128 rows of A and a rows-layout accumulator of 128 lanes"});
    return false;
  }
  if (M % m_instr != 0) {
    c.problem("OP-MMA-SHAPE", o.a.ptr,
              "M = " + s(M) + " is not a multiple of the instruction M = " + s(m_instr) + " the accumulator's layout gives",
              {"use a multiple of 128 rows (rows layout) or of 64 (layout F)"});
    return false;
  }
  if (x.a_view) {
    // A in tensor memory sits like D: row i in lane i (layout D), or layout F at D's lane
    // alignment for M = 64 (§9.7.16.10.5: "must use the same Tensor Memory lane alignment across
    // matrices A, D and the sparsity metadata").
    const int want_pack = 32 / isa::tmem_bits(kind, q.ta);
    // Layout B (a pair's dense M = 128): each CTA's 64 rows of A twice, row i at lanes i and 64 + i,
    // which is what tcgen05.cp .64x128b.warpx2::02_13 writes (docs/architecture.md, ISA reading 13).
    const bool lanes_ok = m64  ? x.a_view->layout == x.d->layout
                          : lb ? x.a_view->layout == ir::TmemLayout::warpx2_02_13
                               : (x.a_view->layout == ir::TmemLayout::rows && x.a_view->lanes == 128);
    if (!lanes_ok || x.a_view->blocks() != mg || x.a_view->packing != want_pack) {
      c.problem("OP-MMA-A-TMEM", o.a.ptr,
                "A in tensor memory is row i where D's row i is (" +
                    (m64 ? "layout " + std::string(isa::name(x.d->layout)) + ", D's layout and lane alignment, §9.7.16.10.5"
                     : lb ? std::string("lanes i and 64 + i for layout B's D: a warpx2::02_13 view")
                         : std::string("lane i of 128")) +
                    "), K along the columns, packed " + s(want_pack) + " elements per column for " + kn(kind) +
                    " (§9.7.16.10.4.3-5), one " + s(m_instr) + "-row block per M group; \"" + o.a.name + "\" is " +
                    x.a_view->describe(),
                {"cast the view to packing " + s(want_pack) +
                 (m64 ? " in layout " + std::string(isa::name(x.d->layout))
                  : lb ? std::string(" in layout warpx2::02_13") : std::string(" over 128 lanes")) +
                 ", with \"rows\": " + s(M)});
      return false;
    }
  }
  const bool b8mn = x.b->layout.major == isa::Major::mn && x.b->bits == 8;
  const int align = x.b->layout.major == isa::Major::mn ? x.b->layout.atom_mn : 8;
  if (q.ng.empty()) {
    c.problem("OP-MMA-SHAPE", o.b.ptr,
              "N = " + s(N) + " cannot be split into " + kn(kind) + (pair ? " .cta_group::2" : "") +
                  " instructions: N = " + isa::legal_n_text(kind, q.cg, b8mn) + ", at most 256 each" +
                  (pair ? ", each reading half its rows from each CTA's B at a multiple of " + s(align) + " rows" : ""));
    return false;
  }
  if (pair && q.ng.size() > 1) {
    // One instruction writes N contiguous columns of D from n / 2 rows of each CTA's B: with one N
    // group, D column j is CTA 0's B row j (j < N / 2) or CTA 1's row j - N / 2. Several groups
    // would interleave the two halves group by group; ptxgen keeps a pair's mma op to one group.
    c.problem("OP-MMA-SHAPE", o.b.ptr,
              "a CTA pair's mma op is one instruction wide in N: N = " + s(N) + " (" + s(N / 2) + " rows of B in each CTA) "
              "needs " + s(static_cast<int64_t>(q.ng.size())) + " instructions, whose halves of B would interleave in D",
              {"use at most 128 rows of B in each CTA per mma op (N <= 256), and one mma op per further slice of D"});
    return false;
  }
  if (KB % k_instr != 0) {
    c.problem("OP-MMA-SHAPE", o.b.ptr,
              "K = " + s(KB) + " is not a multiple of " + s(k_instr) + ", the K of one " + (q.sparse ? "sparse " : "") + kn(kind) +
                  " instruction (Table 39)");
    return false;
  }
  for (const plan::SmemPlacement* t : {x.a_tile, x.b}) {
    if (!t || t->layout.major != isa::Major::k || t->layout.swizzle == isa::Swizzle::none) continue;
    const int kbytes = (t == x.b ? k_instr : q.ka_instr) * t->bits / 8;
    if (kbytes <= isa::bytes(t->layout.swizzle)) continue;
    c.problem("OP-MMA-SWIZZLE", c.tiles.at(t->name)->swizzle_ptr,
              "one instruction reads " + s(kbytes) + " bytes of K per row of \"" + t->name + "\"; a descriptor of a K-major " +
                  std::string(isa::name(t->layout.swizzle)) + " tile spans one swizzle atom row (" +
                  s(isa::bytes(t->layout.swizzle)) + " bytes) of K",
              {"use a 64- or 128-byte swizzle (or none) for the sparse B operand"});
    return false;
  }
  // Block scaling: Tables 56/57 and the layout of scale factors in tensor memory.
  if (q.scaled) {
    if (!q.factors) {
      c.problem("OP-MMA-SCALE-VEC", o.vec_ptr.empty() ? o.scale_ptr : o.vec_ptr,
                kn(kind) + " has no block size " + s(o.vec) + " with " + dt(x.sfa->dtype) + " scales (Table 57): " +
                    isa::scale_combinations_text(kind));
      return false;
    }
    auto sf_cols = [&](int rows) { return ceil_div(ks * *q.factors, 4) * 4 * ceil_div(rows, 128); };
    for (auto [v, ref, rows] : {std::tuple{x.sfa, &o.scale_a, M}, std::tuple{x.sfb, &o.scale_b, N}}) {
      const int need = sf_cols(rows);
      if (v->layout != ir::TmemLayout::warpx4 || v->packing != 4 || static_cast<int>(v->columns) < need) {
        c.problem("OP-MMA-SCALE", ref->ptr,
                  "scale factors sit four per 32-bit column, row r's in lane r % 32 of every quarter and column r / 32 "
                  "(§9.7.16.10.7: duplicated to all 32-lane partitions), " + s(*q.factors) + " per instruction: " +
                      s(ks) + " K steps x " + s(rows) + " rows need " + s(need) + " columns of a warpx4 view packed 4; \"" +
                      ref->name + "\" is " + v->describe(),
                  {"cast a 128-lane slice of " + s(need) + " columns to " + dt(x.sfa->dtype) + " packing 4 layout warpx4"});
        return false;
      }
    }
  }
  if (q.sparse) {
    // Metadata row i sits where D's row i does: lane i of 128 (layout D), or layout F at D's lane
    // alignment for M = 64 (§9.7.16.10.8.5: layouts F and C "must use the same alignment across
    // matrices A, D and the sparsity metadata matrix"); the bits per row follow K (§9.7.16.10.8).
    const int per = isa::sparse_metadata_columns(kind);
    const int need = isa::sparse_selector_used(kind) ? (ks + 1) / 2 * 2 : ks * per;
    const ir::ResolvedView& v = *x.meta;
    const bool lanes_ok = m64 ? v.layout == x.d->layout : (v.layout == ir::TmemLayout::rows && v.lanes == 128);
    if (!lanes_ok || v.blocks() != mg || static_cast<int>(v.block_columns()) < need) {
      const std::string where = m64 ? "in layout " + std::string(isa::name(x.d->layout)) + " (D's lane alignment, §9.7.16.10.8.5)"
                                     : std::string("with row i in lane i");
      c.problem("OP-MMA-SPARSE", o.metadata.ptr,
                "sparsity metadata sits " + where + ", " + s(per) + " column(s) per instruction (" + kn(kind) +
                    ", §9.7.16.10.8): " + s(ks) + " K steps need " + s(need) + " columns per " + s(m_instr) + "-row M group; \"" +
                    o.metadata.name + "\" is " + v.describe(),
                {m64 ? "cast a view of " + s(need) + " columns per M group to \"layout\": \"" + std::string(isa::name(x.d->layout)) + "\""
                     : "use a rows-layout view of 128 lanes with " + s(need) + " columns per M group"});
      return false;
    }
  }
  // D must not overlap what the same instructions read.
  const ir::Region rd = ir::region_of(*x.d);
  for (auto [v, ref] : {std::pair{x.a_view, &o.a}, std::pair{x.sfa, &o.scale_a}, std::pair{x.sfb, &o.scale_b}, std::pair{x.meta, &o.metadata}}) {
    if (v && ir::overlap(rd, ir::region_of(*v))) {
      c.problem("OP-MMA-OVERLAP", o.d.ptr,
                "D (" + ir::describe(rd) + ") overlaps \"" + ref->name + "\" (" + ir::describe(ir::region_of(*v)) +
                    "), which the same tcgen05.mma reads");
      return false;
    }
  }
  // B's scale factors sit 32 rows per column: an N group starts on such a column.
  if (q.scaled)
    for (size_t ni = 0, n0 = 0; ni < q.ng.size(); n0 += static_cast<size_t>(q.ng[ni]), ++ni)
      if (n0 % 32 != 0) {
        c.problem("OP-MMA-SCALE", o.scale_b.ptr,
                  "the N group at column " + s(static_cast<int64_t>(n0)) + " does not start on a column of 32 rows of scale factors");
        return false;
      }
  return true;
}

}  // namespace

void mmas(Ctx& c) {
  if (c.k.engine != ir::Engine::tcgen05) return;
  for (const ir::Op* op : all_ops(c.k)) {
    if (op->kind() != ir::OpKind::mma) continue;
    const ir::Mma& o = *op->as<ir::Mma>();
    // Follow-on errors are noise: an mma reading a view a refused copy was to fill is not judged
    // (the copy's error says what is wrong with the view).
    bool after_refused_copy = false;
    for (const ir::Ref* r : {&o.a, &o.scale_a, &o.scale_b, &o.metadata})
      after_refused_copy |= *r && c.refused_copies.count(r->name) > 0;
    if (after_refused_copy) {
      c.refused.insert(op);
      continue;
    }
    plan::MmaOperands x;
    bool ok = lookup(c, o, x);
    if (ok) {
      const plan::MmaShape q = plan::mma_shape(c.k, o, x);
      ok = types(c, o, x, q) && shapes(c, o, x, q);
      if (ok) c.mma_shapes.emplace(op, q);
    }
    if (!ok) c.refused.insert(op);
  }
}

}  // namespace ptxgen::rules::verify
