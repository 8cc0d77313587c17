// The narrow call behind OUTPUT-SIZE (plan.hpp, output_bound): what one kernel makes ptxgen
// write, bounded op by op from each op's own instructions, the way the per-op planners (ops.cpp,
// mma.cpp, wgmma.cpp and the tcgen05.ld/st narrow calls) make them. It builds no plan: no order
// beyond the register sets each op reads, no memory map, no roles. What the order inserts around
// an op (a thread sync, tcgen05.wait::ld/st), around a loop and at a role's end is counted at its
// most, so the bound holds for the planned kernel whatever the order decides (tests/hostile_test.cpp
// compares it with the emitted PTX of every program spec).
#include <set>

#include "internal.hpp"

namespace ptxgen::plan {

namespace {

// The comment the emitter writes for a step is its `why`: for a planned op a sentence naming at
// most three operands (each at most 256 bytes, SPEC-LIMIT-STRING) or the lowering's note; for an
// inserted step a fixed sentence and at most one register set's name.
constexpr int64_t kWhyBytes = 256 + 3 * 256;
constexpr int64_t kInsertedWhyBytes = 256 + 256;

// Which threads run an op in a role the planner orders: a change makes the order sync first.
enum class Exec { none, all, issuer, warps };

class Bound {
 public:
  explicit Bound(const ir::Kernel& k) : c_(k), ordered_(k.planner_orders()) { detail::declarations(c_); }

  std::optional<SizeCrossing> run(OutputSize& total) {
    for (const auto& r : c_.k.roles) {
      exec_ = Exec::none;
      for (const auto& n : r.nodes) {
        if (!n.is_loop) {
          if (!op(n.op)) return crossing_;
          continue;
        }
        // Unrolled by two: an op of either parity is written in both copies of the body, an op
        // of one parity in one (its guards are within a step's bound), the loop's own lines twice.
        for (int copy = 0; copy < n.loop.unroll; ++copy)
          for (const auto& o : n.loop.body)
            if ((copy == 0 || o.phase.parity < 0) && !op(o)) return crossing_;
        // The loop itself and the tcgen05.wait::ld its iteration ends with.
        Step lp;
        lp.kind = StepKind::loop;
        for (int copy = 0; copy < n.loop.unroll; ++copy) add(lp, kWhyBytes);
        add(inserted(StepKind::wait_ld), kInsertedWhyBytes);
        if (!within(n.op.ptr)) return crossing_;
      }
      // A ping-pong role's tile loop also moves its rings past the other turns' K blocks, at its
      // start and after each tile: counted as one more loop.
      if (r.turns > 1) {
        Step lp;
        lp.kind = StepKind::loop;
        add(lp, kWhyBytes);
      }
      // The role's end: the kernel's own commit and wait, the last tcgen05.wait::ld/st, the sync
      // before the deallocation.
      for (StepKind k : {StepKind::commit, StepKind::wait, StepKind::wait_ld, StepKind::wait_st, StepKind::sync})
        add(inserted(k), kInsertedWhyBytes);
      if (!within(r.nodes.empty() ? "/" : r.nodes.back().op.ptr)) return crossing_;
    }
    total = size_;
    return std::nullopt;
  }

 private:
  static Step inserted(StepKind k) {
    Step st;
    st.kind = k;
    return st;
  }
  void add(const Step& st, int64_t why) {
    const OutputSize z = output_size(st);
    size_.instructions += z.instructions;
    size_.ptx_bytes += z.ptx_bytes + why;
    size_.async += z.async;
  }
  bool within(const std::string& ptr) {
    const OutputSize& m = kMaxOutput;
    if (size_.instructions <= m.instructions && size_.ptx_bytes <= m.ptx_bytes && size_.async <= m.async) return true;
    crossing_ = SizeCrossing{ptr, size_};
    return false;
  }

  // What the order may put before an op run by `e` (`warps`: which, for Exec::warps): a thread
  // sync when the threads change or the op needs what came before ordered (a wait, a TMA load
  // after plain stores), with the tcgen05.wait::ld/st such a sync first needs. Each other
  // tcgen05.wait::ld (::st) completes a tcgen05.ld (st) issued since the last one: counted with
  // the tmem_load (tmem_store) that issued it.
  void before(Exec e, bool force, std::vector<int> warps = {}) {
    if (ordered_ && (e != exec_ || warps != warps_ || force)) {
      add(inserted(StepKind::wait_ld), kInsertedWhyBytes);
      add(inserted(StepKind::wait_st), kInsertedWhyBytes);
      add(inserted(StepKind::sync), kInsertedWhyBytes);
    }
    exec_ = e;
    warps_ = std::move(warps);
  }
  static std::vector<int> warps_of(const RegDef& d) {
    std::set<int> w;
    for (const auto& f : d.frags) w.insert(f.warp);
    return {w.begin(), w.end()};
  }

  // Adds the op's steps; false once the size passed the bound.
  bool op(const ir::Op& o) {
    const int64_t why = std::max<int64_t>(kWhyBytes, static_cast<int64_t>(o.note.size()));
    Step st;
    switch (o.kind()) {
      case ir::OpKind::load: {
        const auto l = detail::plan_load(c_, *o.as<ir::Load>());
        if (!l) break;
        before(Exec::all, l->tma);
        st.kind = StepKind::load;
        st.load = *l;
        add(st, why);
        break;
      }
      case ir::OpKind::copy: {
        std::vector<Region> collateral;
        const auto cps = detail::plan_copy(c_, *o.as<ir::Copy>(), collateral);
        if (!cps) break;
        before(Exec::issuer, false);
        st.kind = StepKind::cp;
        st.cps = *cps;
        add(st, why);
        break;
      }
      case ir::OpKind::mma: {
        const auto m = detail::plan_mma(c_, o);
        if (!m) break;
        if (c_.k.engine == ir::Engine::wgmma) {
          const ir::Mma& x = *o.as<ir::Mma>();
          if (auto d = wgmma_accumulators(x, *c_.find_tile(x.a), *c_.find_tile(x.b))) c_.regs[x.d.name] = std::move(*d);
        } else {
          before(Exec::issuer, false);
        }
        st.kind = StepKind::mma;
        st.mma = *m;
        add(st, why);
        break;
      }
      case ir::OpKind::tmem_load: {
        const ir::TmemLoad& x = *o.as<ir::TmemLoad>();
        const ResolvedView* v = c_.find_view(x.src);
        if (!v) break;
        TmemLanes lanes = tmem_lanes(x.access, x.regs.name, *v, c_.k.threads);
        if (lanes.miss != TmemLanes::fits) break;
        before(Exec::warps, false, warps_of(lanes.def));
        st.kind = StepKind::tmem_ld;
        st.ld = std::move(lanes.def);
        add(st, why);
        add(inserted(StepKind::wait_ld), kInsertedWhyBytes);
        c_.regs[x.regs.name] = std::move(st.ld);
        c_.held.erase(x.regs.name);
        break;
      }
      case ir::OpKind::tmem_store: {
        const ir::TmemStore& x = *o.as<ir::TmemStore>();
        const auto src = c_.regs.find(x.regs.name);
        const ResolvedView* v = c_.find_view(x.dst);
        if (!v || src == c_.regs.end()) break;
        TmemStore t = tmem_store(x, src->second, *v, c_.k.threads, c_.held[x.regs.name]);
        if (!t.step) break;
        before(Exec::warps, false, warps_of(t.step->dst));
        st.kind = StepKind::tmem_st;
        st.st = std::move(*t.step);
        add(st, why);
        add(inserted(StepKind::wait_st), kInsertedWhyBytes);
        break;
      }
      case ir::OpKind::store: {
        const ir::Store& x = *o.as<ir::Store>();
        const auto src = c_.regs.find(x.regs.name);
        if (src == c_.regs.end()) break;
        auto t = detail::plan_store(c_, x, src->second);
        if (!t) break;
        before(Exec::warps, false, warps_of(src->second));
        st.kind = StepKind::store;
        st.store = std::move(*t);
        add(st, why);
        break;
      }
      case ir::OpKind::math: {
        // The first operand's registers (the verifier refused operands that differ), and the
        // tcgen05.wait::ld/st the order may insert before it. Its comment names four sets.
        const ir::Math& x = *o.as<ir::Math>();
        const ir::Ref& in = x.a ? x.a : x.b ? x.b : x.c;  // the first register set (others may be constants)
        const auto src = c_.regs.find(in.name);
        if (src == c_.regs.end()) break;
        add(inserted(StepKind::wait_ld), kInsertedWhyBytes);
        add(inserted(StepKind::wait_st), kInsertedWhyBytes);
        st.kind = StepKind::math;
        st.math.def = src->second;
        if (x.fn == MathFn::convert)  // packed pairs: half the registers (packed_regs)
          if (auto p = packed_regs(src->second, x.convert_to)) st.math.def = std::move(*p);
        st.math.def.name = x.regs.name;
        // An activation's step also names the op's result and input, its formula and its place,
        // and its temporaries carry a suffix (ir::activation_temporary).
        add(st, kWhyBytes + 256 + 128 + (x.of ? 3 * 256 : 0));
        c_.regs[x.regs.name] = std::move(st.math.def);
        break;
      }
      case ir::OpKind::fill: {
        // One mov.b32 a register, in the warps a tcgen05.ld of its view would take.
        const ir::Fill& x = *o.as<ir::Fill>();
        const ResolvedView* v = c_.find_view(x.like);
        if (!v) break;
        TmemLanes lanes = tmem_lanes(x.access, x.regs.name, *v, c_.k.threads);
        if (lanes.miss != TmemLanes::fits) break;
        st.kind = StepKind::math;
        st.math.fill = true;
        st.math.def = std::move(lanes.def);
        add(st, kWhyBytes + 256);
        c_.regs[x.regs.name] = std::move(st.math.def);
        c_.held.erase(x.regs.name);
        break;
      }
      case ir::OpKind::reduce: {
        const ir::Reduce& x = *o.as<ir::Reduce>();
        const auto a = c_.regs.find(x.a.name);
        if (a == c_.regs.end()) break;
        add(inserted(StepKind::wait_ld), kInsertedWhyBytes);
        st.kind = StepKind::reduce;
        st.reduce.def = a->second;
        st.reduce.def.name = x.regs.name;
        add(st, why);
        c_.regs[x.regs.name] = std::move(st.reduce.def);
        break;
      }
      case ir::OpKind::amax: {
        const ir::Amax& x = *o.as<ir::Amax>();
        const auto a = c_.regs.find(x.a.name);
        if (a == c_.regs.end()) break;
        add(inserted(StepKind::wait_ld), kInsertedWhyBytes);
        st.kind = StepKind::amax;
        st.amax.bounds.def = a->second;
        add(st, why);
        break;
      }
      case ir::OpKind::quantize: {
        const ir::Quantize& x = *o.as<ir::Quantize>();
        const auto a = c_.regs.find(x.a.name);
        if (a == c_.regs.end()) break;
        add(inserted(StepKind::wait_ld), kInsertedWhyBytes);
        st.kind = StepKind::quantize;
        st.quantize.def = a->second;
        st.quantize.def.name = x.regs.name;
        st.quantize.vec = x.vec;
        st.quantize.shuffle = rows_shared_by_lanes(a->second);
        add(st, why);
        c_.regs[x.regs.name] = std::move(st.quantize.def);
        break;
      }
      case ir::OpKind::read: {
        const ir::Read& x = *o.as<ir::Read>();
        const auto like = c_.regs.find(x.like.name);
        if (like == c_.regs.end()) break;
        st.kind = StepKind::read;
        st.read.def = like->second;
        st.read.def.name = x.regs.name;
        // A tensor of one element (read_at's broadcast along both dimensions): one load a warp.
        if (const auto g = c_.globals.find(x.src.name); g != c_.globals.end())
          st.read.rows_broadcast = g->second->rows == 1 && g->second->rows_param.empty(),
          st.read.cols_broadcast = g->second->cols == 1 && g->second->cols_param.empty();
        add(st, why);
        c_.regs[x.regs.name] = std::move(st.read.def);
        break;
      }
      case ir::OpKind::commit:
      case ir::OpKind::wait:
      case ir::OpKind::arrive:
      case ir::OpKind::expect_tx:
      case ir::OpKind::mma_wait: {
        const ir::OpKind k = o.kind();
        if (k == ir::OpKind::commit) before(Exec::issuer, false);
        if (k == ir::OpKind::wait) before(Exec::all, true);
        st.kind = k == ir::OpKind::commit      ? StepKind::commit
                  : k == ir::OpKind::wait      ? StepKind::wait
                  : k == ir::OpKind::arrive    ? StepKind::arrive
                  : k == ir::OpKind::expect_tx ? StepKind::expect_tx
                                               : StepKind::mma_wait;
        add(st, why);
        break;
      }
    }
    return within(o.ptr);
  }

  detail::Ctx c_;
  const bool ordered_;
  Exec exec_ = Exec::none;
  std::vector<int> warps_;
  OutputSize size_;
  std::optional<SizeCrossing> crossing_;
};

}  // namespace

std::optional<SizeCrossing> output_bound(const ir::Kernel& k, OutputSize* total) {
  OutputSize t;
  auto crossing = Bound(k).run(t);
  if (total) *total = t;
  return crossing;
}

}  // namespace ptxgen::plan
