// The driver (ptxgen/compile.hpp): the rules lower and verify the kernel once, the planner plans
// that kernel with what the rules computed of it.
#include "ptxgen/compile.hpp"

#include "ptxgen/rules.hpp"

namespace ptxgen {

Compiled compile(const spec::Spec& s, isa::Arch target, Diagnostics& diags) {
  Compiled c;
  c.spec = s;
  c.spec.target = target;
  rules::Analysis a = rules::check(c.spec, diags);
  if (!a.kernel) return c;
  c.kernel = a.kernel;
  c.plan = plan::make_plan(std::move(a.kernel), std::move(a.facts));
  return c;
}

Compiled compile(const spec::Spec& s, Diagnostics& diags) { return compile(s, s.target, diags); }

}  // namespace ptxgen
