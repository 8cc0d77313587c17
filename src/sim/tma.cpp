// TMA loads and the completion of asynchronous operations.
#include "machine.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "num.hpp"

namespace ksim {

// ---- TMA (PTX ISA 9.1 §9.7.9.27.1.2; §5.5: tile mode, bounding box, out-of-bound fill, swizzle) -------
// The tensor map a TMA operand names: the generic address of a tensor-map kernel parameter.
const TensorMap& Machine::tensor_map_of(const Thread& t, const Opnd& o) const {
  const uint64_t tm = val(t, o);
  const uint64_t pi = (tm - 0x7F0000000000ull) / 0x1000;
  if (tm < 0x7F0000000000ull || (tm - 0x7F0000000000ull) % 0x1000 || pi >= param_maps.size() || !param_maps[pi])
    fail(&t, "the tensor-map operand " + hex(tm) + " is not the address of a tensor-map parameter");
  const TensorMap& m = *param_maps[pi];
  // cuTensorMapEncodeTiled refuses a row stride that is not a multiple of 16 bytes.
  if (m.stride % 16) fail(&t, "tensor map with a row stride of " + std::to_string(m.stride) + " bytes (not a multiple of 16)");
  return m;
}

// A TMA operation of `kind` through the map `map` at the coordinates `coords` (v[2], v[3]).
Async Machine::tma_async(const Thread& t, const Ins& in, Async::Kind kind, const Opnd& map, const Opnd& coords) const {
  Async a;
  a.kind = kind;
  a.ins = &in;
  a.cta = t.cta;
  a.map = &tensor_map_of(t, map);
  const uint32_t* c = &k.pool[coords.r];
  a.v[2] = reg(t, c[0]) & 0xFFFFFFFFu;
  a.v[3] = reg(t, c[1]) & 0xFFFFFFFFu;
  a.v[7] = coords.count == 3 ? reg(t, c[2]) & 0xFFFFFFFFu : 0;
  if (static_cast<int>(coords.count) != a.map->rank)
    fail(&t, "a " + std::to_string(coords.count) + "-D TMA through a tensor map of rank " + std::to_string(a.map->rank));
  if (a.map->rank == 3 && a.map->box[2] != 1) fail(&t, "a rank-3 TMA box more than one plane deep is not simulated");
  return a;
}

// A box row's bytes in shared memory, the box as cuTensorMapEncodeTiled takes it: at most 256 per
// dimension, rows whole 16 bytes (the padded types: whole groups of 16 elements), within the
// swizzle span.
uint32_t Machine::tma_row_bytes(const Thread& t, const TensorMap& m) const {
  const uint32_t row_bytes = m.smem_bits == 8 && m.elem_bits < 8 ? m.box[0] / 16 * 16 : m.box[0] * static_cast<uint32_t>(m.elem_bits) / 8;
  if (m.box[0] == 0 || m.box[1] == 0 || m.box[0] > 256 || m.box[1] > 256) fail(&t, "TMA box dimensions outside 1..256");
  if (row_bytes % 16 || (m.smem_bits == 8 && m.elem_bits < 8 && m.box[0] % 16) || (m.elem_bits * m.box[0]) % 8)
    fail(&t, "TMA box row of " + std::to_string(row_bytes) + " bytes is not whole 16-byte pieces");
  if (m.swizzle && row_bytes > static_cast<uint32_t>(m.swizzle)) fail(&t, "TMA box row wider than its swizzle span");
  return row_bytes;
}

// Where byte `s` of a box (rows one after another from its start) lies: the swizzle moves each
// `atom`-byte piece of a 128-byte line to piece ^ (line mod (span / atom)) (§5.5.7), on the
// absolute shared address.
namespace {
uint32_t swizzled(const TensorMap& m, uint32_t s) {
  if (!m.swizzle) return s;
  const uint32_t line = s / 128, atoms = 128 / static_cast<uint32_t>(m.atom);
  const uint32_t piece = (s % 128) / static_cast<uint32_t>(m.atom);
  const uint32_t moved = (piece ^ (line % static_cast<uint32_t>(m.swizzle / m.atom))) % atoms;
  return line * 128 + moved * static_cast<uint32_t>(m.atom) + s % static_cast<uint32_t>(m.atom);
}
}  // namespace

void Machine::tma_issue(Thread& t, const Ins& in) {
  Async a = tma_async(t, in, Async::tma, in.o[1], in.o[2]);
  const TensorMap& m = *a.map;
  const uint32_t bytes = tma_row_bytes(t, m) * m.box[1];
  const auto [dcta, doff] = shared(t, addr_of(t, in.o[0]), true, bytes);
  const auto [bcta, boff] = shared(t, addr_of(t, in.o[3]), true, 8);
  if (doff % 128) fail(&t, "TMA destination " + hex(doff) + " not 128-byte aligned");
  if (in.cta_group == 2 ? (bcta >> 1) != (dcta >> 1) : bcta != dcta)
    fail(&t, std::string("the TMA's mbarrier is in CTA rank ") + std::to_string(bcta) + ", its destination in rank " +
                 std::to_string(dcta) + (in.cta_group == 2 ? " (not one pair)" : " (.cta_group::2 would allow its peer)"));
  a.v[4] = bcta;
  a.v[5] = boff;
  a.v[6] = bytes;
  ++stats.tma_boxes;
  if (!in.multicast) {
    a.v[0] = dcta;
    a.v[1] = doff;
    tma_queue(t, std::move(a), dcta, doff, bytes, true, "a TMA load");
    return;
  }
  // .multicast::cluster (§9.7.9.27.1.2): the box lands at the same offset in every CTA of ctaMask
  // (bit i: %cluster_ctarank i); its complete_tx goes to the barrier at the mbarrier operand's offset
  // in each destination (.cta_group::1), or in the CTA of each destination's pair whose rank has the
  // parity of the CTA the mbarrier operand lies in (.cta_group::2).
  const uint64_t mask = val(t, in.o[4]) & 0xFFFF;
  if (!mask) fail(&t, "a multicast TMA load with an empty ctaMask");
  if (mask >> ctas.size()) fail(&t, "the TMA's ctaMask names CTAs outside the cluster");
  for (uint32_t d = 0; d < ctas.size(); ++d) {
    if (!((mask >> d) & 1)) continue;
    Async x = a;
    x.v[0] = d;
    x.v[1] = doff;
    x.v[4] = in.cta_group == 2 ? (d & ~1u) | (bcta & 1u) : d;
    if (x.v[4] >= ctas.size()) fail(&t, "the multicast TMA's barrier CTA is outside the cluster");
    tma_queue(t, std::move(x), d, doff, bytes, true, "a multicast TMA load");
  }
}

// Registers the bytes [off, off + bytes) of CTA `cta`'s shared memory a TMA operation writes or
// reads (checked against the operations in flight) and queues it.
void Machine::tma_queue(Thread& t, Async&& a, uint32_t cta, uint32_t off, uint32_t bytes, bool write, const char* what) {
  Region r{cta, write, false, {}};
  for (uint32_t u = off / 16; u < (off + bytes + 15) / 16; ++u) r.units.push_back(u);
  check_region(r, &t, what);
  hold(a, std::move(r));
  trace_issue(a);
  async.push_back(std::move(a));
}

void Machine::tma_complete(Async& a) {
  const TensorMap& m = *a.map;
  const int64_t c0 = sext(a.v[2], 32), c1 = sext(a.v[3], 32), c2 = sext(a.v[7], 32);
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
      if (gx >= 0 && gy >= 0 && c2 >= 0 && static_cast<uint64_t>(gx) < m.dims[0] && static_cast<uint64_t>(gy) < m.dims[1] &&
          static_cast<uint64_t>(c2) < m.dims[2]) {
        const uint64_t bit = static_cast<uint64_t>(gx) * static_cast<uint64_t>(m.elem_bits);
        const uint64_t byte = m.global + static_cast<uint64_t>(c2) * m.stride2 + static_cast<uint64_t>(gy) * m.stride + bit / 8;
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
    // Rows land one after another, swizzled.
    for (uint32_t x = 0; x < row_bytes; x += 16)
      std::copy_n(row.data() + x, 16, smem_ptr(dcta, swizzled(m, doff + y * row_bytes + x), 16, &a, nullptr));
  }
  mbar_arrive(static_cast<uint32_t>(a.v[4]), static_cast<uint32_t>(a.v[5]), 0, -static_cast<int64_t>(a.v[6]), nullptr, &a);
}

// ---- TMA stores (PTX ISA 9.1 §9.7.9.25.5.1: .global.shared::cta, .bulk_group completion) ---------
// The box is read from shared memory as a load writes it (rows one after another, the swizzle on
// the absolute address) and written to the elements of the tensor inside its extents only (§5.5:
// the bounding box is clipped; nothing outside the tensor is written). The shared-memory reads
// happen at completion, which the simulator delays as long as it can, so a thread that writes the
// box before waiting for its group's reads (cp.async.bulk.wait_group.read) is reported as a race.
void Machine::tma_store_issue(Thread& t, const Ins& in) {
  Async a = tma_async(t, in, Async::tma_store, in.o[0], in.o[1]);
  const TensorMap& m = *a.map;
  if (m.elem_bits < 8 || m.smem_bits != m.elem_bits) fail(&t, "a TMA store of sub-byte or padded elements is not simulated");
  const uint32_t bytes = tma_row_bytes(t, m) * m.box[1];
  const auto [scta, soff] = shared(t, addr_of(t, in.o[2]), false, bytes);
  if (soff % 128) fail(&t, "TMA store source " + hex(soff) + " not 128-byte aligned");
  a.v[0] = scta;
  a.v[1] = soff;
  a.v[4] = static_cast<uint64_t>(&t - threads.data());
  a.v[5] = t.bulk_open;
  ++t.bulk_open_in_flight;
  ++stats.tma_stores;
  tma_queue(t, std::move(a), scta, soff, bytes, false, "a TMA store");
}

void Machine::tma_store_complete(Async& a) {
  const TensorMap& m = *a.map;
  const int64_t c0 = sext(a.v[2], 32), c1 = sext(a.v[3], 32), c2 = sext(a.v[7], 32);  // c2: a rank-3 map's plane (else 0)
  const uint32_t eb = static_cast<uint32_t>(m.elem_bits) / 8, row_bytes = m.box[0] * eb;
  const uint32_t scta = static_cast<uint32_t>(a.v[0]), soff = static_cast<uint32_t>(a.v[1]);
  for (uint32_t y = 0; y < m.box[1]; ++y) {
    const int64_t gy = c1 + y;
    if (gy < 0 || static_cast<uint64_t>(gy) >= m.dims[1] || c2 < 0 || (m.rank == 3 && static_cast<uint64_t>(c2) >= m.dims[2])) continue;
    for (uint32_t x = 0; x < m.box[0]; ++x) {
      const int64_t gx = c0 + x;
      if (gx < 0 || static_cast<uint64_t>(gx) >= m.dims[0]) continue;
      // The element's byte in the box as a load would place it, swizzled.
      const uint32_t s = swizzled(m, soff + y * row_bytes + x * eb);
      const uint64_t byte = m.global + static_cast<uint64_t>(c2) * m.stride2 + static_cast<uint64_t>(gy) * m.stride + static_cast<uint64_t>(gx) * eb;
      uint8_t* g = global.find(byte, eb);
      if (!g) fail_async(a, "TMA store writes global memory outside every buffer at " + hex(byte));
      global.wrote(byte, eb);
      std::copy_n(smem_ptr(scta, s, eb, &a, nullptr), eb, g);
    }
  }
  // The store leaves its thread's bulk group; a thread waiting on the group looks again.
  Thread& t = threads[a.v[4]];
  if (a.v[5] == t.bulk_open) {
    --t.bulk_open_in_flight;
  } else {
    for (BulkGroup& g : t.bulk)
      if (g.id == a.v[5]) --g.in_flight;
  }
  if (t.st == Thread::at_bulk) wake(static_cast<uint32_t>(a.v[4]));
}

// cp.async.bulk.wait_group[.read] N: every committed group but the N most recent has completed
// (§9.7.9.25.4.2; .read: their reads of shared memory, which the simulator performs together with
// the writes). Stores not yet committed to a group are not waited for.
bool Machine::bulk_wait(Thread& t, const Ins& in) {
  while (!t.bulk.empty() && t.bulk.front().in_flight == 0) t.bulk.pop_front();
  const uint64_t n = static_cast<uint64_t>(in.o[0].imm);
  size_t older = t.bulk.size() > n ? t.bulk.size() - n : 0;
  for (size_t i = 0; i < older; ++i)
    if (t.bulk[i].in_flight) {
      t.st = Thread::at_bulk;  // woken when one of its stores completes; the wait runs again
      return false;
    }
  return true;
}

void Machine::complete(Async& a) {
  if (kTrace) std::fprintf(stderr, "complete kind %d line %u cta %u v0 %lx v1 %lx\n", a.kind, a.ins->line, a.cta, (unsigned long)a.v[0], (unsigned long)a.v[1]);
  release(a);
  switch (a.kind) {
    case Async::tma: tma_complete(a); return;
    case Async::tma_store: tma_store_complete(a); return;
    case Async::wgmma: wg_complete(a); return;
    case Async::commit:
      if (opt.race_checks) threads[a.v[2]].commits[a.v[3]] = stats.instructions;  // order.cpp
      for (uint32_t c = 0; c < ctas.size(); ++c)
        if ((a.v[1] >> c) & 1) mbar_arrive(c, static_cast<uint32_t>(a.v[0]), 1, 0, nullptr, &a);
      return;
    default: tc_complete(a); return;
  }
}

}  // namespace ksim
