// sm_90a: wgmma.fence / mma_async / commit_group / wait_group (PTX ISA 9.1 §9.7.15) and setmaxnreg
// (§9.7.19.5). Nothing here calls ptxgen.
//
// A wgmma.mma_async is an operation of the warpgroup (four contiguous warps, the first a multiple
// of 4, §9.7.15.1): 64 rows of D, of which warp w % 4 holds rows 16 (w % 4) .. + 15 in its
// registers. Each warp issues the instruction (a warp collective); the j-th wgmma.mma_async of
// each warp is the warpgroup's j-th operation, whose instruction, descriptors and scale-d must
// agree across the warps, and which starts once all four issued it. Like every asynchronous
// operation here it takes effect as late as possible: it reads A and B from shared memory (through
// the sm_90 descriptors, decode.hpp) and its accumulator and A registers when it completes, and
// writes D then, summed in float64 and rounded once to D's type. Until then its shared-memory reads
// are held for the race checks (a stage released and reloaded under it is a race), and a thread
// that exits with it in flight is an error. Its registers are the warp's again only after a
// wgmma.wait_group of the warp that covers it (§9.7.15.7.3: an access before is undefined even
// if the operation completed): a thread that reads or writes them before is caught. wgmma.commit_group closes the warp's open group (the j-th commit of each warp the
// warpgroup's j-th group); wgmma.wait_group N blocks the warp until all but the N most recent of
// its committed groups have completed. wgmma.fence: a wgmma.mma_async must follow one in its warp,
// and may not access a register the thread wrote after the warp's last one (§9.7.15.7.1; reads
// before the fence are not tracked).
//
// setmaxnreg: each warp owns .maxnreg registers per thread at launch; the CTA's pool starts empty,
// .dec returns registers to it, .inc takes them and blocks until the pool holds enough; every warp
// of a warpgroup must execute the same setmaxnreg instructions.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "decode.hpp"
#include "machine.hpp"
#include "num.hpp"

namespace ksim {

using namespace tc;

namespace {

uint32_t warpgroups_per_cta(uint32_t threads) { return (threads + 127) / 128; }

// The registers of a wgmma.mma_async's D and (A from registers) A operands.
const uint32_t* d_slots(const Kernel& k, const Ins& in) { return &k.pool[in.o[0].r]; }
const uint32_t* a_slots(const Kernel& k, const Ins& in) { return &k.pool[in.o[1].r]; }

}  // namespace

void Machine::wg_setup() {
  const size_t warps = threads.size() / 32;
  wwarps.assign(warps, WarpWg{});
  for (WarpWg& w : wwarps) w.regs = k.maxnreg;
  wgs.assign(ctas.size() * warpgroups_per_cta(launch.threads), Warpgroup{});
  reg_pool.assign(ctas.size(), 0);
  if (k.wgmma) {
    wg_wcnt.assign(warps * k.slots, 0);
    wg_rcnt.assign(warps * k.slots, 0);
    wg_line.assign(warps * k.slots, 0);
  }
}

// A register read that is not plain: never written on the thread's path, or in flight under a wgmma.
void Machine::undefined(const Thread& t, uint32_t slot) const {
  if (t.d[slot] & (kWgWrites | kWgReads)) {
    const size_t w = (t.cta * launch.threads + t.tid) / 32;
    fail(&t, "race: reads register " + k.slot_names[slot] + " while the wgmma.mma_async issued at ptx line " +
                 std::to_string(wg_line[w * k.slots + slot]) + (t.d[slot] & kWgWrites ? " writes" : " reads") +
                 " it (no wgmma.wait_group for its group, PTX ISA 9.7.15.7.3)");
  }
  fail(&t, "reads register " + k.slot_names[slot] + ", which no instruction on this thread's path has written");
}

void Machine::wg_written(const Thread& t, uint32_t slot) const {
  const size_t w = (t.cta * launch.threads + t.tid) / 32;
  fail(&t, "race: writes register " + k.slot_names[slot] + " while the wgmma.mma_async issued at ptx line " +
               std::to_string(wg_line[w * k.slots + slot]) + (t.d[slot] & kWgWrites ? " writes" : " reads") +
               " it (no wgmma.wait_group for its group, PTX ISA 9.7.15.7.3)");
}

bool Machine::wg_collective(Thread& t, const Ins& in) {
  const uint32_t base = t.cta * launch.threads + t.tid / 32 * 32;  // the warp's first thread
  const uint32_t w = base / 32;
  WarpWg& ww = wwarps[w];
  const uint32_t wg = t.cta * warpgroups_per_cta(launch.threads) + t.tid / 128;
  const uint32_t wbase = t.cta * launch.threads + t.tid / 128 * 128;  // the warpgroup's first thread
  const bool whole = (t.tid / 128 + 1) * 128 <= launch.threads;
  Warpgroup& g = wgs[wg];
  auto lanes = [&](auto f) {
    for (uint32_t l = 0; l < 32; ++l) f(threads[base + l]);
  };
  auto same = [&](const Opnd& o, const char* what) {
    const uint64_t v = val(threads[base], o);
    for (uint32_t l = 1; l < 32; ++l)
      if (val(threads[base + l], o) != v) fail(&threads[base + l], std::string("lanes of the warp give different ") + what);
    return v;
  };
  switch (in.op) {
    case Op::setmaxnreg: {
      if (!k.maxnreg) fail(&t, "setmaxnreg in a kernel without .maxnreg (PTX ISA 9.7.19.5: it may then have no effect)");
      if (!whole) fail(&t, "setmaxnreg in a warpgroup of fewer than four warps (all of a warpgroup's execute it, PTX ISA 9.7.19.5)");
      const uint32_t want = in.wg_n, pc = static_cast<uint32_t>(&in - k.code.data());
      if (in.pack ? want < ww.regs : want > ww.regs)
        fail(&t, std::string("setmaxnreg.") + (in.pack ? "inc" : "dec") + " to " + std::to_string(want) + " registers, the warp owns " +
                     std::to_string(ww.regs) + " (PTX ISA 9.7.19.5)");
      // The same instruction in every warp of the warpgroup, in the same order.
      const size_t i = ww.setmaxnreg.size();
      for (uint32_t o = wbase / 32; o < wbase / 32 + 4; ++o)
        if (o != w && wwarps[o].setmaxnreg.size() > i && wwarps[o].setmaxnreg[i] != pc)
          fail(&t, "the warps of a warpgroup execute different setmaxnreg instructions (warp " + std::to_string(o % (launch.threads / 32)) +
                       " at ptx line " + std::to_string(k.code[wwarps[o].setmaxnreg[i]].line) + ", PTX ISA 9.7.19.5)");
      uint32_t& pool = reg_pool[t.cta];
      if (in.pack) {
        const uint32_t need = (want - ww.regs) * 32;
        if (pool < need) {  // blocks until other warps' setmaxnreg.dec return enough
          lanes([](Thread& x) { x.st = Thread::at_setmaxnreg; });
          return false;
        }
        pool -= need;
      } else {
        pool += (ww.regs - want) * 32;
        for (size_t x = size_t{t.cta} * launch.threads; x < size_t{t.cta + 1} * launch.threads; ++x)
          if (threads[x].st == Thread::at_setmaxnreg) wake(static_cast<uint32_t>(x));
      }
      ww.regs = want;
      ww.setmaxnreg.push_back(pc);
      return true;
    }
    case Op::wg_fence:
      // Orders the warp's earlier register accesses before its next wgmma.mma_async (§9.7.15.7.1).
      ww.fenced = true;
      lanes([&](Thread& x) {
        for (uint32_t s : k.wgmma_slots) x.d[s] &= static_cast<uint8_t>(~kUnfenced);
      });
      return true;
    case Op::wg_commit: {
      // The warp's uncommitted wgmma.mma_async become a group (§9.7.15.7.2); the j-th commit of
      // each warp closes the warpgroup's j-th group, so they must close it after the same operations.
      const uint64_t j = ww.committed++;
      if (j < g.commits.size()) {
        if (g.commits[j] != ww.issued)
          fail(&t, "the warps of the warpgroup commit different wgmma groups: this warp's wgmma.commit_group #" + std::to_string(j) +
                       " follows its wgmma.mma_async #" + std::to_string(ww.issued) + ", another warp's #" + std::to_string(g.commits[j]));
      } else {
        g.commits.push_back(ww.issued);
      }
      ww.groups.push_back(ww.issued);
      return true;
    }
    case Op::wg_wait: {
      // All but the N most recent committed groups complete (§9.7.15.7.3); operations complete in
      // order, so a group is complete once the warpgroup's completed count passes its end.
      const size_t n = static_cast<size_t>(in.o[0].imm);
      if (ww.groups.size() > n && ww.groups[ww.groups.size() - n - 1] > g.base) {
        lanes([](Thread& x) { x.st = Thread::at_wgmma; });  // woken when an operation of the warpgroup completes
        return false;
      }
      // The groups it waited for: their registers are the warp's again (until then an access is
      // undefined even after the operation completed, §9.7.15.7.3).
      const uint64_t end = ww.groups.size() > n ? ww.groups[ww.groups.size() - n - 1] : 0;
      while (ww.groups.size() > n) ww.groups.pop_front();
      while (ww.live_base < end) {
        wg_retire(w, *ww.live.front());
        ww.live.pop_front();
        ++ww.live_base;
      }
      return true;
    }
    case Op::wg_mma: break;
    default: fail(&t, "not a wgmma instruction");
  }
  // ---- wgmma.mma_async -------------------------------------------------------------------------
  auto fail_here = [&](const std::string& why) { fail(&t, "wgmma.mma_async: " + why); };
  if (!whole) fail_here("in a warpgroup of fewer than four warps (the block has " + std::to_string(launch.threads) + " threads)");
  if (!ww.fenced) fail_here("no wgmma.fence in the warp before its first wgmma.mma_async (PTX ISA 9.7.15.7.1)");
  WgOp op;
  op.ins = &in;
  op.adesc = in.wg_areg ? 0 : same(in.o[1], "A descriptors");
  op.bdesc = same(in.o[2], "B descriptors");
  op.scale_d = same(in.o[3], "scale-d") != 0;
  // The registers: written since the last fence (§9.7.15.7.1), an accumulator read (scale-d) that
  // nothing defined, an operand in flight the other way (A written, D read by another wgmma).
  const uint32_t nd = in.o[0].count, na = in.wg_areg ? in.o[1].count : 0;
  const uint32_t *ds = d_slots(k, in), *as = na ? a_slots(k, in) : nullptr;
  for (uint32_t l = 0; l < 32; ++l) {
    const Thread& x = threads[base + l];
    for (uint32_t i = 0; i < nd + na; ++i) {
      const bool is_d = i < nd;
      const uint32_t s = is_d ? ds[i] : as[i - nd];
      const uint8_t d = x.d[s];
      const std::string name = k.slot_names[s];
      if (d & kUnfenced)
        fail(&x, "wgmma.mma_async: register " + name + " was written by the thread after its warp's last wgmma.fence (PTX ISA 9.7.15.7.1)");
      if (is_d ? (d & kWgReads) : (d & kWgWrites))
        fail(&x, "race: wgmma.mma_async " + std::string(is_d ? "writes" : "reads") + " register " + name + " while the wgmma.mma_async issued at ptx line " +
                     std::to_string(wg_line[size_t{w} * k.slots + s]) + (is_d ? " reads" : " writes") + " it");
      if ((!is_d || op.scale_d) && !(d & (kDefined | kWgWrites)))
        fail(&x, "wgmma.mma_async reads register " + name + (is_d ? " (its accumulator; scale-d is true)" : " (A)") +
                     ", which no instruction on this thread's path has written");
    }
  }
  for (uint32_t i = 0; i < nd + na; ++i) {
    const bool is_d = i < nd;
    const uint32_t s = is_d ? ds[i] : as[i - nd];
    const size_t c = size_t{w} * k.slots + s;
    wg_line[c] = in.line;
    if ((is_d ? wg_wcnt : wg_rcnt)[c]++ == 0) lanes([&](Thread& x) { x.d[s] |= is_d ? kWgWrites : kWgReads; });
  }
  // The warpgroup's operation of this sequence number: the first warp to issue it creates it.
  ww.live.push_back(&in);
  const uint64_t seq = ww.issued++;
  const size_t idx = static_cast<size_t>(seq - g.base);
  if (idx == g.ops.size()) g.ops.push_back(op);
  WgOp& o = g.ops[idx];
  if (o.ins != &in)
    fail_here("the warps of the warpgroup issue different instructions as its wgmma.mma_async #" + std::to_string(seq) +
              " (another warp's is at ptx line " + std::to_string(o.ins->line) + "; PTX ISA 9.7.15.5.2: .aligned)");
  if (o.adesc != op.adesc || o.bdesc != op.bdesc)
    fail_here("the warps of the warpgroup give different matrix descriptors (" + hex(op.adesc) + ", " + hex(op.bdesc) + " here, " +
              hex(o.adesc) + ", " + hex(o.bdesc) + " in another warp; PTX ISA 9.7.15.5.2: the same across the warpgroup)");
  if (o.scale_d != op.scale_d) fail_here("the warps of the warpgroup give different scale-d");
  o.warps |= static_cast<uint8_t>(1u << (w % 4));
  if (o.warps != 0xF) return true;
  // All four warps issued it: the operation starts. What it reads of shared memory, for the race checks.
  Async a;
  a.kind = Async::wgmma;
  a.ins = &in;
  a.cta = t.cta;
  a.v[0] = o.adesc;
  a.v[1] = o.bdesc;
  a.v[2] = o.scale_d;
  a.v[3] = wg;
  a.v[4] = seq;
  if (opt.race_checks) {
    Region rs{t.cta, false, false, {}};
    int within;
    const Desc bd = decode_wgmma_desc(o.bdesc, fail_here);
    const Elem be = smem_elem(in.wg_kind, in.wg_btype);
    for (int n = 0; n < in.wg_n; ++n)
      for (int kk = 0; kk < in.wg_k; kk += in.wg_trans_b ? 1 : be.T)
        if (!in.wg_trans_b || n % be.T == 0) rs.units.push_back(piece(bd, in.wg_trans_b, be, n, kk, within, fail_here) / 16);
    if (!in.wg_areg) {
      const Desc ad = decode_wgmma_desc(o.adesc, fail_here);
      const Elem ae = smem_elem(in.wg_kind, in.wg_atype);
      for (int r = 0; r < 64; ++r)
        for (int kk = 0; kk < in.wg_k; kk += in.wg_trans_a ? 1 : ae.T)
          if (!in.wg_trans_a || r % ae.T == 0) rs.units.push_back(piece(ad, in.wg_trans_a, ae, r, kk, within, fail_here) / 16);
    }
    std::sort(rs.units.begin(), rs.units.end());
    rs.units.erase(std::unique(rs.units.begin(), rs.units.end()), rs.units.end());
    for (uint32_t u : rs.units)
      if (u * 16 < ctas[t.cta].smem_lo || uint64_t{u} * 16 + 16 > ctas[t.cta].smem.size())
        fail_here("reads shared memory at " + hex(uint64_t{u} * 16) + ", outside the CTA's allocation");
    check_region(rs, &t, "wgmma.mma_async");
    hold(a, std::move(rs));
  }
  ++stats.mma;
  trace_issue(a);
  async.push_back(std::move(a));
  return true;
}

// The operation completes: A and B from shared memory (or A from the warps' registers), the
// accumulators if scale-d, D into the four warps' registers.
void Machine::wg_complete(Async& a) {
  const Ins& in = *a.ins;
  Warpgroup& g = wgs[a.v[3]];
  if (g.ops.empty() || a.v[4] != g.base) fail_async(a, "internal: wgmma operations of a warpgroup complete out of order");
  auto fail_here = [&](const std::string& why) { fail_async(a, "wgmma.mma_async: " + why); };
  const int N = in.wg_n, K = in.wg_k, kind = in.wg_kind;
  const uint32_t wbase = static_cast<uint32_t>(a.v[3] / warpgroups_per_cta(launch.threads)) * launch.threads +
                         static_cast<uint32_t>(a.v[3] % warpgroups_per_cta(launch.threads)) * 128;
  // B: column n, K-major (or N-major with imm-trans-b) through its descriptor.
  std::vector<double> B(static_cast<size_t>(N) * K), A(static_cast<size_t>(64) * K);
  {
    const Desc bd = decode_wgmma_desc(a.v[1], fail_here);
    const Elem be = smem_elem(kind, in.wg_btype);
    for (int n = 0; n < N; ++n)
      for (int k2 = 0; k2 < K; ++k2) {
        int within;
        const uint32_t at = piece(bd, in.wg_trans_b, be, n, k2, within, fail_here);
        const uint8_t* p = smem_ptr(a.cta, at, 16, &a, nullptr);
        B[static_cast<size_t>(n) * K + k2] = in.wg_scale_b * element(kind, in.wg_btype, read_bits(p, within * be.vbits, be.vbits));
      }
  }
  if (!in.wg_areg) {
    const Desc ad = decode_wgmma_desc(a.v[0], fail_here);
    const Elem ae = smem_elem(kind, in.wg_atype);
    for (int r = 0; r < 64; ++r)
      for (int k2 = 0; k2 < K; ++k2) {
        int within;
        const uint32_t at = piece(ad, in.wg_trans_a, ae, r, k2, within, fail_here);
        const uint8_t* p = smem_ptr(a.cta, at, 16, &a, nullptr);
        A[static_cast<size_t>(r) * K + k2] = in.wg_scale_a * element(kind, in.wg_atype, read_bits(p, within * ae.vbits, ae.vbits));
      }
  } else {  // each warp's 16 rows from its lanes' four registers
    const int per = 32 / value_bits(kind, in.wg_atype);  // elements per register
    for (int q = 0; q < 4; ++q)
      for (int l = 0; l < 32; ++l) {
        const Thread& x = threads[wbase + 32 * static_cast<uint32_t>(q) + static_cast<uint32_t>(l)];
        for (int i = 0; i < 4 * per; ++i) {
          int row, col;
          wg_a_cell(kind, l, i, row, col);
          const uint32_t word = static_cast<uint32_t>(x.r[k.pool[in.o[1].r + static_cast<uint32_t>(i / per)]]);
          const int vb = 32 / per;
          const uint32_t b = (word >> (vb * (i % per))) & static_cast<uint32_t>(mask(vb));
          A[static_cast<size_t>(16 * q + row) * K + col] = in.wg_scale_a * element(kind, in.wg_atype, b);
        }
      }
  }
  const bool scale_d = a.v[2] != 0, f16d = in.wg_dtype == 0;
  const uint32_t* ds = d_slots(k, in);
  for (uint32_t q = 0; q < 4; ++q)
    for (uint32_t l = 0; l < 32; ++l) {
      Thread& x = threads[wbase + 32 * q + l];
      for (int j = 0; j < N / 2; ++j) {
        int row, col;
        wg_d_cell(static_cast<int>(l), j, row, col);
        const double* ar = &A[static_cast<size_t>(16 * q + static_cast<uint32_t>(row)) * K];
        const double* br = &B[static_cast<size_t>(col) * K];
        const uint32_t s = ds[f16d ? j / 2 : j];
        const int sh = f16d ? 16 * (j % 2) : 0;
        const uint32_t old = static_cast<uint32_t>(x.r[s] >> sh) & (f16d ? 0xFFFFu : 0xFFFFFFFFu);
        uint32_t v;
        if (kind == k_i8) {  // exact, wrapped to 32 bits unless .satfinite
          int64_t sum = 0;
          for (int k2 = 0; k2 < K; ++k2) sum += static_cast<int64_t>(ar[k2]) * static_cast<int64_t>(br[k2]);
          if (scale_d) sum += static_cast<int32_t>(old);
          if (in.wg_sat) sum = std::clamp<int64_t>(sum, INT32_MIN, INT32_MAX);
          v = static_cast<uint32_t>(sum);
        } else {  // float64, rounded once to D's type
          double sum = 0;
          for (int k2 = 0; k2 < K; ++k2) sum += ar[k2] * br[k2];
          if (scale_d) sum += f16d ? num::f16(old) : static_cast<double>(num::f32_of(old));
          v = f16d ? num::encode_rn(num::kF16, sum) : num::bits_of(static_cast<float>(sum));
        }
        if (f16d) x.r[s] = (x.r[s] & ~(uint64_t{0xFFFF} << sh) & 0xFFFFFFFFu) | (uint64_t{v} << sh);
        else x.r[s] = v;
        x.d[s] |= kDefined;
      }
    }
  // The warps waiting for a group look again; the registers stay theirs to access only once a
  // wgmma.wait_group of theirs covers the operation (wg_retire).
  for (uint32_t i = 0; i < 128; ++i)
    if (threads[wbase + i].st == Thread::at_wgmma) wake(wbase + i);
  g.ops.pop_front();
  ++g.base;
}

// A wgmma.wait_group of warp `w` covered the operation of `in`: the last one holding a register releases it.
void Machine::wg_retire(uint32_t w, const Ins& in) {
  const uint32_t nd = in.o[0].count, na = in.wg_areg ? in.o[1].count : 0;
  for (uint32_t i = 0; i < nd + na; ++i) {
    const bool is_d = i < nd;
    const uint32_t s = is_d ? d_slots(k, in)[i] : a_slots(k, in)[i - nd];
    if (--(is_d ? wg_wcnt : wg_rcnt)[size_t{w} * k.slots + s] == 0)
      for (uint32_t l = 0; l < 32; ++l) threads[32 * w + l].d[s] &= static_cast<uint8_t>(~(is_d ? kWgWrites : kWgReads));
  }
}

void Machine::wg_exit(const Thread& t) {
  const uint32_t w = (t.cta * launch.threads + t.tid) / 32;
  const Warpgroup& g = wgs[t.cta * warpgroups_per_cta(launch.threads) + t.tid / 128];
  if (wwarps[w].issued > g.base)
    fail(&t, "the thread exits with a wgmma.mma_async of its warp in flight (no wgmma.wait_group for it, PTX ISA 9.7.15.7.3)");
}

void Machine::wg_finish() {
  const uint32_t per = launch.threads / 32;  // warps per CTA; a last partial warpgroup cannot execute setmaxnreg
  for (size_t c = 0; c < ctas.size(); ++c)
    for (uint32_t wg = 0; wg * 4 < per; ++wg) {
      const uint32_t w0 = static_cast<uint32_t>(c) * per + 4 * wg;
      for (uint32_t q = 1; q < 4 && 4 * wg + q < per; ++q)
        if (wwarps[w0 + q].setmaxnreg != wwarps[w0].setmaxnreg) {
          const auto& x = wwarps[w0 + q].setmaxnreg.size() > wwarps[w0].setmaxnreg.size() ? wwarps[w0 + q] : wwarps[w0];
          throw Error("setmaxnreg at ptx line " + std::to_string(k.code[x.setmaxnreg.back()].line) +
                      " is not executed by every warp of warpgroup " + std::to_string(wg) + " (warps " + std::to_string(4 * wg) + "-" +
                      std::to_string(4 * wg + 3) + ") of CTA rank " + std::to_string(c) + " (PTX ISA 9.7.19.5)");
        }
    }
}

std::string Machine::wg_blocked(const Thread& t) const {
  std::ostringstream s;
  const uint32_t w = (t.cta * launch.threads + t.tid) / 32;
  if (t.st == Thread::at_setmaxnreg) {
    const Ins& in = k.code[t.pc];
    s << ": waits at setmaxnreg.inc for " << (in.wg_n - wwarps[w].regs) * 32 << " registers; the CTA's pool holds " << reg_pool[t.cta];
    return s.str();
  }
  const Warpgroup& g = wgs[t.cta * warpgroups_per_cta(launch.threads) + t.tid / 128];
  s << ": waits at wgmma.wait_group for the warpgroup's wgmma.mma_async";
  if (!g.ops.empty()) {
    const WgOp& o = g.ops.front();
    s << " issued at ptx line " << o.ins->line;
    if (o.warps != 0xF) {
      s << ", which warp(s)";
      for (uint32_t q = 0; q < 4; ++q)
        if (!((o.warps >> q) & 1)) s << " " << (t.tid / 128 * 4 + q);
      s << " of the warpgroup have not issued";
    }
  }
  return s.str();
}

}  // namespace ksim
