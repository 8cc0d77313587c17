// The machine: global memory, operands and addresses, shared and tensor memory, the race
// bookkeeping, mbarriers, scheduling and deadlocks (exec.cpp: the interpreter; collective.cpp: warp
// collectives; tma.cpp: TMA and the completion of asynchronous operations); see sim.hpp.
#include "machine.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "num.hpp"

namespace ksim {

std::string hex(uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}
const bool kTrace = std::getenv("KSIM_TRACE") != nullptr;  // debugging: asynchronous operations and arrivals on stderr

// ---- Global -----------------------------------------------------------------------------------
uint64_t Global::alloc(size_t bytes, uint8_t fill) {
  const uint64_t a = next_;
  bufs_[a] = std::vector<uint8_t>(bytes, fill);
  next_ += (bytes + 0xFFFF) / 0x10000 * 0x10000 + 0x10000;  // a gap after each buffer
  return a;
}
std::vector<uint8_t>& Global::at(uint64_t address) {
  auto it = bufs_.find(address);
  if (it == bufs_.end()) throw Error("no global buffer at " + std::to_string(address));
  return it->second;
}
void Global::count_writes(uint64_t address) { counts_[address].assign(at(address).size(), 0); }
void Global::wrote(uint64_t address, size_t bytes) {
  if (counts_.empty()) return;
  auto it = counts_.upper_bound(address);
  if (it == counts_.begin()) return;
  --it;
  if (address - it->first + bytes > it->second.size()) return;
  for (size_t i = 0; i < bytes; ++i) {
    uint8_t& c = it->second[address - it->first + i];
    if (c < 255) ++c;
  }
}
const std::vector<uint8_t>* Global::writes(uint64_t address) const {
  auto it = counts_.find(address);
  return it == counts_.end() ? nullptr : &it->second;
}
uint8_t* Global::find(uint64_t address, size_t bytes) {
  auto it = bufs_.upper_bound(address);
  if (it == bufs_.begin()) return nullptr;
  --it;
  if (address - it->first + bytes > it->second.size()) return nullptr;
  return it->second.data() + (address - it->first);
}


Machine::Machine(const Kernel& kk, const Launch& l, Global& g, const Options& o, Stats& s)
    : k(kk), launch(l), global(g), opt(o), stats(s), policy_(policy_of(o.schedule)), rng_(o.schedule) {
  yield_in_ = next_yield();
  stats.warp_instructions.assign(l.threads / 32, 0);
  stats.warp_mbarrier_waits.assign(l.threads / 32, 0);
  stats.warp_bar_waits.assign(l.threads / 32, 0);
  param_maps.assign(k.params.size(), nullptr);
  for (size_t i = 0; i < k.params.size(); ++i) {
    const Param* p = nullptr;
    for (const auto& x : l.params)
      if (x.name == k.params[i].name) p = &x;
    if (!p) throw Error("launch: no value for parameter " + k.params[i].name);
    if (p->is_tensor_map != k.params[i].tensor_map)
      throw Error("launch: parameter " + p->name + (p->is_tensor_map ? " is not a tensor map" : " must be a tensor map"));
    if (p->is_tensor_map) param_maps[i] = &p->map;
  }
  // A try_wait whose failure only loops back to it (`@!p bra self`, or `@p bra out; bra self`)
  // blocks the thread until the barrier moves on.
  spin_.assign(k.code.size(), 0);
  for (size_t i = 0; i + 1 < k.code.size(); ++i) {
    const Ins& a = k.code[i];
    const Ins& b = k.code[i + 1];
    if (a.op != Op::mbar_try_wait || b.op != Op::bra || b.guard != static_cast<int32_t>(a.o[0].r)) continue;
    if (b.guard_neg && b.o[0].r == i) spin_[i] = 1;
    if (!b.guard_neg && i + 2 < k.code.size() && k.code[i + 2].op == Op::bra && k.code[i + 2].guard < 0 && k.code[i + 2].o[0].r == i)
      spin_[i] = 1;
  }
}

// ---- messages ---------------------------------------------------------------------------------
std::string Machine::where(const Thread& t) const {
  const Cta& c = ctas[t.cta];
  std::ostringstream s;
  s << "CTA (" << c.ctaid[0] << "," << c.ctaid[1] << "," << c.ctaid[2] << ")";
  if (ctas.size() > 1) s << " rank " << c.rank;
  s << " thread " << t.tid << " (warp " << t.tid / 32 << ", lane " << t.tid % 32 << ")";
  if (t.pc < k.code.size()) s << " at ptx line " << k.code[t.pc].line << " `" << k.text[t.pc] << "`";
  return s.str();
}
void Machine::fail(const Thread* t, const std::string& why) const {
  throw Error(why + (t ? "; " + where(*t) : std::string()));
}
void Machine::fail_async(const Async& a, const std::string& why) const {
  const size_t i = static_cast<size_t>(a.ins - k.code.data());
  throw Error(why + "; the asynchronous operation issued at ptx line " + std::to_string(a.ins->line) + " `" + k.text[i] + "`");
}

// ---- operands ---------------------------------------------------------------------------------
uint64_t Machine::special(const Thread& t, uint32_t id) const {
  const Cta& c = ctas[t.cta];
  switch (id) {
    case sp_tid_x: return t.tid;
    case sp_tid_y:
    case sp_tid_z: return 0;
    case sp_ntid_x: return launch.threads;
    case sp_ntid_y:
    case sp_ntid_z: return 1;
    case sp_ctaid_x: return c.ctaid[0];
    case sp_ctaid_y: return c.ctaid[1];
    case sp_ctaid_z: return c.ctaid[2];
    case sp_nctaid_x: return launch.grid[0];
    case sp_nctaid_y: return launch.grid[1];
    case sp_nctaid_z: return launch.grid[2];
    case sp_cluster_ctarank: return c.rank;
    case sp_cluster_nctarank: return ctas.size();
    case sp_cluster_ctaid_x: return c.cluster_ctaid[0];
    case sp_cluster_ctaid_y: return c.cluster_ctaid[1];
    case sp_cluster_ctaid_z: return c.cluster_ctaid[2];
    case sp_cluster_nctaid_x: return launch.cluster[0];
    case sp_cluster_nctaid_y: return launch.cluster[1];
    case sp_cluster_nctaid_z: return launch.cluster[2];
    case sp_clusterid_x: return cluster_id_[0];
    case sp_clusterid_y: return cluster_id_[1];
    case sp_clusterid_z: return cluster_id_[2];
    // %nclusterid: clusters in the grid along each dimension (§10.12).
    case sp_nclusterid_x: return launch.grid[0] / launch.cluster[0];
    case sp_nclusterid_y: return launch.grid[1] / launch.cluster[1];
    case sp_nclusterid_z: return launch.grid[2] / launch.cluster[2];
    case sp_laneid: return t.tid % 32;
    case sp_warpid: return t.tid / 32;
    case sp_smem_symbol: return launch.smem_symbol;
    default:
      if (id >= sp_param0 && id < sp_param0 + k.params.size()) return 0x7F0000000000ull + uint64_t{id - sp_param0} * 0x1000;
      fail(&t, "unknown special register");
  }
}

uint64_t Machine::val(const Thread& t, const Opnd& o) const {
  switch (o.kind) {
    case Opnd::reg: return o.neg ? !reg(t, o.r) : reg(t, o.r);
    case Opnd::immediate: return static_cast<uint64_t>(o.imm);
    case Opnd::special: return special(t, o.r);
    default: fail(&t, "operand is not a value");
  }
}

uint64_t Machine::addr_of(const Thread& t, const Opnd& o) const {
  if (o.kind != Opnd::mem) fail(&t, "expected an address operand");
  uint64_t a = static_cast<uint64_t>(o.imm);
  if (o.r != kNoReg) a += reg(t, o.r);
  if (o.neg) a += launch.smem_symbol;
  return a;
}

std::pair<uint32_t, uint32_t> Machine::shared(const Thread& t, uint64_t a, bool cluster, uint32_t bytes) const {
  if (a >> 32) fail(&t, "shared address " + hex(a) + " beyond 32 bits");
  uint32_t cta = t.cta, off = static_cast<uint32_t>(a);
  if (off >> kClusterTagShift) {
    if (!cluster) fail(&t, "a shared::cluster address " + hex(a) + " where a shared::cta address is required");
    cta = (off >> kClusterTagShift) - 1;
    off &= (1u << kClusterTagShift) - 1;
    if (cta >= ctas.size()) fail(&t, "shared::cluster address " + hex(a) + " names no CTA of the cluster");
  }
  const Cta& c = ctas[cta];
  if (off < c.smem_lo || uint64_t{off} + bytes > c.smem.size())
    fail(&t, "shared-memory access at " + hex(off) + " (" + std::to_string(bytes) + " bytes) outside the CTA's allocation [" +
                 hex(c.smem_lo) + ", " + hex(c.smem.size()) + ")");
  return {cta, off};
}

uint8_t* Machine::smem_ptr(uint32_t cta, uint32_t off, uint32_t bytes, const Async* a, const Thread* t) const {
  const Cta& c = ctas[cta];
  if (off < c.smem_lo || uint64_t{off} + bytes > c.smem.size()) {
    const std::string why = "shared-memory access at " + hex(off) + " (" + std::to_string(bytes) +
                            " bytes) outside the CTA's allocation [" + hex(c.smem_lo) + ", " + hex(c.smem.size()) + ")";
    if (a) fail_async(*a, why);
    fail(t, why);
  }
  return const_cast<uint8_t*>(c.smem.data()) + off;
}

uint32_t& Machine::tcell(uint32_t cta, uint32_t lane, uint32_t col, const Thread* t, const Async* a) {
  Cta& c = ctas[cta];
  if (lane >= kLanes || col >= kColumns || !c.allocated[col]) {
    const std::string why = "tensor-memory access at lane " + std::to_string(lane) + ", column " + std::to_string(col) +
                            (lane >= kLanes || col >= kColumns ? " (outside tensor memory)" : " (not allocated)") +
                            (ctas.size() > 1 ? " of CTA rank " + std::to_string(cta) : "");
    if (a) fail_async(*a, why);
    fail(t, why);
  }
  return c.tmem[lane * kColumns + col];
}

// ---- race bookkeeping ---------------------------------------------------------------------------
void Machine::check_region(const Region& r, const Thread* t, const char* what) {
  if (!opt.race_checks) return;
  Cta& c = ctas[r.cta];
  const auto& w = r.tmem ? c.tm_w : c.sm_w;
  const auto& rd = r.tmem ? c.tm_r : c.sm_r;
  const auto& line = r.tmem ? c.tm_line : c.sm_line;
  const auto& wline = r.tmem ? c.tm_wline : c.sm_wline;
  const auto& rline = r.tmem ? c.tm_rline : c.sm_rline;
  for (uint32_t u : r.units) {
    if (w[u] || (r.write && rd[u])) {
      std::ostringstream s;
      s << "race: " << what << " " << (r.write ? "writes" : "reads") << " ";
      if (r.tmem) s << "tensor memory lane " << u / kColumns << ", column " << u % kColumns;
      else s << "shared memory at " << hex(uint64_t{u} * 16);
      if (w[u] && r.write && rd[u])  // a write over cells in flight both ways: name both
        s << " while an asynchronous operation issued at ptx line " << wline[u] << " writes it and one issued at ptx line "
          << rline[u] << " reads it (no wait for their completion)";
      else
        s << " while an asynchronous operation issued at ptx line " << (w[u] ? wline[u] : line[u]) << (w[u] ? " writes" : " reads")
          << " it (no wait for its completion)";
      fail(t, s.str());
    }
  }
}
void Machine::shared_written(const Thread& t, uint32_t cta, uint32_t off, uint32_t bytes, uint32_t line, const char* what) {
  if (!opt.race_checks) return;
  Region r{cta, true, false, {}};
  for (uint32_t u = off / 16; u <= (off + bytes - 1) / 16; ++u) r.units.push_back(u);
  check_region(r, &t, what);
  // A generic-proxy write, unordered for the async proxy until a fence.proxy.async.
  Cta& c = ctas[cta];
  for (uint32_t u : r.units) {
    if (!c.sm_generic[u] || c.sm_generic_cta[u] != t.cta) ctas[t.cta].unfenced.emplace_back(cta, u);
    c.sm_generic[u] = line;
    c.sm_generic_cta[u] = static_cast<uint8_t>(t.cta);
  }
}
void Machine::hold(Async& a, Region&& r) {
  if (!opt.race_checks) return;
  Cta& c = ctas[r.cta];
  // The async proxy reads shared memory the generic proxy wrote: a fence.proxy.async must order
  // the write before it (§9.7.13.4; e.g. st.shared staging then a TMA store, or plain loads into a
  // tile then tcgen05.mma), executed after the write by a thread of the writer's CTA.
  if (!r.tmem && !r.write)
    for (uint32_t u : r.units)
      if (c.sm_generic[u]) {
        // The writer by its line: st.shared, or a warp's stmatrix.
        const char* writer = "st.shared";
        for (const Ins& i : k.code)
          if (i.line == c.sm_generic[u] && i.op == Op::stmatrix) writer = "stmatrix";
        fail_async(a, "race: the async proxy reads shared memory at " + hex(uint64_t{u} * 16) + " that " + writer + " at ptx line " +
                          std::to_string(c.sm_generic[u]) +
                          " wrote through the generic proxy, with no fence.proxy.async since (PTX ISA 9.7.13.4: proxies)");
      }
  auto& cnt = r.tmem ? (r.write ? c.tm_w : c.tm_r) : (r.write ? c.sm_w : c.sm_r);
  auto& line = r.tmem ? c.tm_line : c.sm_line;
  auto& wline = r.tmem ? c.tm_wline : c.sm_wline;
  auto& rline = r.tmem ? c.tm_rline : c.sm_rline;
  for (uint32_t u : r.units) {
    ++cnt[u];
    line[u] = a.ins->line;
    (r.write ? wline : rline)[u] = a.ins->line;
  }
  a.regions.push_back(std::move(r));
}
void Machine::trace_issue(const Async& a) const {
  if (kTrace) std::fprintf(stderr, "issue kind %d line %u cta %u v0 %lx v1 %lx\n", a.kind, a.ins->line, a.cta, (unsigned long)a.v[0], (unsigned long)a.v[1]);
}
void Machine::release(Async& a) {
  for (const Region& r : a.regions) {
    Cta& c = ctas[r.cta];
    auto& cnt = r.tmem ? (r.write ? c.tm_w : c.tm_r) : (r.write ? c.sm_w : c.sm_r);
    for (uint32_t u : r.units) --cnt[u];
  }
  a.regions.clear();
}

// ---- mbarriers (PTX ISA 9.1 §9.7.13.15) --------------------------------------------------------
Mbar& Machine::mbar(const Thread* t, uint32_t cta, uint32_t off) {
  auto it = ctas[cta].mbars.find(off);
  if (it == ctas[cta].mbars.end()) fail(t, "use of an uninitialized mbarrier at shared " + hex(off));
  return it->second;
}

void Machine::wake(uint32_t i) {
  Thread& t = threads[i];
  t.st = Thread::ready;
  if (!t.queued) {
    t.queued = true;
    runnable_.push_back(i);
  }
}

// An arrive-on (§9.7.13.15.7) with `tx` expected (arrive.expect_tx) or completed (negative: complete_tx):
// the phase completes when the pending arrivals and the tx-count are both zero (§9.7.13.15.6).
void Machine::mbar_arrive(uint32_t cta, uint32_t off, uint32_t count, int64_t tx, const Thread* t, const Async* a) {
  auto it = ctas[cta].mbars.find(off);
  if (it == ctas[cta].mbars.end()) {
    const std::string why = "arrive on an uninitialized mbarrier at shared " + hex(off);
    if (a) fail_async(*a, why);
    fail(t, why);
  }
  Mbar& m = it->second;
  if (opt.race_checks) {  // order.cpp
    mbar_used(m, cta, off, t, a);
    if (t || (a && a->kind == Async::commit)) m.rel = std::max(m.rel, stats.instructions);
  }
  m.tx += tx;
  if (count > m.pending) {
    const std::string why = "more arrivals than the mbarrier at shared " + hex(off) + " expects in its phase";
    if (a) fail_async(*a, why);
    fail(t, why);
  }
  m.pending -= count;
  if (m.tx < -((1 << 20) - 1) || m.tx > (1 << 20) - 1) fail(t, "mbarrier tx-count out of range");
  if (kTrace) std::fprintf(stderr, "  arrive cta %u off %x count %u tx %ld -> pending %u tx %ld phase %lu\n", cta, off, count, (long)tx, m.pending, (long)m.tx, (unsigned long)m.phase);
  if (m.pending == 0 && m.tx == 0) {
    ++m.phase;
    m.pending = m.expected;
    for (uint32_t w : m.waiters) wake(w);
    m.waiters.clear();
  }
}

// ---- scheduling -------------------------------------------------------------------------------------
void Machine::deadlock() const {
  std::ostringstream s;
  s << "deadlock: no thread can proceed and no asynchronous operation is in flight";
  size_t shown = 0, exited = 0;
  for (size_t i = 0; i < threads.size();) {
    const Thread& t = threads[i];
    if (t.st == Thread::exited) {
      ++exited, ++i;
      continue;
    }
    size_t j = i + 1;
    while (j < threads.size() && threads[j].cta == t.cta && threads[j].tid / 32 == t.tid / 32 && threads[j].st == t.st &&
           threads[j].pc == t.pc)
      ++j;
    if (shown++ < 12) {
      s << "\n  " << where(t);
      if (j - i > 1) s << " and the next " << (j - i - 1) << " lane(s)";
      switch (t.st) {
        case Thread::at_mbar: {
          const Mbar& m = ctas[t.wait_cta].mbars.at(t.wait_addr);
          s << ": waits for the phase of parity " << t.wait_parity << " of the mbarrier at shared " << hex(t.wait_addr)
            << " (its current phase " << m.phase << " has parity " << (m.phase & 1) << ", " << m.pending << " of "
            << m.expected << " arrivals pending, tx-count " << m.tx << ")";
          break;
        }
        case Thread::at_bar: {
          const Cta::NamedBar& b = ctas[t.cta].bars[t.bar_id];
          s << ": waits at bar.sync " << t.bar_id << " (" << b.arrived << " of " << b.expected << " threads arrived)";
          break;
        }
        case Thread::at_bulk: s << ": waits at cp.async.bulk.wait_group"; break;
        case Thread::at_cluster: s << ": waits at barrier.cluster.wait"; break;
        case Thread::at_collective: s << ": waits for the rest of its warp at a .sync.aligned instruction"; break;
        case Thread::at_wgmma:
        case Thread::at_setmaxnreg: s << wg_blocked(t); break;
        default: s << ": ready"; break;
      }
    }
    i = j;
  }
  if (shown > 12) s << "\n  ... " << (shown - 12) << " more groups";
  s << "\n  (" << exited << " thread(s) exited)";
  throw Error(s.str());
}

void Machine::run_cluster(const std::array<uint32_t, 3>& cid) {
  cluster_id_ = cid;
  const uint32_t n = launch.cluster[0] * launch.cluster[1] * launch.cluster[2];
  ctas.assign(n, Cta{});
  const uint32_t smem_size = launch.smem_symbol + launch.dynamic_smem;
  for (uint32_t r = 0; r < n; ++r) {
    Cta& c = ctas[r];
    c.rank = r;
    c.cluster_ctaid = {r % launch.cluster[0], r / launch.cluster[0] % launch.cluster[1], r / (launch.cluster[0] * launch.cluster[1])};
    for (int d = 0; d < 3; ++d) c.ctaid[static_cast<size_t>(d)] = cid[static_cast<size_t>(d)] * launch.cluster[static_cast<size_t>(d)] + c.cluster_ctaid[static_cast<size_t>(d)];
    c.smem.assign(smem_size, 0xBD);  // shared memory starts as garbage
    c.smem_lo = launch.smem_symbol;
    if (opt.race_checks) {
      c.sm_w.assign(smem_size / 16 + 1, 0);
      c.sm_r.assign(smem_size / 16 + 1, 0);
      c.sm_line.assign(smem_size / 16 + 1, 0);
      c.sm_wline.assign(smem_size / 16 + 1, 0);
      c.sm_rline.assign(smem_size / 16 + 1, 0);
      c.sm_generic.assign(smem_size / 16 + 1, 0);
      c.sm_generic_cta.assign(smem_size / 16 + 1, 0);
      c.unfenced.clear();
      c.tm_w.assign(kLanes * kColumns, 0);
      c.tm_r.assign(kLanes * kColumns, 0);
      c.tm_line.assign(kLanes * kColumns, 0);
      c.tm_wline.assign(kLanes * kColumns, 0);
      c.tm_rline.assign(kLanes * kColumns, 0);
      c.tc_w.assign(kLanes * kColumns, TcRec{});
      c.tc_r.assign(kLanes * kColumns, TcRec{});
    }
  }
  threads.assign(size_t{n} * launch.threads, Thread{});
  regs.assign(threads.size() * k.slots, 0);
  defined_.assign(threads.size() * k.slots, 0);
  warp_arrived_.assign(threads.size() / 32, 0);
  cluster_arrived_ = 0;
  cluster_phase_ = 0;
  cluster_rel_ = 0;
  cluster_waiters_.clear();
  async.clear();
  runnable_.clear();
  wg_setup();
  for (size_t i = 0; i < threads.size(); ++i) {
    Thread& t = threads[i];
    t.cta = static_cast<uint32_t>(i / launch.threads);
    t.tid = static_cast<uint32_t>(i % launch.threads);
    t.r = regs.data() + i * k.slots;
    t.d = defined_.data() + i * k.slots;
    t.queued = true;
    runnable_.push_back(static_cast<uint32_t>(i));
  }
  for (;;) {
    while (!runnable_.empty()) {
      if (policy_ == Policy::early || policy_ == Policy::lag) complete_early(true);
      else if (policy_ == Policy::random && rng_() % 4 == 0) complete_early(false);
      Thread& t = threads[pick()];
      t.queued = false;
      if (t.st == Thread::ready) run_thread(t);
    }
    if (!async.empty()) {  // nothing can run: the oldest asynchronous operation completes,
      // but a TMA store only when nothing else is in flight. No thread waits for a store but
      // through its bulk group (cp.async.bulk.wait_group[.read], §9.7.9.27.2.2), so a store stays
      // in flight, reading shared memory, for as long as anything else can make progress: across a
      // persistent CTA's next main loop too, where the loads it waits for complete first. A kernel
      // that rewrites a staging buffer without waiting for the store that reads it fails at once.
      size_t j = 0;
      while (j < async.size() && async[j].kind == Async::tma_store) ++j;
      if (j == async.size()) j = 0;
      Async a = std::move(async[j]);
      async.erase(async.begin() + static_cast<std::ptrdiff_t>(j));
      complete(a);
      continue;
    }
    bool all = true;
    for (const auto& t : threads) all = all && t.st == Thread::exited;
    if (all) break;
    deadlock();
  }
  wg_finish();
  for (const Cta& c : ctas)
    if (!c.allocations.empty())
      throw Error("CTA rank " + std::to_string(c.rank) + " exits with tensor memory allocated (PTX ISA 9.7.16.7.1: all of it must be deallocated)");
  stats.ctas += n;
}

Policy policy_of(uint64_t schedule) {
  static const Policy turn[] = {Policy::random, Policy::early, Policy::reverse, Policy::lifo, Policy::lag};
  return schedule == 0 ? Policy::fixed : turn[(schedule - 1) % 5];
}
const char* policy_name(Policy p) {
  switch (p) {
    case Policy::fixed: return "fixed";
    case Policy::random: return "random";
    case Policy::early: return "early";
    case Policy::reverse: return "reverse";
    case Policy::lifo: return "lifo";
    case Policy::lag: return "lag";
  }
  return "?";
}

// The next thread to run, taken off the runnable queue.
uint32_t Machine::pick() {
  size_t i = 0;
  switch (policy_) {
    case Policy::fixed:
    case Policy::early: break;
    case Policy::random: i = static_cast<size_t>(rng_() % runnable_.size()); break;
    case Policy::lifo: i = runnable_.size() - 1; break;
    case Policy::reverse:
      for (size_t j = 1; j < runnable_.size(); ++j)
        if (runnable_[j] > runnable_[i]) i = j;
      break;
    case Policy::lag: {
      const uint32_t lagging = static_cast<uint32_t>(opt.schedule % ctas.size());
      for (size_t j = 0; j < runnable_.size(); ++j)
        if (threads[runnable_[j]].cta != lagging) {
          i = j;
          break;
        }
      break;
    }
  }
  const uint32_t id = runnable_[i];
  if (i == 0) runnable_.pop_front();
  else if (i + 1 == runnable_.size()) runnable_.pop_back();
  else if (policy_ == Policy::random) runnable_[i] = runnable_.back(), runnable_.pop_back();  // order is random anyway
  else runnable_.erase(runnable_.begin() + static_cast<std::ptrdiff_t>(i));
  return id;
}

// Instructions a thread runs before it yields to the scheduler (at an instruction boundary).
uint64_t Machine::next_yield() {
  switch (policy_) {
    case Policy::fixed:
    case Policy::lifo: return ~uint64_t{0};
    case Policy::random: return 1 + rng_() % 64;
    case Policy::early: return 1 + rng_() % 16;
    case Policy::reverse: return 64 + rng_() % 256;
    case Policy::lag: return 1 + rng_() % 64;
  }
  return ~uint64_t{0};
}

// Completes asynchronous operations before they must: every one (`all`, in issue order), or the
// oldest of the stream of a random one. A stream is what the ISA completes in order: a CTA's
// tcgen05.mma/cp/commit (a commit tracks the operations issued before it), a CTA's TMA stores (its
// threads' bulk async-groups), a CTA's wgmma; each TMA load is its own.
void Machine::complete_early(bool all) {
  if (async.empty()) return;
  if (all) {
    while (!async.empty()) {
      Async a = std::move(async.front());
      async.pop_front();
      complete(a);
    }
    return;
  }
  auto stream = [](const Async& a) {
    switch (a.kind) {
      case Async::mma:
      case Async::cp:
      case Async::commit: return 1;
      case Async::tma_store: return 2;
      case Async::wgmma: return 3;
      case Async::tma: return 0;
    }
    return 0;
  };
  size_t j = static_cast<size_t>(rng_() % async.size());
  const int s = stream(async[j]);
  if (s != 0)
    for (size_t i = 0; i < j; ++i)
      if (stream(async[i]) == s && async[i].cta == async[j].cta) {
        j = i;
        break;
      }
  Async a = std::move(async[j]);
  async.erase(async.begin() + static_cast<std::ptrdiff_t>(j));
  complete(a);
}

Stats run(const Kernel& k, const Launch& l, Global& g, const Options& o) {
  if (l.threads == 0 || l.threads % 32) throw Error("launch: the block must be whole warps");
  if (k.reqntid && k.reqntid != l.threads) throw Error("launch: block of " + std::to_string(l.threads) + " threads, the kernel requires " + std::to_string(k.reqntid));
  for (int d = 0; d < 3; ++d) {
    const auto i = static_cast<size_t>(d);
    if (l.cluster[i] == 0 || l.grid[i] % l.cluster[i]) throw Error("launch: the grid is not whole clusters");
    if (k.reqnctapercluster[0] && k.reqnctapercluster[i] != l.cluster[i]) throw Error("launch: cluster shape differs from .reqnctapercluster");
  }
  if (k.cta_group == 2 && l.cluster[0] % 2) throw Error("launch: .cta_group::2 needs CTA pairs along the cluster's x");
  Stats s;
  Machine m(k, l, g, o, s);
  for (uint32_t z = 0; z < l.grid[2] / l.cluster[2]; ++z)
    for (uint32_t y = 0; y < l.grid[1] / l.cluster[1]; ++y)
      for (uint32_t x = 0; x < l.grid[0] / l.cluster[0]; ++x) m.run_cluster({x, y, z});
  return s;
}

}  // namespace ksim
