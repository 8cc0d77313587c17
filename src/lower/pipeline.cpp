// The program level's warp roles into the kernel IR: each role runs its own ops, and ptxgen
// plans the mbarriers between them (docs/spec.md, "Loops and roles").
//
// The ops keep the meaning of the listed order: each op sees what the ops before it (and, in a
// loop, the previous iterations) wrote. Each op reads and writes buffers: tiles (by name; a tile
// of S stages is a ring whose copy kb % S an iteration uses), tensor-memory cells (the region of a
// view, through any chain: ir::resolve_views and ir::region_of, the narrow calls the verifiers
// use too) and register sets. Following the order (and the loop once more, for what an
// iteration leaves to the next), every read depends on the last write of the buffer and every
// write on the reads since then: an edge from the op that must complete to the op that must wait.
// An edge needs an mbarrier unless the hardware orders the two ops itself:
//   - tcgen05.cp then tcgen05.mma, and tcgen05.mma then tcgen05.mma on the same accumulator, issued
//     by the same thread (the pipelined pairs of §9.7.16.6.2);
//   - tcgen05.ld/st and stores of the same warps, which the planner orders with
//     tcgen05.wait::ld/st (§9.7.16.6.4.5).
// The op that must complete signals: a TMA load completes the transaction bytes an expect_tx armed
// (§9.7.9.25, §9.7.13.15.10); a tcgen05.cp/mma is tracked by a tcgen05.commit (§9.7.16.12.1)
// issued after it (one commit covers everything its thread issued before); a tcgen05.ld/st or
// store is done when every thread of its role has waited for it and arrives (with
// tcgen05.fence::before_thread_sync, §9.7.16.6.4.4). Consecutive signals of one role with no wait
// between them share one barrier. The op that must wait waits for the barrier's phase of the
// iteration it depends on: its own, or (an edge an iteration leaves to the next, or to the S-th
// next for a ring) an earlier one, which the first iterations skip. A barrier inside the loop has
// a stage per copy of the ring it guards, so a role may run that many iterations ahead.
//
// A CTA pair (docs/spec.md, "CTA pairs") runs every role in both CTAs but the one that issues
// tcgen05.cp/mma: one thread of CTA 0 issues them with .cta_group::2 for both CTAs' tensor memory
// (§9.7.16.5, Table 46), as the gemm template's MMA warp does. A thread waits only on a barrier
// of its own CTA (mbarrier.try_wait is .shared::cta, §9.7.13.15.16), so what that role waits for
// completes on CTA 0's barriers: each CTA's TMA loads complete their bytes there (.cta_group::2
// lets a load signal the peer CTA's barrier, §9.7.9.27.1.2), armed by CTA 0 alone for both CTAs'
// bytes; the arrivals it waits for come from both CTAs' threads (mapa and .shared::cluster,
// §9.7.13.15.13), the barrier counting them all. Its commits arrive on the barrier of both CTAs
// (.multicast::cluster, §9.7.16.12.1), where each CTA's roles wait on their own. The structure
// rules (PAIR-ROLE-ISSUE, PAIR-ROLE-RELOAD) keep out the waits no CTA 1 role could make.
#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include "pipeline.hpp"

#include "ptxgen/plan.hpp"

namespace ptxgen::lower {

namespace {

enum class Where { before, loop, after };
enum class Exec { issuer, threads };
enum class Signal { none, tx, commit, arrive };

struct Buffer {
  enum Kind { tile, cells, regs } kind = tile;
  std::string name;  // tile or register set
  ir::Region cells_region;
  bool resolved = true;  // a view that does not resolve conflicts with every view (its kernel is refused)
};

struct Use {
  int buffer = 0;
  bool write = false;
};

struct Item {
  const spec::Op* op = nullptr;
  ir::Op ir;
  int role = -1;
  Where where = Where::before;
  Exec exec = Exec::threads;
  bool async = false;  // tcgen05.cp / tcgen05.mma
  bool tma = false;    // a TMA load
  std::vector<Use> uses;
  int stages = 1;      // the largest ring among the tiles it uses
  std::vector<ir::Op> more;  // an activation's further steps (ir ran its first), in order
};

struct Edge {
  int from = 0, to = 0;
  int distance = 0;  // 0: the same iteration (or outside the loop); D: D iterations later
};

class Pipeliner {
 public:
  Pipeliner(const spec::Program& p, ir::Kernel& k) : p_(p), k_(k), pair_(p.cta_group == 2) {
    for (size_t i = 0; i < p.roles.size(); ++i) role_index_[p.roles[i].name] = static_cast<int>(i);
    for (const auto& t : p.smem) tile_stages_[t.name] = t.stages;
    views_ = ir::resolve_views(k.views).views;
  }

  void run() {
    flatten();
    leaders();
    dependences();
    signals();
    build();
  }

 private:
  // ---- The ops in order, with what they use --------------------------------------------------
  void flatten() {
    for (const auto& o : p_.ops) {
      if (o.kind == spec::OpKind::loop) {
        if (loop_) continue;  // one loop (PROGRAM-LOOP refuses more)
        loop_ = &o;
        k_.loop_first = k_.listed.size();
        for (const auto& b : o.body) {
          add(b, Where::loop);
          for (auto& x : lower_op(p_, b)) k_.listed.push_back(std::move(x));
        }
        k_.loop_end = k_.listed.size();
        continue;
      }
      add(o, loop_ ? Where::after : Where::before);
      for (auto& x : lower_op(p_, o)) k_.listed.push_back(std::move(x));
    }
  }

  void add(const spec::Op& o, Where w) {
    Item it;
    it.op = &o;
    std::vector<ir::Op> lowered = lower_op(p_, o);
    it.ir = lowered.front();  // an activation lowers into several steps: the rest run right after it
    it.more.assign(std::make_move_iterator(lowered.begin() + 1), std::make_move_iterator(lowered.end()));
    const auto r = role_index_.find(o.role.name);
    if (r == role_index_.end()) return;  // PROGRAM-ROLE
    it.role = r->second;
    it.where = w;
    switch (o.kind) {
      case spec::OpKind::load:
        it.tma = true;  // loads of a program with roles go by TMA (PROGRAM-ROLE)
        it.exec = Exec::issuer;
        it.ir.as<ir::Load>()->to_leader = pair_;  // each CTA's bytes complete on CTA 0's barrier, where its MMA issuer waits
        for (auto& m : it.more) m.as<ir::Load>()->to_leader = pair_;  // a placed load's further pieces
        use(it, tile(o.dst.name), true);
        break;
      case spec::OpKind::copy:
        it.exec = Exec::issuer;
        it.async = true;
        use(it, tile(o.src.name), false);
        // A 64- or 32-row multicast shape also writes lanes outside its view (its other replicas'):
        // the copy counts as writing all 128 lanes of the view's columns.
        use(it, cells(o.dst.name, true), true);
        break;
      case spec::OpKind::mma:
        it.exec = Exec::issuer;
        it.async = true;
        use(it, tile_stages_.count(o.a.name) ? tile(o.a.name) : cells(o.a.name), false);
        use(it, tile(o.b.name), false);
        for (const spec::Ref* x : {&o.scale_a, &o.scale_b, &o.metadata})
          if (*x) use(it, cells(x->name), false);
        use(it, cells(o.d.name), true);
        break;
      case spec::OpKind::tmem_load:
        use(it, cells(o.src.name), false);
        use(it, regs(o.regs.name), true);
        warps_for(it, o.src.name);
        break;
      case spec::OpKind::tmem_store:
        use(it, regs(o.regs.name), false);
        use(it, cells(o.dst.name), true);
        warps_for(it, o.dst.name);
        break;
      case spec::OpKind::fill:  // the warps a tmem_load of its view would take; it reads no cells
        use(it, regs(o.regs.name), true);
        warps_for(it, o.like.name);
        break;
      case spec::OpKind::store: use(it, regs(o.regs.name), false); break;
      // Arithmetic: the registers of its own role (MATH-ROLES), read and written by the warps that
      // hold them, as a store is; a read's tensor is an input no op writes.
      // An amax reads its registers (and raises a global no op reads); a quantize writes its
      // result registers too (its factors: a global no op reads).
      case spec::OpKind::amax: use(it, regs(o.a.name), false); break;
      case spec::OpKind::quantize:
        use(it, regs(o.a.name), false);
        use(it, regs(o.regs.name), true);
        break;
      case spec::OpKind::math:
        for (size_t i = 0; i < 3; ++i) {
          const spec::Ref& x = i == 0 ? o.a : i == 1 ? o.b : o.c;
          if (x && !o.value[i]) use(it, regs(x.name), false);
        }
        use(it, regs(o.regs.name), true);
        break;
      case spec::OpKind::read:
        use(it, regs(o.like.name), false);
        use(it, regs(o.regs.name), true);
        break;
      case spec::OpKind::reduce:
        use(it, regs(o.a.name), false);
        use(it, regs(o.regs.name), true);
        break;
      case spec::OpKind::commit:
      case spec::OpKind::wait:
      case spec::OpKind::loop: return;  // PROGRAM-ROLE: a program with roles has none of these
    }
    if (w == Where::loop) {
      // In a loop the position may step with the iteration; an mma that accumulates across it
      // overwrites D in the first iteration.
      if (auto* m = it.ir.as<ir::Mma>()) m->accumulate_after_first_iteration = o.accumulate_after_first;
    }
    items_.push_back(std::move(it));
  }

  void use(Item& it, int buffer, bool write) {
    it.uses.push_back({buffer, write});
    const Buffer& b = buffers_[static_cast<size_t>(buffer)];
    if (b.kind == Buffer::tile) it.stages = std::max(it.stages, tile_stages_.count(b.name) ? tile_stages_.at(b.name) : 1);
  }
  int tile(const std::string& n) { return buffer(Buffer::tile, n); }
  int regs(const std::string& n) { return buffer(Buffer::regs, n); }
  int buffer(Buffer::Kind kind, const std::string& n) {
    const std::string key = (kind == Buffer::tile ? "t:" : "r:") + n;
    auto f = named_.find(key);
    if (f != named_.end()) return f->second;
    Buffer b;
    b.kind = kind;
    b.name = n;
    buffers_.push_back(b);
    return named_[key] = static_cast<int>(buffers_.size() - 1);
  }
  // A view's cells: one buffer per distinct region (views of the same cells share it).
  int cells(const std::string& view, bool all_lanes = false) {
    const auto v = views_.find(view);
    Buffer b;
    b.kind = Buffer::cells;
    if (v == views_.end()) {
      b.resolved = false;
      b.name = view;
    } else {
      b.cells_region = ir::region_of(v->second);
      if (all_lanes) {
        b.cells_region.lane0 = 0;
        b.cells_region.lane1 = 128;
        b.cells_region.piece = -1;
      }
      b.name = ir::describe(b.cells_region);
    }
    const std::string key = "c:" + b.name;
    auto f = named_.find(key);
    if (f != named_.end()) return f->second;
    buffers_.push_back(b);
    return named_[key] = static_cast<int>(buffers_.size() - 1);
  }
  bool conflict(int a, int b) const {
    if (a == b) return true;
    const Buffer &x = buffers_[static_cast<size_t>(a)], &y = buffers_[static_cast<size_t>(b)];
    if (x.kind != Buffer::cells || y.kind != Buffer::cells) return false;
    if (!x.resolved || !y.resolved) return true;
    return ir::overlap(x.cells_region, y.cells_region);
  }

  // tcgen05.ld/st reach the lanes of a warp's own quarter (§9.7.16.8.1): the role's warp for each
  // quarter the view occupies, unless the op lists its warps.
  void warps_for(Item& it, const std::string& view) {
    ir::TmemAccess& access = *tmem_access(it.ir);
    if (!access.warps.empty()) return;
    const spec::Role& r = p_.roles[static_cast<size_t>(it.role)];
    access.warps_ptr = r.warps_ptr;
    const auto v = views_.find(view);
    if (v == views_.end()) return;
    const ir::Region reg = ir::region_of(v->second);
    for (int q = 0; q < 4; ++q) {
      bool occupied = false;
      for (uint32_t l = 32u * static_cast<uint32_t>(q); l < 32u * static_cast<uint32_t>(q + 1) && !occupied; ++l)
        occupied = reg.has_lane(l);
      if (!occupied) continue;
      for (int w : r.warps)
        if (w % 4 == q) {
          access.warps.push_back(w);
          break;
        }
    }
  }

  // The access of a tcgen05.ld / tcgen05.st; nullptr for the other kinds.
  static ir::TmemAccess* tmem_access(ir::Op& o) {
    if (auto* l = o.as<ir::TmemLoad>()) return &l->access;
    if (auto* st = o.as<ir::TmemStore>()) return &st->access;
    if (auto* f = o.as<ir::Fill>()) return &f->access;
    return nullptr;
  }
  // The warps an op lists (tcgen05.ld / tcgen05.st); none for the other kinds.
  static std::vector<int> warps(const ir::Op& o) {
    if (const auto* l = o.as<ir::TmemLoad>()) return l->access.warps;
    if (const auto* st = o.as<ir::TmemStore>()) return st->access.warps;
    if (const auto* f = o.as<ir::Fill>()) return f->access.warps;
    return {};
  }

  // In a pair, the roles that issue tcgen05.cp/mma run in CTA 0 only (PAIR-ROLE-ISSUE: they
  // issue nothing else).
  void leaders() {
    leader_.assign(p_.roles.size(), false);
    for (const Item& it : items_)
      if (pair_ && it.async) leader_[static_cast<size_t>(it.role)] = true;
  }

  // ---- Dependences ---------------------------------------------------------------------------
  struct Access {
    int last_write = -1;
    bool write_carried = false;  // the last write was in the previous iteration
    std::vector<std::pair<int, bool>> reads;  // since the last write, (item, carried)
  };

  // Each item's buffers against what came before: the ops before the loop, the loop once (edges
  // within an iteration), the loop again (what an iteration leaves to the next: the same buffers'
  // histories, one iteration old), the ops after. Every read depends on the last write of each
  // buffer it overlaps, every write on that write and on the reads since.
  void dependences() {
    std::vector<Access> acc(buffers_.size());
    auto visit = [&](int i, bool second_pass) {
      const Item& it = items_[static_cast<size_t>(i)];
      for (const Use& u : it.uses)
        for (size_t b = 0; b < buffers_.size(); ++b) {
          if (!conflict(u.buffer, static_cast<int>(b))) continue;
          const Access& a = acc[b];
          // An edge an iteration leaves to the next is waited for that many iterations later: the
          // ring's stages for a ring tile (its copy comes round again), else 1.
          const Buffer& x = buffers_[b];
          const int ring = x.kind == Buffer::tile && tile_stages_.count(x.name) ? tile_stages_.at(x.name) : 1;
          auto edge = [&](int from, bool carried) {
            if (second_pass != carried) return;  // the first pass finds the edges within an iteration
            if (from == i && !carried) return;
            edges_.push_back({from, i, carried ? ring : 0});
          };
          // A write after reads waits for the reads (which waited for the write before them).
          if (a.last_write >= 0 && (!u.write || a.reads.empty())) edge(a.last_write, a.write_carried);
          if (u.write)
            for (auto [r, carried] : a.reads) edge(r, carried);
        }
      for (const Use& u : it.uses) {
        Access& a = acc[static_cast<size_t>(u.buffer)];
        if (u.write) {
          a.last_write = i;
          a.write_carried = false;
          a.reads.clear();
        } else {
          a.reads.push_back({i, false});
        }
      }
    };
    auto age = [&](bool loop_ops_only) {
      for (auto& a : acc) {
        if (a.last_write >= 0) a.write_carried = !loop_ops_only || items_[static_cast<size_t>(a.last_write)].where == Where::loop;
        for (auto& r : a.reads) r.second = !loop_ops_only || items_[static_cast<size_t>(r.first)].where == Where::loop;
      }
    };
    const int n = static_cast<int>(items_.size());
    for (int i = 0; i < n; ++i)
      if (items_[static_cast<size_t>(i)].where == Where::before) visit(i, false);
    for (int pass = 0; pass < 2; ++pass) {
      for (int i = 0; i < n; ++i)
        if (items_[static_cast<size_t>(i)].where == Where::loop) visit(i, pass == 1);
      age(true);
    }
    // After the loop everything recorded is of its last iteration (or before it): plain edges.
    for (auto& a : acc) {
      a.write_carried = false;
      for (auto& r : a.reads) r.second = false;
    }
    for (int i = 0; i < n; ++i)
      if (items_[static_cast<size_t>(i)].where == Where::after) visit(i, false);
  }

  // Whether the hardware or the planner orders the edge without a barrier.
  bool ordered(const Edge& e) const {
    const Item &f = items_[static_cast<size_t>(e.from)], &t = items_[static_cast<size_t>(e.to)];
    if (f.role != t.role) return false;
    // A store is run by the warps that hold its registers: those of the tmem_load that set them.
    // So is arithmetic (each thread on its own registers).
    auto on_registers = [](const Item& x) {
      const spec::OpKind k = x.op->kind;
      return k == spec::OpKind::store || k == spec::OpKind::math || k == spec::OpKind::read || k == spec::OpKind::reduce ||
             k == spec::OpKind::amax || k == spec::OpKind::quantize;
    };
    if (f.exec == Exec::threads && t.exec == Exec::threads) return warps(f.ir) == warps(t.ir) || on_registers(f) || on_registers(t);
    if (f.async && t.async && e.distance <= 1) {
      // §9.7.16.6.2: tcgen05.cp -> tcgen05.mma, tcgen05.mma -> tcgen05.mma with the same
      // accumulator (and shape: one mma op issues one shape per D).
      if (f.op->kind == spec::OpKind::copy && t.op->kind == spec::OpKind::mma) return e.distance == 0;
      if (f.op->kind == spec::OpKind::mma && t.op->kind == spec::OpKind::mma) return f.op->d.name == t.op->d.name;
    }
    return false;
  }

  // ---- Signals: one barrier per run of signalling ops of a role ------------------------------
  struct Barrier {
    std::string name;
    Signal kind = Signal::none;
    int role = -1;
    int stages = 1;
    int first_item = -1, after_item = -1;  // the run it signals: a TMA run's first load, the item the signal follows
    bool to_leader = false;  // a pair's arrivals on CTA 0's barrier, from both CTAs
  };

  void signals() {
    // The edges that need a barrier, and the ring of each signalling item's barrier: a TMA load's
    // tile's stages; the distance of the edges it leaves to later iterations.
    std::map<int, int> need;  // item -> stages
    std::stable_sort(edges_.begin(), edges_.end(), [](const Edge& a, const Edge& b) { return a.to < b.to; });
    for (const Edge& e : edges_) {
      if (ordered(e)) continue;
      sync_.push_back(e);
      int& st = need[e.from];
      st = std::max({st, 1, e.distance});
    }
    // Every TMA load completes on a barrier, waited for or not.
    for (int i = 0; i < static_cast<int>(items_.size()); ++i) {
      const Item& it = items_[static_cast<size_t>(i)];
      if (it.tma) need[i] = std::max(need[i], it.stages);
    }
    // A run of a role's signalling items of one kind with no wait between them shares a barrier
    // signalled after the last of them. TMA runs first: consecutive loads share one even where a
    // later one waits (its waits move before the run's first load, build(), so one expect_tx arms
    // the run's bytes).
    auto runs = [&](bool tx, const std::set<int>& waiting) {
      for (size_t r = 0; r < p_.roles.size(); ++r)
        for (Where w : {Where::before, Where::loop, Where::after}) {
          int open = -1;
          for (int i = 0; i < static_cast<int>(items_.size()); ++i) {
            const Item& it = items_[static_cast<size_t>(i)];
            if (it.role != static_cast<int>(r) || it.where != w) continue;
            const Signal kind = it.tma ? Signal::tx : it.async ? Signal::commit : Signal::arrive;
            if ((kind == Signal::tx) != tx) {
              open = -1;
              continue;
            }
            const auto ni = need.find(i);
            const Barrier* o = open >= 0 ? &bars_[static_cast<size_t>(open)] : nullptr;
            const bool joins = o && o->kind == kind && (tx ? ni != need.end() && o->stages == ni->second : !waiting.count(i));
            if (!joins) open = -1;
            if (ni == need.end()) {
              if (tx) open = -1;  // a TMA run is consecutive loads
              continue;
            }
            if (open < 0) {
              Barrier b;
              b.kind = kind;
              b.role = static_cast<int>(r);
              b.stages = w == Where::loop ? ni->second : 1;
              bars_.push_back(b);
              open = static_cast<int>(bars_.size() - 1);
            }
            Barrier& b = bars_[static_cast<size_t>(open)];
            if (b.first_item < 0) b.first_item = i;
            b.after_item = i;
            if (w == Where::loop) b.stages = std::max(b.stages, ni->second);
            signal_of_[i] = open;
          }
        }
    };
    runs(true, {});
    // Which items wait for something no earlier item of their role (in the same part) waited for
    // (an op need not wait again for what an earlier op of its role already waited for):
    // a TMA load's completion by its run's barrier, anything else by its own item. Those close the
    // commit and arrival runs.
    std::set<int> waiting;
    std::set<std::tuple<int, Where, int, int>> covered;  // role, part, TMA barrier or -1 - item, distance
    for (const Edge& e : sync_) {
      const Item &f = items_[static_cast<size_t>(e.from)], &t = items_[static_cast<size_t>(e.to)];
      const int key = f.tma ? signal_of_.at(e.from) : -1 - e.from;
      if (covered.insert({t.role, t.where, key, e.distance}).second) waiting.insert(e.to);
    }
    runs(false, waiting);
    // Names: the signalling role and the barrier's place among its own.
    std::map<int, int> count;
    for (auto& b : bars_) {
      const char* what = b.kind == Signal::tx ? "full" : b.kind == Signal::commit ? "done" : "ready";
      b.name = p_.roles[static_cast<size_t>(b.role)].name + "_" + what + std::to_string(count[b.role]++);
    }
  }

  // ---- The roles' nodes ----------------------------------------------------------------------
  void build() {
    const int n = static_cast<int>(items_.size());
    // Waits before each item, per barrier the largest lag (distance) and whether any edge is
    // within the iteration.
    std::map<int, std::map<int, int>> waits;  // item -> barrier -> lag
    std::map<int, std::set<int>> post_signal;  // role -> barriers signalled after its loop
    std::map<int, std::map<int, bool>> pre_wait;  // role -> barrier waited before its loop
    pair_barriers();
    for (const Edge& e : sync_) {
      const Item &f = items_[static_cast<size_t>(e.from)], &t = items_[static_cast<size_t>(e.to)];
      int b = signal_of_.at(e.from);
      if (twin_[static_cast<size_t>(b)] >= 0 && !leader_[static_cast<size_t>(t.role)]) b = twin_[static_cast<size_t>(b)];
      if (f.where == Where::loop && t.where == Where::after) {
        // Waited for after the loop: the loop's role signals once more, after its last iteration.
        post_signal[f.role].insert(b);
        waits[e.to][-1 - b] = 0;
      } else if (f.where == Where::before && t.where == Where::loop) {
        pre_wait[t.role][b] = true;
      } else {
        auto& lag = waits[e.to][b];
        lag = std::max(lag, e.distance);
      }
    }
    // A TMA run's loads wait, all of them, before its first (one expect_tx arms the run).
    for (int i = 0; i < n; ++i) {
      const auto sig = signal_of_.find(i);
      if (!items_[static_cast<size_t>(i)].tma || sig == signal_of_.end()) continue;
      const int first = bars_[static_cast<size_t>(sig->second)].first_item;
      if (first == i || !waits.count(i)) continue;
      for (const auto& [b, lag] : waits[i]) waits[first][b] = std::max(waits[first][b], lag);
      waits.erase(i);
    }
    for (const auto& b : bars_) k_.barriers.push_back({b.name, arrivals(b), b.stages});
    for (const auto& [r, bs] : post_signal)
      for (int b : bs) k_.barriers.push_back({bars_[static_cast<size_t>(b)].name + "_last", arrivals(bars_[static_cast<size_t>(b)]), 1});

    std::vector<ir::Role> roles(p_.roles.size());
    for (size_t r = 0; r < p_.roles.size(); ++r) {
      const spec::Role& sr = p_.roles[r];
      ir::Role& x = roles[r];
      x.name = sr.name;
      x.first_warp = sr.warps.empty() ? 0 : *std::min_element(sr.warps.begin(), sr.warps.end());
      x.warps = static_cast<int>(sr.warps.size());
      x.single_thread = true;
      for (const auto& it : items_)
        if (it.role == static_cast<int>(r) && it.exec == Exec::threads) x.single_thread = false;
      if (x.single_thread) x.warps = 1;
      x.leader_cta_only = leader_[r];
    }
    ir::Loop loop;
    if (loop_) {
      loop.k_param = loop_->over.name;
      loop.block = loop_->block;
      loop.trips = loop_->trips;
    }
    std::vector<ir::Loop> loops(p_.roles.size(), loop);
    std::vector<bool> in_loop(p_.roles.size(), false), loop_placed(p_.roles.size(), false);
    for (int i = 0; i < n; ++i)
      if (items_[static_cast<size_t>(i)].where == Where::loop) in_loop[static_cast<size_t>(items_[static_cast<size_t>(i)].role)] = true;
    auto place_loop = [&](int r) {
      if (!in_loop[static_cast<size_t>(r)] || loop_placed[static_cast<size_t>(r)]) return;
      loop_placed[static_cast<size_t>(r)] = true;
      // Waits for what the ops before the loop left to it, then the loop, then the signals of
      // what follows it.
      for (const auto& [b, _] : pre_wait[r]) roles[static_cast<size_t>(r)].nodes.push_back(node(wait_op(b, 0)));
      ir::Node ln;
      ln.is_loop = true;
      ln.op.body = ir::Wait{};
      ln.op.ptr = loop_->ptr;
      ln.loop = std::move(loops[static_cast<size_t>(r)]);
      roles[static_cast<size_t>(r)].nodes.push_back(std::move(ln));
      for (int b : post_signal[r]) roles[static_cast<size_t>(r)].nodes.push_back(node(signal_op(b, true)));
    };
    // A role waits for a barrier's phase once in each part of the kernel (and once per iteration
    // in the loop): the ops after the first that waited find it complete.
    std::set<std::tuple<int, Where, int, int>> done;  // role, part, barrier, lag
    for (int i = 0; i < n; ++i) {
      const Item& it = items_[static_cast<size_t>(i)];
      const int r = it.role;
      if (it.where == Where::after) place_loop(r);
      std::vector<ir::Op> ops;
      for (const auto& [b, lag] : waits[i])
        if (done.insert({r, it.where, b, lag}).second)
          ops.push_back(b < 0 ? wait_last(-1 - b) : wait_op(b, it.where == Where::loop ? lag : 0));
      // A TMA load's barrier: armed by the run's first load (expect_tx covers the run's bytes).
      ir::Op o = it.ir;
      const auto sig = signal_of_.find(i);
      if (it.tma) {
        // Every TMA load completes on a barrier: its run's, or one of its own that nobody waits for
        // (none: its data is read by no op).
        if (sig != signal_of_.end()) {
          const Barrier& b = bars_[static_cast<size_t>(sig->second)];
          o.as<ir::Load>()->barrier = {b.name, it.op->ptr};
          if (!armed_.count(sig->second)) {
            armed_.insert(sig->second);
            ir::Op ex;
            ex.ptr = it.op->ptr;
            ir::ExpectTx& tx = ex.body.emplace<ir::ExpectTx>();
            tx.barrier = {b.name, it.op->ptr};
            tx.leader_only = pair_;  // CTA 0 arms its barrier for both CTAs' bytes
            ops.push_back(ex);
          }
        }
      }
      ops.push_back(o);
      for (ir::Op m : it.more) {
        // A placed load's further pieces complete on the barrier of its first (the run's expect_tx
        // counts the bytes of the loads that follow it on that barrier).
        if (ir::Load* l = m.as<ir::Load>(); l && it.tma) l->barrier = o.as<ir::Load>()->barrier;
        ops.push_back(std::move(m));
      }
      if (sig != signal_of_.end() && !it.tma && bars_[static_cast<size_t>(sig->second)].after_item == i) {
        ops.push_back(signal_op(sig->second, false));
        if (twin_[static_cast<size_t>(sig->second)] >= 0) ops.push_back(signal_op(twin_[static_cast<size_t>(sig->second)], false));
      }
      for (auto& x : ops) {
        if (it.where == Where::loop) loops[static_cast<size_t>(r)].body.push_back(std::move(x));
        else roles[static_cast<size_t>(r)].nodes.push_back(node(std::move(x)));
      }
    }
    for (size_t r = 0; r < roles.size(); ++r) place_loop(static_cast<int>(r));
    k_.roles.clear();
    for (auto& r : roles)
      if (!r.nodes.empty()) k_.roles.push_back(std::move(r));
  }

  int threads(int role) const { return 32 * static_cast<int>(p_.roles[static_cast<size_t>(role)].warps.size()); }
  // The arrivals that complete a phase: every thread of the signalling role, of both CTAs when
  // they arrive on CTA 0's barrier; one commit or expect_tx.
  int arrivals(const Barrier& b) const { return b.kind == Signal::arrive ? threads(b.role) * (b.to_leader ? 2 : 1) : 1; }

  // A pair's barriers by who waits on them. An arrival that CTA 0's MMA issuer waits for goes to
  // CTA 0's barrier from both CTAs; when a role of both CTAs waits for the same arrivals too, each
  // CTA's threads also arrive on a barrier of their own CTA (the twin, "_local"), since a thread
  // waits only on its own CTA's barrier. A TMA barrier is waited on in CTA 0 only: CTA 1's copy
  // of it receives no bytes (the structure rules keep every other wait out).
  void pair_barriers() {
    twin_.assign(bars_.size(), -1);
    if (!pair_) return;
    const size_t n = bars_.size();
    std::vector<bool> by_leader(n, false), by_both(n, false);
    for (const Edge& e : sync_) {
      const size_t b = static_cast<size_t>(signal_of_.at(e.from));
      (leader_[static_cast<size_t>(items_[static_cast<size_t>(e.to)].role)] ? by_leader : by_both)[b] = true;
    }
    for (size_t b = 0; b < n; ++b) {
      if (bars_[b].kind == Signal::tx && by_both[b])
        throw std::logic_error("a pair's TMA barrier " + bars_[b].name + " waited on by a role of both CTAs");
      if (bars_[b].kind != Signal::arrive || !by_leader[b]) continue;
      bars_[b].to_leader = true;
      if (!by_both[b]) continue;
      Barrier own = bars_[b];
      own.name += "_local";
      own.to_leader = false;
      twin_[b] = static_cast<int>(bars_.size());
      bars_.push_back(own);
      twin_.push_back(-1);
    }
  }

  static ir::Node node(ir::Op o) {
    ir::Node n;
    n.op = std::move(o);
    return n;
  }
  // A wait for the phase of iteration kb - lag. A ring of S stages holds iteration kb - S's phase
  // in stage kb % S, one phase before kb's: the flipped parity, which a fresh barrier passes at
  // once (so the first S iterations need no skip).
  ir::Op wait_op(int b, int lag) const {
    ir::Op o;
    o.ptr = "/program/roles";
    o.body = ir::Wait{{bars_[static_cast<size_t>(b)].name, o.ptr}};
    if (lag && lag == bars_[static_cast<size_t>(b)].stages) o.phase.flip = true;
    else if (lag == 1) o.phase.lag = 1;
    else if (lag) throw std::logic_error("a wait " + std::to_string(lag) + " iterations back on a ring of " +
                                         std::to_string(bars_[static_cast<size_t>(b)].stages));
    return o;
  }
  ir::Op wait_last(int b) const {
    ir::Op o = wait_op(b, 0);
    o.as<ir::Wait>()->barrier.name += "_last";
    return o;
  }
  ir::Op signal_op(int b, bool last) const {
    const Barrier& x = bars_[static_cast<size_t>(b)];
    ir::Op o;
    o.ptr = "/program/roles";
    const ir::Ref bar{x.name + (last ? "_last" : ""), o.ptr};
    if (x.kind == Signal::commit) {
      o.body.emplace<ir::Commit>().barrier = bar;  // only arrivals go to CTA 0's barrier (pair_barriers)
    } else {
      ir::Arrive& a = o.body.emplace<ir::Arrive>();
      a.barrier = bar;
      a.to_leader = x.to_leader;
    }
    return o;
  }

  const spec::Program& p_;
  ir::Kernel& k_;
  std::map<std::string, int> role_index_;
  std::map<std::string, int> tile_stages_;
  std::map<std::string, ir::ResolvedView> views_;
  const spec::Op* loop_ = nullptr;
  std::vector<Item> items_;
  std::vector<Buffer> buffers_;
  std::map<std::string, int> named_;
  std::vector<Edge> edges_, sync_;
  std::vector<Barrier> bars_;
  std::map<int, int> signal_of_;
  std::set<int> armed_;
  const bool pair_;
  std::vector<bool> leader_;  // per role: it runs in CTA 0 of a pair only (it issues tcgen05.cp/mma)
  std::vector<int> twin_;     // per barrier: its own CTA's twin of a pair's arrivals, or -1
};

}  // namespace

void pipeline(const spec::Program& p, ir::Kernel& k) { Pipeliner(p, k).run(); }

}  // namespace ptxgen::lower
