// Pieces shared by the planner's files (not part of the stage's interface).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "ptxgen/plan.hpp"

namespace ptxgen::plan::detail {

uint32_t round_up(uint32_t v, uint32_t a);

// Lays out one operand tile of `rows` x tile.k; returns why it cannot be laid out.
std::optional<std::string> operand_tile(OperandTile& t, char name, const spec::Operand& op, isa::Swizzle sw,
                                        int bits, int rows, int tile_k);
// Stages of A and B, each tile on a 1024-byte boundary, then the mbarriers and the TMEM slot.
std::optional<std::string> smem_map(Shapes& sh, int64_t stages);
// A descriptor for the sub-matrix of `t` starting at (row0, k0) in the stage at `stage_offset`.
isa::SmemDesc operand_desc(const OperandTile& t, isa::DescFormat f, uint32_t stage_offset, int row0, int k0);

// Engine-specific steps.
std::optional<std::string> derive_tcgen05(const spec::Spec& s, Shapes& sh);
std::optional<std::string> derive_wgmma(const spec::Spec& s, Shapes& sh);
void plan_tcgen05(Plan& p);  // steps 3-4 and the tcgen05 kernel roles and epilogue
void plan_wgmma(Plan& p);    // steps 3-4 and the wgmma kernel roles
void plan_tma(Plan& p);      // tensor maps and per-stage loads (both engines)
// The largest divisor of `extent` that is at most isa::kTmaBoxMax (a TMA box dimension's limit)
// and a multiple of `step`; 0 if none.
int box_extent(int extent, int step);
// A manifest's tensor map: the arguments of cuTensorMapEncodeTiled for a 2-D map (dims and box in
// elements of `data_type`, innermost first; no interleave, unit element strides, no OOB fill mode).
nlohmann::ordered_json tensor_map_entry(const std::string& param, const std::string& tensor, const std::string& data_type,
                                        int64_t dim_inner, int64_t dim_outer, int64_t stride_bytes, int box_inner,
                                        int box_outer, isa::Swizzle swizzle);

}  // namespace ptxgen::plan::detail
