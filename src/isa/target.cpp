// Targets and what each one can assemble.
//
// Sources: PTX ISA 9.1 §11.1.2 (.target: which PTX ISA version introduced each target string),
// §13 Table 59 (PTX ISA version -> CUDA release) and the §13 table of architecture- and
// family-specific features (tcgen05.* needs sm_100a from PTX 8.6, sm_100f from 8.8, sm_110f from
// 9.0; .kind::i8 only sm_100a and sm_110a; .scale_vec::NX only sm_100a; K=96 only sm_103a).
// Shared memory per block: 227 KB opt-in on sm_90 and sm_100 class GPUs (CUDA programming guide,
// compute capability tables); tensor memory: 128 lanes x 512 columns per CTA (§9.7.16.1).
#include "ptxgen/isa.hpp"

#include <array>

namespace ptxgen::isa {

namespace {
constexpr int kSmem227K = 227 * 1024;

const std::array<TargetInfo, 5> kTargets{{
    // arch         name       ptx   tcgen05 wgmma  i8     nx     k96    smem       tmem  cuda
    {Arch::sm_90a, "sm_90a", 8, 0, false, true, false, false, false, kSmem227K, 0, 12, 0},
    {Arch::sm_100a, "sm_100a", 8, 6, true, false, true, true, false, kSmem227K, 512, 12, 7},
    {Arch::sm_100f, "sm_100f", 8, 8, true, false, false, false, false, kSmem227K, 512, 12, 9},
    {Arch::sm_103a, "sm_103a", 8, 8, true, false, false, false, true, kSmem227K, 512, 12, 9},
    {Arch::sm_110a, "sm_110a", 9, 0, true, false, true, false, false, kSmem227K, 512, 13, 0},
}};
}  // namespace

const TargetInfo& target_info(Arch a) {
  for (const auto& t : kTargets)
    if (t.arch == a) return t;
  return kTargets[0];
}

std::optional<Arch> parse_arch(std::string_view s) {
  for (const auto& t : kTargets)
    if (t.name == s) return t.arch;
  return std::nullopt;
}

const std::vector<Arch>& all_archs() {
  static const std::vector<Arch> v{Arch::sm_90a, Arch::sm_100a, Arch::sm_100f, Arch::sm_103a,
                                   Arch::sm_110a};
  return v;
}

}  // namespace ptxgen::isa
