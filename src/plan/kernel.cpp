// The planner's entry: declarations checked and placed (names, global sizes, tile layouts and
// alignments, tensor-memory allocations, views resolved), each role's ops planned and ordered
// (order.cpp with ops.cpp, mma.cpp, wgmma.cpp), then the memory map: the tiles (rings of stages),
// the mbarriers and the words tcgen05.alloc writes, and the budgets of shared and tensor memory.
#include <algorithm>
#include <stdexcept>

#include "internal.hpp"
#include "ptxgen/spec.hpp"

namespace ptxgen::plan {

std::string planner_name(std::string_view what, int index) {
  return std::string(kPlannerPrefix) + std::string(what) + (index >= 0 ? std::to_string(index) : "");
}

std::string_view name(StepKind k) {
  switch (k) {
    case StepKind::load: return "load";
    case StepKind::sync: return "sync";
    case StepKind::cp: return "copy";
    case StepKind::mma: return "mma";
    case StepKind::tmem_ld: return "tmem_load";
    case StepKind::tmem_st: return "tmem_store";
    case StepKind::wait_ld: return "wait_ld";
    case StepKind::wait_st: return "wait_st";
    case StepKind::store: return "store";
    case StepKind::commit: return "commit";
    case StepKind::wait: return "wait";
    case StepKind::arrive: return "arrive";
    case StepKind::expect_tx: return "expect_tx";
    case StepKind::mma_wait: return "mma_wait";
    case StepKind::loop: return "loop";
  }
  return "?";
}

namespace {
template <typename F>
void each_step(const std::vector<Step>& steps, F&& f) {
  for (const auto& s : steps) {
    f(s);
    each_step(s.body, f);
  }
}
}  // namespace

int Plan::mma_instructions() const {
  int n = 0;
  for (const auto& r : roles)
    each_step(r.steps, [&](const Step& s) {
      if (s.kind == StepKind::mma) n += static_cast<int>(s.mma.instrs.size());
    });
  return n;
}

int Plan::tma_boxes() const {
  int n = 0;
  for (const auto& r : roles)
    each_step(r.steps, [&](const Step& s) {
      if (s.kind == StepKind::load && s.load.tma) n += static_cast<int>(s.load.boxes.size());
    });
  return n;
}

uint64_t encoded(const isa::SmemDesc& d) {
  auto v = isa::encode(d);
  if (!v) throw std::logic_error("shared-memory descriptor does not encode");
  return *v;
}

uint32_t encoded(const isa::InstrDesc& d) {
  auto v = isa::encode(d);
  if (!v) throw std::logic_error("instruction descriptor does not encode");
  return *v;
}

namespace detail {
namespace {

std::string s(int64_t v) { return std::to_string(v); }
bool pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

std::vector<const ir::Op*> all_ops(const ir::Kernel& k) {
  std::vector<const ir::Op*> out;
  for (const auto& r : k.roles)
    for (const auto& n : r.nodes) {
      if (!n.is_loop) out.push_back(&n.op);
      else
        for (const auto& o : n.loop.body) out.push_back(&o);
    }
  return out;
}

}  // namespace

// ---- Declarations ---------------------------------------------------------------------------
void declarations(Ctx& c) {
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
      if (const ir::Op& o = *op; o.has_per_cta)
        c.problem("PAIR-PER-CTA", o.per_cta_ptr,
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
    // The planner adds barriers and register sets of its own (planner_name): a user's name among
    // them would share their mbarrier phases or registers.
    if (n.rfind(kPlannerPrefix, 0) == 0) {
      c.problem("PROGRAM-NAME", ptr,
                "\"" + n + "\" begins with \"" + std::string(kPlannerPrefix) +
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
    if (o->regs) declare(o->regs.name, o->regs.ptr, "a register set");
    if (o->barrier) declare(o->barrier.name, o->barrier.ptr, "a barrier");
  }
  // Global tensors: at most 2^48 bytes, so that every byte offset the kernel and the planner
  // compute (row x row bytes, a pair's per_cta offset) stays far inside 64-bit arithmetic. Rows and
  // columns are below 2^31 and elements at most 32 bits, so the product fits an unsigned 64-bit.
  for (const auto& g : p.globals) {
    if (!g.rows_param.empty() || !g.cols_param.empty()) continue;  // run-time extents: the template's ranges bound them
    const uint64_t row_bytes = (static_cast<uint64_t>(g.cols) * static_cast<uint64_t>(g.bits ? g.bits : spec::storage_bits(g.dtype, g.format)) + 7) / 8;
    const uint64_t bytes = static_cast<uint64_t>(g.rows) * row_bytes;
    if (bytes <= (uint64_t{1} << 48)) continue;
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
  // Tiles: canonical layouts (§9.7.16.3.3) and alignment of their swizzle pattern (Table 41).
  for (const auto& t : p.tiles) {
    format(t.dtype, t.format, t.format_ptr);
    SmemPlacement sp;
    sp.name = t.name;
    sp.dtype = t.dtype;
    sp.bits = spec::storage_bits(t.dtype, t.format);
    sp.layout.major = t.major;
    sp.layout.swizzle = t.swizzle;
    sp.layout.bits = sp.bits;
    sp.layout.mn = t.rows;
    sp.layout.k = t.cols;
    if (auto why = isa::make_tile_layout(sp.layout)) {
      c.problem("SMEM-TILE", t.swizzle_ptr,
                "\"" + t.name + "\" (" + std::string(isa::name(t.dtype)) + ", " + s(t.rows) + " x " + s(t.cols) + ", " +
                    (t.major == isa::Major::k ? "K" : "MN") + "-major, " + std::string(isa::name(t.swizzle)) +
                    ") is not a canonical layout: " + *why,
                {"use a smaller swizzle", "or a shape of whole swizzle atoms (8 rows of the swizzle width, K-major)"});
      continue;
    }
    uint32_t want = std::max<uint32_t>(16, static_cast<uint32_t>(isa::pattern_bytes(t.swizzle)));
    // A TMA load's boxes start 128-byte aligned in shared memory (LOAD-TMA), so its tile does too.
    const auto ops = all_ops(p);
    const bool tma_dst = std::any_of(ops.begin(), ops.end(), [&](const ir::Op* o) {
      return o->kind == ir::OpKind::load && (o->tma || (c.globals.count(o->src.name) && c.globals.at(o->src.name)->typed_map)) &&
             o->dst.name == t.name;
    });
    if (tma_dst) want = std::max<uint32_t>(want, isa::kTmaSmemAlign);
    sp.align = t.align ? t.align : want;
    sp.stages = t.stages;
    if (!pow2(sp.align) || sp.align < want) {
      c.problem("SMEM-ALIGN", t.align_ptr,
                "align = " + s(t.align) + ": \"" + t.name + "\" needs a power of two of at least " + s(want) +
                    (isa::pattern_bytes(t.swizzle) < isa::kTmaSmemAlign && want == isa::kTmaSmemAlign
                         ? " bytes (a TMA load writes it in boxes that start " + s(isa::kTmaSmemAlign) + "-byte aligned)"
                         : " bytes (the " + std::string(isa::name(t.swizzle)) +
                               " pattern starts there, so descriptors carry base offset 0; Table 41)"),
                {"use \"align\": " + s(want) + " or a larger power of two, or omit it"});
      continue;
    }
    c.placed[t.name] = sp;
  }
  // Placement: tiles in name order, each at its alignment from the (run-time aligned) base; a ring
  // of stages one after another, each stage aligned.
  uint32_t off = 0;
  for (auto& [n, t] : c.placed) {
    off = round_up(off, t.align);
    t.offset = off;
    t.stage_bytes = round_up(t.layout.bytes, t.align);
    off += t.stages > 1 ? t.stage_bytes * static_cast<uint32_t>(t.stages) : t.layout.bytes;
  }
  // Allocations: a power of two of 32..512 columns each (§9.7.16.7.1).
  for (const auto& v : p.views)
    if (v.kind == spec::TmemView::Kind::alloc && (!pow2(v.columns) || v.columns < 32 || v.columns > 512))
      c.problem("TMEM-ALLOC", v.columns_ptr,
                "tcgen05.alloc takes a power of two of 32 to 512 columns; \"" + v.name + "\" asks " + s(v.columns),
                {"round it up to a power of two (slices can use fewer columns)"});
  ViewResolution vr = resolve_views(p.views);
  for (auto& pr : vr.problems) c.problem(pr.rule, pr.pointer, pr.message, pr.help);
  c.views = std::move(vr.views);
}


}  // namespace detail

Analysis analyze(const ir::Kernel& k) {
  Analysis out;
  detail::Ctx c(k);
  detail::declarations(c);
  detail::Ordered ord = detail::order(c);
  Plan p;
  p.name = k.name;
  p.target = k.target;
  p.engine = k.engine;
  p.source = k.source;
  p.threads = k.threads;
  p.cta_group = k.cta_group;
  p.cluster = k.cluster;
  p.max_registers = k.max_registers;
  p.alloc_warp = k.alloc_warp;
  p.grid = k.grid;
  p.size_params = k.size_params;
  p.roles = std::move(ord.roles);
  p.views = c.views;
  p.reg_counts = ord.reg_counts;
  p.tensor_maps = ord.tensor_maps;
  for (const auto& v : k.views)
    if (!v.name.empty() && c.views.count(v.name)) p.view_order.push_back(v.name);
  for (const auto& g : k.globals)
    p.globals.push_back({g.name, g.param, g.dtype, g.bits ? g.bits : spec::storage_bits(g.dtype, g.format), g.rows, g.cols,
                         g.ld ? g.ld : g.cols, g.rows_param, g.cols_param, g.ld_param, g.format, g.output, g.dims});
  // The launch grid for the spec's own sizes: one CTA (pair) per output tile, x walking N tiles
  // (cta_group CTAs each), y walking M tiles, each rounded up to whole clusters; or one cluster.
  if (k.grid.tiled) {
    auto ceil_div = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
    auto round_up64 = [&](int64_t a, int64_t b) { return ceil_div(a, b) * b; };
    int64_t m = 0, n = 0;
    for (const auto& g : k.globals)
      if (g.output) m = g.rows, n = g.cols;
    p.launch.x = round_up64(ceil_div(n, k.grid.tile_n) * k.cta_group, k.cluster[0]);
    p.launch.y = round_up64(ceil_div(m, k.grid.tile_m), k.cluster[1]);
    p.launch.z = k.cluster[2];
  } else {
    p.launch = {k.cluster[0], k.cluster[1], k.cluster[2]};
  }
  // Shared memory: the tiles (placed before planning), then 8-byte mbarriers (a ring of them
  // for a ring barrier), then the 4-byte words tcgen05.alloc writes the allocations' addresses to.
  uint32_t end = 0;
  p.smem_align = 16;
  for (const auto& [n, t] : c.placed) {
    p.smem.push_back(t);
    end = std::max(end, t.offset + (t.stages > 1 ? t.stage_bytes * static_cast<uint32_t>(t.stages) : t.layout.bytes));
    p.smem_align = std::max(p.smem_align, t.align);
  }
  end = detail::round_up(end, 8);
  std::map<std::string, const ir::Barrier*> declared;
  for (const auto& b : k.barriers) declared[b.name] = &b;
  for (const auto& b : ord.barriers) {
    const ir::Barrier* d = declared.count(b) ? declared.at(b) : nullptr;
    p.barriers.push_back({b, end, d ? d->count : 1, d ? d->stages : 1});
    end += 8u * static_cast<uint32_t>(d ? d->stages : 1);
  }
  // tcgen05.alloc: "the number of columns allocated should not increase between any two
  // allocations" (§9.7.16.7.1): largest first.
  std::vector<AllocPlacement> allocs;
  for (const auto& v : k.views)
    if (v.kind == ir::TmemView::Kind::alloc) allocs.push_back({v.name, static_cast<uint32_t>(v.columns), 0});
  std::stable_sort(allocs.begin(), allocs.end(), [](const auto& a, const auto& b) { return a.columns > b.columns; });
  for (auto& a : allocs) {
    a.slot_offset = end;
    end += 4;
    p.tmem_columns += a.columns;
  }
  p.allocs = allocs;
  p.smem_bytes = detail::round_up(end, 16) + p.smem_align;  // slack to round the base up at run time
  // The budgets of shared and tensor memory are rules that read these numbers (rules/).
  out.problems = std::move(c.problems);
  if (out.problems.empty()) out.plan = std::move(p);
  return out;
}

Plan make_plan(const ir::Kernel& k) {
  Analysis a = analyze(k);
  if (!a.plan) {
    std::string why = a.problems.empty() ? "no plan" : a.problems[0].rule + " at " + a.problems[0].pointer + ": " + a.problems[0].message;
    throw std::logic_error("make_plan on a kernel without a plan: " + why);
  }
  return std::move(*a.plan);
}

}  // namespace ptxgen::plan
