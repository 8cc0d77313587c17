// The mma op on sm_90a: wgmma.mma_async, in the same four steps as tcgen05.mma's (mma.cpp). The
// role's warpgroups each own 64 rows of A (or the op's warpgroup_rows, stacked m64 instructions:
// a ping-pong consumer's whole tile) and all of N; the accumulators live in each thread's
// registers (PTX ISA 9.1 §9.7.15.5.1.1). The template rules (WGMMA-*) have refused every
// combination the instruction lacks before the lowering made this op, so the steps only derive.
#include <stdexcept>

#include "internal.hpp"

namespace ptxgen::plan::detail {


// The register verifier (src/rules/verify_regs.cpp) reports the operands of each op refused here.
std::optional<MmaStep> plan_wgmma(Ctx& c, const ir::Mma& o) {
  const SmemPlacement* a = c.find_tile(o.a);
  const SmemPlacement* b = c.find_tile(o.b);
  if (!a || !b) return std::nullopt;
  MmaStep m;
  m.engine = ir::Engine::wgmma;
  // Step 1: types. f16 stands for f16.f16 / bf16.bf16, f8f6f4 for e4m3/e5m2 in any mix, i8 for s8/u8.
  const auto kind = isa::wgmma_kind(a->dtype, b->dtype);
  if (!kind) throw std::logic_error("wgmma op on types without a wgmma variant");
  m.kind = *kind;
  m.a_dtype = a->dtype;
  m.b_dtype = b->dtype;
  m.acc_regs = o.d.name;
  m.a_registers = o.a_registers;
  m.acc_dtype = o.acc_dtype;
  m.a_major_mn = a->layout.major == isa::Major::mn;
  m.b_major_mn = b->layout.major == isa::Major::mn;
  m.first_iteration_overwrites = o.accumulate_after_first_iteration;
  // Step 2: instruction shapes. M is 64 per instruction; K is 256 bits of a row; N groups split
  // the tile's N (§9.7.15.2).
  const int k_instr = 256 / isa::value_bits(a->dtype);
  // The op's rows of the B tile (a gated epilogue's gate or up half), or all of them.
  const int b0 = o.b_rows ? (*o.b_rows)[0] : 0;
  const int bn = o.b_rows ? (*o.b_rows)[1] - b0 : b->layout.mn;
  const std::vector<int> ng = isa::wgmma_split_n(m.kind, bn);
  if (ng.empty() || a->layout.k % k_instr != 0) throw std::logic_error("wgmma op without legal instruction shapes");
  const int ks = a->layout.k / k_instr;
  // Each warpgroup of the role covers `rows` of A and D (ir::Mma::warpgroup_rows): mg m64 M groups.
  const int rows = o.warpgroup_rows ? o.warpgroup_rows : 64;
  if (rows % 64 || a->layout.mn % rows) throw std::logic_error("wgmma warpgroup rows are not whole M groups of the tile");
  const int mg = rows / 64;
  m.warpgroup_rows = rows;
  // Steps 3-4: per K step, M group and N group, warpgroup 0's wgmma; warpgroup w reads A from row
  // rows x w on, which the emitter adds to the descriptor's start (a_warpgroup_stride bytes).
  m.a_warpgroup_stride = isa::tile_offset(a->layout, rows, 0);
  for (int w = 1; w * rows < a->layout.mn; ++w)
    if (isa::tile_offset(a->layout, rows * w, 0) != static_cast<uint32_t>(w) * m.a_warpgroup_stride)
      throw std::logic_error("warpgroups' A rows are not evenly spaced in the tile");
  const bool f16acc = o.acc_dtype == isa::DType::f16;
  int per_group = 0;  // registers of one M group: §9.7.15.5.1.1, N/2 of .f32/.s32, N/4 of .f16x2
  for (int n : ng) per_group += f16acc ? n / 4 : n / 2;
  for (int ki = 0; ki < ks; ++ki) {
    for (int mi = 0; mi < mg; ++mi) {
      int n0 = 0, reg = mi * per_group;
      for (size_t ni = 0; ni < ng.size(); ++ni) {
        MmaInstr in;
        in.mi = mi;
        in.ni = static_cast<int>(ni);
        in.ki = ki;
        in.m = 64;
        in.n = ng[ni];
        in.k = k_instr;
        in.a_tile = a->name;
        in.b_tile = b->name;
        in.a_desc = operand_desc(*a, isa::DescFormat::sm90, 64 * mi, ki * k_instr);
        in.b_desc = operand_desc(*b, isa::DescFormat::sm90, b0 + n0, ki * k_instr);
        in.acc_reg = reg;
        in.enable_input_d = ki > 0 || o.accumulate;
        m.instrs.push_back(in);
        n0 += in.n;
        reg += f16acc ? in.n / 4 : in.n / 2;
      }
    }
  }
  return m;
}

}  // namespace ptxgen::plan::detail

namespace ptxgen::plan {

std::optional<RegDef> wgmma_accumulators(const ir::Mma& o, const SmemPlacement& a, const SmemPlacement& b) {
  const auto kind = isa::wgmma_kind(a.dtype, b.dtype);
  if (!kind) return std::nullopt;
  RegDef d;
  d.name = o.d.name;
  d.dtype = o.acc_dtype;
  d.wgmma = true;
  d.elems_per_reg = o.acc_dtype == isa::DType::f16 ? 2 : 1;
  d.elem_bits = isa::value_bits(o.acc_dtype);
  d.groups = isa::wgmma_split_n(*kind, o.b_rows ? (*o.b_rows)[1] - (*o.b_rows)[0] : b.layout.mn);  // the N groups of plan_wgmma's step 2
  if (d.groups.empty()) return std::nullopt;
  int n = 0;
  for (int g : d.groups) n += g;
  d.rows = o.warpgroup_rows ? o.warpgroup_rows : 64;
  d.regs = (o.acc_dtype == isa::DType::f16 ? n / 4 : n / 2) * (d.rows / 64);
  d.row_elements = n;
  return d;
}

}  // namespace ptxgen::plan
