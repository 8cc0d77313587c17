// The kernel and its buffers: the target has the engine, threads are whole warps, a pair's
// per_cta only in a pair, names are identifiers of one kind each, global tensors within 2^48 bytes,
// "packed" only for e2m1, tiles in canonical layouts (§9.7.16.3.3) aligned to their swizzle
// pattern (Table 41) and TMA boxes, allocations of 32..512 columns, a power of two (§9.7.16.7.1).
#include <algorithm>
#include <optional>
#include <set>

#include "verify.hpp"

#include "ptxgen/spec.hpp"

namespace ptxgen::rules::verify {

namespace {

std::string s(int64_t v) { return std::to_string(v); }
bool pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// SMEM-TILE: the tile has no canonical layout; the help names the change that works: the largest
// smaller swizzle whose atoms the shape fills (pointing at the swizzle), else the shape rounded up
// to whole atoms of this swizzle (pointing at it).
void tile_layout(Ctx& c, const ir::Tile& t, const isa::TileLayout& layout, const std::string& why) {
  std::optional<isa::Swizzle> smaller;
  for (isa::Swizzle sw : {isa::Swizzle::b128, isa::Swizzle::b64, isa::Swizzle::b32, isa::Swizzle::none}) {
    if (isa::bytes(sw) >= isa::bytes(t.swizzle) || (sw != isa::Swizzle::none && t.swizzle == isa::Swizzle::none)) continue;
    isa::TileLayout x = layout;
    x.swizzle = sw;
    if (!isa::make_tile_layout(x)) {
      smaller = sw;
      break;
    }
  }
  if (t.major == isa::Major::k && t.swizzle == isa::Swizzle::b128_base32b) smaller = isa::Swizzle::b128;
  const std::string what = "\"" + t.name + "\" (" + std::string(isa::name(t.dtype)) + ", " + s(t.rows) + " x " + s(t.cols) +
                           ", " + (t.major == isa::Major::k ? "K" : "MN") + "-major, " + std::string(isa::name(t.swizzle)) +
                           ") is not a canonical layout: " + why;
  auto swz = [](isa::Swizzle w) { return w == isa::Swizzle::none ? std::string("0") : s(isa::bytes(w)); };
  if (smaller) {
    c.problem("SMEM-TILE", t.swizzle_ptr, what,
              {"use \"swizzle\": " + swz(*smaller) + " (the largest swizzle whose atoms this shape fills)",
               "or a shape of whole swizzle atoms"});
    return;
  }
  // Whole atoms of this swizzle: rows and columns rounded up (§9.7.16.3.3).
  const int sb = isa::bytes(t.swizzle);  // 16 without swizzle
  const int64_t along = sb * 8 / layout.bits;  // elements of one atom row
  const int64_t k_group = t.swizzle == isa::Swizzle::b128_base32b ? 4 : 8;
  const int64_t rows_mult = t.major == isa::Major::k ? 8 : along, cols_mult = t.major == isa::Major::k ? along : k_group;
  auto up = [](int64_t v, int64_t m) { return m > 0 ? (v + m - 1) / m * m : v; };
  if (up(t.rows, rows_mult) == t.rows && up(t.cols, cols_mult) == t.cols) {  // whole atoms, but too large
    c.problem("SMEM-TILE", t.shape_ptr, what, {"use a smaller tile: a descriptor addresses 2^18 bytes"});
    return;
  }
  c.problem("SMEM-TILE", t.shape_ptr, what,
            {"use \"shape\": [" + s(up(t.rows, rows_mult)) + ", " + s(up(t.cols, cols_mult)) + "]: rows a multiple of " +
             s(rows_mult) + ", columns a multiple of " + s(cols_mult) + " (" +
             (t.major == isa::Major::k ? "8-row core matrices, K in whole " + s(sb) + "-byte atom rows"
                                       : "M/N in whole " + s(sb) + "-byte atom rows, K in " + s(k_group) + "-row groups") +
             ")"});
}

}  // namespace

void kernel(Ctx& c) {
  const ir::Kernel& p = c.k;
  if (p.engine == ir::Engine::tcgen05 && !c.target.tcgen05)
    c.problem("PROGRAM-TARGET", "/target",
              "the program level emits tcgen05 instructions (tensor memory, tcgen05.cp/mma/ld/st); " +
                  std::string(c.target.name) + " has none",
              {"target sm_100a, sm_100f, sm_103a or sm_110a"});
  if (p.threads % 32 != 0)
    c.problem("PROGRAM-THREADS", p.threads_ptr,
              "threads = " + s(p.threads) + " is not a whole number of warps: tcgen05.ld/st, alloc and wait are "
              "warp-collective (.sync.aligned)",
              {"use a multiple of 32 threads (128 is one warpgroup, which reaches all 128 lanes)"});
  // "per_cta" places the second CTA of a pair; a one-CTA program has none.
  if (p.cta_group == 1)
    for (const ir::Op* op : all_ops(p))
      if (const ir::Position* o = ir::position_of(*op); o && o->has_per_cta)
        c.problem("PAIR-PER-CTA", o->per_cta_ptr,
                  "\"per_cta\" says where CTA 1 of a pair reads or writes; this program is one CTA (\"cta_group\": 1)",
                  {"drop \"per_cta\"", "or make the program a CTA pair with \"cta_group\": 2"});
  // Names: identifiers (they name kernel parameters and labels), one kind each.
  std::map<std::string, std::string> seen;
  auto declare = [&](const std::string& n, const std::string& ptr, const std::string& what) {
    if (!spec::valid_name(n)) {
      c.problem("PROGRAM-NAME", ptr, "\"" + n + "\" is not a name: [A-Za-z_][A-Za-z0-9_]*, at most 64 characters",
                {"rename it"});
      return;
    }
    // The planner adds barriers and register sets of its own (plan::planner_name): a user's name
    // among them would share their mbarrier phases or registers.
    if (n.rfind(plan::kPlannerPrefix, 0) == 0) {
      c.problem("PROGRAM-NAME", ptr,
                "\"" + n + "\" begins with \"" + std::string(plan::kPlannerPrefix) +
                    "\", which ptxgen keeps for the barriers and register sets it adds",
                {"rename it"});
      return;
    }
    auto [it, fresh] = seen.emplace(n, what);
    if (!fresh && it->second != what)
      c.problem("PROGRAM-NAME", ptr, "\"" + n + "\" names both " + it->second + " and " + what,
                {"give each global tensor, tile, view, register set and barrier its own name"});
  };
  for (const auto& g : p.globals) declare(g.name, g.ptr, "a global tensor");
  for (const auto& t : p.tiles) declare(t.name, t.ptr, "a shared-memory tile");
  for (const auto& v : p.views)
    if (!v.name.empty()) declare(v.name, v.ptr, "a tensor-memory view");
  for (const ir::Op* o : all_ops(p)) {
    // An activation's temporaries are the lowering's names (ir::activation_temporary), none of the spec.
    const ir::Math* m = o->as<ir::Math>();
    if (const ir::Ref* r = ir::regs_of(*o); r && *r && !(m && m->of && !m->of->last())) declare(r->name, r->ptr, "a register set");
    if (const ir::Ref* b = ir::barrier_of(*o); b && *b) declare(b->name, b->ptr, "a barrier");
  }
  // Global tensors: at most 2^48 bytes (ir::kGlobalBytesMax says why).
  for (const auto& g : p.globals) {
    const uint64_t bytes = ir::global_bytes(g);
    if (bytes <= ir::kGlobalBytesMax) continue;
    c.oversized.insert(g.name);
    c.problem("GLOBAL-SIZE", g.ptr + "/shape",
              "\"" + g.name + "\" is " + s(g.rows) + " x " + s(g.cols) + " " + std::string(isa::name(g.dtype)) + ": " +
                  std::to_string(bytes) + " bytes, more than the 2^48 bytes (256 TiB) a global tensor may hold",
              {"describe the part of the tensor the kernel touches (and pass its address)"});
  }
  // 4-bit storage formats.
  auto format = [&](isa::DType t, spec::SubByte f, const std::string& ptr) {
    if (f == spec::SubByte::packed && t != isa::DType::e2m1)
      c.problem("FORMAT-PACKED", ptr,
                "\"packed\" stores two e2m1 per byte (§9.7.16.10.4.6); " + std::string(isa::name(t)) + " has no such format",
                {"drop \"format\" (padded is the default for 4- and 6-bit types)"});
  };
  for (const auto& g : p.globals) format(g.dtype, g.format, g.format_ptr);
  // Tiles: canonical layouts and the alignment their swizzle pattern (and TMA) needs.
  const std::set<std::string> tma = plan::tma_destinations(p);
  for (const auto& t : p.tiles) {
    format(t.dtype, t.format, t.format_ptr);
    isa::TileLayout layout = ir::tile_layout(t);
    if (auto why = isa::make_tile_layout(layout)) {
      tile_layout(c, t, layout, *why);
      continue;
    }
    const uint32_t want = plan::tile_alignment(t, tma.count(t.name) > 0);
    if (!t.align || (pow2(t.align) && t.align >= want)) {
      plan::SmemPlacement& sp = c.placed[t.name];
      sp.name = t.name;
      sp.dtype = t.dtype;
      sp.bits = layout.bits;
      sp.layout = layout;
      sp.align = t.align ? t.align : want;
      sp.stages = t.stages;
      continue;
    }
    c.problem("SMEM-ALIGN", t.align_ptr,
              "align = " + s(t.align) + ": \"" + t.name + "\" needs a power of two of at least " + s(want) +
                  (isa::pattern_bytes(t.swizzle) < isa::kTmaSmemAlign && want == isa::kTmaSmemAlign
                       ? " bytes (a TMA load writes it in boxes that start " + s(isa::kTmaSmemAlign) + "-byte aligned)"
                       : " bytes (the " + std::string(isa::name(t.swizzle)) +
                             " pattern starts there, so descriptors carry base offset 0; Table 41)"),
              {"use \"align\": " + s(want) + " or a larger power of two, or omit it"});
  }
  // Allocations: a power of two of 32..512 columns each (§9.7.16.7.1).
  for (const auto& v : p.views)
    if (v.kind == ir::TmemView::Kind::alloc && !isa::alloc_columns_ok(v.columns))
      c.problem("TMEM-ALLOC", v.columns_ptr,
                "tcgen05.alloc takes a power of two of 32 to 512 columns; \"" + v.name + "\" asks " + s(v.columns),
                {"round it up to a power of two (slices can use fewer columns)"});
}

}  // namespace ptxgen::rules::verify
