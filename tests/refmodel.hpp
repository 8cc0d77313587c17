// A CPU reference model of what a tcgen05 plan makes the hardware do.
//
// It is written from the PTX ISA's descriptions and deliberately calls none of ptxgen's encoders or
// layout functions: it decodes every shared-memory descriptor, instruction descriptor and
// tensor-memory address from their bits (§9.7.16.4.1, §9.7.16.4.2, §9.7.16.1.1), reads operands
// through the canonical layouts of §9.7.16.3.3 with the swizzle applied to absolute addresses,
// fills a simulated shared memory the way TMA boxes write each swizzle mode, accumulates into a
// simulated tensor memory, maps tensor memory back to matrix rows and columns through the
// data-path layouts of §9.7.16.10.5, and compares with a plain GEMM of the CTA tile.
#pragma once

#include <string>
#include <vector>

#include "ptxgen/plan.hpp"
#include "ptxgen/spec.hpp"

namespace refmodel {

struct Result {
  bool ok = false;
  std::vector<std::string> errors;  // first few mismatches, with coordinates
  long elements_checked = 0;
};

// Replays a gemm kernel's plan for one CTA tile and its first K block on random integer operands:
// the producer's TMA loads into shared memory (stage 0), every tcgen05.cp and tcgen05.mma (or wgmma)
// of the MMA loop, and the epilogue's tcgen05.ld fragments and stores; compares with a plain GEMM.
Result replay(const ptxgen::plan::Plan& p, const ptxgen::spec::Gemm& g, unsigned seed);

// Replays a program-level plan (tests/refmodel_program.cpp): loads, every tcgen05.cp (the lanes
// each shape writes, decompression), tcgen05.mma (dense and block-scaled; sparse: metadata
// addressing only), tcgen05.ld/st fragments and stores, on random operands, and compares every
// copied, stored and accumulated view and every global tensor with a logical evaluation of the ops.
Result replay_program(const ptxgen::plan::Plan& p, const ptxgen::spec::Spec& s, unsigned seed);
// The cell thread t's register j moves with a tcgen05.ld/st of this shape (.x1 repeated): lane and
// column from taddr; `half`: relative to the second base of .16x32bx2 (CUTLASS TMEM traits).
void tmem_cell(ptxgen::isa::LdShape s, int t, int j, int& lane, int& col, bool& half);
// Resolves the program's views independently and lists where the plan's resolution differs.
std::vector<std::string> check_views(const ptxgen::plan::Plan& p, const ptxgen::spec::Spec& s);

// Pieces, exposed for unit tests.
// Byte offset at which a TMA box arrangement puts element (row, col) of an operand tile:
// `contiguous_is_k` says which dimension is contiguous in global memory.
uint32_t tma_offset(bool contiguous_is_k, int swizzle_bytes, bool base32b, int bits, int rows, int k, int row,
                    int col);
// The swizzle the hardware applies to a shared-memory byte address (§9.7.16.3.3: Swizzle<B,4,3>;
// 128B with 32B atomicity: Swizzle<2,5,2>).
uint32_t swizzle(int layout_type_sm100, uint32_t addr);

}  // namespace refmodel
