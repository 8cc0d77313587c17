// Threads, scheduling, integer instructions, memories, barriers and TMA; see sim.hpp.
#include "machine.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "num.hpp"

namespace ksim {

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
uint8_t* Global::find(uint64_t address, size_t bytes) {
  auto it = bufs_.upper_bound(address);
  if (it == bufs_.begin()) return nullptr;
  --it;
  if (address - it->first + bytes > it->second.size()) return nullptr;
  return it->second.data() + (address - it->first);
}

namespace {

uint64_t mask(int bits) { return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1; }
int64_t sext(uint64_t v, int bits) {
  if (bits >= 64) return static_cast<int64_t>(v);
  const uint64_t m = uint64_t{1} << (bits - 1);
  v &= mask(bits);
  return static_cast<int64_t>((v ^ m) - m);
}
std::string hex(uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

const bool kTrace = std::getenv("KSIM_TRACE") != nullptr;

}  // namespace

Machine::Machine(const Kernel& kk, const Launch& l, Global& g, const Options& o, Stats& s)
    : k(kk), launch(l), global(g), opt(o), stats(s) {
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
  spin_.assign(k.code.size(), 0);
  for (size_t i = 0; i + 1 < k.code.size(); ++i) {
    const Ins& a = k.code[i];
    const Ins& b = k.code[i + 1];
    if (a.op == Op::mbar_try_wait && b.op == Op::bra && b.guard == static_cast<int32_t>(a.o[0].r) && b.guard_neg &&
        b.o[0].r == i)
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
    case sp_laneid: return t.tid % 32;
    case sp_warpid: return t.tid / 32;
    case sp_smem_symbol: return launch.smem_symbol;
    default:
      if (id >= sp_param0 && id < sp_param0 + k.params.size()) return 0x7F0000000000ull + uint64_t{id - sp_param0} * 0x1000;
      fail(&t, "unknown special register");
  }
}

void Machine::undefined(const Thread& t, uint32_t slot) const {
  fail(&t, "reads register " + k.slot_names[slot] + ", which no instruction on this thread's path has written");
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
  for (uint32_t u : r.units) {
    if (w[u] || (r.write && rd[u])) {
      std::ostringstream s;
      s << "race: " << what << " " << (r.write ? "writes" : "reads") << " ";
      if (r.tmem) s << "tensor memory lane " << u / kColumns << ", column " << u % kColumns;
      else s << "shared memory at " << hex(uint64_t{u} * 16);
      s << " while an asynchronous operation issued at ptx line " << line[u] << (w[u] ? " writes" : " reads")
        << " it (no wait for its completion)";
      fail(t, s.str());
    }
  }
}
void Machine::hold(Async& a, Region&& r) {
  if (!opt.race_checks) return;
  Cta& c = ctas[r.cta];
  auto& cnt = r.tmem ? (r.write ? c.tm_w : c.tm_r) : (r.write ? c.sm_w : c.sm_r);
  auto& line = r.tmem ? c.tm_line : c.sm_line;
  for (uint32_t u : r.units) {
    ++cnt[u];
    line[u] = a.ins->line;
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
  collective_do(t, in);
  for (uint32_t l = 0; l < 32; ++l) {
    threads[base + l].pc++;
    wake(base + l);
  }
  return false;
}

void Machine::collective_do(Thread& t, const Ins& in) {
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
      return;
    case Op::tc_wait_ld:
      for (uint32_t l = 0; l < 32; ++l) {
        Thread& x = threads[base + l];
        for (const auto& p : x.lds) x.r[p.slot] = p.value;
        x.lds.clear();
      }
      return;
    case Op::tc_wait_st:
      for (uint32_t l = 0; l < 32; ++l) {
        Thread& x = threads[base + l];
        for (const auto& p : x.sts) ctas[p.cta].tmem[p.cell] = p.value;
        x.sts.clear();
      }
      return;
    case Op::tc_ld:
    case Op::tc_st: {
      const uint32_t taddr = static_cast<uint32_t>(same(in.op == Op::tc_ld ? in.o[1] : in.o[0], "tensor-memory addresses"));
      for (uint32_t l = 0; l < 32; ++l) {
        if (in.op == Op::tc_ld) tc_ld(threads[base + l], in, taddr);
        else tc_st(threads[base + l], in, taddr);
      }
      return;
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
      return;
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
      for (uint32_t j = 0; j < n; ++j) c.allocated[it->first + j] = 0;
      c.allocations.erase(it);
      return;
    }
    case Op::tc_relinquish: c.relinquished = true; return;
    default: fail(&t, "not a warp collective");
  }
}

// ---- TMA (PTX ISA 9.1 §9.7.9.27.1.2; §5.5: tile mode, bounding box, out-of-bound fill, swizzle) -------
void Machine::tma_issue(Thread& t, const Ins& in) {
  Async a;
  a.kind = Async::tma;
  a.ins = &in;
  a.cta = t.cta;
  const uint64_t tm = val(t, in.o[1]);
  const uint64_t pi = (tm - 0x7F0000000000ull) / 0x1000;
  if (tm < 0x7F0000000000ull || (tm - 0x7F0000000000ull) % 0x1000 || pi >= param_maps.size() || !param_maps[pi])
    fail(&t, "the tensor-map operand " + hex(tm) + " is not the address of a tensor-map parameter");
  a.map = param_maps[pi];
  const TensorMap& m = *a.map;
  const uint32_t* c = &k.pool[in.o[2].r];
  a.v[2] = reg(t, c[0]) & 0xFFFFFFFFu;
  a.v[3] = reg(t, c[1]) & 0xFFFFFFFFu;
  const uint32_t row_bytes = m.smem_bits == 8 && m.elem_bits < 8 ? m.box[0] / 16 * 16 : m.box[0] * static_cast<uint32_t>(m.elem_bits) / 8;
  const uint32_t bytes = row_bytes * m.box[1];
  const auto [dcta, doff] = shared(t, addr_of(t, in.o[0]), true, bytes);
  const auto [bcta, boff] = shared(t, addr_of(t, in.o[3]), true, 8);
  if (doff % 128) fail(&t, "TMA destination " + hex(doff) + " not 128-byte aligned");
  if (in.cta_group == 2 ? (bcta >> 1) != (dcta >> 1) : bcta != dcta)
    fail(&t, std::string("the TMA's mbarrier is in CTA rank ") + std::to_string(bcta) + ", its destination in rank " +
                 std::to_string(dcta) + (in.cta_group == 2 ? " (not one pair)" : " (.cta_group::2 would allow its peer)"));
  a.v[0] = dcta;
  a.v[1] = doff;
  a.v[4] = bcta;
  a.v[5] = boff;
  a.v[6] = bytes;
  Region r{dcta, true, false, {}};
  for (uint32_t u = doff / 16; u < (doff + bytes + 15) / 16; ++u) r.units.push_back(u);
  check_region(r, &t, "a TMA load");
  hold(a, std::move(r));
  ++stats.tma_boxes;
  trace_issue(a);
  async.push_back(std::move(a));
}

void Machine::tma_complete(Async& a) {
  const TensorMap& m = *a.map;
  const int64_t c0 = sext(a.v[2], 32), c1 = sext(a.v[3], 32);
  const bool padded = m.smem_bits == 8 && m.elem_bits < 8;  // 16U4/16U6_ALIGN16B: 16 elements, then padding to 16 bytes
  const uint32_t row_bytes = padded ? m.box[0] / 16 * 16 : m.box[0] * static_cast<uint32_t>(m.elem_bits) / 8;
  const uint32_t dcta = static_cast<uint32_t>(a.v[0]), doff = static_cast<uint32_t>(a.v[1]);
  std::vector<uint8_t> row(row_bytes);
  for (uint32_t y = 0; y < m.box[1]; ++y) {
    std::fill(row.begin(), row.end(), padded ? 0xA5 : 0);  // the padding is "un-initialized" (§5.5.1.1.1)
    const int64_t gy = c1 + y;
    for (uint32_t x = 0; x < m.box[0]; ++x) {
      const int64_t gx = c0 + x;
      uint64_t bits = 0;
      if (gx >= 0 && gy >= 0 && static_cast<uint64_t>(gx) < m.dims[0] && static_cast<uint64_t>(gy) < m.dims[1]) {
        const uint64_t bit = static_cast<uint64_t>(gx) * static_cast<uint64_t>(m.elem_bits);
        const uint64_t byte = m.global + static_cast<uint64_t>(gy) * m.stride + bit / 8;
        const uint32_t nb = static_cast<uint32_t>((bit % 8 + static_cast<uint64_t>(m.elem_bits) + 7) / 8);
        const uint8_t* g = global.find(byte, nb);
        if (!g) fail_async(a, "TMA reads global memory outside every buffer at " + hex(byte));
        uint64_t w = 0;
        for (uint32_t i = 0; i < nb; ++i) w |= uint64_t{g[i]} << (8 * i);
        bits = (w >> (bit % 8)) & mask(m.elem_bits);
      }  // else: zero fill (§5.5.3.3)
      const uint64_t sbit = padded ? (x / 16) * 128 + (x % 16) * static_cast<uint64_t>(m.elem_bits) : uint64_t{x} * static_cast<uint64_t>(m.elem_bits);
      for (int i = 0; i < m.elem_bits; ++i) {
        const uint64_t b = sbit + static_cast<uint64_t>(i);
        row[b / 8] = static_cast<uint8_t>((row[b / 8] & ~(1u << (b % 8))) | (((bits >> i) & 1) << (b % 8)));
      }
    }
    // Rows land one after another; the swizzle moves each `atom`-byte piece of a 128-byte line to
    // piece ^ (line mod (span / atom)) (§5.5.7), on the absolute shared address.
    for (uint32_t x = 0; x < row_bytes; x += 16) {
      uint32_t s = doff + y * row_bytes + x;
      if (m.swizzle) {
        const uint32_t line = s / 128, atoms = 128 / static_cast<uint32_t>(m.atom);
        const uint32_t piece = (s % 128) / static_cast<uint32_t>(m.atom);
        const uint32_t moved = (piece ^ (line % static_cast<uint32_t>(m.swizzle / m.atom))) % atoms;
        s = line * 128 + moved * static_cast<uint32_t>(m.atom) + s % static_cast<uint32_t>(m.atom);
      }
      std::copy_n(row.data() + x, 16, smem_ptr(dcta, s, 16, &a, nullptr));
    }
  }
  mbar_arrive(static_cast<uint32_t>(a.v[4]), static_cast<uint32_t>(a.v[5]), 0, -static_cast<int64_t>(a.v[6]), nullptr, &a);
}

void Machine::complete(Async& a) {
  if (kTrace) std::fprintf(stderr, "complete kind %d line %u cta %u v0 %lx v1 %lx\n", a.kind, a.ins->line, a.cta, (unsigned long)a.v[0], (unsigned long)a.v[1]);
  release(a);
  switch (a.kind) {
    case Async::tma: tma_complete(a); return;
    case Async::commit:
      for (uint32_t c = 0; c < ctas.size(); ++c)
        if ((a.v[1] >> c) & 1) mbar_arrive(c, static_cast<uint32_t>(a.v[0]), 1, 0, nullptr, &a);
      return;
    default: tc_complete(a); return;
  }
}

// ---- the interpreter ------------------------------------------------------------------------------
void Machine::run_thread(Thread& t) {
  uint64_t* R = t.r;
  const Ins* code = k.code.data();
  const size_t n = k.code.size();
  for (;;) {
    if (t.pc >= n) fail(&t, "ran past the end of the kernel");
    if (++stats.instructions > opt.max_instructions)
      fail(&t, "the kernel does not end (" + std::to_string(opt.max_instructions) + " instructions)");
    const Ins& in = code[t.pc];
    if (in.guard >= 0 && ((reg(t, static_cast<uint32_t>(in.guard)) != 0) == in.guard_neg)) {
      ++t.pc;
      continue;
    }
    const int bits = in.ty.bits;
    const bool sgn = in.ty.cls == Cls::s;
    auto A = [&](int i) { return val(t, in.o[i]); };
    auto put = [&](uint32_t slot, uint64_t v) {
      R[slot] = v;
      t.d[slot] = 1;
    };
    auto set = [&](uint64_t v) { put(in.o[0].r, v & mask(bits)); };
    switch (in.op) {
      case Op::mov: set(A(1)); break;
      case Op::mov_pack: {
        const uint32_t* s = &k.pool[in.o[1].r];
        const int w = bits / in.o[1].count;
        uint64_t v = 0;
        for (int i = in.o[1].count - 1; i >= 0; --i) v = (v << w) | (reg(t, s[i]) & mask(w));
        set(v);
        break;
      }
      case Op::mov_unpack: {
        const uint32_t* d = &k.pool[in.o[0].r];
        const int w = bits / in.o[0].count;
        const uint64_t v = A(1);
        for (int i = 0; i < in.o[0].count; ++i)
          if (d[i] != kSinkSlot) put(d[i], (v >> (w * i)) & mask(w));
        break;
      }
      case Op::add: set(A(1) + A(2)); break;
      case Op::sub: set(A(1) - A(2)); break;
      case Op::mul_lo: set(A(1) * A(2)); break;
      case Op::mul_hi:
        if (bits == 64) fail(&t, "mul.hi.64 is not simulated");
        set(sgn ? static_cast<uint64_t>((sext(A(1), bits) * sext(A(2), bits)) >> bits) : ((A(1) & mask(bits)) * (A(2) & mask(bits))) >> bits);
        break;
      case Op::mul_wide:
        put(in.o[0].r, sgn ? static_cast<uint64_t>(sext(A(1), bits) * sext(A(2), bits)) & mask(2 * bits)
                           : ((A(1) & mask(bits)) * (A(2) & mask(bits))) & mask(2 * bits));
        break;
      case Op::mad_lo: set(A(1) * A(2) + A(3)); break;
      case Op::div:
      case Op::rem: {
        if ((A(2) & mask(bits)) == 0) fail(&t, "integer division by zero");
        if (sgn) {
          const int64_t x = sext(A(1), bits), y = sext(A(2), bits);
          set(static_cast<uint64_t>(in.op == Op::div ? x / y : x % y));
        } else {
          const uint64_t x = A(1) & mask(bits), y = A(2) & mask(bits);
          set(in.op == Op::div ? x / y : x % y);
        }
        break;
      }
      case Op::min:
      case Op::max: {
        const bool lt = sgn ? sext(A(1), bits) < sext(A(2), bits) : (A(1) & mask(bits)) < (A(2) & mask(bits));
        set((lt == (in.op == Op::min)) ? A(1) : A(2));
        break;
      }
      case Op::and_: set(A(1) & A(2)); break;
      case Op::or_: set(A(1) | A(2)); break;
      case Op::xor_: set(A(1) ^ A(2)); break;
      case Op::not_: set(in.ty.cls == Cls::pred ? !A(1) : ~A(1)); break;
      case Op::shl: {
        const uint64_t s = A(2) & 0xFFFFFFFFu;
        set(s >= static_cast<uint64_t>(bits) ? 0 : A(1) << s);
        break;
      }
      case Op::shr: {
        const uint64_t s = std::min<uint64_t>(A(2) & 0xFFFFFFFFu, static_cast<uint64_t>(bits));
        if (sgn) set(static_cast<uint64_t>(sext(A(1), bits) >> std::min<uint64_t>(s, static_cast<uint64_t>(bits - 1))));
        else set(s >= static_cast<uint64_t>(bits) ? 0 : (A(1) & mask(bits)) >> s);
        break;
      }
      case Op::bfe: {
        const uint64_t pos = A(2) & 0xFF, len = A(3) & 0xFF, x = A(1) & mask(bits);
        uint64_t v = 0;
        if (len) {
          v = pos >= static_cast<uint64_t>(bits) ? 0 : x >> pos;
          v &= mask(static_cast<int>(std::min<uint64_t>(len, 64)));
          if (sgn) v = static_cast<uint64_t>(sext(v, static_cast<int>(std::min<uint64_t>(len, static_cast<uint64_t>(bits)))));
        }
        set(v);
        break;
      }
      case Op::selp: set(A(3) ? A(1) : A(2)); break;
      case Op::setp: {
        const uint64_t x = A(1), y = A(2);
        bool r = false;
        if (in.ty.cls == Cls::f) fail(&t, "floating-point setp is not simulated");
        const bool lt = sgn ? sext(x, bits) < sext(y, bits) : (x & mask(bits)) < (y & mask(bits));
        const bool eq = (x & mask(bits)) == (y & mask(bits));
        switch (in.cmp) {
          case 0: r = eq; break;
          case 1: r = !eq; break;
          case 2: r = lt; break;
          case 3: r = lt || eq; break;
          case 4: r = !lt && !eq; break;
          default: r = !lt; break;
        }
        if (in.boolop) {
          const bool c = A(3) != 0;
          r = in.boolop == 1 ? (r && c) : in.boolop == 2 ? (r || c) : (r != c);
        }
        put(in.o[0].r, r);
        break;
      }
      case Op::cvt: {
        const Ty d = in.ty, s = in.ty2;
        const uint64_t x = A(1);
        if (d.cls != Cls::f && s.cls != Cls::f) {  // integer widths: sign- or zero-extend the source, truncate to the destination
          const uint64_t v = s.cls == Cls::s ? static_cast<uint64_t>(sext(x, s.bits)) : (x & mask(s.bits));
          put(in.o[0].r, v & mask(d.bits));
        } else if (d.cls == Cls::f && (d.fmt & 16) && s.cls == Cls::f && s.bits == 32) {  // .f16x2/.bf16x2 from two f32: a upper, b lower
          const num::Format& f = (d.fmt & 15) == 1 ? num::kF16 : num::kBF16;
          const uint32_t hi = num::encode_rn(f, num::f32_of(static_cast<uint32_t>(x)));
          const uint32_t lo = num::encode_rn(f, num::f32_of(static_cast<uint32_t>(A(2))));
          put(in.o[0].r, (uint64_t{hi} << 16) | lo);
        } else if (d.cls == Cls::f && d.bits == 16 && s.cls == Cls::f && s.bits == 32) {
          put(in.o[0].r, num::encode_rn(d.fmt == 1 ? num::kF16 : num::kBF16, num::f32_of(static_cast<uint32_t>(x))));
        } else if (d.cls == Cls::f && d.bits == 32 && s.cls == Cls::f && s.bits == 16) {
          put(in.o[0].r, num::bits_of(static_cast<float>(s.fmt == 1 ? num::f16(static_cast<uint32_t>(x)) : num::bf16(static_cast<uint32_t>(x)))));
        } else if (d.cls == Cls::f && d.bits == 32 && (s.cls == Cls::s || s.cls == Cls::u) && s.bits <= 32) {
          const double v = s.cls == Cls::s ? static_cast<double>(sext(x, s.bits)) : static_cast<double>(x & mask(s.bits));
          put(in.o[0].r, num::bits_of(static_cast<float>(v)));  // round to nearest even
        } else {
          fail(&t, "this cvt is not simulated");
        }
        break;
      }
      case Op::cvta: put(in.o[0].r, A(1)); break;
      case Op::mapa: {
        const uint64_t rank = A(2) & 0xFFFFFFFFu;
        if (rank >= ctas.size()) fail(&t, "mapa to CTA rank " + std::to_string(rank) + " outside the cluster");
        const uint64_t a = A(1) & 0xFFFFFFFFu;
        const uint64_t off = (a >> kClusterTagShift) ? a & ((1u << kClusterTagShift) - 1) : a;
        put(in.o[0].r, ((rank + 1) << kClusterTagShift) | off);
        break;
      }
      case Op::ld:
      case Op::st: {
        const bool ld = in.op == Op::ld;
        const Opnd& mo = ld ? in.o[1] : in.o[0];
        const Opnd& vo = ld ? in.o[0] : in.o[1];
        const uint32_t eb = static_cast<uint32_t>(bits) / 8, nb = eb * in.vec;
        uint8_t* p = nullptr;
        if (in.cmp == sp_param) {
          if (!ld || mo.kind != Opnd::param) fail(&t, "bad ld.param");
          const auto& pd = k.params[mo.r];
          if (pd.tensor_map) fail(&t, "ld.param of a tensor map is not simulated");
          uint64_t v = 0;
          for (const auto& x : launch.params)
            if (x.name == pd.name) v = x.value;
          put(vo.r, v & mask(bits));
          break;
        }
        const uint64_t a = addr_of(t, mo);
        if (a % eb) fail(&t, "misaligned " + std::string(ld ? "load" : "store") + " at " + hex(a));
        if (in.cmp == sp_global) {
          p = global.find(a, nb);
          if (!p) fail(&t, "global access at " + hex(a) + " (" + std::to_string(nb) + " bytes) outside every buffer");
        } else {
          const auto [cta, off] = shared(t, a, in.cmp == sp_shared_cluster, nb);
          if (opt.race_checks) {
            Region r{cta, !ld, false, {}};
            for (uint32_t u = off / 16; u <= (off + nb - 1) / 16; ++u) r.units.push_back(u);
            check_region(r, &t, ld ? "ld.shared" : "st.shared");
          }
          p = smem_ptr(cta, off, nb, nullptr, &t);
        }
        for (uint32_t e = 0; e < in.vec; ++e) {
          const uint32_t s = vo.kind == Opnd::vec ? k.pool[vo.r + e] : vo.r;
          if (ld) {
            uint64_t v = 0;
            for (uint32_t i = 0; i < eb; ++i) v |= uint64_t{p[e * eb + i]} << (8 * i);
            if (s != kSinkSlot) put(s, v);
          } else {
            const uint64_t v = vo.kind == Opnd::vec ? reg(t, s) : val(t, vo);
            for (uint32_t i = 0; i < eb; ++i) p[e * eb + i] = static_cast<uint8_t>(v >> (8 * i));
          }
        }
        break;
      }
      case Op::bra: t.pc = in.o[0].r; continue;
      case Op::ret: t.st = Thread::exited; return;
      case Op::bar_sync: {
        Cta& c = ctas[t.cta];
        if (val(t, in.o[0]) != 0) fail(&t, "only barrier 0 is simulated");
        ++t.pc;
        t.st = Thread::at_bar;
        c.bar_waiters.push_back(static_cast<uint32_t>(&t - threads.data()));
        if (++c.bar_arrived == launch.threads) {
          c.bar_arrived = 0;
          for (uint32_t w : c.bar_waiters) wake(w);
          c.bar_waiters.clear();
        }
        return;
      }
      case Op::cluster_arrive:
        if (t.cluster_arrived) fail(&t, "barrier.cluster.arrive twice without a wait");
        t.cluster_arrived = true;
        t.cluster_phase = cluster_phase_;
        if (++cluster_arrived_ == threads.size()) {
          cluster_arrived_ = 0;
          ++cluster_phase_;
          for (uint32_t w : cluster_waiters_) wake(w);
          cluster_waiters_.clear();
        }
        break;
      case Op::cluster_wait:
        if (!t.cluster_arrived) fail(&t, "barrier.cluster.wait without an arrive");
        if (cluster_phase_ > t.cluster_phase) {
          t.cluster_arrived = false;
          break;
        }
        t.st = Thread::at_cluster;
        cluster_waiters_.push_back(static_cast<uint32_t>(&t - threads.data()));
        return;
      case Op::nop: break;
      case Op::mbar_init: {
        const auto [cta, off] = shared(t, addr_of(t, in.o[0]), false, 8);
        if (off % 8) fail(&t, "mbarrier not 8-byte aligned");
        const uint64_t n = A(1) & 0xFFFFFFFFu;
        if (n < 1 || n >= (1u << 20)) fail(&t, "mbarrier expected count out of range");
        Mbar& m = ctas[cta].mbars[off];
        if (!m.waiters.empty()) fail(&t, "mbarrier.init of a barrier threads wait on");
        m = Mbar{};
        m.expected = m.pending = static_cast<uint32_t>(n);
        break;
      }
      case Op::mbar_arrive: {
        const auto [cta, off] = shared(t, addr_of(t, in.o[1]), false, 8);
        uint32_t count = 1;
        int64_t tx = 0;
        if (in.pack) tx = static_cast<int64_t>(A(2) & 0xFFFFFFFFu);
        else if (in.nops == 3) count = static_cast<uint32_t>(A(2));
        if (in.o[0].kind == Opnd::reg) put(in.o[0].r, mbar(&t, cta, off).phase);  // the state token
        mbar_arrive(cta, off, count, tx, &t, nullptr);
        break;
      }
      case Op::mbar_try_wait: {
        const auto [cta, off] = shared(t, addr_of(t, in.o[1]), false, 8);
        Mbar& m = mbar(&t, cta, off);
        const uint64_t parity = A(2) & 1;
        const bool done = (m.phase & 1) != parity;  // the phase with this parity has completed
        put(in.o[0].r, done);
        if (kTrace) std::fprintf(stderr, "  try_wait cta %u tid %u off %x parity %lu phase %lu -> %d\n", t.cta, t.tid, off, (unsigned long)parity, (unsigned long)m.phase, done);
        if (!done && spin_[t.pc]) {  // block here until the barrier moves on
          t.st = Thread::at_mbar;
          t.wait_cta = cta;
          t.wait_addr = off;
          t.wait_parity = static_cast<uint32_t>(parity);
          m.waiters.push_back(static_cast<uint32_t>(&t - threads.data()));
          return;
        }
        break;
      }
      case Op::tma_load: tma_issue(t, in); break;
      case Op::tc_mma:
        tc_issue_mma(t, in);
        ++stats.mma;
        break;
      case Op::tc_cp: tc_issue_cp(t, in); break;
      case Op::tc_commit: {
        Async a;
        a.kind = Async::commit;
        a.ins = &in;
        a.cta = t.cta;
        const auto [cta, off] = shared(t, addr_of(t, in.o[0]), true, 8);
        uint64_t m = uint64_t{1} << cta;
        if (in.multicast) {
          m = A(1) & 0xFFFF;
          if (m >> ctas.size()) fail(&t, "tcgen05.commit ctaMask names CTAs outside the cluster");
        }
        a.v[0] = off;  // the same offset in every CTA the mask names (§9.7.16.12.1)
        a.v[1] = m;
        trace_issue(a);
  async.push_back(std::move(a));
        break;
      }
      case Op::bar_warp_sync:
      case Op::tc_alloc:
      case Op::tc_dealloc:
      case Op::tc_relinquish:
      case Op::tc_ld:
      case Op::tc_st:
      case Op::tc_wait_ld:
      case Op::tc_wait_st:
        if (!collective(t, in)) return;
        continue;
    }
    ++t.pc;
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
        case Thread::at_bar: s << ": waits at bar.sync (" << ctas[t.cta].bar_arrived << " of " << launch.threads << " threads arrived)"; break;
        case Thread::at_cluster: s << ": waits at barrier.cluster.wait"; break;
        case Thread::at_collective: s << ": waits for the rest of its warp at a .sync.aligned instruction"; break;
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
      c.tm_w.assign(kLanes * kColumns, 0);
      c.tm_r.assign(kLanes * kColumns, 0);
      c.tm_line.assign(kLanes * kColumns, 0);
    }
  }
  threads.assign(size_t{n} * launch.threads, Thread{});
  regs.assign(threads.size() * k.slots, 0);
  defined_.assign(threads.size() * k.slots, 0);
  warp_arrived_.assign(threads.size() / 32, 0);
  cluster_arrived_ = 0;
  cluster_phase_ = 0;
  cluster_waiters_.clear();
  async.clear();
  runnable_.clear();
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
      Thread& t = threads[runnable_.front()];
      runnable_.pop_front();
      t.queued = false;
      if (t.st == Thread::ready) run_thread(t);
    }
    if (!async.empty()) {  // nothing can run: the oldest asynchronous operation completes
      Async a = std::move(async.front());
      async.pop_front();
      complete(a);
      continue;
    }
    bool all = true;
    for (const auto& t : threads) all = all && t.st == Thread::exited;
    if (all) break;
    deadlock();
  }
  for (const Cta& c : ctas)
    if (!c.allocations.empty())
      throw Error("CTA rank " + std::to_string(c.rank) + " exits with tensor memory allocated (PTX ISA 9.7.16.7.1: all of it must be deallocated)");
  stats.ctas += n;
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
