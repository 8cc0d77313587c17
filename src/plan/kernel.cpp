// The planner's entry: declarations checked and placed (names, global sizes, tile layouts and
// alignments, tensor-memory allocations, views resolved), each role's ops planned and ordered
// (order.cpp with ops.cpp, mma.cpp, wgmma.cpp), then the memory map: the tiles (rings of stages),
// the mbarriers and the words tcgen05.alloc writes, and the budgets of shared and tensor memory.
#include <cstdio>
#include <algorithm>
#include <optional>
#include <set>
#include <stdexcept>
#include <tuple>

#include "internal.hpp"

namespace ptxgen::plan {

std::string operand_text(const MathStep& m, size_t k) {
  if (const auto& v = m.value.at(k)) {
    char b[40];
    std::snprintf(b, sizeof b, "%.9g", static_cast<double>(*v));
    return b;
  }
  return k == 0 ? m.a : k == 1 ? m.b : m.c;
}

std::optional<RegDef> packed_regs(const RegDef& f32, isa::DType t) {
  if (f32.wgmma || f32.dtype != isa::DType::f32 || f32.elems_per_reg != 1 || f32.frags.empty()) return std::nullopt;
  RegDef d = f32;
  d.dtype = t;
  d.elems_per_reg = 2;
  d.elem_bits = 16;
  d.view_packing = 1;  // as .pack::16b of 16-bit cells: a register spans two columns of one element each
  d.regs = 0;
  for (LdInstr& f : d.frags) {
    if (f.shape != isa::LdShape::s32x32b || f.pack || f.num % 2 != 0 || f.first_reg % 2 != 0) return std::nullopt;
    f.num /= 2;
    f.regs /= 2;
    f.first_reg /= 2;
    f.pack = true;
    d.regs = std::max(d.regs, f.first_reg + f.regs);
  }
  return d;
}

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
    case StepKind::math: return "math";
    case StepKind::read: return "read";
    case StepKind::reduce: return "reduce";
    case StepKind::amax: return "amax";
    case StepKind::quantize: return "quantize";
  }
  return "?";
}

OutputSize output_size(const Step& st) {
  // Lines each step's PTX takes at most (src/emit/): its comment and the blank line after it, its
  // labels and predicates, and per instruction group what the emitter writes; bytes: at most 96 per
  // line, plus the comment's text and 10 per register in a tcgen05.ld/st vector.
  OutputSize z;
  int64_t lines = 4, regs = 0;
  auto warps = [](const RegDef& d) {
    std::set<int> w;
    for (const auto& f : d.frags) w.insert(f.warp);
    return static_cast<int64_t>(std::max<size_t>(w.size(), 1));
  };
  switch (st.kind) {
    case StepKind::load:
      // A rank-3 map's plane coordinate: two more lines per box.
      lines += st.load.tma ? 16 + (st.load.map.rank == 3 ? 8 : 6) * static_cast<int64_t>(st.load.boxes.size()) : 40;
      break;
    case StepKind::sync: lines += 6; break;
    case StepKind::cp:
      lines += 2 + 5 * static_cast<int64_t>(st.cps.size());
      for (const auto& c : st.cps) lines += c.ring.stages > 1 ? 1 : 0;  // the ring stage's address
      z.async = static_cast<int64_t>(st.cps.size());
      break;
    case StepKind::mma:
      lines += 12 + 10 * static_cast<int64_t>(st.mma.instrs.size()) + (st.mma.a_registers ? 400 : 0);
      for (const auto& in : st.mma.instrs)
        regs += in.n / 2, lines += (in.sfa_ring.stages > 1) + (in.sfb_ring.stages > 1) + (in.meta_ring.stages > 1);
      z.async = static_cast<int64_t>(st.mma.instrs.size());
      break;
    case StepKind::tmem_ld:
      lines += 3 * warps(st.ld);
      for (const auto& f : st.ld.frags) lines += 1, regs += f.regs;
      break;
    case StepKind::tmem_st:
      lines += 3 * warps(st.st.dst);
      for (const auto& f : st.st.dst.frags) lines += 1, regs += f.regs;
      if (!st.st.direct)
        for (const auto& f : st.st.sources)
          for (const auto& r : f) lines += static_cast<int64_t>(r.size()) + 1;
      break;
    case StepKind::store: {
      const RegDef& d = st.store.src;
      // A clipped store writes a pair of elements in about 30 instructions; a plain one 3 per element.
      const int64_t per_reg = st.store.clip ? 16 : 3 * d.elems_per_reg + 1;
      lines += 16 + 10 * warps(d) + (d.wgmma ? int64_t{d.regs} * per_reg : 0);
      // "epilogue": "auto": the TMA store and the clipped direct store, one taken at run time.
      if (st.store.map.optional) lines += 24 + int64_t{d.regs} * 16;
      // Warps that hold the same fragments rows apart share one copy (Emitter::for_warps), after 6
      // lines that find the warp's rows.
      const bool once = uniform_warp_rows(d).has_value();
      if (once) lines += 6;
      for (const auto& f : d.frags)
        if (!once || f.warp == d.frags.front().warp) lines += 3 + static_cast<int64_t>(f.regs) * per_reg;
      break;
    }
    case StepKind::wait_ld:
    case StepKind::wait_st:
    case StepKind::mma_wait: lines += 1; break;
    case StepKind::commit:
    case StepKind::wait:
    case StepKind::arrive:
    case StepKind::expect_tx: lines += 14; break;  // with the stage and phase of a ring
    case StepKind::loop: lines += 24; break;        // its body counts step by step
    case StepKind::math: {  // per warp a branch and a label, one instruction a register (select: setp and selp)
      const int64_t per = st.math.fn == MathFn::select ? 2 : 1;
      lines += 3 * warps(st.math.def);
      // Warps that hold the same registers share one copy of the chain (Emitter::math_run).
      const bool once = warps_hold_same_registers(st.math.def);
      for (const auto& f : st.math.def.frags)
        if (!once || f.warp == st.math.def.frags.front().warp) lines += per * f.regs, regs += 4 * per * f.regs;
      if (st.math.def.wgmma) lines += per * st.math.def.regs, regs += 4 * per * int64_t{st.math.def.regs};
      break;
    }
    case StepKind::reduce: {  // per warp a guard; per register at most 2 instructions, per row 4 for the shuffles
      const RegDef& d = st.reduce.def;
      const int64_t w = std::max<int64_t>(1, warps(d));
      lines += 8 + 3 * w + (2 + 4) * int64_t{d.regs} * w;
      regs += 12 * int64_t{d.regs} * w;
      break;
    }
    case StepKind::amax: {  // per warp the thread's position and 5 shuffles; per element at most 5 instructions
      const RegDef& d = st.amax.bounds.def;
      lines += 40 + 24 * std::max<int64_t>(1, warps(d)) + 5 * int64_t{d.regs} * std::max<int64_t>(1, warps(d));
      regs += 12 * int64_t{d.regs} * std::max<int64_t>(1, warps(d));
      break;
    }
    case StepKind::quantize: {
      // Per warp the thread's position; per element abs, max, mul; per block (vec of a thread's
      // registers, or vec / 4 where 4 lanes share a row) at most 28 instructions (the factor, its
      // shuffles, its address and store), and per row (at least one block) 9.
      const QuantizeStep& q = st.quantize;
      const RegDef& d = q.def;
      const int64_t w = std::max<int64_t>(1, warps(d));
      const int64_t blocks = int64_t{d.regs} / std::max(1, q.shuffle ? q.vec / 4 : q.vec) + 1;
      lines += 40 + 24 * w + (3 * int64_t{d.regs} + (28 + 9) * blocks) * w;
      regs += 12 * int64_t{d.regs} * w;
      break;
    }
    case StepKind::read: {  // per warp the thread's position; per element at most 11 instructions
      const RegDef& d = st.read.def;
      // A tensor of one element (D's scale, an input alpha or beta) broadcasts one load to every
      // register (Emitter::read_element loads each distinct element once): one element a warp.
      const int64_t elements = st.read.rows_broadcast && st.read.cols_broadcast ? 1 : int64_t{d.regs};
      lines += 16 + 8 * warps(d) + 11 * elements * std::max<int64_t>(1, warps(d));
      regs += 12 * int64_t{d.regs} * std::max<int64_t>(1, warps(d));
      break;
    }
  }
  z.instructions = lines;
  z.ptx_bytes = 96 * lines + 10 * regs + static_cast<int64_t>(st.why.size());
  return z;
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

int Plan::tma_stores() const {
  int n = 0;
  for (const auto& r : roles)
    each_step(r.steps, [&](const Step& s) {
      if (s.kind == StepKind::store && s.store.tma) n += s.store.boxes;
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

// ---- Narrow calls (the verifiers' too) ---------------------------------------------------------
namespace detail {
std::set<std::string> typed_maps(const ir::Kernel& k) {
  std::set<std::string> typed;
  for (const auto& g : k.globals)
    if (g.typed_map) typed.insert(g.name);
  return typed;
}
bool by_tma(const std::set<std::string>& typed_maps, const ir::Op& o) {
  const ir::Load* l = o.as<ir::Load>();
  return l && (l->tma || typed_maps.count(l->src.name));
}
}  // namespace detail

std::set<std::string> tma_destinations(const ir::Kernel& k) {
  const std::set<std::string> typed = detail::typed_maps(k);
  std::set<std::string> out;
  for (const auto& r : k.roles)
    detail::each_op(r, [&](int, const ir::Op& o) {
      if (detail::by_tma(typed, o)) out.insert(o.as<ir::Load>()->dst.name);
    });
  return out;
}

uint32_t tile_alignment(const ir::Tile& t, bool tma_destination) {
  const uint32_t want = std::max<uint32_t>(16, static_cast<uint32_t>(isa::pattern_bytes(t.swizzle)));
  // A TMA load's boxes start 128-byte aligned in shared memory (LOAD-TMA), so its tile does too.
  return tma_destination ? std::max<uint32_t>(want, isa::kTmaSmemAlign) : want;
}


namespace detail {
namespace {

bool pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

}  // namespace

// ---- Declarations ----------------------------------------------------------------------------
// The tiles with a canonical layout and a valid alignment, placed: in name order, each at its
// alignment from the (run-time aligned) base; a ring of stages one after another, each stage
// aligned. The kernel verifier (src/rules/verify_kernel.cpp) reports every tile left out here.
std::map<std::string, SmemPlacement> place_tiles(const ir::Kernel& k) {
  const std::set<std::string> tma = tma_destinations(k);
  std::map<std::string, const ir::Tile*> tiles;
  std::map<std::string, SmemPlacement> placed;
  for (const auto& t : k.tiles) {
    tiles[t.name] = &t;
    SmemPlacement sp;
    sp.name = t.name;
    sp.dtype = t.dtype;
    sp.bits = isa::storage_bits(t.dtype, t.format);
    sp.layout = tile_layout(t);
    if (isa::make_tile_layout(sp.layout)) continue;
    const uint32_t want = tile_alignment(t, tma.count(t.name) > 0);
    sp.align = t.align ? t.align : want;
    sp.stages = t.stages;
    if (!pow2(sp.align) || sp.align < want) continue;
    placed[t.name] = sp;
  }
  uint32_t off = 0;
  auto overlay_of = [&](const std::string& n) { return tiles.count(n) ? tiles.at(n)->overlay : std::string(); };
  for (auto& [n, t] : placed) {
    if (!overlay_of(n).empty()) continue;
    off = round_up(off, t.align);
    t.offset = off;
    t.stage_bytes = round_up(t.layout.bytes, t.align);
    off += t.stages > 1 ? t.stage_bytes * static_cast<uint32_t>(t.stages) : t.layout.bytes;
  }
  // A tile over another's ring starts where that ring does when it ends before the other tiles do
  // (it is used only once they are no longer read); otherwise it gets memory of its own.
  for (auto& [n, t] : placed) {
    const std::string over = overlay_of(n);
    if (over.empty()) continue;
    t.stage_bytes = round_up(t.layout.bytes, t.align);
    const uint32_t bytes = t.stages > 1 ? t.stage_bytes * static_cast<uint32_t>(t.stages) : t.layout.bytes;  // a ring too
    const auto at = placed.find(over);
    if (at != placed.end() && overlay_of(over).empty() && at->second.offset % t.align == 0 && at->second.offset + bytes <= off) {
      t.offset = at->second.offset;
      t.overlay = over;
    } else {
      off = round_up(off, t.align);
      t.offset = off;
      off += bytes;
    }
  }
  return placed;
}

// The buffers the ops can use: globals within 2^48 bytes, the placed tiles, views that resolve.
// The kernel verifier reports every buffer left out here; the planner only skips it.
void declarations(Ctx& c) {
  for (const auto& g : c.k.globals)
    if (global_bytes(g) > ir::kGlobalBytesMax) c.oversized.insert(g.name);
  c.placed = place_tiles(c.k);
  ViewResolution vr = ir::resolve_views(c.k.views);
  c.views = std::move(vr.views);
}

std::string load_barrier(const ir::Load& o, int index) {
  return o.barrier ? o.barrier.name : planner_name("load", index);
}

bool ends_in_flight(const ir::Kernel& k, const ir::Role& r) {
  if (!k.planner_orders()) return false;
  // tcgen05.cp/mma work issued since the last commit, or committed to a barrier not yet waited on.
  bool uncommitted = false;
  std::set<std::string> unwaited;
  auto walk = [&](const ir::Op& o) {
    switch (o.kind()) {
      case ir::OpKind::copy: uncommitted = true; break;
      case ir::OpKind::mma: uncommitted = uncommitted || k.engine != ir::Engine::wgmma; break;
      case ir::OpKind::commit:
        if (uncommitted) unwaited.insert(o.as<ir::Commit>()->barrier.name);  // the barrier now tracks what was issued since
        uncommitted = false;
        break;
      case ir::OpKind::wait: unwaited.erase(o.as<ir::Wait>()->barrier.name); break;
      default: break;
    }
  };
  each_op(r, [&](int, const ir::Op& o) { walk(o); });
  return uncommitted || !unwaited.empty();
}

}  // namespace detail

Grid launch_grid(const ir::Kernel& k) {
  if (!k.grid.tiled) return {k.cluster[0], k.cluster[1], k.cluster[2]};
  auto ceil_div = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  auto round_up64 = [&](int64_t a, int64_t b) { return ceil_div(a, b) * b; };
  int64_t m = 0, n = 0;  // the spec's values of the sizes the grid walks
  for (const auto& z : k.size_params) {
    if (z.name == k.grid.m_param) m = z.value;
    if (z.name == k.grid.n_param) n = z.value;
  }
  // A masked grouped grid's z walks the groups (Grid::group_rows); a contiguous one's rows are A's.
  int64_t groups = 1;
  for (const auto& s : k.size_params)
    if (!k.grid.group_rows.empty() && s.name == k.grid.groups_param) groups = s.value;
  // Persistent: at most one CTA (pair) per tile (a masked grouped grid: of every group's capacity);
  // the launcher takes fewer (one per multiprocessor). A persistent sm_90a cluster walks blocks of
  // cluster_m x cluster_n tiles.
  if (k.grid.persistent)
    return {ceil_div(ceil_div(n, k.grid.tile_n), k.grid.cluster_n) * ceil_div(ceil_div(m, k.grid.tile_m), k.grid.cluster_m) * k.cta_group *
                k.grid.cluster_m * k.grid.cluster_n * groups,
            1, 1};
  const int64_t z = k.grid.group_rows.empty() ? k.cluster[2] : groups;
  return {round_up64(ceil_div(n, k.grid.tile_n) * k.cta_group, k.cluster[0]), round_up64(ceil_div(m, k.grid.tile_m), k.cluster[1]), z};
}

MemoryMap memory_map(const ir::Kernel& k) {
  MemoryMap mm;
  uint32_t end = 0;
  for (const auto& [n, t] : detail::place_tiles(k)) {
    mm.smem.push_back(t);
    end = std::max(end, t.offset + (t.stages > 1 ? t.stage_bytes * static_cast<uint32_t>(t.stages) : t.layout.bytes));
    mm.smem_align = std::max(mm.smem_align, t.align);
  }
  end = detail::round_up(end, 8);
  // The barriers the ops name, as the planner's steps name them (order.cpp).
  const std::set<std::string> typed = detail::typed_maps(k);
  std::set<std::string> used;
  for (const auto& r : k.roles) {
    detail::each_op(r, [&](int i, const ir::Op& o) {
      if (const ir::Load* l = o.as<ir::Load>()) {
        if (detail::by_tma(typed, o)) used.insert(detail::load_barrier(*l, i));
      } else if (const ir::Ref* b = ir::barrier_of(o)) {
        used.insert(b->name);
      }
    });
    if (detail::ends_in_flight(k, r)) used.insert(planner_name("done"));
  }
  std::map<std::string, const ir::Barrier*> declared;
  for (const auto& b : k.barriers) declared[b.name] = &b;
  for (const auto& b : used) {
    const ir::Barrier* d = declared.count(b) ? declared.at(b) : nullptr;
    mm.barriers.push_back({b, end, d ? d->count : 1, d ? d->stages : 1});
    end += 8u * static_cast<uint32_t>(d ? d->stages : 1);
  }
  // tcgen05.alloc: "the number of columns allocated should not increase between any two
  // allocations" (§9.7.16.7.1): largest first.
  for (const auto& v : k.views)
    if (v.kind == ir::TmemView::Kind::alloc) mm.allocs.push_back({v.name, static_cast<uint32_t>(v.columns), 0});
  std::stable_sort(mm.allocs.begin(), mm.allocs.end(), [](const auto& a, const auto& b) { return a.columns > b.columns; });
  for (auto& a : mm.allocs) {
    a.slot_offset = end;
    end += 4;
    mm.tmem_columns += a.columns;
  }
  mm.smem_bytes = detail::round_up(end, 16) + mm.smem_align;  // slack to round the base up at run time
  return mm;
}

Plan make_plan(const ir::Kernel& k) { return make_plan(std::make_shared<const ir::Kernel>(k)); }

Plan make_plan(std::shared_ptr<const ir::Kernel> kernel, Facts facts) {
  const ir::Kernel& k = *kernel;
  detail::Ctx c(k);
  detail::declarations(c);
  detail::Ordered ord = detail::order(c);
  Plan p;
  p.kernel = kernel;
  p.roles = std::move(ord.roles);
  if (!facts.sized) facts.crossing = output_bound(k, &facts.size);
  if (facts.crossing) throw std::logic_error("make_plan on a kernel past the output bound (OUTPUT-SIZE)");
  p.size = facts.size;
  p.views = c.views;
  p.reg_counts = ord.reg_counts;
  p.tensor_maps = ord.tensor_maps;
  p.launch = facts.grid ? *facts.grid : launch_grid(k);
  MemoryMap mm = facts.memory ? std::move(*facts.memory) : memory_map(k);
  p.smem = std::move(mm.smem);
  p.barriers = std::move(mm.barriers);
  p.allocs = std::move(mm.allocs);
  p.smem_align = mm.smem_align;
  p.smem_bytes = mm.smem_bytes;
  p.tmem_columns = mm.tmem_columns;
  // The printers' order of views: each allocation (in tcgen05.alloc order), then the views
  // declared of it, each after the view it is declared of, siblings in the order of their cells
  // (first column, then lane). The spec's key order is no order: the same spec gives the same
  // plan however its members are ordered.
  {
    std::map<std::string, std::vector<std::string>> derived;
    for (const auto& [n, v] : p.views)
      if (!v.of.empty()) derived[v.of].push_back(n);
    for (auto& [parent, kids] : derived)
      std::stable_sort(kids.begin(), kids.end(), [&](const std::string& a, const std::string& b) {
        const ResolvedView &x = p.views.at(a), &y = p.views.at(b);
        return std::tie(x.column, x.lane) < std::tie(y.column, y.lane);
      });
    std::vector<std::string> todo;
    for (auto a = p.allocs.rbegin(); a != p.allocs.rend(); ++a) todo.push_back(a->name);
    while (!todo.empty()) {
      const std::string n = todo.back();
      todo.pop_back();
      if (!p.views.count(n)) continue;
      p.view_order.push_back(n);
      auto d = derived.find(n);
      if (d != derived.end()) todo.insert(todo.end(), d->second.rbegin(), d->second.rend());
    }
  }
  return p;
}

}  // namespace ptxgen::plan
