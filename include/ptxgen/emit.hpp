// ptxgen/emit.hpp — a Plan in, PTX text out. Deterministic: the same plan gives the same bytes.
#pragma once

#include <string>

#include "ptxgen/plan.hpp"

namespace ptxgen::emit {

// The PTX module for the plan's target: .version/.target, one .entry named after the spec.
std::string ptx(const plan::Plan& p);
// The program-level kernel (emit/emit_program.cpp); ptx() dispatches to it.
std::string ptx_program(const plan::Plan& p);

// PTX ISA version the module declares: the target's minimum (and later the features' minimum).
struct PtxVersion {
  int major = 8, minor = 6;
};
PtxVersion ptx_version(const plan::Plan& p);

}  // namespace ptxgen::emit
