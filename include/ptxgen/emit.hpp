// ptxgen/emit.hpp — a planned kernel in, text out: the PTX module, and the `ptxgen plan` printer
// (text and --json), both spelling instructions from the emitter's tables. Deterministic: the same
// plan gives the same bytes.
#pragma once

#include <string>

#include "ptxgen/plan.hpp"

namespace ptxgen::emit {

// The PTX module for the plan's target: .version/.target, one .entry named after the spec.
std::string ptx(const plan::Plan& p);

// PTX ISA version the module declares: the target's first, raised to what the spellings need.
struct PtxVersion {
  int major = 8, minor = 6;
};
PtxVersion ptx_version(const plan::Plan& p);

// `ptxgen plan`: every buffer, view, barrier and register set, then each role's steps with every
// instruction's shape, descriptor (decoded field by field in JSON) and tensor-memory address.
// The JSON form is an interface (docs/plan-json.md): "format" is its version.
inline constexpr int kPlanJsonFormat = 5;
std::string plan_text(const plan::Plan& p);
std::string plan_json(const plan::Plan& p);

}  // namespace ptxgen::emit
