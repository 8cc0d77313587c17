// TMA loads and the completion of asynchronous operations.
#include "machine.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "num.hpp"

namespace ksim {

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
  a.v[7] = in.o[2].count == 3 ? reg(t, c[2]) & 0xFFFFFFFFu : 0;
  if (static_cast<int>(in.o[2].count) != m.rank)
    fail(&t, "a " + std::to_string(in.o[2].count) + "-D TMA through a tensor map of rank " + std::to_string(m.rank));
  if (m.rank == 3 && m.box[2] != 1) fail(&t, "a rank-3 TMA box more than one plane deep is not simulated");
  const uint32_t row_bytes = m.smem_bits == 8 && m.elem_bits < 8 ? m.box[0] / 16 * 16 : m.box[0] * static_cast<uint32_t>(m.elem_bits) / 8;
  const uint32_t bytes = row_bytes * m.box[1];
  // The box as cuTensorMapEncodeTiled takes it: at most 256 per dimension, rows whole 16 bytes (the
  // padded types: whole groups of 16 elements), within the swizzle span.
  if (m.box[0] == 0 || m.box[1] == 0 || m.box[0] > 256 || m.box[1] > 256) fail(&t, "TMA box dimensions outside 1..256");
  if (row_bytes % 16 || (m.smem_bits == 8 && m.elem_bits < 8 && m.box[0] % 16) || (m.elem_bits * m.box[0]) % 8)
    fail(&t, "TMA box row of " + std::to_string(row_bytes) + " bytes is not whole 16-byte pieces");
  if (m.swizzle && row_bytes > static_cast<uint32_t>(m.swizzle)) fail(&t, "TMA box row wider than its swizzle span");
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

}  // namespace ksim
