// Warp collectives (.sync.aligned): the whole warp meets at one instruction, which then runs for
// every lane (tcgen05.ld/st, the waits) or once for the warp (tcgen05.alloc/dealloc/relinquish).
#include "machine.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "num.hpp"

namespace ksim {

// ---- warp collectives -----------------------------------------------------------------------------
bool Machine::collective(Thread& t, const Ins& in) {
  const uint32_t base = t.cta * launch.threads + t.tid / 32 * 32;
  const uint32_t w = base / 32;
  for (uint32_t l = 0; l < 32; ++l)
    if (threads[base + l].st == Thread::exited)
      fail(&t, "lane " + std::to_string(l) + " of the warp has exited before this .sync.aligned instruction");
  t.st = Thread::at_collective;
  if (++warp_arrived_[w] < 32) return false;
  warp_arrived_[w] = 0;
  for (uint32_t l = 0; l < 32; ++l) {
    const Thread& o = threads[base + l];
    if (o.pc != t.pc)
      fail(&o, "the warp diverged: lane " + std::to_string(l) + " is at another .sync.aligned instruction than lane " +
                   std::to_string(t.tid % 32) + " (ptx line " + std::to_string(in.line) + ")");
  }
  if (!collective_do(t, in)) return false;  // the warp blocks (its lanes' state says where), the instruction runs again when woken
  for (uint32_t l = 0; l < 32; ++l) {
    threads[base + l].pc++;
    wake(base + l);
  }
  return false;
}

bool Machine::collective_do(Thread& t, const Ins& in) {
  const uint32_t base = t.cta * launch.threads + t.tid / 32 * 32;
  auto same = [&](const Opnd& o, const char* what) {
    const uint64_t v = o.kind == Opnd::mem ? addr_of(threads[base], o) : val(threads[base], o);
    for (uint32_t l = 1; l < 32; ++l) {
      const uint64_t x = o.kind == Opnd::mem ? addr_of(threads[base + l], o) : val(threads[base + l], o);
      if (x != v) fail(&threads[base + l], std::string("lanes of the warp give different ") + what);
    }
    return v;
  };
  Cta& c = ctas[t.cta];
  switch (in.op) {
    case Op::bar_warp_sync:
      if ((val(t, in.o[0]) & 0xFFFFFFFFu) != 0xFFFFFFFFu) fail(&t, "bar.warp.sync with a partial mask is not simulated");
      return true;
    case Op::tc_wait_ld:
      for (uint32_t l = 0; l < 32; ++l) {
        Thread& x = threads[base + l];
        for (const auto& p : x.lds) x.r[p.slot] = p.value;
        x.lds.clear();
      }
      return true;
    case Op::tc_wait_st:
      for (uint32_t l = 0; l < 32; ++l) {
        Thread& x = threads[base + l];
        for (const auto& p : x.sts) ctas[p.cta].tmem[p.cell] = p.value;
        x.sts.clear();
      }
      return true;
    case Op::tc_ld:
    case Op::tc_st: {
      const uint32_t taddr = static_cast<uint32_t>(same(in.op == Op::tc_ld ? in.o[1] : in.o[0], "tensor-memory addresses"));
      for (uint32_t l = 0; l < 32; ++l) {
        if (in.op == Op::tc_ld) tc_ld(threads[base + l], in, taddr);
        else tc_st(threads[base + l], in, taddr);
      }
      return true;
    }
    case Op::tc_alloc: {
      if (c.relinquished) fail(&t, "tcgen05.alloc after tcgen05.relinquish_alloc_permit (PTX ISA 9.7.16.7.1)");
      const uint64_t n = same(in.o[1], "column counts");
      if (n < 32 || n > 512 || (n & (n - 1))) fail(&t, "tcgen05.alloc of " + std::to_string(n) + " columns (a power of 2 in 32..512)");
      if (n > c.last_alloc) fail(&t, "tcgen05.alloc: the column count increases between allocations (PTX ISA 9.7.16.7.1)");
      c.last_alloc = static_cast<uint32_t>(n);
      uint32_t col = kColumns;
      for (uint32_t s = 0; s + n <= kColumns; s += static_cast<uint32_t>(n)) {
        bool free = true;
        for (uint32_t j = 0; j < n; ++j) free = free && !c.allocated[s + j];
        if (free) {
          col = s;
          break;
        }
      }
      if (col == kColumns) fail(&t, "tcgen05.alloc: not enough tensor memory (the simulator does not block)");
      for (uint32_t j = 0; j < n; ++j) c.allocated[col + j] = 1;
      c.allocations.push_back({col, static_cast<uint32_t>(n)});
      const auto [cta, off] = shared(t, same(in.o[0], "destinations"), false, 4);
      const uint32_t v = col;  // lane 0, the first column (§9.7.16.1.1)
      std::copy_n(reinterpret_cast<const uint8_t*>(&v), 4, smem_ptr(cta, off, 4, nullptr, &t));
      return true;
    }
    case Op::tc_dealloc: {
      const uint64_t a = same(in.o[0], "addresses"), n = same(in.o[1], "column counts");
      auto it = std::find(c.allocations.begin(), c.allocations.end(), std::pair<uint32_t, uint32_t>{static_cast<uint32_t>(a), static_cast<uint32_t>(n)});
      if (it == c.allocations.end()) fail(&t, "tcgen05.dealloc of " + hex(a) + ", " + std::to_string(n) + " columns: no such allocation");
      if (opt.race_checks)
        for (uint32_t lane = 0; lane < kLanes; ++lane)
          for (uint32_t j = 0; j < n; ++j) {
            const uint32_t u = lane * kColumns + it->first + j;
            if (c.tm_w[u] || c.tm_r[u])
              fail(&t, "race: tcgen05.dealloc frees tensor memory (lane " + std::to_string(lane) + ", column " +
                           std::to_string(it->first + j) + ") that an asynchronous operation issued at ptx line " +
                           std::to_string(c.tm_line[u]) + " still uses (no wait for its commit)");
          }
      if (opt.race_checks) tc_dealloc(t, t.cta, it->first, static_cast<uint32_t>(n));
      for (uint32_t j = 0; j < n; ++j) c.allocated[it->first + j] = 0;
      c.allocations.erase(it);
      return true;
    }
    case Op::tc_relinquish: c.relinquished = true; return true;
    case Op::shfl: {
      // §9.7.9.6, .bfly: lane l reads a from lane j = l ^ b, or its own where j passes the
      // segment's last lane (c: clamp in bits 0-4, segment mask in bits 8-12).
      if ((same(in.o[4], "member masks") & 0xFFFFFFFFu) != 0xFFFFFFFFu) fail(&t, "shfl.sync with a partial member mask is not simulated");
      uint64_t src[32];
      for (uint32_t l = 0; l < 32; ++l) src[l] = val(threads[base + l], in.o[1]) & 0xFFFFFFFFu;
      for (uint32_t l = 0; l < 32; ++l) {
        Thread& x = threads[base + l];
        const uint32_t b = static_cast<uint32_t>(val(x, in.o[2])) & 31, c = static_cast<uint32_t>(val(x, in.o[3]));
        const uint32_t seg = (c >> 8) & 31, max_lane = (l & seg) | (c & 31 & ~seg);
        uint32_t j = l ^ b;
        if (j > max_lane) j = l;
        x.r[in.o[0].r] = src[j];
        x.d[in.o[0].r] = 1;
      }
      return true;
    }
    case Op::stmatrix: {
      // PTX ISA 9.1 §9.7.14.5.16: row j of matrix i starts at the address lane 8i + j gives, 16
      // bytes (a row of eight 16-bit elements), naturally aligned; lane 4j + c holds that row's
      // elements 2c (the low half) and 2c + 1 (the high half) of matrix i in its register i
      // (Figure 107, the mma m8n8 fragment). Each row is a generic-proxy write of its lane's.
      for (uint32_t i = 0; i < in.num; ++i)
        for (uint32_t j = 0; j < 8; ++j) {
          const Thread& a = threads[base + 8 * i + j];
          const uint64_t p = addr_of(a, in.o[0]);
          if (p % 16) fail(&a, "stmatrix row address " + hex(p) + " is not 16-byte aligned (PTX ISA 9.7.14.5.16)");
          const auto [cta, off] = shared(a, p, false, 16);
          shared_written(a, cta, off, 16, in.line, "stmatrix");
          uint8_t* q = smem_ptr(cta, off, 16, nullptr, &a);
          for (uint32_t c = 0; c < 4; ++c) {
            const uint32_t v = static_cast<uint32_t>(reg(threads[base + 4 * j + c], k.pool[in.o[1].r + i]));
            std::copy_n(reinterpret_cast<const uint8_t*>(&v), 4, q + 4 * c);
          }
        }
      return true;
    }
    case Op::elect: {
      const uint64_t mask32 = same(in.o[1], "member masks") & 0xFFFFFFFFu;
      if (!mask32) fail(&t, "elect.sync with an empty member mask");
      uint32_t leader = 0;
      while (!((mask32 >> leader) & 1)) ++leader;
      for (uint32_t l = 0; l < 32; ++l) {
        Thread& x = threads[base + l];
        if (in.o[0].kind == Opnd::reg) {
          x.r[in.o[0].r] = leader;
          x.d[in.o[0].r] = 1;
        }
        x.r[in.o[2].r] = l == leader;
        x.d[in.o[2].r] = 1;
      }
      return true;
    }
    case Op::wg_fence:
    case Op::wg_mma:
    case Op::wg_commit:
    case Op::wg_wait:
    case Op::setmaxnreg: return wg_collective(t, in);
    default: fail(&t, "not a warp collective");
  }
}

}  // namespace ksim
