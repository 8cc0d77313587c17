// The wgmma.mma_async planner (sm_90a), in the same four steps as tcgen05's. Each consumer
// warpgroup owns 64 rows of the CTA tile (one M group: wgmma's M is 64) and all of its N; its
// accumulators live in registers (PTX ISA 9.1 §9.7.15.5.1.1).
#include <stdexcept>

#include "internal.hpp"

namespace ptxgen::plan::detail {

namespace {

std::optional<std::string> step1_types(const spec::Spec& s, Shapes& sh) {
  const spec::Gemm& g = *s.gemm;
  auto kind = isa::wgmma_kind(g.a.dtype, g.b.dtype);
  if (!kind) return "A and B types form no wgmma type combination";
  sh.engine = Engine::wgmma;
  sh.kind = *kind;
  sh.cta_group = 1;
  sh.a_in_tmem = false;
  sh.a_in_registers = g.a_source == spec::ASource::registers;
  sh.k_instr = 256 / isa::value_bits(g.a.dtype);  // k16 (16-bit), k8 (tf32), k32 (8-bit)
  return std::nullopt;
}

std::optional<std::string> step2_instructions(const spec::Spec& s, Shapes& sh) {
  const spec::Gemm& g = *s.gemm;
  const int tm = static_cast<int>(g.tile.m), tn = static_cast<int>(g.tile.n), tk = static_cast<int>(g.tile.k);
  if (tm % 64 != 0) return "tile.m is not a multiple of 64";
  sh.m_instr = 64;
  sh.m_groups = tm / 64;
  sh.m_per_cta = 64;
  sh.n_groups = isa::wgmma_split_n(sh.kind, tn);
  if (sh.n_groups.empty()) return "tile.n has no split into legal wgmma N";
  if (tk % sh.k_instr != 0) return "tile.k is not a multiple of the instruction K";
  sh.k_steps = tk / sh.k_instr;
  if (auto why = operand_tile(sh.a, 'A', g.a, g.swizzle_a, isa::value_bits(g.a.dtype), tm, tk)) return "A: " + *why;
  if (auto why = operand_tile(sh.b, 'B', g.b, g.swizzle_b, isa::value_bits(g.b.dtype), tn, tk)) return "B: " + *why;
  if (sh.a.layout.major == isa::Major::mn && 64 % sh.a.layout.atom_mn != 0)
    return "A: a warpgroup's 64 rows are not whole swizzle atoms";
  // §9.7.15.5.1.1: N/2 registers of .f32/.s32, or N/4 of .f16x2, per thread.
  sh.acc_registers = g.accumulator == isa::DType::f16 ? tn / 4 : tn / 2;
  return smem_map(sh, g.stages);
}

// Steps 3-4: per K step and N group, one wgmma per consumer warpgroup. The plan lists the MMAs
// of every warpgroup (mi); the emitter checks they differ only by the warpgroup's row offset.
void step34(Plan& p) {
  const Shapes& sh = p.shapes;
  const auto f = isa::DescFormat::sm90;
  const uint32_t a0 = sh.smem.a_offset.at(0), b0 = sh.smem.b_offset.at(0);
  const bool f16acc = p.spec.gemm->accumulator == isa::DType::f16;
  for (int ki = 0; ki < sh.k_steps; ++ki)
    for (int mi = 0; mi < sh.m_groups; ++mi) {
      int n0 = 0, reg = 0;
      for (size_t ni = 0; ni < sh.n_groups.size(); ++ni) {
        Mma m;
        m.mi = mi;
        m.ni = static_cast<int>(ni);
        m.ki = ki;
        m.m = 64;
        m.n = sh.n_groups[ni];
        m.k = sh.k_instr;
        m.a_desc = operand_desc(sh.a, f, a0, mi * 64, ki * sh.k_instr);
        m.b_desc = operand_desc(sh.b, f, b0, n0, ki * sh.k_instr);
        m.acc_reg = reg;
        m.first = ki == 0;
        p.mmas.push_back(m);
        n0 += m.n;
        reg += f16acc ? m.n / 4 : m.n / 2;
      }
    }
}

}  // namespace

std::optional<std::string> derive_wgmma(const spec::Spec& s, Shapes& sh) {
  if (auto why = step1_types(s, sh)) return why;
  return step2_instructions(s, sh);
}

void plan_wgmma(Plan& p) {
  step34(p);
  Kernel& k = p.kernel;
  // Consumer warpgroups first (a warpgroup must start at a warp index divisible by 4,
  // §9.7.15.1), then one producer warp.
  k.consumer_warpgroups = p.shapes.m_groups;
  k.producer_warp = 4 * k.consumer_warpgroups;
  k.threads = 128 * k.consumer_warpgroups + 32;
  // An SM's 64K registers are four banks of 16K, one per warp scheduler, and warps are spread over
  // the schedulers round-robin, so the busiest scheduler holds ceil(warps / 4) warps; registers are
  // allocated per thread in units of 8.
  const int warps = k.threads / 32;
  k.max_registers = std::min(255, 16384 / (32 * ((warps + 3) / 4)) / 8 * 8);
}

}  // namespace ptxgen::plan::detail
