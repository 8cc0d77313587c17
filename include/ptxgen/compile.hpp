// ptxgen/compile.hpp — the driver: a parsed spec in, for one target, its kernel IR and plan out,
// each made once.
//
//   Spec --rules::check (lowers once, verifies, computes the budgets' facts)--> ir::Kernel + facts
//        --plan::make_plan (reuses the facts)--> Plan
//
// Every command that writes something (emit, plan, manifest, build, build --header) and `check`
// go through it, so a spec is lowered, verified and planned once per target, and what the rules
// judged is what is planned and emitted. It lives above the stages (src/compile/), not in ir/,
// which depends on isa/ alone.
#pragma once

#include <memory>
#include <optional>

#include "ptxgen/diag.hpp"
#include "ptxgen/ir.hpp"
#include "ptxgen/plan.hpp"
#include "ptxgen/spec.hpp"

namespace ptxgen {

struct Compiled {
  spec::Spec spec;                           // the spec, its target the one compiled for
  std::shared_ptr<const ir::Kernel> kernel;  // null when a rule refused the spec
  std::optional<plan::Plan> plan;            // set exactly when no rule found an error
  bool ok() const { return plan.has_value(); }
};

// Checks `s` for `target` (its own target replaced), adding every diagnostic to `diags`; when no
// rule finds an error, plans the kernel the rules lowered.
Compiled compile(const spec::Spec& s, isa::Arch target, Diagnostics& diags);
// The spec's own target.
Compiled compile(const spec::Spec& s, Diagnostics& diags);

}  // namespace ptxgen
