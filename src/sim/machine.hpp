// The running state of one cluster (machine.cpp: threads, barriers, memories, TMA; tcgen05.cpp:
// the tensor-core operations).
#pragma once

#include <deque>
#include <random>
#include <unordered_map>

#include "internal.hpp"

namespace ksim {

constexpr uint32_t kLanes = 128, kColumns = 512;
// A shared::cluster address names its CTA in bits 24+ (rank + 1); below 2^24 it is the executing
// CTA's own shared::cta address (PTX ISA 9.1 §5.1.7: the shared::cta window lies inside the
// shared::cluster window).
constexpr uint32_t kClusterTagShift = 24;

inline uint64_t mask(int bits) { return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1; }
inline int64_t sext(uint64_t v, int bits) {
  if (bits >= 64) return static_cast<int64_t>(v);
  const uint64_t m = uint64_t{1} << (bits - 1);
  v &= mask(bits);
  return static_cast<int64_t>((v ^ m) - m);
}
std::string hex(uint64_t v);
extern const bool kTrace;

struct Mbar {
  uint32_t expected = 0, pending = 0;
  int64_t tx = 0;
  uint64_t phase = 0;  // completed phases: the current phase's parity is phase & 1
  std::vector<uint32_t> waiters;
  // Orderings (order.cpp, with the race checks): the time of the latest arrival by a thread or a
  // tcgen05.commit, what a waiter acquires; the mbarrier.init (its line, its thread + 1) and
  // whether that thread has released it to the cluster since (fence.mbarrier_init).
  uint64_t rel = 0;
  uint32_t init_line = 0, init_by = 0;
  bool published = true;
};

// The last tcgen05 access of a tensor-memory cell (order.cpp): its thread + 1 (0: none), ptx line,
// and the thread's tcgen05.fence::before_thread_sync and tcgen05.commit counts at that moment
// (commits: kNoCommit for tcgen05.ld/st, which no commit tracks).
struct TcRec {
  uint32_t by = 0, line = 0, nb = 0, nc = 0;
};
constexpr uint32_t kNoCommit = ~0u;

struct Cta {
  uint32_t rank = 0;
  std::array<uint32_t, 3> ctaid{0, 0, 0}, cluster_ctaid{0, 0, 0};
  std::vector<uint8_t> smem;  // the shared::cta window [0, symbol + dynamic bytes)
  uint32_t smem_lo = 0;       // the extern array's start: below it nothing is allocated
  std::unordered_map<uint32_t, Mbar> mbars;
  std::vector<uint32_t> tmem = std::vector<uint32_t>(kLanes * kColumns, 0xFFBADBADu);  // lane * 512 + column
  std::array<uint8_t, kColumns> allocated{};
  std::vector<std::pair<uint32_t, uint32_t>> allocations;  // (column, columns)
  bool relinquished = false;
  // The collector buffer of A (§9.7.16.10.9.1): valid after a .collector::a::fill, holding the A it
  // read (its descriptor or tensor-memory address); use and lastuse need it valid for that same A.
  bool collector_valid = false;
  uint64_t collector_a = 0;
  uint32_t last_alloc = kColumns;
  // The 16 named barriers of bar.sync (§9.7.13.1): threads arrived in the current phase, the
  // count the phase expects (0: none open), the waiting threads.
  struct NamedBar {
    uint32_t arrived = 0, expected = 0;
    std::vector<uint32_t> waiters;
    uint64_t rel = 0;  // the latest arrival's time (order.cpp)
  };
  std::array<NamedBar, 16> bars;
  // Race bookkeeping: asynchronous operations in flight per 16-byte shared-memory chunk and per
  // tensor-memory cell (writers, readers), the line of the last one registered, of the last writer
  // and of the last reader.
  std::vector<uint16_t> sm_w, sm_r, tm_w, tm_r;
  std::vector<uint32_t> sm_line, tm_line, sm_wline, tm_wline, sm_rline, tm_rline;
  // Proxies (§9.7.13.4): per 16-byte chunk, the ptx line of a generic-proxy write (st.shared) no
  // fence.proxy.async has ordered yet (0: none), and which CTA's thread wrote it; `unfenced` lists
  // the chunks of this CTA's writes (anywhere in the cluster) that a fence here would order.
  std::vector<uint32_t> sm_generic;
  std::vector<uint8_t> sm_generic_cta;
  std::vector<std::pair<uint32_t, uint32_t>> unfenced;  // (CTA written, chunk)
  // tcgen05 orderings (§9.7.16.6), per tensor-memory cell: the last write, and the last read since it.
  std::vector<TcRec> tc_w, tc_r;
};

struct PendingLd {
  uint32_t slot, value;
};
struct PendingSt {
  uint32_t cta, cell, value;
};

// A bulk async-group of one thread (§9.7.9.25.4): its TMA stores still in flight.
struct BulkGroup {
  uint64_t id = 0;
  uint32_t in_flight = 0;
};

struct Thread {
  uint32_t cta = 0, tid = 0, pc = 0;
  enum St : uint8_t { ready, at_mbar, at_bar, at_cluster, at_collective, at_bulk, at_wgmma, at_setmaxnreg, exited } st = ready;
  bool queued = false, cluster_arrived = false;
  uint64_t cluster_phase = 0;
  uint32_t wait_cta = 0, wait_addr = 0, wait_parity = 0;
  uint64_t* r = nullptr;
  uint8_t* d = nullptr;  // per register: written on this thread's path
  std::vector<PendingLd> lds;
  std::vector<PendingSt> sts;
  uint32_t bar_id = 0;  // at_bar: the named barrier
  // cp.async.bulk: the stores issued since the last commit_group (the open group, `bulk_open`),
  // then the committed groups, oldest first.
  uint64_t bulk_open = 0;
  uint32_t bulk_open_in_flight = 0;
  std::deque<BulkGroup> bulk;
  // Orderings (order.cpp, with the race checks): the times of the thread's
  // tcgen05.fence::before_thread_sync instructions and of its tcgen05.commits' completions (0: in
  // flight); the latest arrival its synchronizations acquired (`acquired`, the last one at ptx line
  // `sync_line`) and what of it its last tcgen05.fence::after_thread_sync covers (`fenced`); its
  // mbarrier.init operations not yet released to the cluster.
  std::vector<uint64_t> before_fences, commits;
  uint64_t acquired = 0, fenced = 0;
  uint32_t sync_line = 0;
  std::vector<std::pair<uint32_t, uint32_t>> inits;  // (CTA, offset)
};

// A region an asynchronous operation reads or writes, registered at issue, released at completion.
struct Region {
  uint32_t cta;
  bool write, tmem;
  std::vector<uint32_t> units;  // 16-byte chunks of shared memory, or tensor-memory cells
};

// Register state bits (Thread::d, one byte per register): defined on this thread's path; a
// wgmma.mma_async the warp has not waited for writes it (its accumulator) or reads it (its A
// fragment); written by the thread since its warp's last wgmma.fence.
constexpr uint8_t kDefined = 1, kWgWrites = 2, kWgReads = 4, kUnfenced = 8;

// wgmma (PTX ISA 9.1 §9.7.15): a wgmma.mma_async is one operation of the warpgroup, 64 rows, of
// which each of the four warps holds 16 in its registers; the j-th wgmma.mma_async of each warp is
// the warpgroup's j-th operation, which starts once all four have issued it. wgmma.commit_group
// closes each warp's open group, the j-th commit of each warp the warpgroup's j-th group.
struct WgOp {
  const Ins* ins = nullptr;
  uint64_t adesc = 0, bdesc = 0;
  bool scale_d = false;
  uint8_t warps = 0;  // the warps (bit w % 4) that issued it
};
struct Warpgroup {
  std::deque<WgOp> ops;      // not yet completed, the oldest first
  uint64_t base = 0;         // the sequence number of ops.front(); every earlier one has completed
  std::vector<uint64_t> commits;  // the j-th commit group's end (sequence numbers before it)
};
struct WarpWg {
  uint64_t issued = 0;        // wgmma.mma_async instructions issued
  uint64_t committed = 0;     // wgmma.commit_group instructions
  std::deque<uint64_t> groups;  // committed groups no wgmma.wait_group of the warp covered yet: their ends, oldest first
  // The warp's wgmma.mma_async whose registers it may not access yet: every one issued and not yet
  // covered by a wgmma.wait_group of the warp (completed or not, §9.7.15.7.3), sequence numbers
  // from live_base on.
  std::deque<const Ins*> live;
  uint64_t live_base = 0;
  bool fenced = false;        // a wgmma.fence executed
  uint32_t regs = 0;          // setmaxnreg: the registers per thread the warp owns
  std::vector<uint32_t> setmaxnreg;  // the setmaxnreg instructions executed, in order
};

struct Async {
  enum Kind : uint8_t { tma, mma, cp, commit, tma_store, wgmma } kind;
  const Ins* ins = nullptr;
  uint32_t cta = 0;  // the issuing CTA
  uint64_t v[8] = {};
  const TensorMap* map = nullptr;
  std::vector<Region> regions;
};

class Machine {
 public:
  Machine(const Kernel& k, const Launch& l, Global& g, const Options& o, Stats& s);
  void run_cluster(const std::array<uint32_t, 3>& cluster_id);

  // ---- shared by machine.cpp and tcgen05.cpp --------------------------------------------------
  const Kernel& k;
  const Launch& launch;
  Global& global;
  const Options& opt;
  Stats& stats;
  std::vector<Cta> ctas;
  std::vector<Thread> threads;
  std::vector<uint64_t> regs;
  std::deque<Async> async;
  std::vector<const TensorMap*> param_maps;  // by parameter index

  [[noreturn]] void fail(const Thread* t, const std::string& why) const;
  [[noreturn]] void fail_async(const Async& a, const std::string& why) const;
  std::string where(const Thread& t) const;

  uint64_t val(const Thread& t, const Opnd& o) const;
  uint64_t reg(const Thread& t, uint32_t slot) const {
    if ((t.d[slot] & (kDefined | kWgWrites | kWgReads)) != kDefined) undefined(t, slot);
    return t.r[slot];
  }
  // A register no instruction on the thread's path wrote, or one an asynchronous wgmma in flight uses.
  [[noreturn]] void undefined(const Thread& t, uint32_t slot) const;
  [[noreturn]] void wg_written(const Thread& t, uint32_t slot) const;  // a write to a register a wgmma in flight uses
  uint64_t special(const Thread& t, uint32_t id) const;
  uint64_t addr_of(const Thread& t, const Opnd& o) const;  // a mem operand's address
  // A shared address (shared::cta or shared::cluster) as (CTA index, offset), checked.
  std::pair<uint32_t, uint32_t> shared(const Thread& t, uint64_t a, bool cluster, uint32_t bytes) const;
  uint8_t* smem_ptr(uint32_t cta, uint32_t off, uint32_t bytes, const Async* a, const Thread* t) const;
  Mbar& mbar(const Thread* t, uint32_t cta, uint32_t off);
  void mbar_arrive(uint32_t cta, uint32_t off, uint32_t count, int64_t tx, const Thread* t, const Async* a);
  void wake(uint32_t thread);

  // Tensor memory: a cell (lane, column) of CTA `cta`, allocated (checked).
  uint32_t& tcell(uint32_t cta, uint32_t lane, uint32_t col, const Thread* t, const Async* a);
  void check_region(const Region& r, const Thread* t, const char* what);
  // A generic-proxy write of `bytes` shared bytes at (cta, off) by thread t (st.shared, stmatrix):
  // checked against the asynchronous operations in flight, and unordered for the async proxy until
  // a fence.proxy.async.
  void shared_written(const Thread& t, uint32_t cta, uint32_t off, uint32_t bytes, uint32_t line, const char* what);
  void hold(Async& a, Region&& r);
  void release(Async& a);
  void trace_issue(const Async& a) const;

  // order.cpp: the tcgen05 fences (§9.7.16.6) and fence.mbarrier_init (§9.7.13.4).
  uint32_t index(const Thread& t) const { return static_cast<uint32_t>(&t - threads.data()); }
  // Thread t's tcgen05 operation `what` (ptx line `line`) writes or reads tensor-memory cell `cell`
  // of CTA `cta`: ordered after the cell's last accesses by other threads, or a race. `committed`:
  // a tcgen05.mma/cp, whose completion a later tcgen05.commit of t also orders.
  void tc_access(const Thread& t, uint32_t cta, uint32_t cell, bool write, bool committed, const char* what, uint32_t line) {
    // The common case inline: the cell's last accesses are none or the warp's own.
    Cta& c = ctas[cta];
    const uint32_t warp = index(t) / 32;
    const TcRec& w = c.tc_w[cell];
    const TcRec& r = c.tc_r[cell];
    if ((w.by && (w.by - 1) / 32 != warp) || (write && r.by && (r.by - 1) / 32 != warp)) tc_order(t, c, cta, cell, write, what);
    const TcRec now{index(t) + 1, line, static_cast<uint32_t>(t.before_fences.size()),
                    committed ? static_cast<uint32_t>(t.commits.size()) : kNoCommit};
    if (write) {
      c.tc_w[cell] = now;
      c.tc_r[cell] = TcRec{};  // later accesses are ordered after this write, hence after the reads before it
    } else {
      c.tc_r[cell] = now;
    }
  }
  // The access is ordered after the cell's last accesses by other warps (else a race).
  void tc_order(const Thread& t, const Cta& c, uint32_t cta, uint32_t cell, bool write, const char* what) const;
  std::string tc_accessor(const TcRec& r, bool wrote) const;  // the access in a message
  void tc_dealloc(const Thread& t, uint32_t cta, uint32_t col, uint32_t columns);  // before tcgen05.dealloc frees them
  void synced(Thread& t, uint64_t rel, uint32_t line);  // t completed a synchronization acquiring `rel`
  void released(Thread& t);                             // t released its mbarrier.init operations to the cluster
  void mbar_used(const Mbar& m, uint32_t cta, uint32_t off, const Thread* t, const Async* a) const;  // by another CTA?

  // tcgen05.cpp
  void tc_issue_mma(Thread& t, const Ins& in);
  void tc_issue_cp(Thread& t, const Ins& in);
  void tc_complete(Async& a);
  void tc_ld(Thread& t, const Ins& in, uint32_t taddr);
  void tc_st(Thread& t, const Ins& in, uint32_t taddr);
  void complete(Async& a);

  // wgmma.cpp
  std::vector<Warpgroup> wgs;  // per warpgroup of the cluster (thread index / 128)
  std::vector<WarpWg> wwarps;  // per warp of the cluster
  std::vector<uint16_t> wg_wcnt, wg_rcnt;  // per warp and register: its live wgmma operations writing / reading it
  std::vector<uint32_t> wg_line;           // per warp and register: the line of the last wgmma.mma_async using it
  std::vector<uint32_t> reg_pool;          // per CTA: setmaxnreg's pool of registers (§9.7.19.5)
  void wg_setup();
  bool wg_collective(Thread& t, const Ins& in);  // false: the warp blocks (wait_group, setmaxnreg.inc)
  void wg_complete(Async& a);
  void wg_retire(uint32_t warp, const Ins& in);
  void wg_exit(const Thread& t);  // a thread exits: no wgmma of its warp may be in flight
  void wg_finish();               // the cluster ended: every warpgroup executed the same setmaxnreg
  std::string wg_blocked(const Thread& t) const;  // why a thread waits (deadlock report)

 private:
  void run_thread(Thread& t);
  bool collective(Thread& t, const Ins& in);  // false: blocked until the warp arrives
  bool collective_do(Thread& t, const Ins& in);  // false: the warp blocks at the instruction
  void tma_issue(Thread& t, const Ins& in);
  void tma_complete(Async& a);
  // TMA stores and their bulk async-groups (tma.cpp).
  const TensorMap& tensor_map_of(const Thread& t, const Opnd& o) const;
  Async tma_async(const Thread& t, const Ins& in, Async::Kind kind, const Opnd& map, const Opnd& coords) const;
  uint32_t tma_row_bytes(const Thread& t, const TensorMap& m) const;
  void tma_queue(Thread& t, Async&& a, uint32_t cta, uint32_t off, uint32_t bytes, bool write, const char* what);
  void tma_store_issue(Thread& t, const Ins& in);
  void tma_store_complete(Async& a);
  bool bulk_wait(Thread& t, const Ins& in);  // false: blocked until older groups complete
  [[noreturn]] void deadlock() const;
  // Schedule exploration (Options::schedule): which runnable thread runs next, how many
  // instructions until it yields, and which asynchronous operation completes early.
  uint32_t pick();
  uint64_t next_yield();
  void complete_early(bool all);
  Policy policy_ = Policy::fixed;
  std::mt19937_64 rng_;
  uint64_t yield_in_ = ~uint64_t{0};
  std::deque<uint32_t> runnable_;
  std::vector<uint32_t> warp_arrived_;
  uint32_t cluster_arrived_ = 0;
  uint64_t cluster_phase_ = 0;
  uint64_t cluster_rel_ = 0;  // the latest barrier.cluster.arrive's time (order.cpp)
  std::vector<uint32_t> cluster_waiters_;
  std::array<uint32_t, 3> cluster_id_{0, 0, 0};
  std::vector<uint8_t> spin_;
  std::vector<uint8_t> defined_;  // per instruction: a try_wait whose failure only loops back to it
};

}  // namespace ksim
