// What a rule's check sees: the spec, its target, and facts derived once for all checks.
#pragma once

#include <optional>

#include "ptxgen/isa.hpp"
#include "ptxgen/spec.hpp"

namespace ptxgen::rules {

struct Context {
  const spec::Spec& spec;
  const spec::Gemm* gemm = nullptr;      // the gemm template, if that is what the spec uses
  const isa::TargetInfo& target;
  std::optional<isa::Kind> kind;         // the unscaled tcgen05 kind of A and B, if any
};

// Checks, in table order (src/rules/check_gemm.cpp).
void check_target_a_tmem(const Context&, Diagnostics&);
void check_target_cta_pair(const Context&, Diagnostics&);
void check_target_a_registers(const Context&, Diagnostics&);
void check_target_kind_i8(const Context&, Diagnostics&);
void check_mma_kind(const Context&, Diagnostics&);
void check_mma_accumulator(const Context&, Diagnostics&);
void check_mma_major(const Context&, Diagnostics&);
void check_mma_swizzle_atomicity(const Context&, Diagnostics&);
void check_mma_a_tmem_major(const Context&, Diagnostics&);
void check_mma_a_tmem_m(const Context&, Diagnostics&);
void check_mma_m(const Context&, Diagnostics&);
void check_mma_n(const Context&, Diagnostics&);
void check_mma_k(const Context&, Diagnostics&);
void check_layout_atom(const Context&, Diagnostics&);
void check_cluster_pair(const Context&, Diagnostics&);
void check_cluster_size(const Context&, Diagnostics&);
void check_tma_stride(const Context&, Diagnostics&);
void check_tmem_budget(const Context&, Diagnostics&);
void check_smem_budget(const Context&, Diagnostics&);
// src/rules/check_wgmma.cpp
void check_wgmma_types(const Context&, Diagnostics&);
void check_wgmma_accumulator(const Context&, Diagnostics&);
void check_wgmma_major(const Context&, Diagnostics&);
void check_wgmma_m(const Context&, Diagnostics&);
void check_wgmma_n(const Context&, Diagnostics&);
void check_wgmma_k(const Context&, Diagnostics&);
void check_wgmma_swizzle(const Context&, Diagnostics&);
void check_wgmma_registers(const Context&, Diagnostics&);

}  // namespace ptxgen::rules
