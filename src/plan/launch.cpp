// The launch grid (include/ptxgen/plan.hpp). Kept apart from the planner's four steps: the rule
// LAUNCH-GRID and the launch code read the same numbers from here.
#include "ptxgen/plan.hpp"

namespace ptxgen::plan {

namespace {
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }
}  // namespace

Grid grid(const spec::Gemm& g) {
  // Every operand is range-checked by the parser: m, n in [1, 2^31-1], tiles in [1, 1024],
  // cta_group in {1, 2}, cluster extents in [1, 16]. The largest value below is 2 * 2^31 * 16.
  // blockIdx.x walks N tiles (cta_group CTAs per tile), blockIdx.y walks M tiles; CTAs past the
  // problem (cluster rounding) run with zero-filled loads and store nothing.
  Grid r;
  r.x = round_up(ceil_div(g.n, g.tile.n) * g.cta_group, g.cluster[0]);
  r.y = round_up(ceil_div(g.m, g.tile.m), g.cluster[1]);
  r.z = g.cluster[2];
  return r;
}

Grid grid(const Plan& p) {
  // One CTA runs the whole program, or one cluster of two for a CTA pair (plan/plan_program.cpp).
  if (p.program) return {p.program->cta_group, 1, 1};
  return grid(*p.spec.gemm);
}

}  // namespace ptxgen::plan
