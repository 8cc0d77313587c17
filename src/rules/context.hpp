// What a rule's check sees: the spec, its target, and facts derived once for all checks.
#pragma once

#include <memory>
#include <optional>

#include "ptxgen/ir.hpp"
#include "ptxgen/isa.hpp"
#include "ptxgen/plan.hpp"
#include "ptxgen/spec.hpp"
#include "verify.hpp"

namespace ptxgen::rules {

struct Context {
  const spec::Spec& spec;
  const spec::Gemm* gemm = nullptr;      // the gemm template, if that is what the spec uses
  const isa::TargetInfo& target;
  std::optional<isa::Kind> kind;         // the tcgen05 kind of A and B (the block-scaled one with "scale"), if any
  // The kernel IR (lower::lower) and what the verifiers find in it. A program is lowered at once;
  // the gemm template only once its own rules passed (the lowering makes choices and refuses
  // nothing, so it runs only on specs the template's rules accept). The kernel's rules report the
  // verifiers' problems; the budget, grid and size rules read a verified kernel through narrow
  // calls into plan/ (memory_map, launch_grid, output_bound). No rule plans the kernel.
  mutable std::shared_ptr<ir::Kernel> kernel;
  mutable bool lowering_tried = false;
  mutable std::vector<verify::Problem> problems;  // the verifiers' (src/rules/verify*.cpp)
  mutable size_t buffer_problems = 0;             // how many of them concern the buffers (the first)
  mutable std::vector<verify::Problem> warnings;  // the verifiers' warnings (what can be intended)
  // The program's sizes, grid, loop and roles as check_pipeline.cpp judges them (computed once).
  mutable std::optional<std::vector<verify::Problem>> structure = std::nullopt;
  // The planner's facts the budget, grid and size rules read (narrow calls into plan/), each
  // computed once and handed to the planner with the kernel (rules::Analysis).
  mutable plan::Facts facts;
};

// A tile.k (a halving of the gemm's) and a stage count at which the spec passes every rule, where
// one exists: the help of the rules a too-deep stage draws (SMEM-DESC-RANGE, SMEM-BUDGET with not
// one stage fitting), so that the change they name is the last (src/rules/check_limits.cpp).
struct DeepStageFix {
  int64_t k = 0, stages = 0;
  std::string help(const spec::Gemm& g) const;  // "use "tile": {"k": K} [and "stages": S]: ..."
};
std::optional<DeepStageFix> passing_tile_k(const Context& c);

// The problems of a program's structure (src/rules/check_pipeline.cpp): PROGRAM-SIZE,
// PROGRAM-GRID, PROGRAM-LOOP, PROGRAM-ROLE, PAIR-ROLE-ISSUE, PAIR-ROLE-RELOAD. A program with any
// is not lowered.
const std::vector<verify::Problem>& program_structure(const Context& c);

// Lowers and verifies the kernel once (filling c.problems): the kernel, or nullptr while the
// template's own rules refuse the spec.
const ir::Kernel* lowered(const Context& c, const Diagnostics& d);
// The lowered kernel when the verifiers found nothing in it, else nullptr: what the rules that make
// a narrow call into plan/ read.
const ir::Kernel* verified(const Context& c, const Diagnostics& d);
// The lowered kernel where its buffers (tiles, allocations, views) passed, whatever its ops'
// problems: what the memory budgets read, so that a budget error is reported beside independent
// errors of the ops (issue 32, defect 8) rather than after their fix.
const ir::Kernel* buffers_verified(const Context& c, const Diagnostics& d);

// The verified kernel's memory map, launch grid and output bound, each computed once (c.facts).
const plan::MemoryMap& memory_map(const Context& c, const ir::Kernel& k);
const plan::Grid& launch_grid(const Context& c, const ir::Kernel& k);
// The size bound of the whole kernel, or the op at which it passed kMaxOutput.
const std::optional<plan::SizeCrossing>& output_bound(const Context& c, const ir::Kernel& k);

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
void check_mma_m(const Context&, Diagnostics&);
void check_mma_n(const Context&, Diagnostics&);
void check_mma_k(const Context&, Diagnostics&);
void check_layout_atom(const Context&, Diagnostics&);
void check_cluster_pair(const Context&, Diagnostics&);
void check_schedule_persistent(const Context&, Diagnostics&);
void check_epilogue_tma(const Context&, Diagnostics&);
void check_cluster_size(const Context&, Diagnostics&);
void check_tma_stride(const Context&, Diagnostics&);
// Block scaling in the gemm template (src/rules/check_scale.cpp).
void check_scale_target(const Context&, Diagnostics&);
void check_scale_kind(const Context&, Diagnostics&);
void check_scale_type(const Context&, Diagnostics&);
void check_scale_k(const Context&, Diagnostics&);
void check_scale_tile(const Context&, Diagnostics&);
void check_scale_block_type(const Context&, Diagnostics&);
void check_scale_block_vec(const Context&, Diagnostics&);
void check_scale_block_tile(const Context&, Diagnostics&);
void check_scale_block_partials(const Context&, Diagnostics&);
// Grouped GEMM in the gemm template (src/rules/check_groups.cpp).
void check_groups(const Context&, Diagnostics&);
void check_groups_plane(const Context&, Diagnostics&);
// Sparse A in the gemm template (src/rules/check_sparse.cpp).
void check_sparse_target(const Context&, Diagnostics&);
void check_sparse_kind(const Context&, Diagnostics&);
void check_sparse_tile(const Context&, Diagnostics&);
void check_sparse_k(const Context&, Diagnostics&);
// The lowered kernel (src/rules/check_program.cpp): each reports the problems the verifiers
// found under its rule id.
#define PTXGEN_PROGRAM_CHECKS(X)                                                                       \
  X(program_target) X(program_threads) X(program_name) X(format_packed) X(smem_tile) X(smem_align)      \
  X(tmem_alloc) X(name_unknown) X(op_operand) X(view_cycle) X(view_slice_range) X(view_packing)          \
  X(view_layout) X(view_rows) X(load_dtype) X(load_bounds) X(load_align) X(load_tma) X(cp_source) X(cp_width)        \
  X(cp_format) X(cp_shape) X(cp_multicast_overlap) X(ld_warps) X(ld_shape) X(ld_num) X(ld_pack)          \
  X(ld_regs) X(st_regs) X(st_dtype) X(math_approx) X(math_operands) X(math_dtype) X(math_packed) X(math_packed_fn) X(read_dtype) X(read_shape) X(read_bounds) X(reduce_shape) X(amax_dst) X(quant_of) X(quant_factors) X(store_dtype) X(store_bounds) X(store_clip) X(store_tma) X(op_mma_kind) X(op_mma_format)      \
  X(op_mma_target) X(op_mma_accum) X(op_mma_d) X(op_mma_major) X(op_mma_swizzle) X(op_mma_shape)         \
  X(op_mma_a_tmem) X(op_mma_scale_vec) X(op_mma_scale) X(op_mma_sparse) X(op_mma_overlap)               \
  X(order_unwritten) X(order_incomplete) X(order_barrier)                                              \
  X(pair_per_cta) X(pair_store_overlap) X(pair_mma) X(global_size)
#define PTXGEN_DECLARE_CHECK(n) void check_##n(const Context&, Diagnostics&);
PTXGEN_PROGRAM_CHECKS(PTXGEN_DECLARE_CHECK)
#undef PTXGEN_DECLARE_CHECK
// src/rules/check_pipeline.cpp
void check_program_size(const Context&, Diagnostics&);
void check_program_grid(const Context&, Diagnostics&);
void check_program_loop(const Context&, Diagnostics&);
void check_program_role(const Context&, Diagnostics&);
void check_math_roles(const Context&, Diagnostics&);
void check_pair_role_issue(const Context&, Diagnostics&);
void check_pair_role_reload(const Context&, Diagnostics&);
void check_load_reload(const Context&, Diagnostics&);
void check_program_coverage(const Context&, Diagnostics&);
void check_load_place(const Context&, Diagnostics&);
void check_op_mma_a_order(const Context&, Diagnostics&);
void check_tmem_alloc_total(const Context&, Diagnostics&);
void check_program_smem_budget(const Context&, Diagnostics&);
void check_tmem_budget(const Context&, Diagnostics&);
void check_smem_budget(const Context&, Diagnostics&);
// Performance warnings (src/rules/check_perf.cpp; check_ptxas_report in ptxgen/rules.hpp).
void check_plan_single_stage(const Context&, Diagnostics&);
void check_plan_acc_single_buffer(const Context&, Diagnostics&);
// src/rules/check_wgmma.cpp
void check_wgmma_types(const Context&, Diagnostics&);
void check_wgmma_accumulator(const Context&, Diagnostics&);
void check_wgmma_major(const Context&, Diagnostics&);
void check_wgmma_m(const Context&, Diagnostics&);
void check_wgmma_n(const Context&, Diagnostics&);
void check_wgmma_k(const Context&, Diagnostics&);
void check_wgmma_swizzle(const Context&, Diagnostics&);
void check_wgmma_registers(const Context&, Diagnostics&);
void check_registers_target(const Context&, Diagnostics&);
void check_registers_budget(const Context&, Diagnostics&);
void check_consumers_pingpong(const Context&, Diagnostics&);
void check_epilogue_auto(const Context&, Diagnostics&);
void check_glu_n(const Context&, Diagnostics&);
void check_glu_bias(const Context&, Diagnostics&);
void check_glu_layout(const Context&, Diagnostics&);
void check_d_fp8(const Context&, Diagnostics&);
void check_quant_dtype(const Context&, Diagnostics&);
void check_quant_target(const Context&, Diagnostics&);
void check_quant_n(const Context&, Diagnostics&);
void check_quant_tile(const Context&, Diagnostics&);
void check_cluster_multicast(const Context&, Diagnostics&);
// Limits of this build and of the hardware's address arithmetic (src/rules/check_limits.cpp).
void check_smem_desc_range(const Context&, Diagnostics&);
void check_launch_grid(const Context&, Diagnostics&);
void check_program_launch_grid(const Context&, Diagnostics&);
void check_output_size(const Context&, Diagnostics&);

}  // namespace ptxgen::rules
