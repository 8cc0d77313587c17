// The checks of the rule table for grouped GEMM in the gemm template ("groups", docs/spec.md
// "Grouped GEMM"; issue 30). Each reports under its own rule id with the pointer of the member to
// change.
#include <string>

#include "context.hpp"

namespace ptxgen::rules {

namespace {

std::string num(int64_t v) { return std::to_string(v); }

}  // namespace

// GROUPS-ALIGN, then what is not built of grouped GEMM (SPEC-NOT-BUILT at the member that asks
// for it): the K-grouped layout, and with the masked and contiguous ones clusters, CTA pairs, and
// the tensors whose per-group layout is not specified (issue 30, deliverable 1).
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
    Diagnostic& e = d.error("GROUPS-ALIGN", at + "/align",
                            "segments aligned to " + num(x.align) + " rows are not whole tiles of tile.m = " + num(g->tile.m) +
                                ": a tile would take rows of two groups, each of which multiplies its own B");
    e.help = {"use \"align\": " + num(up) + " (the next multiple of tile.m; DeepGEMM's 128 for tile.m 64 or 128)"};
    // A tile.m every engine takes at cta_group 1 (the grouped kernels' only one) that divides align.
    for (const int64_t t : {128, 64})
      if (x.align % t == 0) {
        e.help.push_back("or \"tile\": {\"m\": " + num(t) + ", ...}, which divides " + num(x.align));
        break;
      }
  }
  // Built: the masked and contiguous layouts, data-parallel and persistent, on both engines. The rest is refused at
  // the member that asks for it, its help naming what is built.
  const std::string grouped = "grouped GEMM (\"groups\") ";
  if (x.layout == spec::GroupsLayout::k_grouped) {
    d.error("SPEC-NOT-BUILT", at + "/layout",
            grouped + "is built for the masked and contiguous layouts; the k_grouped layout (A [M, sum of K], B [sum of K, N], D [G, M, N]) "
            "is specified (docs/spec.md, \"Grouped GEMM\") and refused until its kernel lands")
        .help = {"nearest built: one launch of this kernel per group: k = the group's K, A and B at its columns, D at group g"};
    return;
  }
  auto refuse = [&](const std::string& ptr, const std::string& what, const std::string& help) {
    d.error("SPEC-NOT-BUILT", ptr, grouped + "is built without " + what + " (docs/spec.md, \"Grouped GEMM\")").help = {help};
  };
  if (g->cluster[0] * g->cluster[1] * g->cluster[2] > g->cta_group || g->cta_group > 1)
    refuse(g->cta_group > 1 ? "/gemm/cta_group" : "/gemm/cluster",
           "clusters and CTA pairs: a CTA past its group's rows exits at once, which a cluster's multicast partner or pair would wait for",
           g->cta_group > 1 ? "use \"cta_group\": 1" : "leave \"cluster\" out (one CTA)");
  if (g->scale) refuse("/gemm/scale", "block scaling: the factor tensors' per-group layout is not specified", "leave \"scale\" out, or launch per group");
  if (g->sparse) refuse("/gemm/sparse", "sparse A: the metadata's per-group layout is not specified", "leave \"sparse\" out, or launch per group");
  if (g->c) refuse("/gemm/c", "an input C: its per-group layout is not specified", "leave \"c\" out, or launch per group");
  if (g->residual) refuse("/gemm/residual", "a residual: its per-group layout is not specified", "leave \"residual\" out, or launch per group");
  if (g->quantize) refuse("/gemm/quantize", "D's block quantization: the factors' per-group layout is not specified", "leave \"quantize\" out, or launch per group");
  if (g->amax)
    refuse("/gemm/amax", "D's amax: the rows past a group's valid rows in its last tile hold no product of its tokens, and would raise it",
           "leave \"amax\" out, or launch per group");
  if (g->d == isa::DType::e2m1)
    refuse("/gemm/d/dtype", "an e2m1 D (two elements a byte): its groups' planes are not whole bytes for every size", "use an 8- or 16-bit D");
}

// GROUPS-PLANE: one map's group stride (cuTensorMapEncodeTiled: globalStrides below 2^40), for the
// maps that address every group: A, B and D in the masked layout, B in the contiguous one.
void check_groups_plane(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = c.gemm;
  if (!g || !g->groups || g->groups->layout == spec::GroupsLayout::k_grouped) return;
  const bool masked = g->groups->layout == spec::GroupsLayout::masked;
  const std::string at = "/gemm/groups";
  // Each product of two sizes (each below 2^31) fits 62 bits; the bytes are compared without overflow.
  auto plane_bits = [](int64_t rows, int64_t ld, int bits) { return rows * ld >= ((int64_t{1} << 43) + bits - 1) / bits; };
  const int64_t lda = spec::leading_dimension(g->a, g->a.major == isa::Major::k ? g->k : g->m);
  const int64_t ldb = spec::leading_dimension(g->b, g->b.major == isa::Major::k ? g->k : g->n);
  const char* big = masked && plane_bits(g->a.major == isa::Major::k ? g->m : g->k, lda, isa::value_bits(g->a.dtype)) ? "A"
                    : plane_bits(g->b.major == isa::Major::k ? g->n : g->k, ldb, isa::value_bits(g->b.dtype))           ? "B"
                    : masked && plane_bits(g->m, g->n, isa::value_bits(g->d))                                         ? "D"
                                                                                                                        : nullptr;
  if (big)
    d.error("GROUPS-PLANE", at,
            std::string("a group of ") + big + " spans 2^40 bytes or more at the spec's sizes: the tensor map addressing every group takes its "
            "group stride only below 2^40 bytes")
        .help = {"a smaller m (a group's capacity) or k", "or launch per group"};
}

}  // namespace ptxgen::rules
