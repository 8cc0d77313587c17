// The order rules of a role the planner orders (the program level's one role of all warps),
// following its ops as listed: nothing read before it is written (ORDER-UNWRITTEN); nothing an
// asynchronous tcgen05.cp or tcgen05.mma writes or reads used or overwritten before a commit and a
// wait made its completion visible (ORDER-INCOMPLETE, §9.7.16.6.4.2), except the pipelined pairs
// of §9.7.16.6.2 (tcgen05.cp -> tcgen05.mma; tcgen05.mma -> tcgen05.mma on the same accumulator
// with the same shapes); one commit per barrier phase, a wait only after a commit (ORDER-BARRIER);
// and a multicast copy clobbering no data still to be read (CP-MULTICAST-OVERLAP: its other lanes
// may hold dead data). Runs after the op verifiers: refused ops still write what they name, so
// later ops are not blamed for them.
#include <algorithm>

#include "verify.hpp"

namespace ptxgen::rules::verify {

namespace {

enum class AsyncKind { copy, mma };
std::string_view name(AsyncKind k) { return k == AsyncKind::copy ? "copy (tcgen05.cp)" : "mma (tcgen05.mma)"; }

struct Async {  // a copy or mma not yet known to be complete
  size_t op = 0;
  AsyncKind what = AsyncKind::mma;
  std::vector<ir::Region> writes, reads;
  std::set<std::string> tiles;
  std::string d_key;    // mma: its accumulator and shapes
  std::string barrier;  // committed to
};

// The tensor memory an op reads and writes (for the liveness of multicast copies).
struct Access {
  std::vector<ir::Region> reads, writes;
};

class Walk {
 public:
  Walk(Ctx& c, const ir::Role& role) : c_(c) {
    for (const auto& n : role.nodes)
      if (!n.is_loop) ops_.push_back(&n.op);
      else
        for (const auto& o : n.loop.body) ops_.push_back(&o);
  }
  // A program whose roles the lowering synchronized: its ops as listed, the loop's body twice (what
  // one iteration leaves to the next). The mbarriers between the roles order every completion, so
  // only what the listed order means is judged: nothing read before it is written, and no
  // multicast copy clobbering data still to be read.
  Walk(Ctx& c, const ir::Kernel& k) : c_(c), synchronized_(true) {
    for (size_t i = 0; i < k.loop_end; ++i) ops_.push_back(&k.listed[i]);
    for (size_t i = k.loop_first; i < k.listed.size(); ++i) ops_.push_back(&k.listed[i]);
  }

  void run() {
    for (size_t i = 0; i < ops_.size(); ++i) op(i, *ops_[i]);
  }

 private:
  const ir::ResolvedView* known_view(const ir::Ref& r) const {
    auto it = c_.views.find(r.name);
    return (r && it != c_.views.end()) ? &it->second : nullptr;
  }

  void incomplete(const std::string& ptr, const std::string& what, const Async& a, const std::string& verb) {
    c_.problem("ORDER-INCOMPLETE", ptr,
               what + " " + verb + " what the " + std::string(name(a.what)) + " of " + ops_[a.op]->ptr +
                   " is still working on: its completion is visible only after a commit and a wait on that barrier "
                   "(§9.7.16.6.4.2)",
               {"insert {\"op\": \"commit\", \"barrier\": B} and {\"op\": \"wait\", \"barrier\": B} before it"});
  }

  // Each distinct region once, and each pending async op once until a commit: a long list of the
  // same ops keeps these lists, and every scan of them, short (cost linear in the ops).
  void add_written(const ir::Region& r) {
    if (written_keys_.insert(ir::describe(r)).second) written_.push_back(r);
  }
  void add_async(Async a) {
    if (synchronized_) return;  // the lowering's mbarriers order the completions
    std::string key = std::string(name(a.what)) + "|" + a.d_key;
    for (const auto& r : a.writes) key += "|w" + ir::describe(r);
    for (const auto& r : a.reads) key += "|r" + ir::describe(r);
    for (const auto& t : a.tiles) key += "|t" + t;
    if (open_async_.insert(key).second) async_.push_back(std::move(a));
  }
  bool written(const ir::Region& r) const {
    return std::any_of(written_.begin(), written_.end(), [&](const ir::Region& w) { return ir::overlap(w, r); });
  }

  void read_tmem(const ir::Ref& ref, const ir::ResolvedView* v, const std::string& what, bool by_mma, const std::string& d_key = "") {
    if (!v) return;
    const ir::Region r = ir::region_of(*v);
    if (!written(r)) {
      c_.problem("ORDER-UNWRITTEN", ref.ptr,
                 what + " reads \"" + ref.name + "\" (" + ir::describe(r) + "), which no earlier op writes",
                 {"copy, store or compute it first: ops run in the order listed"});
      return;
    }
    for (const auto& a : async_)
      for (const auto& w : a.writes)
        if (ir::overlap(w, r)) {
          const bool pipelined = by_mma && (a.what == AsyncKind::copy || (!d_key.empty() && a.d_key == d_key));
          if (!pipelined) return incomplete(ref.ptr, what, a, "reads");
        }
  }

  void write_tmem(const ir::Ref& ref, const ir::Region& r, const std::string& what, bool by_mma, const std::string& d_key = "") {
    for (const auto& a : async_) {
      for (const auto& rd : a.reads)
        if (ir::overlap(rd, r)) return incomplete(ref.ptr, what, a, "overwrites");
      for (const auto& w : a.writes)
        if (ir::overlap(w, r)) {
          const bool pipelined = by_mma && (a.what == AsyncKind::copy || a.d_key == d_key);
          if (!pipelined) return incomplete(ref.ptr, what, a, "overwrites");
        }
    }
  }

  void read_tile(const ir::Ref& ref, const std::string& what) {
    if (c_.tiles.count(ref.name) && !loaded_.count(ref.name))
      c_.problem("ORDER-UNWRITTEN", ref.ptr, what + " reads the tile \"" + ref.name + "\" before any load fills it",
                 {"load it first: ops run in the order listed"});
  }

  // Register sets are defined by a tmem_load (whether or not its verifier accepted it).
  void read_regs(const ir::Ref& r, const std::string& what) {
    if (!regs_seen_.count(r.name))
      c_.problem("ORDER-UNWRITTEN", r.ptr, what + " uses the registers \"" + r.name + "\" before a tmem_load fills them",
                 {"load them with {\"op\": \"tmem_load\", \"regs\": \"" + r.name + "\", ...} first"});
  }

  Access access(const ir::Op& o) const {
    Access a;
    auto add = [&](std::vector<ir::Region>& to, const ir::Ref& r) {
      if (const ir::ResolvedView* v = known_view(r)) to.push_back(ir::region_of(*v));
    };
    if (const ir::Copy* cp = o.as<ir::Copy>()) {
      add(a.writes, cp->dst);
    } else if (const ir::Mma* m = o.as<ir::Mma>()) {
      for (const ir::Ref* r : {&m->a, &m->scale_a, &m->scale_b, &m->metadata}) add(a.reads, *r);
      if (m->accumulate) add(a.reads, m->d);
      add(a.writes, m->d);
    } else if (const ir::TmemLoad* ld = o.as<ir::TmemLoad>()) {
      add(a.reads, ld->src);
    } else if (const ir::TmemStore* st = o.as<ir::TmemStore>()) {
      add(a.writes, st->dst);
    }
    return a;
  }

  // A multicast tcgen05.cp also writes `col`, lanes outside its destination. That is harmless where
  // what those lanes hold is dead: no later op reads it before something writes it again. Refused
  // only when a later op reads cells the copy clobbered (data still to be read).
  void check_collateral(size_t i, const ir::Copy& o, const ir::Region& col) {
    if (accesses_.empty())  // each op's regions once, for every copy that checks its multicast lanes
      for (const ir::Op* x : ops_) accesses_.push_back(access(*x));
    std::vector<ir::Region> rewritten;
    for (size_t j = i + 1; j < ops_.size(); ++j) {
      const ir::Op& later = *ops_[j];
      const Access& a = accesses_[j];
      for (const auto& r : a.reads) {
        if (!ir::overlap(r, col)) continue;
        bool covered = false;
        for (const auto& w : rewritten)
          covered |= w.alloc == r.alloc && w.lane0 <= std::max(r.lane0, col.lane0) &&
                     w.lane1 >= std::min(r.lane1, col.lane1) && w.col0 <= std::max(r.col0, col.col0) &&
                     w.col1 >= std::min(r.col1, col.col1) && w.piece < 0;
        if (covered) continue;
        // The operand that holds the cells: what the later op reads in tensor memory (access()).
        std::vector<const ir::Ref*> reads;
        if (const ir::TmemLoad* ld = later.as<ir::TmemLoad>()) reads = {&ld->src};
        if (const ir::Mma* m = later.as<ir::Mma>()) reads = {&m->a, &m->d, &m->scale_a, &m->scale_b, &m->metadata};
        const ir::Ref* name = reads.front();
        for (const ir::Ref* x : reads)
          if (const ir::ResolvedView* v = known_view(*x); v && ir::overlap(ir::region_of(*v), col)) name = x;
        c_.problem("CP-MULTICAST-OVERLAP", o.dst.ptr,
                   "the tcgen05.cp multicast into \"" + o.dst.name + "\" also writes " + ir::describe(col) + ", which \"" +
                       name->name + "\" holds and " + later.ptr + " reads afterwards",
                   {"place the other view elsewhere, read it before the copy, or copy into a replicated view (cast "
                    "with layout warpx2::02_13, warpx2::01_23 or warpx4) that owns all the lanes the shape writes"});
        return;
      }
      for (const auto& w : a.writes) rewritten.push_back(w);
    }
  }

  // The lanes outside its destination an accepted multicast copy writes (plan::cp_shapes).
  std::vector<ir::Region> collateral(const ir::Op& op, const ir::ResolvedView& v) const {
    if (c_.refused.count(&op)) return {};
    const ir::Copy& o = *op.as<ir::Copy>();
    const auto t = c_.placed.find(o.src.name);
    if (t == c_.placed.end()) return {};
    const isa::TileLayout& L = t->second.layout;
    const int64_t r0 = o.rows ? (*o.rows)[0] : 0, r1 = o.rows ? (*o.rows)[1] : L.mn;
    const int64_t k0 = o.cols ? (*o.cols)[0] : 0, k1 = o.cols ? (*o.cols)[1] : L.k;
    std::vector<ir::Region> out;
    for (const auto& [l, e] : plan::cp_shapes(v, static_cast<int>(r1 - r0), (k1 - k0) * t->second.bits).collateral)
      out.push_back({v.alloc, l, e, v.column, v.column + v.columns});
    return out;
  }

  void op(size_t i, const ir::Op& op) {
    // Follow-on errors are noise: an mma reading a view a refused copy was to fill is not judged
    // (the copy's error says what is wrong with the view); the view still counts as written.
    if (const ir::Mma* m = op.as<ir::Mma>())
      for (const ir::Ref* r : {&m->a, &m->scale_a, &m->scale_b, &m->metadata})
        if (*r && c_.refused_copies.count(r->name)) {
          if (const ir::ResolvedView* d = known_view(m->d)) add_written(ir::region_of(*d));
          return;
        }
    switch (op.kind()) {
      case ir::OpKind::load: {
        const ir::Load& o = *op.as<ir::Load>();
        for (const auto& a : async_)
          if (a.tiles.count(o.dst.name)) incomplete(o.dst.ptr, "load", a, "overwrites");
        loaded_.insert(o.dst.name);
        return;
      }
      case ir::OpKind::copy: {
        const ir::Copy& o = *op.as<ir::Copy>();
        read_tile(o.src, "copy");
        const ir::ResolvedView* v = known_view(o.dst);
        if (!v) return;
        const ir::Region r = ir::region_of(*v);
        const std::vector<ir::Region> cols = collateral(op, *v);
        write_tmem(o.dst, r, "copy", false);
        for (const auto& col : cols) {
          write_tmem(o.dst, col, "the multicast of this copy", false);  // lanes an unfinished op still uses
          check_collateral(i, o, col);
        }
        add_written(r);
        Async a;
        a.op = i;
        a.what = AsyncKind::copy;
        a.writes = {r};
        a.writes.insert(a.writes.end(), cols.begin(), cols.end());
        a.tiles = {o.src.name};
        add_async(std::move(a));
        return;
      }
      case ir::OpKind::mma: return mma(i, op);
      case ir::OpKind::tmem_load: {
        const ir::TmemLoad& o = *op.as<ir::TmemLoad>();
        regs_seen_.insert(o.regs.name);
        read_tmem(o.src, known_view(o.src), "tmem_load", false);
        return;
      }
      case ir::OpKind::tmem_store: {
        const ir::TmemStore& o = *op.as<ir::TmemStore>();
        read_regs(o.regs, "tmem_store");
        const ir::ResolvedView* v = known_view(o.dst);
        if (!v) return;
        const ir::Region r = ir::region_of(*v);
        write_tmem(o.dst, r, "tmem_store", false);
        add_written(r);
        return;
      }
      case ir::OpKind::store: return read_regs(op.as<ir::Store>()->regs, "store");
      case ir::OpKind::math: {
        const ir::Math& o = *op.as<ir::Math>();
        for (const ir::Ref* r : {&o.a, &o.b, &o.c})  // c_from_iteration_1's c: the set this op defines
          if (*r && !(o.c_from_iteration_1 && r == &o.c)) read_regs(*r, std::string(o.of ? o.of->name() : info(o.fn).name));
        regs_seen_.insert(o.regs.name);
        return;
      }
      case ir::OpKind::reduce: {
        const ir::Reduce& o = *op.as<ir::Reduce>();
        read_regs(o.a, "reduce");
        regs_seen_.insert(o.regs.name);
        return;
      }
      case ir::OpKind::amax: return read_regs(op.as<ir::Amax>()->a, "amax");
      case ir::OpKind::quantize: {
        const ir::Quantize& o = *op.as<ir::Quantize>();
        read_regs(o.a, "quantize");
        regs_seen_.insert(o.regs.name);
        return;
      }
      case ir::OpKind::fill: regs_seen_.insert(op.as<ir::Fill>()->regs.name); return;  // reads nothing
      case ir::OpKind::read: {
        const ir::Read& o = *op.as<ir::Read>();
        read_regs(o.like, "read");  // its elements, not its values: still none before it is defined
        regs_seen_.insert(o.regs.name);
        return;
      }
      case ir::OpKind::commit: {
        const ir::Commit& o = *op.as<ir::Commit>();
        bool& outstanding = outstanding_[o.barrier.name];
        if (outstanding) {
          c_.problem("ORDER-BARRIER", o.barrier.ptr,
                     "a second commit to \"" + o.barrier.name + "\" before a wait on the first: the waits could not tell the "
                     "two phases of the mbarrier apart",
                     {"wait on \"" + o.barrier.name + "\" between the commits, or commit to another barrier"});
          return;
        }
        for (auto& a : async_)
          if (a.barrier.empty()) a.barrier = o.barrier.name;
        open_async_.clear();  // committed: a later identical op is pending anew
        outstanding = true;
        return;
      }
      case ir::OpKind::wait: {
        const ir::Wait& o = *op.as<ir::Wait>();
        bool& outstanding = outstanding_[o.barrier.name];
        if (!outstanding) {
          c_.problem("ORDER-BARRIER", o.barrier.ptr,
                     "wait on \"" + o.barrier.name + "\" with no commit to it before (since the last wait): the wait would never end",
                     {"commit the tcgen05 work to \"" + o.barrier.name + "\" first"});
          return;
        }
        outstanding = false;
        std::vector<Async> left;
        for (auto& a : async_)
          if (a.barrier != o.barrier.name) left.push_back(std::move(a));
        async_ = std::move(left);
        return;
      }
      case ir::OpKind::arrive:
      case ir::OpKind::expect_tx:
      case ir::OpKind::mma_wait: return;
    }
  }

  void mma(size_t i, const ir::Op& op) {
    const ir::Mma& o = *op.as<ir::Mma>();
    read_tile(o.a, "mma");
    read_tile(o.b, "mma");
    // tcgen05.mma pipelines with an earlier one on the same accumulator with the same shapes.
    const ir::ResolvedView* d = known_view(o.d);
    std::string key;
    if (d) {
      key = ir::describe(ir::region_of(*d));
      if (auto sh = c_.mma_shapes.find(&op); sh != c_.mma_shapes.end())
        for (int mi = 0; mi < sh->second.mg; ++mi)
          for (int n : sh->second.ng) key += "|" + std::to_string(sh->second.m_idesc) + "x" + std::to_string(n);
    }
    for (const ir::Ref* r : {&o.a, &o.scale_a, &o.scale_b, &o.metadata}) read_tmem(*r, known_view(*r), "mma", true, "");
    if (o.accumulate) read_tmem(o.d, d, "mma with \"accumulate\": true", true, key);
    Async a;
    a.op = i;
    if (d) {
      write_tmem(o.d, ir::region_of(*d), "mma", true, key);
      add_written(ir::region_of(*d));
      a.writes = {ir::region_of(*d)};
    }
    for (const ir::Ref* r : {&o.a, &o.scale_a, &o.scale_b, &o.metadata})
      if (const ir::ResolvedView* v = known_view(*r)) a.reads.push_back(ir::region_of(*v));
    a.tiles = {o.a.name, o.b.name};
    a.d_key = key;
    add_async(std::move(a));
  }

  Ctx& c_;
  const bool synchronized_ = false;
  std::vector<const ir::Op*> ops_;  // every op of the role in order (loop bodies inlined)
  std::vector<Async> async_;
  std::vector<ir::Region> written_;
  std::set<std::string> written_keys_, open_async_, loaded_, regs_seen_;
  std::map<std::string, bool> outstanding_;  // a barrier committed to and not yet waited on
  std::vector<Access> accesses_;
};

}  // namespace

void order(Ctx& c) {
  if (!c.k.listed.empty()) return Walk(c, c.k).run();  // a program's roles, synchronized by the lowering
  if (!c.k.planner_orders()) return;  // the gemm template's roles synchronize through their own mbarriers
  for (const auto& r : c.k.roles) Walk(c, r).run();
}

}  // namespace ptxgen::rules::verify
