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

int ceil_div(int a, int b) { return (a + b - 1) / b; }

// The operands, found without a report: the MMA verifier (src/rules/verify_mma.cpp) reported any
// that is undeclared or of the wrong kind.
bool lookup(Ctx& c, const ir::Mma& o, MmaOperands& x) {
  auto view = [&](const ir::Ref& r) -> const ResolvedView* {
    auto it = c.views.find(r.name);
    return it == c.views.end() ? nullptr : &it->second;
  };
  auto tile = [&](const ir::Ref& r) -> const SmemPlacement* {
    auto it = c.placed.find(r.name);
    return it == c.placed.end() ? nullptr : &it->second;
  };
  x.a_view = view(o.a);
  if (!x.a_view) x.a_tile = tile(o.a);
  x.b = tile(o.b);
  x.d = view(o.d);
  if (o.scale_a) {
    x.sfa = view(o.scale_a);
    x.sfb = view(o.scale_b);
    if (!x.sfa || !x.sfb) return false;
  }
  if (o.metadata && !(x.meta = view(o.metadata))) return false;
  return (x.a_tile || x.a_view) && x.b && x.d;
}

bool packed_e2m1(const MmaOperands& x) {
  const bool a = x.a_tile ? (x.a_tile->dtype == isa::DType::e2m1 && x.a_tile->bits == 4)
                          : (x.a_view->dtype == isa::DType::e2m1 && x.a_view->packing == 8);
  const bool b = x.b->dtype == isa::DType::e2m1 && x.b->bits == 4;
  return a || b;
}

// What the four steps share: the op's operands and what each step derived.
struct Mma {
  Ctx& c;
  const std::string& ptr;  // the op's
  const ir::Mma& o;
  MmaOperands x;
  MmaShape q;  // steps 1 and 2
  MmaStep m;
};

// ---- Steps 1 and 2: types and kind, instruction shapes (mma_shape) ------------------------------
bool steps12(Mma& w) {
  w.q = mma_shape(w.c.k, w.o, w.x);
  const MmaShape& q = w.q;
  if (!q.kind || !q.factors.has_value() != !q.scaled) throw std::logic_error("mma op not verified: " + w.ptr);
  w.m.kind = *q.kind;
  w.m.sparse = q.sparse;
  w.m.scaled = q.scaled;
  if (q.scaled) {
    w.m.scale_dtype = w.x.sfa->dtype;
    w.m.scale.factors = *q.factors;
    w.m.scale.vec = w.o.vec;
  }
  return true;
}

}  // namespace
}  // namespace ptxgen::plan::detail

namespace ptxgen::plan {

MmaShape mma_shape(const ir::Kernel& k, const ir::Mma& o, const MmaOperands& x) {
  MmaShape q;
  // Step 1: types and kind.
  q.ta = x.a_tile ? x.a_tile->dtype : x.a_view->dtype;
  q.tb = x.b->dtype;
  q.acc = x.d->dtype;
  q.sparse = x.meta != nullptr;
  q.scaled = x.sfa != nullptr;
  q.packed = detail::packed_e2m1(x);
  if (q.scaled) {
    q.scale_types_ok = (x.sfa->dtype == isa::DType::ue8m0 || x.sfa->dtype == isa::DType::ue4m3) && x.sfb->dtype == x.sfa->dtype;
    if (q.scale_types_ok) {
      q.kind = isa::scaled_kind(q.ta, q.tb, x.sfa->dtype, o.vec, q.packed);
      // .kind::mxf4nvf4 names the same instruction as .kind::mxf4 for these types.
      if (q.kind && o.kind_override && *o.kind_override != *q.kind) {
        if (*q.kind == isa::Kind::mxf4 && *o.kind_override == isa::Kind::mxf4nvf4) q.kind = isa::Kind::mxf4nvf4;
        else q.kind.reset();
      }
    }
  } else {
    q.kind = isa::unscaled_kind(q.ta, q.tb);
    if (q.kind && o.kind_override && *o.kind_override != *q.kind) q.kind.reset();
  }
  q.f_align = ir::layout_f_alignment(x.d->layout);
  q.m64 = q.f_align >= 0;
  q.lb = x.d->layout == ir::TmemLayout::layout_b;
  q.pair = k.cta_group == 2;
  if (!q.kind) return q;
  // Step 2: instruction shapes. A (and B) may be a range of the tile's rows: an instruction group
  // the lowering placed.
  if (o.a_rows) q.a_row0 = (*o.a_rows)[0];
  if (o.b_rows) q.b_row0 = (*o.b_rows)[0];
  q.M = o.a_rows ? (*o.a_rows)[1] - (*o.a_rows)[0] : x.a_tile ? x.a_tile->layout.mn : x.a_view->rows;
  q.KA = x.a_tile ? x.a_tile->layout.k : x.a_view->row_elements();
  // In a pair each CTA's B tile holds half of N (§9.7.16.10: "B ... in Shared Memory of the
  // current CTA and optionally in peer CTA").
  q.N = (o.b_rows ? (*o.b_rows)[1] - (*o.b_rows)[0] : x.b->layout.mn) * (q.pair ? 2 : 1);
  q.KB = x.b->layout.k;
  q.m_instr = q.m64 || q.lb ? 64 : 128;              // rows of each CTA per instruction
  q.m_idesc = q.pair ? 2 * q.m_instr : q.m_instr;    // the instruction's M (§9.7.16.10.1 Table 39)
  q.mg = q.M / q.m_instr;
  // A pair's N group of width n reads n / 2 rows of each CTA's B tile, from B row n0 / 2 on.
  q.cg = q.pair ? 2 : 1;
  q.ng = isa::mma_n_groups(*q.kind, q.cg, x.b->layout, q.N);
  q.k_instr = isa::instr_k(*q.kind) * (q.sparse ? 2 : 1);
  q.ka_instr = q.sparse ? q.k_instr / 2 : q.k_instr;
  q.ks = q.KB / q.k_instr;
  if (q.scaled) q.factors = isa::scale_factors_per_instr(*q.kind, x.sfa->dtype, o.vec);
  return q;
}

}  // namespace ptxgen::plan

namespace ptxgen::plan::detail {
namespace {

// ---- Step 3: descriptors, tensor-memory addresses, scale-factor IDs, sparsity selectors --------
MmaInstr step3_descriptors(const Mma& w, int mi, int ni, int n0, int ki) {
  const MmaOperands& x = w.x;
  const MmaStep& m = w.m;
  const MmaShape& q = w.q;
  const ir::Mma& o = w.o;
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
    in.sfa_ring = {x.sfa->stages, x.sfa->stage_columns};
    in.sfb_ring = {x.sfb->stages, x.sfb->stage_columns};
    in.sfa_taddr = isa::encode(isa::TmemAddr{0, x.sfa->column + static_cast<uint32_t>(kg0 / 4 * 4 * ceil_div(q.M, 128) + mi * 4)});
    in.sfb_taddr = isa::encode(isa::TmemAddr{0, x.sfb->column + static_cast<uint32_t>(kg0 / 4 * 4 * ceil_div(q.N, 128) + n0 / 32)});
  }
  if (m.sparse) {
    in.meta_alloc = x.meta->alloc;
    in.meta_ring = {x.meta->stages, x.meta->stage_columns};
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
void step4_issue(Mma& w) {
  const MmaShape& q = w.q;
  for (int ki = 0; ki < q.ks; ++ki)
    for (int mi = 0; mi < q.mg; ++mi) {
      int n0 = 0;
      for (size_t ni = 0; ni < q.ng.size(); ++ni) {
        MmaInstr in = step3_descriptors(w, mi, static_cast<int>(ni), n0, ki);
        if (q.ng.size() > 1)
          in.collector = ni == 0 ? Collector::fill : ni + 1 == q.ng.size() ? Collector::lastuse : Collector::use;
        w.m.instrs.push_back(in);
        n0 += q.ng[ni];
      }
    }
}

}  // namespace

std::optional<MmaStep> plan_mma(Ctx& c, const ir::Op& op) {
  const ir::Mma& o = *op.as<ir::Mma>();
  if (c.k.engine == ir::Engine::wgmma) return plan_wgmma(c, o);
  Mma w{c, op.ptr, o, {}, {}, {}};
  if (!lookup(c, o, w.x)) return std::nullopt;
  steps12(w);
  step4_issue(w);
  w.m.first_iteration_overwrites = o.accumulate_after_first_iteration;
  return w.m;
}

}  // namespace ptxgen::plan::detail
