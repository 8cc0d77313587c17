// The orderings two fences give, checked with the race checks (Options::race_checks):
//
// - tcgen05.fence::before_thread_sync / after_thread_sync (PTX ISA 9.1 §9.7.16.6.3, §9.7.16.11.1):
//   a tcgen05 operation of one thread and another thread's tcgen05 operation on the same tensor
//   memory are ordered only through a synchronization with a before_thread_sync ahead of it in the
//   first thread (or, for tcgen05.mma/cp, the completion of a later tcgen05.commit of that thread,
//   which performs the fence implicitly: §9.7.16.6.4.2) and an after_thread_sync behind it in the
//   second (§9.7.16.6.4.3-4).
// - fence.mbarrier_init.release.cluster (§9.7.13.4): an mbarrier.init is released to the other CTAs
//   of the cluster by its thread's fence.mbarrier_init or another release at cluster scope (the
//   default .release of barrier.cluster.arrive, §9.7.13.3); before that only its own CTA may use it.
//
// Accesses of one warp are in its program order (its tcgen05.ld/st are warp-wide instructions).
// Time is the count of instructions executed (Stats::instructions). A synchronization passes on
// the time of the latest arrival it waited for (an mbarrier's, a bar.sync's, the cluster
// barrier's): a thread has `acquired` it, and its next after_thread_sync makes it `fenced`. A
// fenced access (its thread's fence at time f) is ordered before thread t's tcgen05 operation when
// f <= t.fenced. Each per cell check is O(1); a scalar time is conservative: it may miss an
// ordering error (an arrival later than the fence, by another thread, counts), never report one.
#include <algorithm>
#include <sstream>

#include "machine.hpp"

namespace ksim {

namespace {
constexpr uint64_t kNever = ~uint64_t{0};

// The first time after access `r` from which its thread orders it for other threads: its next
// before_thread_sync, or (tcgen05.mma/cp) the completion of its next tcgen05.commit; kNever if none.
uint64_t released_at(const Thread& a, const TcRec& r) {
  uint64_t at = r.nb < a.before_fences.size() ? a.before_fences[r.nb] : kNever;
  if (r.nc != kNoCommit && r.nc < a.commits.size() && a.commits[r.nc]) at = std::min(at, a.commits[r.nc]);
  return at;
}

// "tcgen05.ld" of "@%p5 tcgen05.ld.sync.aligned.32x32b.x32.b32 ...": the instruction's first two names.
std::string op_name(const std::string& text) {
  size_t b = text[0] == '@' ? text.find(' ') + 1 : 0;
  const size_t dot = text.find('.', b);
  const size_t end = dot == std::string::npos ? text.find(' ', b) : text.find_first_of(". ", dot + 1);
  return text.substr(b, end == std::string::npos ? std::string::npos : end - b);
}
}  // namespace

// " that tcgen05.ld at ptx line 110 (warp 0, lane 0) read": the access `r` in an error message.
std::string Machine::tc_accessor(const TcRec& r, bool wrote) const {
  const Thread& a = threads[r.by - 1];
  size_t i = 0;
  while (i < k.code.size() && k.code[i].line != r.line) ++i;
  std::ostringstream s;
  s << " that " << (i < k.code.size() ? op_name(k.text[i]) : std::string("a tcgen05 operation")) << " at ptx line " << r.line << " (";
  if (ctas.size() > 1) s << "CTA rank " << a.cta << ", ";
  s << "warp " << a.tid / 32 << ", lane " << a.tid % 32 << ") " << (wrote ? "wrote" : "read");
  return s.str();
}

void Machine::tc_order(const Thread& t, const Cta& c, uint32_t cta, uint32_t cell, bool write, const char* what) const {
  const uint32_t warp = index(t) / 32;
  auto check = [&](const TcRec& r, bool r_write) {
    // A warp's own accesses are not checked against each other: its tcgen05.ld/st are warp-wide
    // (.sync.aligned) instructions, issued for all its lanes at once.
    if (r.by == 0 || (r.by - 1) / 32 == warp) return;
    const uint64_t at = released_at(threads[r.by - 1], r);
    if (at <= t.fenced) return;
    std::ostringstream s;
    s << "race: " << what << (write ? " writes" : " reads") << " tensor memory lane " << cell / kColumns << ", column " << cell % kColumns;
    if (ctas.size() > 1) s << " of CTA rank " << cta;
    s << tc_accessor(r, r_write);
    if (at == kNever)
      s << ", with no tcgen05.fence::before_thread_sync by that thread since" << (r.nc != kNoCommit ? " (nor a completed tcgen05.commit)" : "")
        << " (PTX ISA 9.7.16.6.4.4: another thread's tcgen05 operation is ordered after it only through that fence and a "
           "synchronization)";
    else if (at > t.acquired)
      s << ", with no synchronization of this thread since that thread's fence (PTX ISA 9.7.16.6.3)";
    else
      s << ", issued after the synchronization at ptx line " << t.sync_line
        << " with no tcgen05.fence::after_thread_sync between (PTX ISA 9.7.16.6.3: only that fence orders a tcgen05 operation after "
           "the synchronization)";
    fail(&t, s.str());
  };
  check(c.tc_w[cell], true);
  if (write) check(c.tc_r[cell], false);
}

// tcgen05.dealloc is synchronous (§9.7.16.6.1): the asynchronous tcgen05 operations of other warps
// on the columns it frees must have been fenced (before_thread_sync or a completed commit) by
// their threads; the warp's own are in its program order.
void Machine::tc_dealloc(const Thread& t, uint32_t cta, uint32_t col, uint32_t columns) {
  Cta& c = ctas[cta];
  const uint32_t warp = index(t) / 32;
  for (uint32_t lane = 0; lane < kLanes; ++lane)
    for (uint32_t j = col; j < col + columns; ++j) {
      const uint32_t u = lane * kColumns + j;
      for (TcRec* r : {&c.tc_w[u], &c.tc_r[u]}) {
        if (r->by && (r->by - 1) / 32 != warp && released_at(threads[r->by - 1], *r) == kNever)
          fail(&t, "race: tcgen05.dealloc frees tensor memory lane " + std::to_string(lane) + ", column " + std::to_string(j) +
                       tc_accessor(*r, r == &c.tc_w[u]) + ", with no tcgen05.fence::before_thread_sync by that thread since (PTX ISA 9.7.16.6.4.4)");
        *r = TcRec{};
      }
    }
}

void Machine::synced(Thread& t, uint64_t rel, uint32_t line) {
  t.acquired = std::max(t.acquired, rel);
  t.sync_line = line;
}

void Machine::released(Thread& t) {
  const uint32_t me = index(t) + 1;
  for (const auto& [cta, off] : t.inits) {
    auto it = ctas[cta].mbars.find(off);
    if (it != ctas[cta].mbars.end() && it->second.init_by == me) it->second.published = true;
  }
  t.inits.clear();
}

// Another CTA's thread or asynchronous operation (a remote arrive, a multicast commit, a TMA's
// complete_tx) uses the mbarrier at (cta, off): its initialization must have been released.
void Machine::mbar_used(const Mbar& m, uint32_t cta, uint32_t off, const Thread* t, const Async* a) const {
  const uint32_t user = t ? t->cta : a ? a->cta : cta;
  if (m.published || user == cta) return;
  const std::string why = "race: the mbarrier at shared " + hex(off) + " of CTA rank " + std::to_string(cta) + ", initialized at ptx line " +
                          std::to_string(m.init_line) + ", is used by CTA rank " + std::to_string(user) +
                          " with no fence.mbarrier_init.release.cluster (or another release at cluster scope) by its initializing thread "
                          "since (PTX ISA 9.7.13.4: fence.mbarrier_init; 9.7.13.3)";
  if (a) fail_async(*a, why);
  fail(t, why);
}

}  // namespace ksim
