// The checks of the rule table for grouped GEMM in the gemm template ("groups", docs/spec.md
// "Grouped GEMM"; issue 30). Each reports under its own rule id with the pointer of the member to
// change.
#include <string>

#include "context.hpp"

namespace ptxgen::rules {

namespace {

std::string num(int64_t v) { return std::to_string(v); }

}  // namespace

// GROUPS-ALIGN, then what is not built of grouped GEMM (SPEC-NOT-BUILT at the layout): every
// layout, until the masked one on sm_90a lands (issue 30, deliverable 1, step 2).
void check_groups(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = c.gemm;
  if (!g || !g->groups) return;
  const spec::Gemm::Groups& x = *g->groups;
  const std::string at = "/gemm/groups";
  if (x.align_given && x.layout != spec::GroupsLayout::contiguous) {
    d.error("GROUPS-ALIGN", at + "/align",
            "\"align\" places the groups' segments of A in the contiguous layout; the " + std::string(spec::name(x.layout)) +
                " layout has none (its group g starts at a fixed stride: A[g] of m rows)")
        .help = {"leave \"align\" out", "or use \"layout\": \"contiguous\""};
  } else if (x.layout == spec::GroupsLayout::contiguous && x.align % g->tile.m != 0) {
    // A tile of tile.m rows must lie in one group: the group's B is chosen per tile, and a tile
    // across a segment boundary would multiply the next group's rows by this group's B.
    const int64_t up = (x.align + g->tile.m - 1) / g->tile.m * g->tile.m;
    d.error("GROUPS-ALIGN", at + "/align",
            "segments aligned to " + num(x.align) + " rows are not whole tiles of tile.m = " + num(g->tile.m) +
                ": a tile would take rows of two groups, each of which multiplies its own B")
        .help = {"use \"align\": " + num(up) + " (the next multiple of tile.m; DeepGEMM's 128 for tile.m 64 or 128)",
                 "or a tile.m that divides " + num(x.align)};
  }
  // Nothing of grouped GEMM is built yet: each layout named with the launches that compute it today.
  std::string what, nearest;
  switch (x.layout) {
    case spec::GroupsLayout::masked:
      what = "the masked layout (A [G, m, K], B [G, N, K], D [G, m, N], masked_m[G] at run time)";
      nearest = "one launch of this kernel per group: m = masked_m[g], A, B and D at group g's offsets";
      break;
    case spec::GroupsLayout::contiguous:
      what = "the contiguous layout (A's rows sorted by group in aligned segments, the groups' ends at run time)";
      nearest = "one launch of this kernel per group: m = the group's rows, A and D at its segment, B at group g";
      break;
    case spec::GroupsLayout::k_grouped:
      what = "the K-grouped layout (A [M, sum of K], B [sum of K, N], D [G, M, N])";
      nearest = "one launch of this kernel per group: k = the group's K, A and B at its columns, D at group g";
      break;
  }
  d.error("SPEC-NOT-BUILT", at + "/layout",
          "grouped GEMM is not built yet: " + what + " is specified (docs/spec.md, \"Grouped GEMM\") and refused until its "
          "kernel lands")
      .help = {"nearest built: " + nearest};
}

}  // namespace ptxgen::rules
