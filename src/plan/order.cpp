// Ordering: each role's ops planned in order into steps, with what the tcgen05 memory model needs
// between them (§9.7.16.6).
//
// A role the planner orders (the program level's one role of all warps) gets thread syncs with
// tcgen05.fence::before/after_thread_sync when the threads that run the next op change,
// fence.proxy.async after generic shared-memory writes that tcgen05.cp/mma read, and the kernel's
// own commit and wait for tcgen05 work still in flight at the end. The order rules themselves
// (ORDER-*, CP-MULTICAST-OVERLAP) are judged before planning by src/rules/verify_order.cpp. Roles
// a lowering ordered through mbarriers get only what concerns one role's own registers:
// tcgen05.wait::ld/st before registers are used or reused.
#include <algorithm>
#include <stdexcept>

#include "internal.hpp"

namespace ptxgen::plan::detail {

namespace {

std::string s(int64_t v) { return std::to_string(v); }

struct BarrierState {
  int commits = 0, waits = 0;
  bool outstanding = false;
};

enum class Exec { none, all, issuer, warps };


class Sequencer {
 public:
  Sequencer(Ctx& c, const ir::Role& role, bool ordered, Ordered& out) : c_(c), role_(role), ordered_(ordered), out_(out) {
    for (const auto& n : role.nodes)
      if (!n.is_loop) ops_.push_back(&n.op);
      else
        for (const auto& o : n.loop.body) ops_.push_back(&o);
  }

  std::vector<Step> run() {
    int i = 0;
    for (const auto& n : role_.nodes) {
      if (!n.is_loop) {
        const size_t first = steps_.size();
        op(i++, n.op, steps_);
        when(n.op, steps_, first);
        continue;
      }
      Step lp;
      lp.kind = StepKind::loop;
      lp.ptr = n.op.ptr;
      lp.k_param = n.loop.k_param;
      lp.block = n.loop.block;
      lp.trips = n.loop.trips;
      lp.why = n.loop.k_param.empty() ? s(n.loop.trips) + " iterations"
                                      : "one iteration per K block of " + s(n.loop.block) + ": max(1, ceil(" + n.loop.k_param +
                                            " / " + s(n.loop.block) + "))";
      lp.unroll = n.loop.unroll;
      if (lp.unroll == 2) lp.why += "; unrolled by two: even K blocks, then odd, each parity with register sets of its own";
      for (const auto& o : n.loop.body) {
        const size_t first = lp.body.size();
        op(i++, o, lp.body);
        when(o, lp.body, first);
      }
      // The registers a loop iteration loaded are reused by the next one.
      wait_ld("the next iteration reuses these registers (§9.7.16.6.4.5)", lp.body);
      steps_.push_back(std::move(lp));
    }
    finish();
    return std::move(steps_);
  }

 private:
  // The steps of an op (from `first` on) run in the iterations its phase's parity and lag say
  // (the loop unrolled by two: Step::parity); the steps the planner inserted for it too.
  static void when(const ir::Op& o, std::vector<Step>& out, size_t first) {
    if (o.phase.parity < 0) return;
    for (size_t k = first; k < out.size(); ++k) {
      out[k].parity = o.phase.parity;
      out[k].lag = o.phase.lag;
    }
  }

  // The registers a tmem_load defined (none where it was refused, or before it: ORDER-UNWRITTEN).
  const RegDef* regs(const ir::Ref& r) {
    auto it = c_.regs.find(r.name);
    return it == c_.regs.end() ? nullptr : &it->second;
  }

  // Before an op writes register set `set`: the tcgen05.ld still filling it, and the tcgen05.st
  // still reading it, complete (§9.7.16.6.4.5).
  void before_writing(const std::string& set, std::vector<Step>& out) {
    if (pending_ld_.count(set)) wait_ld("the registers \"" + set + "\" are about to be reused (§9.7.16.6.4.5)", out);
    if (st_sources_.count(set)) wait_st("the registers \"" + set + "\" feed a tcgen05.st that has not completed", out);
  }

  // Steps the planner inserts.
  void wait_ld(const std::string& why, std::vector<Step>& out) {
    if (pending_ld_.empty()) return;
    Step st;
    st.kind = StepKind::wait_ld;
    st.ptr = "inserted";
    st.why = why;
    out.push_back(st);
    pending_ld_.clear();
  }
  void wait_st(const std::string& why, std::vector<Step>& out) {
    if (!pending_st_) return;
    Step st;
    st.kind = StepKind::wait_st;
    st.ptr = "inserted";
    st.why = why;
    out.push_back(st);
    pending_st_ = false;
    st_sources_.clear();
    st_regions_.clear();
    st_region_keys_.clear();
  }
  // The threads of the next op differ from those of the last: unless nothing since the last sync
  // (or mbarrier wait of all threads) needs ordering, synchronize. Only in a role the planner
  // orders: a lowering's roles synchronize through their mbarriers.
  void enter(Exec e, const std::vector<int>& warps, std::vector<Step>& out, bool force = false) {
    const bool same = e == exec_ && (e != Exec::warps || warps == exec_warps_);
    if (ordered_ && exec_ != Exec::none && (!same || force) && !clean_) {
      // §9.7.16.6.4.4: tcgen05.ld/st complete (wait) before the threads synchronize;
      // §9.7.16.6.3: fence::before_thread_sync ... barrier ... fence::after_thread_sync.
      wait_ld("the tcgen05.ld of these threads complete before other threads go on (§9.7.16.6.4.4)", out);
      wait_st("the tcgen05.st of these threads complete before other threads go on (§9.7.16.6.4.4)", out);
      Step st;
      st.kind = StepKind::sync;
      st.ptr = "inserted";
      st.proxy_fence = generic_smem_writes_;
      st.why = std::string("the next op runs on other threads") +
               (generic_smem_writes_ ? "; shared memory written by plain stores becomes visible to the async proxy that "
                                       "tcgen05.cp/mma read it through (fence.proxy.async, §9.7.16.6.5)"
                                     : "");
      out.push_back(st);
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

  void op(int i, const ir::Op& o, std::vector<Step>& out) {
    const size_t before = out.size();
    plan_op(i, o, out);
    for (size_t k = before; k < out.size(); ++k) {
      if (!o.note.empty() && out[k].op == i) out[k].why = o.note;  // not the steps inserted before it
      if (out[k].kind == StepKind::mma || out[k].kind == StepKind::tmem_ld) out[k].tmem_ring = tmem_ring(o);
    }
  }

  // An elementwise function (the verifier, src/rules/verify_regs.cpp, reports each one refused
  // here): its result holds the operands' elements in the same registers. Every thread computes on
  // its own registers, so no sync orders it; only its operands' tcgen05.ld must have completed
  // and the registers it overwrites must no longer be in flight (tcgen05.ld/st, §9.7.16.6.4.5).
  void math(int i, const ir::Op& op, std::vector<Step>& out) {
    const ir::Math& o = *op.as<ir::Math>();
    const MathFnInfo& f = info(o.fn);
    if (o.approx ? !f.approx : !f.exact) return;
    const RegDef* first = nullptr;
    // c_from_iteration_1: c is the set this op defines (carried over the loop's iterations).
    if (o.c_from_iteration_1 && (o.fn != MathFn::fma || o.c.name != o.regs.name)) throw std::logic_error("c_from_iteration_1 off fma");
    // The operands hold f32, or packed 16-bit pairs of one type (§9.7.4; the verifier refused others).
    for (const ir::Ref* r : {&o.a, &o.b, &o.c}) {
      if (!*r || (o.c_from_iteration_1 && r == &o.c)) continue;  // none, or a constant; or the carried set
      const RegDef* d = regs(*r);
      const bool f32 = d && d->dtype == isa::DType::f32 && d->elems_per_reg == 1;
      const bool pairs = d && o.fn != MathFn::convert && d->elems_per_reg == 2 && d->elem_bits == 16 && !d->wgmma;
      if (!d || !(f32 || pairs) || (first && !same_elements(*first, *d)) || (first && first->dtype != d->dtype)) return;
      if (!first) first = d;
    }
    if (!first) return;
    const std::optional<RegDef> converted =
        o.fn == MathFn::convert ? packed_regs(*first, o.convert_to) : std::optional<RegDef>();
    if (o.fn == MathFn::convert && !converted) return;
    Step st;
    st.op = i;
    st.ptr = op.ptr;
    st.kind = StepKind::math;
    st.math.fn = o.fn;
    st.math.approx = o.approx;
    st.math.dtype = converted ? o.convert_to : first->dtype;
    st.math.def = converted ? *converted : *first;
    st.math.def.name = o.regs.name;
    st.math.a = o.a.name;
    st.math.b = o.b.name;
    st.math.c = o.c.name;
    st.math.c_from_iteration_1 = o.c_from_iteration_1;
    // A constant of a packed function is the 16-bit float nearest it (every one is an f32 value).
    const bool packed = st.math.dtype != isa::DType::f32 && o.fn != MathFn::convert;
    for (size_t k = 0; k < 3; ++k)
      if (o.value[k])
        st.math.value[k] = static_cast<float>(packed ? isa::half_value(st.math.dtype, isa::half_bits_rn(st.math.dtype, *o.value[k])) : *o.value[k]);
    for (const ir::Ref* r : {&o.a, &o.b, &o.c})
      if (*r && pending_ld_.count(r->name)) wait_ld("the registers \"" + r->name + "\" are read (§9.7.16.8.5)", out);
    before_writing(o.regs.name, out);
    std::string args;
    for (int k = 0; k < f.operands; ++k)
      args += (k ? ", " : "") + operand_text(st.math, static_cast<size_t>(k));
    const std::string x2 = std::string(isa::name(st.math.dtype)) + "x2";
    if (o.fn == MathFn::convert)  // docs/spec.md, "Packed half-precision arithmetic"
      st.why = "registers \"" + o.regs.name + "\" = convert(" + args + ") to packed " + x2 +
               " pairs (cvt.rn." + x2 + ".f32, §9.7.9.21): register j holds registers 2j (low half) and 2j + 1 (high)";
    else if (packed)
      st.why = "registers \"" + o.regs.name + "\" = " + std::string(f.name) + "(" + args + "), element by element, in packed " + x2 +
               " pairs (" + std::string(packed_info(o.fn).isa) + ")" +
               (o.approx ? " (approximate: " +
                               std::string(st.math.dtype == isa::DType::bf16 ? packed_info(o.fn).bound_bf16 : packed_info(o.fn).bound_f16) + ")"
                         : "");
    else
      st.why = "registers \"" + o.regs.name + "\" = " + std::string(f.name) + "(" + args + "), element by element" +
               (o.approx ? " (approximate: " + std::string(f.bound) + ")" : "");
    if (o.of) {  // a step of an activation op (docs/spec.md, "Activations"): say which
      const ActivationInfo& a = info(o.of->act);
      // A gated one (swiglu, geglu) is the gate's activation times up, one step more.
      const std::string formula = o.of->gated ? std::string(a.name) + "(gate) * up, " + std::string(a.name) + " = " + std::string(a.formula)
                                              : std::string(a.formula);
      st.why = o.of->result + " = " + std::string(o.of->name()) + "(" + o.of->input + (o.of->gated ? ", " + o.of->up : std::string()) + ")" +
               (o.of->step == 0 ? " = " + formula : std::string()) +
               (o.of->steps() > 1 ? ", step " + s(static_cast<int64_t>(o.of->step) + 1) + " of " + s(static_cast<int64_t>(o.of->steps()))
                                  : std::string()) +
               ": " + st.why;
    }
    c_.regs[o.regs.name] = st.math.def;
    c_.held.erase(o.regs.name);
    out_.reg_counts[o.regs.name] = std::max(out_.reg_counts[o.regs.name], st.math.def.regs);
    out.push_back(std::move(st));
  }

  // A fill (ir::Fill): the registers a tcgen05.ld of its view would define, each the constant, as
  // an elementwise step without operands (mov.b32), so that a run of functions over the same
  // elements writes it register by register too.
  void fill(int i, const ir::Op& op, std::vector<Step>& out) {
    const ir::Fill& o = *op.as<ir::Fill>();
    const ResolvedView* v = c_.find_view(o.like);
    if (!v) return;
    const TmemLanes lanes = tmem_lanes(o.access, o.regs.name, *v, c_.k.threads);
    if (lanes.miss != TmemLanes::fits) return;
    Step st;
    st.op = i;
    st.ptr = op.ptr;
    st.kind = StepKind::math;
    st.math.fill = true;
    st.math.def = lanes.def;
    st.math.value[0] = static_cast<float>(o.value);
    before_writing(o.regs.name, out);
    st.why = "registers \"" + o.regs.name + "\" = " + operand_text(st.math, 0) + " in every element, as a tcgen05.ld of \"" +
             o.like.name + "\" would hold them (mov.b32)";
    c_.regs[o.regs.name] = st.math.def;
    c_.held.erase(o.regs.name);
    out_.reg_counts[o.regs.name] = std::max(out_.reg_counts[o.regs.name], st.math.def.regs);
    out.push_back(std::move(st));
  }

  // Where the elements of a register set stored at `pos` lie in `g`: its extents and row stride,
  // the position, and the dimensions along which it is one element (broadcast).
  static ReadStep read_at(const ir::Global& g, const ir::Position& pos) {
    ReadStep r;
    r.global = g.name;
    r.dtype = g.dtype;
    r.row0 = pos.at[0];
    r.col0 = pos.at[1];
    r.rows_broadcast = g.rows == 1 && g.rows_param.empty();
    r.cols_broadcast = g.cols == 1 && g.cols_param.empty();
    r.global_cols = g.ld ? g.ld : g.cols;
    r.ld_param = g.ld_param;
    r.rows_param = g.rows_param;
    r.cols_param = g.cols_param;
    r.global_rows = g.rows;
    r.global_width = g.cols;
    return r;
  }

  // A read (the verifier, src/rules/verify_regs.cpp, reports each one refused here): registers
  // holding a global tensor's elements where `like` holds its own. Each thread loads its own
  // from a tensor the kernel only reads, so no sync orders it either.
  void read(int i, const ir::Op& op, std::vector<Step>& out) {
    const ir::Read& o = *op.as<ir::Read>();
    const RegDef* like = regs(o.like);
    const ir::Global* g = c_.find_global(o.src);
    if (!like || !g || !read_fits(*like, *g)) return;
    Step st;
    st.op = i;
    st.ptr = op.ptr;
    st.kind = StepKind::read;
    ReadStep& r = st.read;
    r = read_at(*g, o.pos);
    // The block-wise scales' reads (ir::ReadAt): along `like`'s columns one element; the lowering
    // gives them wgmma registers only (their emission follows the accumulator fragment).
    r.at = o.at;
    if (o.at != ir::ReadAt::cells) {
      if (!like->wgmma) throw std::logic_error("a row_vector or element read of registers other than wgmma's");
      r.cols_broadcast = true;
      r.rows_broadcast = o.at == ir::ReadAt::element;
    }
    r.def = *like;
    r.def.name = o.regs.name;
    r.pool = planner_name("rd", i);
    before_writing(o.regs.name, out);
    st.why = "registers \"" + o.regs.name + "\" = " + g->name + "'s elements where \"" + o.like.name + "\" holds its own" +
             (o.at == ir::ReadAt::row_vector ? " (one row of " + g->name + ", its columns the rows of \"" + o.like.name + "\")"
              : o.at == ir::ReadAt::element ? " (one element at the position, to every register)"
              : r.rows_broadcast && r.cols_broadcast ? " (one element, to every register)"
              : r.rows_broadcast                  ? " (one row, broadcast down the rows)"
              : r.cols_broadcast                  ? " (one column, broadcast along the rows)"
                                                  : "") +
             ", 0 past its extents";
    c_.regs[o.regs.name] = r.def;
    c_.held.erase(o.regs.name);
    out_.reg_counts[o.regs.name] = std::max(out_.reg_counts[o.regs.name], r.def.regs);
    out_.reg_counts[r.pool] = std::max(out_.reg_counts[r.pool], r.def.regs);
    out.push_back(std::move(st));
  }

  // A row reduction (verify_regs.cpp reports each one refused here): each thread reduces the
  // registers of each of its rows, then, where 4 lanes share a row, exchanges partial results
  // with shfl.sync within its own warp, so no sync between warps orders it.
  void reduce(int i, const ir::Op& op, std::vector<Step>& out) {
    const ir::Reduce& o = *op.as<ir::Reduce>();
    const RegDef* a = regs(o.a);
    if (!a || reduce_miss(*a) != ReduceMiss::fits) return;
    Step st;
    st.op = i;
    st.ptr = op.ptr;
    st.kind = StepKind::reduce;
    ReduceStep& r = st.reduce;
    r.fn = o.fn;
    r.def = *a;
    r.def.name = o.regs.name;
    r.a = o.a.name;
    r.pool = planner_name("red", i);
    r.shuffle = a->wgmma;
    for (const auto& f : a->frags) r.shuffle = r.shuffle || f.shape == isa::LdShape::s16x256b;
    if (pending_ld_.count(o.a.name)) wait_ld("the registers \"" + o.a.name + "\" are read (§9.7.16.8.5)", out);
    before_writing(o.regs.name, out);
    st.why = "registers \"" + o.regs.name + "\" = each row's " + std::string(kReduceNames[static_cast<size_t>(o.fn)]) + " of \"" +
             o.a.name + "\", in every element of the row" +
             (r.shuffle ? " (4 lanes share a row: shfl.sync.bfly over lanes xor 1 and xor 2)" : " (each thread holds whole rows)");
    c_.regs[o.regs.name] = r.def;
    c_.held.erase(o.regs.name);
    out_.reg_counts[o.regs.name] = std::max(out_.reg_counts[o.regs.name], r.def.regs);
    out_.reg_counts[r.pool] = std::max(out_.reg_counts[r.pool], r.def.regs);
    out.push_back(std::move(st));
  }

  // An amax (verify_regs.cpp reports each one refused here): each thread folds its elements inside
  // `of`, each warp its lanes' (shfl.sync within the warp), lane 0 one red.global.max: no sync
  // between warps orders it (the reduction's order does not change a max).
  void amax(int i, const ir::Op& op, std::vector<Step>& out) {
    const ir::Amax& o = *op.as<ir::Amax>();
    const RegDef* a = regs(o.a);
    const ir::Global* g = c_.find_global(o.of);
    const ir::Global* dst = c_.find_global(o.dst);
    if (!a || !g || !dst) return;
    ir::Global f32 = *g;
    f32.dtype = isa::DType::f32;
    if (!read_fits(*a, f32)) return;
    Step st;
    st.op = i;
    st.ptr = op.ptr;
    st.kind = StepKind::amax;
    AmaxStep& x = st.amax;
    x.a = o.a.name;
    x.dst = dst->name;
    x.bounds = read_at(*g, o.pos);
    x.bounds.def = *a;
    if (pending_ld_.count(o.a.name)) wait_ld("the registers \"" + o.a.name + "\" are read (§9.7.16.8.5)", out);
    st.why = "\"" + dst->name + "\" raised to the largest |element| of \"" + o.a.name + "\" inside " + g->name +
             " (red.global.max.u32 of the f32 bits, which order as the values for values >= 0)";
    out.push_back(std::move(st));
  }

  // A block quantization (verify_regs.cpp reports each one refused here): each thread (with the
  // other 3 lanes of its rows, by shfl.sync in its own warp) finds its blocks' factors, scales its
  // registers and writes the factors of its blocks inside `of`; no sync orders it.
  void quantize(int i, const ir::Op& op, std::vector<Step>& out) {
    const ir::Quantize& o = *op.as<ir::Quantize>();
    const RegDef* a = regs(o.a);
    const ir::Global* g = c_.find_global(o.of);
    const ir::Global* dst = c_.find_global(o.dst);
    if (!a || !g || !dst || quantize_miss(*a, o.pos, o.vec) != QuantizeMiss::fits) return;
    Step st;
    st.op = i;
    st.ptr = op.ptr;
    st.kind = StepKind::quantize;
    QuantizeStep& x = st.quantize;
    x.def = *a;
    x.def.name = o.regs.name;
    x.a = o.a.name;
    x.dst = dst->name;
    x.bounds = read_at(*g, o.pos);
    x.bounds.def = *a;
    x.vec = o.vec;
    x.elem = o.elem;
    x.scale = o.scale;
    x.shuffle = rows_shared_by_lanes(*a);
    if (pending_ld_.count(o.a.name)) wait_ld("the registers \"" + o.a.name + "\" are read (§9.7.16.8.5)", out);
    before_writing(o.regs.name, out);
    const std::string fmax = std::string(isa::name(o.elem)) + "'s largest";
    st.why = "registers \"" + o.regs.name + "\" = \"" + o.a.name + "\" over its blocks' " + std::string(isa::name(o.scale)) + " factors, " +
             (o.scale == isa::DType::ue4m3 ? "each e4m3(amax / " + fmax + ")" : "each the power of two 2^ceil(log2(amax / " + fmax + "))") +
             " of its block of " + s(o.vec) + " columns of a row" +
             (x.shuffle ? " (4 lanes share a row: shfl.sync.bfly over lanes xor 1 and xor 2)" : " (each thread holds whole blocks)") +
             "; the factors of the blocks inside " + g->name + " to " + dst->name + " (128x4 layout)";
    c_.regs[o.regs.name] = x.def;
    c_.held.erase(o.regs.name);
    out_.reg_counts[o.regs.name] = std::max(out_.reg_counts[o.regs.name], x.def.regs);
    out.push_back(std::move(st));
  }

  // An op's tensor-memory ring (a lowering's double-buffered accumulator): every stage inside the
  // allocation of the view it moves.
  ir::TmemRing tmem_ring(const ir::Op& o) const {
    const ir::Mma* m = o.as<ir::Mma>();
    const ir::TmemLoad* l = o.as<ir::TmemLoad>();
    if (!m && !l) return {};
    const ir::TmemRing& ring = m ? m->tmem_ring : l->tmem_ring;
    if (ring.stages <= 1) return ring;
    const ResolvedView* v = c_.find_view(m ? m->d : l->src);
    if (!v || !c_.views.count(v->alloc)) throw std::logic_error("a tensor-memory ring of a view that does not resolve");
    const uint64_t last = uint64_t{v->column} + v->columns + uint64_t{ring.stride} * static_cast<uint64_t>(ring.stages - 1);
    if (last > c_.views.at(v->alloc).columns) throw std::logic_error("a tensor-memory ring beyond its allocation");
    return ring;
  }

  void plan_op(int i, const ir::Op& op, std::vector<Step>& out) {
    Step st;
    st.op = i;
    st.ptr = op.ptr;
    switch (op.kind()) {
      case ir::OpKind::load: {
        const ir::Load& o = *op.as<ir::Load>();
        auto l = plan_load(c_, o);
        if (!l) return;
        // TMA: plain stores to shared memory before it are ordered before the async proxy's writes
        // (fence.proxy.async and a sync, §9.7.16.6.5), should they overlap.
        enter(Exec::all, {}, out, l->tma && generic_smem_writes_);
        if (l->tma) {
          l->map.param = o.map_param.empty() ? "tmap_" + s(i) : o.map_param;
          l->barrier = load_barrier(o, i);  // memory_map places the same barriers
          if (o.barrier) {  // a pipeline's stage barrier, armed by an expect_tx before the loads
            l->phase = op.phase;
            l->arm = false;
          }
          // Loads through one map (a lowering's row-placed loads of one tensor) share its parameter.
          bool known = false;
          for (const auto& m : out_.tensor_maps)
            if (m.param == l->map.param) {
              known = true;
              if (m.dim_inner != l->map.dim_inner || m.box_inner != l->map.box_inner || m.box_outer != l->map.box_outer ||
                  m.swizzle != l->map.swizzle || m.global != l->map.global)
                throw std::logic_error("two loads through one tensor map parameter with different maps");
            }
          if (!known) out_.tensor_maps.push_back(l->map);
        }
        st.kind = StepKind::load;
        st.load = *l;
        st.why = "global \"" + l->global + "\" -> shared \"" + l->tile + "\" " +
                 // A tcgen05 single-thread role issues from the lane elect.sync elects (emit/emitter.cpp).
                 (l->tma ? "by TMA: " +
                               std::string(role_.single_thread && c_.k.engine == ir::Engine::tcgen05 ? "the elected lane" : "thread 0") +
                               std::string(c_.pair() && l->arm ? " of each CTA" : "") + " issues " +
                               (l->multicast <= 1  ? std::string()
                                : multicast_whole_cluster(c_.k.grid, c_.k.cta_group, *l) ? "its part (of " + s(l->multicast) + ", by cluster rank) of "
                                                    : "its part (of " + s(l->multicast) + ", by its place in the block's tile " +
                                                          (l->multicast_along_m ? "column" : "row") + ") of ") +
                               s(static_cast<int64_t>(l->boxes.size())) +
                               " cp.async.bulk.tensor box(es) completing on the mbarrier \"" + l->barrier + "\"" +
                               (l->multicast <= 1  ? ""
                                : multicast_whole_cluster(c_.k.grid, c_.k.cta_group, *l) ? ", multicast to every CTA of the cluster"
                                                    : std::string(", multicast to the CTAs of the block's tile ") + (l->multicast_along_m ? "column" : "row") +
                                                          (c_.pair() ? " of this CTA's rank in its pair" : "")) +
                               (l->arm ? ", and all threads wait for it" : "")
                         : "by all threads, 16-byte chunks") +
                 // A program's placed load (docs/spec.md, "M = 64"): which rows go where.
                 (o.place_ptr.empty() || o.tile_row0 < 0
                      ? std::string()
                      : "; its rows " + s(o.pos.at[0].base) + ".." + s(o.pos.at[0].base + o.load_rows - 1) + " into tile rows " +
                            s(o.tile_row0) + ".." + s(o.tile_row0 + o.load_rows - 1) + " (layout F's lanes)");
        out.push_back(st);
        // After a TMA load each thread has seen the bytes arrive (the mbarrier wait); in a pair CTA 0's
        // tcgen05 reads of the peer's tile still need the cluster barrier.
        if (!l->tma) generic_smem_writes_ = true;
        if (!l->tma || c_.pair()) clean_ = false;
        return;
      }
      case ir::OpKind::copy: {
        const ir::Copy& o = *op.as<ir::Copy>();
        std::vector<Region> collateral;
        auto cps = plan_copy(c_, o, collateral);
        const ResolvedView* v = c_.views.count(o.dst.name) ? &c_.views.at(o.dst.name) : nullptr;
        if (!v || !cps) return;
        enter(Exec::issuer, {}, out);
        st.kind = StepKind::cp;
        st.cps = *cps;
        st.why = "shared \"" + o.src.name + "\" -> tensor memory \"" + o.dst.name + "\", issued by one thread";
        out.push_back(st);
        return;
      }
      case ir::OpKind::mma: return mma(op, st, out);
      case ir::OpKind::tmem_load: {
        // The register verifier (src/rules/verify_regs.cpp) reports each tmem_load refused here.
        const ir::TmemLoad& o = *op.as<ir::TmemLoad>();
        const ResolvedView* v = c_.find_view(o.src);
        if (!v) return;
        const TmemLanes lanes = tmem_lanes(o.access, o.regs.name, *v, c_.k.threads);
        if (lanes.miss != TmemLanes::fits) return;
        const RegDef* d = &lanes.def;
        enter(Exec::warps, warps_of(*d), out);
        before_writing(o.regs.name, out);
        for (const auto& r : st_regions_)
          if (overlap(r, region_of(*v))) wait_st("tcgen05.ld reads cells a tcgen05.st of these warps wrote (§9.7.16.6.4.2)", out);
        c_.regs[o.regs.name] = *d;
        c_.held.erase(o.regs.name);
        out_.reg_counts[o.regs.name] = std::max(out_.reg_counts[o.regs.name], d->regs);
        pending_ld_.insert(o.regs.name);
        clean_ = false;
        st.kind = StepKind::tmem_ld;
        st.ld = *d;
        st.why = "tensor memory \"" + o.src.name + "\" -> registers \"" + o.regs.name + "\"";
        out.push_back(st);
        return;
      }
      case ir::OpKind::tmem_store: {
        // The register verifier reports each tmem_store refused here (ST-*, LD-*, its view's name).
        const ir::TmemStore& o = *op.as<ir::TmemStore>();
        const RegDef* src = regs(o.regs);
        const ResolvedView* v = c_.find_view(o.dst);
        if (!v || !src) return;
        const Region r = region_of(*v);
        const TmemStore planned = tmem_store(o, *src, *v, c_.k.threads, c_.held[src->name]);
        if (!planned.step) return;
        const TmemStStep* t = &*planned.step;
        enter(Exec::warps, warps_of(t->dst), out);
        if (pending_ld_.count(o.regs.name)) wait_ld("tcgen05.st reads the registers \"" + o.regs.name + "\" (§9.7.16.8.5)", out);
        pending_st_ = true;
        st_sources_.insert(o.regs.name);
        if (st_region_keys_.insert(describe(r)).second) st_regions_.push_back(r);
        if (!t->direct) out_.reg_counts[planner_name("st", i)] = t->dst.regs;
        clean_ = false;
        st.kind = StepKind::tmem_st;
        st.st = *t;
        st.why = "registers \"" + o.regs.name + "\" -> tensor memory \"" + o.dst.name + "\"" + (t->convert ? ", converted" : "");
        out.push_back(st);
        return;
      }
      case ir::OpKind::store: {
        const ir::Store& o = *op.as<ir::Store>();
        const RegDef* src = regs(o.regs);
        if (!src) return;
        auto t = plan_store(c_, o, *src);
        if (!t) return;
        enter(Exec::warps, warps_of(src->frags.empty() ? RegDef{} : *src), out);
        if (pending_ld_.count(o.regs.name)) wait_ld("the registers \"" + o.regs.name + "\" are read (§9.7.16.8.5)", out);
        clean_ = false;
        st.kind = StepKind::store;
        if (t->tma) {
          bool known = false;
          for (const auto& m : out_.tensor_maps)
            if (m.param == t->map.param) {
              known = true;
              if (m.box_inner != t->map.box_inner || m.box_outer != t->map.box_outer || m.global != t->map.global)
                throw std::logic_error("two TMA stores through one tensor map parameter with different boxes");
            }
          if (!known) out_.tensor_maps.push_back(t->map);
        }
        st.store = *t;
        st.why = "registers \"" + o.regs.name + "\" -> global \"" + t->global + "\"" +
                 (!t->clip                                          ? ""
                  : !t->rows_param.empty() || !t->cols_param.empty() ? ", clipped to the run-time extents"
                                                                     : ", in pairs of adjacent columns (cvt.rn.satfinite to " +
                                                                           std::string(isa::name(t->to)) + ")");
        out.push_back(st);
        return;
      }
      case ir::OpKind::math: return math(i, op, out);
      case ir::OpKind::read: return read(i, op, out);
      case ir::OpKind::reduce: return reduce(i, op, out);
      case ir::OpKind::amax: return amax(i, op, out);
      case ir::OpKind::quantize: return quantize(i, op, out);
      case ir::OpKind::fill: return fill(i, op, out);
      case ir::OpKind::commit: return commit(i, op, out);
      case ir::OpKind::wait: return wait(i, op, out);
      case ir::OpKind::arrive:
      case ir::OpKind::expect_tx:
      case ir::OpKind::mma_wait: return barrier_op(i, op, out);
    }
  }

  // The lowering's own barrier ops (warp-specialized roles).
  void barrier_op(int i, const ir::Op& op, std::vector<Step>& out) {
    Step st;
    st.op = i;
    st.ptr = op.ptr;
    if (const ir::Ref* b = ir::barrier_of(op)) st.bar.barrier = b->name;
    st.bar.phase = op.phase;
    if (const ir::MmaWait* w = op.as<ir::MmaWait>()) {
      st.kind = StepKind::mma_wait;
      st.bar.pending = w->pending;
      st.why = "wait until at most " + s(w->pending) + " wgmma group(s) of this warpgroup are in flight (§9.7.15.7)";
      out.push_back(st);
      return;
    }
    if (const ir::Arrive* a = op.as<ir::Arrive>()) {
      const ir::Arrive& o = *a;
      st.bar.to_leader = o.to_leader;
      st.bar.per_warpgroup = o.per_warpgroup;
      st.bar.cluster_ctas = o.cluster_ctas;
      st.bar.release_row = o.release_row;
      st.bar.release_column = o.release_column;
      // The arrival tells other threads that this role's tcgen05.ld/st are done (§9.7.16.6.4.4).
      wait_ld("the tcgen05.ld of this role complete before it arrives (§9.7.16.6.4.4)", out);
      wait_st("the tcgen05.st of this role complete before it arrives (§9.7.16.6.4.4)", out);
      st.kind = StepKind::arrive;
      st.why = (o.per_warpgroup ? "each warpgroup of the role arrives once on \"" : "every thread of the role arrives on \"") + o.barrier.name + "\"" +
               (o.cluster_ctas <= 1                        ? ""
                : o.release_row && o.release_column ? " in each CTA of this CTA's cluster-block tile row and column (their producers multicast into its stage)"
                                                    : " in each of the cluster's " + s(o.cluster_ctas) + " CTAs (their producers multicast into this CTA's stage)");
    } else {
      const ir::ExpectTx& o = *op.as<ir::ExpectTx>();
      st.bar.leader_only = o.leader_only;
      // The bytes of the TMA loads that follow in this block and complete on the same barrier.
      uint32_t bytes = 0;
      bool seen = false;
      for (const ir::Op* y : ops_) {
        const ir::Load* x = y->as<ir::Load>();
        if (y == &op) seen = true;
        else if (seen && x && x->barrier.name == o.barrier.name) {
          const SmemPlacement* t = c_.placed.count(x->dst.name) ? &c_.placed.at(x->dst.name) : nullptr;
          if (!t) continue;
          const int rows = x->tile_row0 >= 0 ? x->load_rows : (t->layout.major == isa::Major::k ? t->layout.mn : t->layout.k);
          const int row_bytes = (t->layout.major == isa::Major::k ? t->layout.k : t->layout.mn) * t->bits / 8;
          bytes += static_cast<uint32_t>(rows * row_bytes);
        } else if (seen && !x) {
          break;
        }
      }
      st.kind = StepKind::expect_tx;
      // A pair's loads all complete on CTA 0's barrier: it expects both CTAs' bytes.
      st.bar.tx_bytes = bytes * (o.leader_only && c_.pair() ? 2u : 1u);
      st.why = "arm \"" + o.barrier.name + "\" with the " + s(st.bar.tx_bytes) + " bytes the TMA loads bring";
    }
    out.push_back(st);
  }

  void mma(const ir::Op& op, Step& st, std::vector<Step>& out) {
    const ir::Mma& o = *op.as<ir::Mma>();
    auto m = plan_mma(c_, op);
    if (c_.k.engine == ir::Engine::wgmma) {
      if (!m) return;
      // The accumulator registers the wgmmas define (§9.7.15.5.1.1).
      const RegDef d = *wgmma_accumulators(o, *c_.find_tile(o.a), *c_.find_tile(o.b));
      c_.regs[o.d.name] = d;
      out_.reg_counts[o.d.name] = std::max(out_.reg_counts[o.d.name], d.regs);
      if (m->a_registers) out_.reg_counts[planner_name("afrag")] = 4 * static_cast<int>(m->instrs.size() / d.groups.size());
      st.kind = StepKind::mma;
      st.mma = *m;
      st.why = "D \"" + o.d.name + "\" " + (o.accumulate ? "+=" : "=") + " A \"" + o.a.name + "\" x B \"" + o.b.name +
               "\" (wgmma, each warpgroup its " + std::to_string(m->warpgroup_rows) + " rows)";
      out.push_back(st);
      return;
    }
    if (!m) return;
    enter(Exec::issuer, {}, out);
    st.kind = StepKind::mma;
    st.mma = *m;
    st.why = "D \"" + o.d.name + "\" " + (o.accumulate ? "+=" : "=") + " A \"" + o.a.name + "\" x B \"" + o.b.name + "\"";
    out.push_back(st);
  }

  void commit(int i, const ir::Op& op, std::vector<Step>& out) {
    const ir::Commit& o = *op.as<ir::Commit>();
    const ir::Ref& b = o.barrier;
    BarrierState& bs = bars_[b.name];
    if (ordered_ && bs.outstanding) return;  // ORDER-BARRIER (verify_order.cpp)
    bs.outstanding = true;
    ++bs.commits;
    enter(Exec::issuer, {}, out);
    Step st;
    st.op = i;
    st.ptr = op.ptr;
    st.kind = StepKind::commit;
    st.bar.barrier = b.name;
    st.bar.phase = op.phase;
    st.bar.pair_multicast = c_.pair();
    st.bar.release_row = o.release_row;
    st.bar.release_column = o.release_column;
    st.why = "the mbarrier \"" + b.name + "\" tracks every tcgen05.cp/mma issued so far (§9.7.16.12.1)" +
             (o.release_row || o.release_column
                  ? std::string(", in every CTA of this CTA's cluster-block tile ") + (o.release_row && o.release_column ? "row and column" : o.release_row ? "row" : "column") +
                        " (their producers multicast into its stage)"
                  : std::string());
    out.push_back(st);
  }

  void wait(int i, const ir::Op& op, std::vector<Step>& out) {
    const ir::Ref& b = op.as<ir::Wait>()->barrier;
    BarrierState& bs = bars_[b.name];
    if (ordered_ && !bs.outstanding) return;  // ORDER-BARRIER (verify_order.cpp)
    bs.outstanding = false;
    Step st;
    st.op = i;
    st.ptr = op.ptr;
    st.kind = StepKind::wait;
    st.bar.barrier = b.name;
    st.bar.phase = op.phase;
    st.bar.parity = ordered_ ? bs.waits % 2 : (op.phase.flip ? 1 : 0);
    ++bs.waits;
    enter(Exec::all, {}, out, true);  // what these threads did before must be ordered too
    clean_ = true;  // every thread passed the mbarrier and tcgen05.fence::after_thread_sync
    st.why = ordered_ ? "all threads wait for phase " + s(bs.waits - 1) + " of \"" + b.name +
                            "\", then tcgen05.fence::after_thread_sync orders what follows after the tracked work (§9.7.16.6.4.2)"
                      : "the role waits for \"" + b.name + "\"";
    out.push_back(st);
    exec_ = Exec::all;
  }

  void finish() {
    if (ends_in_flight(c_.k, role_)) {
      // The kernel's own commit and wait: no tensor memory is deallocated under a running MMA.
      const std::string done = planner_name("done");
      enter(Exec::issuer, {}, steps_);
      Step c;
      c.kind = StepKind::commit;
      c.ptr = "inserted";
      c.bar.barrier = done;
      c.bar.pair_multicast = c_.pair();
      c.why = "tcgen05 work still in flight at the end: commit it before tensor memory is deallocated";
      steps_.push_back(c);
      Step w;
      w.kind = StepKind::wait;
      w.ptr = "inserted";
      w.bar.barrier = done;
      w.why = "wait for it";
      steps_.push_back(w);
      exec_ = Exec::all;
    }
    wait_ld("the kernel ends: every tcgen05.ld completes", steps_);
    wait_st("the kernel ends: every tcgen05.st completes", steps_);
    if (!ordered_) return;
    Step st;
    st.kind = StepKind::sync;
    st.ptr = "inserted";
    st.why = "all threads are done with tensor memory before warp 0 deallocates it (§9.7.16.7.1)";
    steps_.push_back(st);
  }

  Ctx& c_;
  const ir::Role& role_;
  const bool ordered_;
  Ordered& out_;
  std::vector<const ir::Op*> ops_;  // every op of the role in order (loop bodies inlined)
  std::vector<Step> steps_;
  std::set<std::string> pending_ld_, st_sources_;
  std::vector<Region> st_regions_;
  std::set<std::string> st_region_keys_;
  bool pending_st_ = false;
  bool generic_smem_writes_ = false;
  bool clean_ = true;  // nothing since the last sync needs ordering across threads
  std::map<std::string, BarrierState> bars_;
  Exec exec_ = Exec::none;
  std::vector<int> exec_warps_;
};

}  // namespace

Ordered order(Ctx& c) {
  Ordered out;
  const bool ordered = c.k.planner_orders();
  for (const auto& r : c.k.roles) {
    RolePlan rp;
    rp.role = &r;
    Sequencer seq(c, r, ordered, out);
    rp.steps = seq.run();
    decide_staging(rp.steps);
    out.roles.push_back(std::move(rp));
  }
  return out;
}

}  // namespace ptxgen::plan::detail
