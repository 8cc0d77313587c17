// ptxgen/lower.hpp — front ends into the kernel IR (ptxgen/ir.hpp).
//
// The program level maps one to one: its globals, tiles, views and ops become the IR's, in one role
// of all warps whose ops the planner orders. The gemm template expands into a warp-specialized,
// pipelined kernel: a ring of shared-memory stages filled by TMA, a K loop of MMAs, an epilogue
// that reads the accumulator back and stores D (src/lower/gemm.cpp says how). Nothing below the
// lowering knows which front end a kernel came from.
#pragma once

#include "ptxgen/ir.hpp"
#include "ptxgen/spec.hpp"

namespace ptxgen::lower {

// The IR of a parsed spec. A gemm spec must have passed the template's rules (rules::check runs
// them before lowering): the lowering then only makes choices, it refuses nothing.
ir::Kernel lower(const spec::Spec& s);

ir::Kernel lower_program(const spec::Spec& s);
ir::Kernel lower_gemm(const spec::Spec& s);

}  // namespace ptxgen::lower
