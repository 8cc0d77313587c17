// The program planner: declarations checked and placed, views resolved, each op planned
// (plan_ops.cpp, plan_mma.cpp), and the ops put in order with what the tcgen05 memory model needs
// between them (§9.7.16.6): thread syncs with tcgen05.fence::before/after_thread_sync when the
// threads that run the next op change, fence.proxy.async after generic shared-memory writes that
// tcgen05.cp/mma read, tcgen05.wait::ld/st before registers are used or reused, and the order
// rules: nothing read before it is written, nothing an asynchronous tcgen05.cp/mma writes read
// (or overwritten) before a commit and a wait made its completion visible.
#include <algorithm>
#include <stdexcept>

#include "internal.hpp"
#include "program_internal.hpp"
#include "ptxgen/plan.hpp"

namespace ptxgen::plan {

std::string planner_name(std::string_view what, int op) {
  return std::string(kPlannerPrefix) + std::string(what) + (op >= 0 ? std::to_string(op) : "");
}

std::string_view name(StepKind k) {
  switch (k) {
    case StepKind::load: return "load";
    case StepKind::sync: return "sync";
    case StepKind::cp: return "tcgen05.cp";
    case StepKind::mma: return "tcgen05.mma";
    case StepKind::tmem_ld: return "tcgen05.ld";
    case StepKind::tmem_st: return "tcgen05.st";
    case StepKind::wait_ld: return "tcgen05.wait::ld";
    case StepKind::wait_st: return "tcgen05.wait::st";
    case StepKind::store: return "store";
    case StepKind::commit: return "tcgen05.commit";
    case StepKind::wait: return "mbarrier wait";
  }
  return "?";
}

int ProgramPlan::mma_instructions() const {
  int n = 0;
  for (const auto& s : steps)
    if (s.kind == StepKind::mma) n += static_cast<int>(s.mma.instrs.size());
  return n;
}

namespace detail {
namespace {

std::string s(int64_t v) { return std::to_string(v); }
bool pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// ---- Declarations ---------------------------------------------------------------------------
void declarations(Ctx& c) {
  const spec::Program& p = c.prog;
  if (!c.target.tcgen05)
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
    for (const auto& o : p.ops)
      if (o.has_per_cta)
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
  for (const auto& t : p.smem) declare(t.name, t.ptr, "a shared-memory tile");
  for (const auto& v : p.views)
    if (!v.name.empty()) declare(v.name, v.ptr, "a tensor-memory view");
  for (const auto& o : p.ops) {
    if (o.regs) declare(o.regs.name, o.regs.ptr, "a register set");
    if (o.barrier) declare(o.barrier.name, o.barrier.ptr, "a barrier");
  }
  // Global tensors: at most 2^48 bytes, so that every byte offset the kernel and the planner
  // compute (row x row bytes, a pair's per_cta offset) stays far inside 64-bit arithmetic. Rows and
  // columns are below 2^31 and elements at most 32 bits, so the product fits an unsigned 64-bit.
  for (const auto& g : p.globals) {
    const uint64_t row_bytes = (static_cast<uint64_t>(g.cols) * static_cast<uint64_t>(spec::storage_bits(g.dtype, g.format)) + 7) / 8;
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
  for (const auto& t : p.smem) {
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
    const bool tma_dst = std::any_of(p.ops.begin(), p.ops.end(), [&](const spec::Op& o) {
      return o.kind == spec::OpKind::load && o.tma && o.dst.name == t.name;
    });
    if (tma_dst) want = std::max<uint32_t>(want, isa::kTmaSmemAlign);
    sp.align = t.align ? t.align : want;
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
  // Placement: tiles in name order, each at its alignment from the (run-time aligned) base.
  uint32_t off = 0;
  for (auto& [n, t] : c.placed) {
    off = round_up(off, t.align);
    t.offset = off;
    off += t.layout.bytes;
  }
  // Allocations: a power of two of 32..512 columns each (§9.7.16.7.1).
  for (const auto& v : p.views)
    if (v.kind == spec::TmemView::Kind::alloc && (!pow2(v.columns) || v.columns < 32 || v.columns > 512))
      c.problem("TMEM-ALLOC", v.columns_ptr,
                "tcgen05.alloc takes a power of two of 32 to 512 columns; \"" + v.name + "\" asks " + s(v.columns),
                {"round it up to a power of two (slices can use fewer columns)"});
  ViewResolution vr = resolve_views(p);
  for (auto& pr : vr.problems) c.problem(pr.rule, pr.pointer, pr.message, pr.help);
  c.views = std::move(vr.views);
}

// ---- Ordering -------------------------------------------------------------------------------
struct Async {  // a tcgen05.cp or tcgen05.mma not yet known to be complete
  int op = 0;
  const char* what = "tcgen05.mma";
  std::vector<Region> writes, reads;
  std::set<std::string> tiles;
  std::string d_key;     // mma: its accumulator and shapes (tcgen05.mma pipelines with the same ones)
  std::string barrier;   // committed to
};

struct BarrierState {
  int commits = 0, waits = 0;
  bool outstanding = false;
};

enum class Exec { none, all, issuer, warps };

class Sequencer {
 public:
  explicit Sequencer(Ctx& c) : c_(c) {}

  std::vector<Step> run() {
    for (size_t i = 0; i < c_.prog.ops.size(); ++i) op(static_cast<int>(i), c_.prog.ops[i]);
    finish();
    return std::move(steps_);
  }
  std::set<std::string> barriers;
  std::vector<ProgramTensorMap> tensor_maps;
  bool internal_barrier = false;
  std::map<std::string, int> reg_counts;

 private:
  std::string at(int i) const { return c_.prog.ops[static_cast<size_t>(i)].ptr; }

  void incomplete(const std::string& ptr, const std::string& what, const Async& a, const std::string& verb) {
    c_.problem("ORDER-INCOMPLETE", ptr,
               what + " " + verb + " what the " + a.what + " of " + at(a.op) +
                   " is still working on: its completion is visible only after a commit and a wait on that barrier "
                   "(§9.7.16.6.4.2)",
               {"insert {\"op\": \"commit\", \"barrier\": B} and {\"op\": \"wait\", \"barrier\": B} before it"});
  }

  bool written(const Region& r) const {
    for (const auto& w : written_)
      if (overlap(w, r)) return true;
    return false;
  }

  // Reads of tensor memory: written before, and not by a tcgen05 op still in flight (except the
  // pipelined pairs of §9.7.16.6.2: tcgen05.cp -> tcgen05.mma, and tcgen05.mma -> tcgen05.mma on
  // the same accumulator with the same shape).
  void read_tmem(const spec::Ref& ref, const ResolvedView* v, const std::string& what, bool by_mma, const std::string& d_key = "") {
    if (!v) return;
    const Region r = region_of(*v);
    if (!written(r)) {
      c_.problem("ORDER-UNWRITTEN", ref.ptr, what + " reads \"" + ref.name + "\" (" + describe(r) + "), which no earlier op writes",
                 {"copy, store or compute it first: ops run in the order listed"});
      return;
    }
    for (const auto& a : async_)
      for (const auto& w : a.writes)
        if (overlap(w, r)) {
          const bool pipelined = by_mma && (std::string(a.what) == "tcgen05.cp" || (!d_key.empty() && a.d_key == d_key));
          if (!pipelined) return incomplete(ref.ptr, what, a, "reads");
        }
  }

  void write_tmem(const spec::Ref& ref, const Region& r, const std::string& what, bool by_mma, const std::string& d_key = "") {
    for (const auto& a : async_) {
      for (const auto& rd : a.reads)
        if (overlap(rd, r)) return incomplete(ref.ptr, what, a, "overwrites");
      for (const auto& w : a.writes)
        if (overlap(w, r)) {
          const bool pipelined = by_mma && (std::string(a.what) == "tcgen05.cp" || a.d_key == d_key);
          if (!pipelined) return incomplete(ref.ptr, what, a, "overwrites");
        }
    }
  }

  void read_tile(const spec::Ref& ref, const std::string& what) {
    if (!c_.tiles.count(ref.name)) return;
    if (!loaded_.count(ref.name))
      c_.problem("ORDER-UNWRITTEN", ref.ptr, what + " reads the tile \"" + ref.name + "\" before any load fills it",
                 {"load it first: ops run in the order listed"});
  }

  const RegDef* regs(const spec::Ref& r, const std::string& what) {
    auto it = c_.regs.find(r.name);
    if (it == c_.regs.end()) {
      if (!regs_seen_.count(r.name))
        c_.problem("ORDER-UNWRITTEN", r.ptr, what + " uses the registers \"" + r.name + "\" before a tmem_load fills them",
                   {"load them with {\"op\": \"tmem_load\", \"regs\": \"" + r.name + "\", ...} first"});
      return nullptr;
    }
    return &it->second;
  }

  // Steps the planner inserts.
  void wait_ld(const std::string& why) {
    if (pending_ld_.empty()) return;
    Step st;
    st.kind = StepKind::wait_ld;
    st.why = why;
    steps_.push_back(st);
    pending_ld_.clear();
  }
  void wait_st(const std::string& why) {
    if (!pending_st_) return;
    Step st;
    st.kind = StepKind::wait_st;
    st.why = why;
    steps_.push_back(st);
    pending_st_ = false;
    st_sources_.clear();
    st_regions_.clear();
  }
  // The threads of the next op differ from those of the last: unless nothing since the last sync
  // (or mbarrier wait of all threads) needs ordering, synchronize.
  void enter(Exec e, const std::vector<int>& warps, bool force = false) {
    const bool same = e == exec_ && (e != Exec::warps || warps == exec_warps_);
    if (exec_ != Exec::none && (!same || force) && !clean_) {
      // §9.7.16.6.4.4: tcgen05.ld/st complete (wait) before the threads synchronize;
      // §9.7.16.6.3: fence::before_thread_sync ... barrier ... fence::after_thread_sync.
      wait_ld("the tcgen05.ld of these threads complete before other threads go on (§9.7.16.6.4.4)");
      wait_st("the tcgen05.st of these threads complete before other threads go on (§9.7.16.6.4.4)");
      Step st;
      st.kind = StepKind::sync;
      st.proxy_fence = generic_smem_writes_;
      st.why = std::string("the next op runs on other threads") +
               (generic_smem_writes_ ? "; shared memory written by plain stores becomes visible to the async proxy that "
                                       "tcgen05.cp/mma read it through (fence.proxy.async, §9.7.16.6.5)"
                                     : "");
      steps_.push_back(st);
      generic_smem_writes_ = false;
      clean_ = true;
    }
    exec_ = e;
    exec_warps_ = warps;
  }

  static std::vector<int> warps_of(const RegDef& d) {
    std::set<int> w;
    for (const auto& f : d.frags) w.insert(f.warp);
    return {w.begin(), w.end()};
  }

  void op(int i, const spec::Op& o) {
    Step st;
    st.op = i;
    switch (o.kind) {
      case spec::OpKind::load: {
        for (const auto& a : async_)
          if (a.tiles.count(o.dst.name)) incomplete(o.dst.ptr, "load", a, "overwrites");
        auto l = plan_load(c_, o);
        loaded_.insert(o.dst.name);
        if (!l) return;
        // TMA: plain stores to shared memory before it are ordered before the async proxy's writes
        // (fence.proxy.async and a sync, §9.7.16.6.5), should they overlap.
        enter(Exec::all, {}, l->tma && generic_smem_writes_);
        if (l->tma) {
          l->map.param = "tmap_" + s(i);
          l->barrier = planner_name("load", i);
          barriers.insert(l->barrier);
          tensor_maps.push_back(l->map);
        }
        st.kind = StepKind::load;
        st.load = *l;
        st.why = "global \"" + l->global + "\" -> shared \"" + l->tile + "\" " +
                 (l->tma ? "by TMA: thread 0" + std::string(c_.prog.cta_group > 1 ? " of each CTA" : "") + " issues " +
                               s(static_cast<int64_t>(l->boxes.size())) +
                               " cp.async.bulk.tensor box(es) completing on the mbarrier \"" + l->barrier +
                               "\", and all threads wait for it"
                         : "by all threads, 16-byte chunks");
        steps_.push_back(st);
        // After a TMA load each thread has seen the bytes arrive (the mbarrier wait); in a pair CTA 0's
        // tcgen05 reads of the peer's tile still need the cluster barrier.
        if (!l->tma) generic_smem_writes_ = true;
        if (!l->tma || c_.prog.cta_group > 1) clean_ = false;
        return;
      }
      case spec::OpKind::copy: {
        read_tile(o.src, "copy");
        std::vector<Region> collateral;
        auto cps = plan_copy(c_, o, collateral);
        const ResolvedView* v = c_.views.count(o.dst.name) ? &c_.views.at(o.dst.name) : nullptr;
        if (!v) return;
        Region r = region_of(*v);
        write_tmem(o.dst, r, "copy", false);
        for (const auto& col : collateral) check_collateral(o, col);
        written_.push_back(r);
        Async a;
        a.op = i;
        a.what = "tcgen05.cp";
        a.writes = {r};
        a.writes.insert(a.writes.end(), collateral.begin(), collateral.end());
        a.tiles = {o.src.name};
        async_.push_back(a);
        if (!cps) return;
        enter(Exec::issuer, {});
        st.kind = StepKind::cp;
        st.cps = *cps;
        st.why = "shared \"" + o.src.name + "\" -> tensor memory \"" + o.dst.name + "\", issued by one thread";
        steps_.push_back(st);
        return;
      }
      case spec::OpKind::mma: return mma(i, o, st);
      case spec::OpKind::tmem_load: {
        const ResolvedView* v = c_.view(o.src, "tmem_load source");
        regs_seen_.insert(o.regs.name);
        if (!v) return;
        read_tmem(o.src, v, "tmem_load", false);
        auto d = plan_lanes(c_, o, *v);
        if (!d) return;
        enter(Exec::warps, warps_of(*d));
        if (pending_ld_.count(o.regs.name)) wait_ld("the registers \"" + o.regs.name + "\" are about to be reused (§9.7.16.6.4.5)");
        if (st_sources_.count(o.regs.name)) wait_st("the registers \"" + o.regs.name + "\" feed a tcgen05.st that has not completed");
        for (const auto& r : st_regions_)
          if (overlap(r, region_of(*v))) wait_st("tcgen05.ld reads cells a tcgen05.st of these warps wrote (§9.7.16.6.4.2)");
        c_.regs[o.regs.name] = *d;
        reg_counts[o.regs.name] = std::max(reg_counts[o.regs.name], d->regs);
        pending_ld_.insert(o.regs.name);
        clean_ = false;
        st.kind = StepKind::tmem_ld;
        st.ld = *d;
        st.why = "tensor memory \"" + o.src.name + "\" -> registers \"" + o.regs.name + "\"";
        steps_.push_back(st);
        return;
      }
      case spec::OpKind::tmem_store: {
        const RegDef* src = regs(o.regs, "tmem_store");
        const ResolvedView* v = c_.view(o.dst, "tmem_store destination");
        if (!v) return;
        const Region r = region_of(*v);
        write_tmem(o.dst, r, "tmem_store", false);
        written_.push_back(r);
        if (!src) return;
        auto t = plan_tmem_store(c_, o, *src, *v);
        if (!t) return;
        enter(Exec::warps, warps_of(t->dst));
        if (pending_ld_.count(o.regs.name)) wait_ld("tcgen05.st reads the registers \"" + o.regs.name + "\" (§9.7.16.8.5)");
        pending_st_ = true;
        st_sources_.insert(o.regs.name);
        st_regions_.push_back(r);
        if (!t->direct) reg_counts[planner_name("st", i)] = t->dst.regs;
        clean_ = false;
        st.kind = StepKind::tmem_st;
        st.st = *t;
        st.why = "registers \"" + o.regs.name + "\" -> tensor memory \"" + o.dst.name + "\"" + (t->convert ? ", converted" : "");
        steps_.push_back(st);
        return;
      }
      case spec::OpKind::store: {
        const RegDef* src = regs(o.regs, "store");
        if (!src) return;
        auto t = plan_store(c_, o, *src);
        if (!t) return;
        enter(Exec::warps, warps_of(src->frags.empty() ? RegDef{} : *src));
        if (pending_ld_.count(o.regs.name)) wait_ld("the registers \"" + o.regs.name + "\" are read (§9.7.16.8.5)");
        clean_ = false;
        st.kind = StepKind::store;
        st.store = *t;
        st.why = "registers \"" + o.regs.name + "\" -> global \"" + t->global + "\"";
        steps_.push_back(st);
        return;
      }
      case spec::OpKind::commit: return commit(i, o.barrier);
      case spec::OpKind::wait: return wait(i, o.barrier);
    }
  }

  void check_collateral(const spec::Op& o, const Region& col) {
    for (size_t j = 0; j < c_.prog.ops.size(); ++j) {
      const spec::Op& other = c_.prog.ops[j];
      if (&other == &o) continue;
      for (const spec::Ref* r : {&other.src, &other.dst, &other.a, &other.d, &other.scale_a, &other.scale_b, &other.metadata}) {
        auto it = c_.views.find(r->name);
        if (!*r || it == c_.views.end() || !overlap(region_of(it->second), col)) continue;
        c_.problem("CP-MULTICAST-OVERLAP", o.dst.ptr,
                   "the tcgen05.cp multicast into \"" + o.dst.name + "\" also writes " + describe(col) + ", which \"" +
                       r->name + "\" (used by " + other.ptr + ") holds",
                   {"place the other view elsewhere, or copy into a replicated view (cast with layout warpx2::02_13, "
                    "warpx2::01_23 or warpx4) that owns all the lanes the shape writes"});
        return;
      }
    }
  }

  void mma(int i, const spec::Op& o, Step& st) {
    read_tile(o.a, "mma");
    read_tile(o.b, "mma");
    auto m = plan_mma(c_, o);
    auto view = [&](const spec::Ref& r) -> const ResolvedView* {
      auto it = c_.views.find(r.name);
      return (r && it != c_.views.end()) ? &it->second : nullptr;
    };
    const ResolvedView* d = view(o.d);
    std::string key;
    if (d) {
      key = describe(region_of(*d));
      if (m)
        for (const auto& in : m->instrs)
          if (in.ki == 0) key += "|" + s(in.m) + "x" + s(in.n);
    }
    for (const spec::Ref* r : {&o.a, &o.scale_a, &o.scale_b, &o.metadata}) read_tmem(*r, view(*r), "mma", true, "");
    if (o.accumulate) read_tmem(o.d, d, "mma with \"accumulate\": true", true, key);
    Async a;
    a.op = i;
    if (d) {
      write_tmem(o.d, region_of(*d), "mma", true, key);
      written_.push_back(region_of(*d));
      a.writes = {region_of(*d)};
    }
    for (const spec::Ref* r : {&o.a, &o.scale_a, &o.scale_b, &o.metadata})
      if (const ResolvedView* v = view(*r)) a.reads.push_back(region_of(*v));
    a.tiles = {o.a.name, o.b.name};
    a.d_key = key;
    async_.push_back(a);
    if (!m) return;
    enter(Exec::issuer, {});
    st.kind = StepKind::mma;
    st.mma = *m;
    st.why = "D \"" + o.d.name + "\" " + (o.accumulate ? "+=" : "=") + " A \"" + o.a.name + "\" x B \"" + o.b.name + "\"";
    steps_.push_back(st);
  }

  void commit(int i, const spec::Ref& b) {
    BarrierState& bs = bars_[b.name];
    barriers.insert(b.name);
    if (bs.outstanding) {
      c_.problem("ORDER-BARRIER", b.ptr,
                 "a second commit to \"" + b.name + "\" before a wait on the first: the waits could not tell the two "
                 "phases of the mbarrier apart",
                 {"wait on \"" + b.name + "\" between the commits, or commit to another barrier"});
      return;
    }
    for (auto& a : async_)
      if (a.barrier.empty()) a.barrier = b.name;
    bs.outstanding = true;
    ++bs.commits;
    enter(Exec::issuer, {});
    Step st;
    st.op = i;
    st.kind = StepKind::commit;
    st.bar.barrier = b.name;
    st.why = "the mbarrier \"" + b.name + "\" tracks every tcgen05.cp/mma issued so far (§9.7.16.12.1)";
    steps_.push_back(st);
  }

  void wait(int i, const spec::Ref& b) {
    BarrierState& bs = bars_[b.name];
    barriers.insert(b.name);
    if (!bs.outstanding) {
      c_.problem("ORDER-BARRIER", b.ptr,
                 "wait on \"" + b.name + "\" with no commit to it before (since the last wait): the wait would never end",
                 {"commit the tcgen05 work to \"" + b.name + "\" first"});
      return;
    }
    bs.outstanding = false;
    Step st;
    st.op = i;
    st.kind = StepKind::wait;
    st.bar.barrier = b.name;
    st.bar.parity = bs.waits % 2;
    ++bs.waits;
    std::vector<Async> left;
    for (auto& a : async_)
      if (a.barrier != b.name) left.push_back(a);
    async_ = left;
    enter(Exec::all, {}, true);  // what these threads did before must be ordered too
    clean_ = true;  // every thread passed the mbarrier and tcgen05.fence::after_thread_sync
    st.why = "all threads wait for phase " + s(bs.waits - 1) + " of \"" + b.name +
             "\", then tcgen05.fence::after_thread_sync orders what follows after the tracked work (§9.7.16.6.4.2)";
    steps_.push_back(st);
    exec_ = Exec::all;
  }

  void finish() {
    if (!async_.empty()) {
      // The kernel's own commit and wait: no tensor memory is deallocated under a running MMA.
      internal_barrier = true;
      const std::string done = planner_name("done");
      barriers.insert(done);
      enter(Exec::issuer, {});
      Step c;
      c.kind = StepKind::commit;
      c.bar.barrier = done;
      c.why = "tcgen05 work still in flight at the end: commit it before tensor memory is deallocated";
      steps_.push_back(c);
      Step w;
      w.kind = StepKind::wait;
      w.bar.barrier = done;
      w.why = "wait for it";
      steps_.push_back(w);
      exec_ = Exec::all;
    }
    wait_ld("the kernel ends: every tcgen05.ld completes");
    wait_st("the kernel ends: every tcgen05.st completes");
    Step st;
    st.kind = StepKind::sync;
    st.why = "all threads are done with tensor memory before warp 0 deallocates it (§9.7.16.7.1)";
    steps_.push_back(st);
  }

  Ctx& c_;
  std::vector<Step> steps_;
  std::vector<Async> async_;
  std::vector<Region> written_;
  std::set<std::string> loaded_, regs_seen_, pending_ld_, st_sources_;
  std::vector<Region> st_regions_;
  bool pending_st_ = false;
  bool generic_smem_writes_ = false;
  bool clean_ = true;  // nothing since the last sync needs ordering across threads
  std::map<std::string, BarrierState> bars_;
  Exec exec_ = Exec::none;
  std::vector<int> exec_warps_;
};

}  // namespace
}  // namespace detail

ProgramAnalysis analyze_program(const spec::Spec& spec) {
  ProgramAnalysis out;
  if (!spec.program) return out;
  detail::Ctx c(spec, *spec.program);
  detail::declarations(c);
  detail::Sequencer seq(c);
  ProgramPlan p;
  p.steps = seq.run();
  p.threads = c.prog.threads;
  p.cta_group = c.prog.cta_group;
  p.views = c.views;
  p.reg_counts = seq.reg_counts;
  p.tensor_maps = seq.tensor_maps;
  for (const auto& g : c.prog.globals)
    p.globals.push_back({g.name, g.dtype, spec::storage_bits(g.dtype, g.format), g.rows, g.cols});
  // Shared memory: the tiles (placed before planning), then 8-byte mbarriers, then the 4-byte
  // words tcgen05.alloc writes the allocations' addresses to.
  uint32_t end = 0;
  p.smem_align = 16;
  for (const auto& [n, t] : c.placed) {
    p.smem.push_back(t);
    end = std::max(end, t.offset + t.layout.bytes);
    p.smem_align = std::max(p.smem_align, t.align);
  }
  end = detail::round_up(end, 8);
  for (const auto& b : seq.barriers) {
    p.barriers.push_back({b, end});
    end += 8;
  }
  // tcgen05.alloc: "the number of columns allocated should not increase between any two
  // allocations" (§9.7.16.7.1): largest first.
  std::vector<AllocPlacement> allocs;
  for (const auto& v : c.prog.views)
    if (v.kind == spec::TmemView::Kind::alloc) allocs.push_back({v.name, static_cast<uint32_t>(v.columns), 0});
  std::stable_sort(allocs.begin(), allocs.end(), [](const auto& a, const auto& b) { return a.columns > b.columns; });
  for (auto& a : allocs) {
    a.slot_offset = end;
    end += 4;
    p.tmem_columns += a.columns;
  }
  p.allocs = allocs;
  p.smem_bytes = detail::round_up(end, 16) + p.smem_align;  // slack to round the base up at run time
  // Both budgets only on tcgen05 targets: elsewhere PROGRAM-TARGET already says all there is.
  if (c.target.tcgen05 && p.tmem_columns > static_cast<uint32_t>(c.target.tmem_columns) && !allocs.empty())
    c.problem("TMEM-ALLOC-TOTAL", "/program/tmem",
              "the allocations take " + detail::s(p.tmem_columns) + " tensor-memory columns; a CTA has " +
                  detail::s(c.target.tmem_columns) + " (§9.7.16.1), and a tcgen05.alloc beyond them blocks forever",
              {"share columns through slices and aliases of fewer allocations"});
  if (c.target.tcgen05 && p.smem_bytes > static_cast<uint32_t>(c.target.smem_per_block_max))
    c.problem("PROGRAM-SMEM-BUDGET", "/program/smem",
              "the tiles, barriers and allocation words need " + detail::s(p.smem_bytes) +
                  " bytes of shared memory with alignment slack; a CTA on " + std::string(c.target.name) + " gets at most " +
                  detail::s(c.target.smem_per_block_max),
              {"use smaller tiles, or reuse one tile for several loads"});
  const auto& t = c.target;
  p.ptx_version = t.ptx_major * 10 + t.ptx_minor;
  for (const auto& st : p.steps)
    if (st.kind == StepKind::mma)
      p.ptx_version = std::max(p.ptx_version, isa::mma_min_ptx(st.mma.kind, st.mma.scale_qualifier));
  out.problems = std::move(c.problems);
  if (out.problems.empty()) out.plan = std::move(p);
  return out;
}

Plan make_program_plan(const spec::Spec& s) {
  ProgramAnalysis a = analyze_program(s);
  if (!a.plan) {
    std::string why = a.problems.empty() ? "no program" : a.problems[0].rule + " at " + a.problems[0].pointer;
    throw std::logic_error("make_plan on a program without a plan: " + why);
  }
  Plan p;
  p.spec = s;
  p.program = std::move(a.plan);
  return p;
}

}  // namespace ptxgen::plan
