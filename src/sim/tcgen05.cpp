// The tensor-core operations: tcgen05.mma (dense, sparse, block-scaled; cta_group::1 and ::2),
// tcgen05.cp, tcgen05.ld/st. Every descriptor is decoded here from the PTX ISA 9.1 tables
// (§9.7.16.4.1 Table 40, §9.7.16.4.2 Tables 42-44), operands are read through the canonical
// layouts of §9.7.16.3.3 with the swizzle on the absolute shared address, and results land in tensor
// memory through the data-path layouts of §9.7.16.10.5 (read as docs/architecture.md items 7, 8, 12
// and 13 say where the ISA has only figures). Nothing here calls ptxgen.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "decode.hpp"
#include "machine.hpp"
#include "num.hpp"

namespace ksim {

using namespace tc;

namespace {
// The lanes tcgen05.cp writes source row r to (§9.7.16.9.2; the multicast shapes as
// docs/architecture.md reads them), by the shape's index in the parser's order.
std::vector<uint32_t> cp_lanes(int shape, uint32_t lane0, int r) {
  const uint32_t u = static_cast<uint32_t>(r);
  switch (shape) {
    case 0:
    case 1: return {lane0 + u};
    case 2: return {lane0 + 32 * u};  // docs/spec.md: rows at lanes 0, 32, 64, 96
    case 3: return {u, u + 64};
    case 4: return {r < 32 ? u : u + 32, r < 32 ? u + 32 : u + 64};
    default: return {u, u + 32, u + 64, u + 96};
  }
}
}  // namespace

// ---- tcgen05.mma ---------------------------------------------------------------------------------
void Machine::tc_issue_mma(Thread& t, const Ins& in) {
  Async a;
  a.kind = Async::mma;
  a.ins = &in;
  a.cta = t.cta;
  a.v[0] = addr_of(t, in.o[0]) & 0xFFFFFFFFu;
  a.v[1] = in.o[1].kind == Opnd::mem ? addr_of(t, in.o[1]) & 0xFFFFFFFFu : val(t, in.o[1]);
  a.v[2] = val(t, in.o[2]);
  int i = 3;
  if (in.sparse) a.v[3] = addr_of(t, in.o[i++]) & 0xFFFFFFFFu;
  a.v[4] = val(t, in.o[i++]) & 0xFFFFFFFFu;
  if (in.scaled) {
    a.v[5] = addr_of(t, in.o[i++]) & 0xFFFFFFFFu;
    a.v[6] = addr_of(t, in.o[i++]) & 0xFFFFFFFFu;
  }
  a.v[7] = val(t, in.o[i]) != 0;
  auto fail_here = [&](const std::string& w) { fail(&t, "tcgen05.mma: " + w); };
  // The collector buffer: a performance hint, but use/lastuse read A from it, so the A they name
  // must be the one the last fill read (else the hardware computes with another A).
  {
    Cta& cc = ctas[t.cta];
    if (in.collector == 2 || in.collector == 3) {
      if (!cc.collector_valid || cc.collector_a != a.v[1])
        fail_here(".collector::a::" + std::string(in.collector == 2 ? "use" : "lastuse") +
                  " without a valid fill of the same A");
    }
    if (in.collector == 1) {
      cc.collector_valid = true;
      cc.collector_a = a.v[1];
    } else if (in.collector != 2) {
      cc.collector_valid = false;
    }
  }
  const Mma m = decode_mma(in, a.v, t.cta, static_cast<uint32_t>(ctas.size()), fail_here);
  if (in.cta_group == 2 && (t.cta & 1)) fail(&t, "tcgen05.mma.cta_group::2 issued by the odd CTA of the pair is not simulated");
  // What it reads and writes, for the race checks.
  if (opt.race_checks) {
    for (size_t v = 0; v < m.ctas.size(); ++v) {
      const uint32_t c = m.ctas[v];
      Region rs{c, false, false, {}}, wt{c, true, true, {}};
      int w;
      const int nb = m.ctas.size() == 2 ? m.N / 2 : m.N;
      for (int n = 0; n < nb; ++n)
        for (int k = 0; k < m.K; k += m.id.tb ? 1 : m.be.T)
          if (!m.id.tb || n % m.be.T == 0) rs.units.push_back(piece(m.bd, m.id.tb, m.be, n, k, w, fail_here) / 16);
      for (int r = 0; r < m.Mc; ++r) {
        if (!m.a_tmem) {
          for (int k = 0; k < m.Ka; k += m.id.ta ? 1 : m.ae.T)
            if (!m.id.ta || r % m.ae.T == 0) rs.units.push_back(piece(m.ad, m.id.ta, m.ae, r, k, w, fail_here) / 16);
        }
        for (int n = 0; n < m.N; ++n) wt.units.push_back(m.lane(r, n) * kColumns + m.col(n));
      }
      std::sort(rs.units.begin(), rs.units.end());
      rs.units.erase(std::unique(rs.units.begin(), rs.units.end()), rs.units.end());
      std::sort(wt.units.begin(), wt.units.end());
      wt.units.erase(std::unique(wt.units.begin(), wt.units.end()), wt.units.end());
      check_region(rs, &t, "tcgen05.mma");
      hold(a, std::move(rs));
      // Tensor memory written (D) and read (A), ordered after other threads' accesses (order.cpp).
      for (uint32_t u : wt.units) tc_access(t, c, u, true, true, "tcgen05.mma", in.line);
      if (m.a_tmem) {
        const uint32_t words = static_cast<uint32_t>((m.Ka * tmem_bits(m.kind, m.id.atype) + 31) / 32);
        for (int r = 0; r < m.Mc; ++r)
          for (uint32_t lane : {m.lane(r, 0), m.lane(r, m.N - 1)})
            for (uint32_t w = 0; w < words; ++w) tc_access(t, c, lane * kColumns + m.a_col + w, false, true, "tcgen05.mma", in.line);
      }
      hold(a, std::move(wt));
      // The scale factors it reads (every lane quarter's copy, column r / 32 of row r): held, so that a
      // tcgen05.cp overwriting them before the MMA completed is a race (tcgen05.mma -> tcgen05.cp is
      // no pipelined pair, §9.7.16.6.2). Not checked here: tcgen05.cp -> tcgen05.mma is one.
      if (in.scaled) {
        Region sf{c, false, true, {}};
        for (uint32_t l = 0; l < kLanes; ++l) {
          for (int col = 0; col < (m.Mc + 31) / 32; ++col) sf.units.push_back(l * kColumns + m.sfa_col + static_cast<uint32_t>(col));
          for (int col = 0; col < (m.N + 31) / 32; ++col) sf.units.push_back(l * kColumns + m.sfb_col + static_cast<uint32_t>(col));
        }
        std::sort(sf.units.begin(), sf.units.end());
        sf.units.erase(std::unique(sf.units.begin(), sf.units.end()), sf.units.end());
        for (uint32_t u : sf.units) tc_access(t, c, u, false, true, "tcgen05.mma", in.line);
        hold(a, std::move(sf));
      }
      // The sparsity metadata it reads (in D's lanes of the instruction's rows), held the same way.
      if (in.sparse) {
        Region md{c, false, true, {}};
        const bool sel_kind = m.kind == k_f16 || m.kind == k_tf32;
        for (int r = 0; r < m.Mc; ++r)
          for (uint32_t col = 0; col < (sel_kind ? 1u : 2u); ++col)
            md.units.push_back(m.lane(r, 0) * kColumns + m.m_col + (sel_kind ? static_cast<uint32_t>(m.id.sel) : col));
        std::sort(md.units.begin(), md.units.end());
        md.units.erase(std::unique(md.units.begin(), md.units.end()), md.units.end());
        for (uint32_t u : md.units) tc_access(t, c, u, false, true, "tcgen05.mma", in.line);
        hold(a, std::move(md));
      }
    }
  }
  trace_issue(a);
  async.push_back(std::move(a));
}

void Machine::tc_complete(Async& a) {
  const Ins& in = *a.ins;
  auto fail_here = [&](const std::string& w) { fail_async(a, w); };
  if (a.kind == Async::cp) {
    // §9.7.16.9.2: rows of 128 or 256 bits from a K-major source (the descriptor's canonical
    // layout, 16-byte pieces) into lanes; the multicast shapes repeat each row in several lanes.
    const Desc d = decode_desc(a.v[1], fail_here);
    const uint32_t lane0 = static_cast<uint32_t>(a.v[0] >> 16), col0 = static_cast<uint32_t>(a.v[0] & 0xFFFF);
    const int rows = in.shape <= 1 ? 128 : in.shape == 2 ? 4 : in.shape == 5 ? 32 : 64;
    const int pieces = (in.shape == 0 || in.shape == 2) ? 2 : 1;
    if (in.shape >= 2 && lane0 != 0) fail_here("tcgen05.cp of this shape at lane " + std::to_string(lane0));
    const Elem chunk{1, 128};
    std::vector<uint32_t> cs = in.cta_group == 2 ? std::vector<uint32_t>{a.cta & ~1u, a.cta | 1u} : std::vector<uint32_t>{a.cta};
    for (uint32_t c : cs)
      for (int r = 0; r < rows; ++r) {
        const std::vector<uint32_t> lanes = cp_lanes(in.shape, lane0, r);
        const int nl = static_cast<int>(lanes.size());
        for (int j = 0; j < pieces; ++j) {
          int w;
          const uint32_t src = piece(d, false, chunk, r, j, w, fail_here);
          const uint8_t* p = smem_ptr(c, src, 16, &a, nullptr);
          uint32_t word[4] = {0, 0, 0, 0};
          if (!in.decompress) {
            for (int b = 0; b < 16; ++b) word[b / 4] |= uint32_t{p[b]} << (8 * (b % 4));
          } else {  // §9.7.16.9.1: 16 elements of 4 (6) bits, then padding -> 16 8-bit containers (value in the low bits)
            const int vb = in.decompress == 1 ? 4 : 6;
            for (int e = 0; e < 16; ++e) {
              uint32_t x = 0;
              for (int b = 0; b < vb; ++b) {
                const int bit = e * vb + b;
                x |= ((p[bit / 8] >> (bit % 8)) & 1u) << b;
              }
              word[e / 4] |= x << (8 * (e % 4));
            }
          }
          for (int l = 0; l < nl; ++l)
            for (int q = 0; q < 4; ++q) tcell(c, lanes[l], col0 + 4 * static_cast<uint32_t>(j) + static_cast<uint32_t>(q), nullptr, &a) = word[q];
        }
      }
    return;
  }
  const Mma m = decode_mma(in, a.v, a.cta, static_cast<uint32_t>(ctas.size()), fail_here);
  const int nb = m.ctas.size() == 2 ? m.N / 2 : m.N;  // B rows per CTA
  // B of the whole instruction: column n from CTA n / nb's shared memory, row n % nb.
  std::vector<double> B(static_cast<size_t>(m.N) * m.K);
  for (int n = 0; n < m.N; ++n) {
    const uint32_t c = m.ctas[static_cast<size_t>(n / nb)];
    for (int k = 0; k < m.K; ++k) {
      int w;
      const uint32_t at = piece(m.bd, m.id.tb, m.be, n % nb, k, w, fail_here);
      const uint8_t* p = smem_ptr(c, at, 16, &a, nullptr);
      const double e = element(m.kind, m.id.btype, read_bits(p, w * m.be.vbits, m.be.vbits));
      B[static_cast<size_t>(n) * m.K + k] = m.id.negb ? -e : e;
    }
  }
  const int abits = tmem_bits(m.kind, m.id.atype);
  for (uint32_t c : m.ctas) {
    // A row i (as the lane of D row i, column n reads it), expanded from its sparse form. Metadata that
    // is none of the values §9.7.16.10.8.1-2 call meaningful leaves that row's result undefined: the
    // row of D is poisoned (NaN; s32 0x80000000), so a kernel that stores it fails, one that drops it
    // (rows past m) does not.
    bool undefined = false;
    auto a_row = [&](int i, uint32_t dl, std::vector<double>& row) {
      std::vector<double> st(static_cast<size_t>(m.Ka));
      for (int k = 0; k < m.Ka; ++k) {
        uint32_t x = 0;
        if (m.a_tmem) {
          const uint32_t bit = static_cast<uint32_t>(k * abits);
          const uint32_t word = tcell(c, dl, m.a_col + bit / 32, nullptr, &a);
          x = static_cast<uint32_t>((word >> (bit % 32)) & ((uint64_t{1} << abits) - 1));
        } else {
          int w;
          const uint32_t at = piece(m.ad, m.id.ta, m.ae, i, k, w, fail_here);
          const uint8_t* p = smem_ptr(c, at, 16, &a, nullptr);
          x = read_bits(p, w * m.ae.vbits, m.ae.vbits);
        }
        const double e = element(m.kind, m.id.atype, x);
        st[static_cast<size_t>(k)] = m.id.nega ? -e : e;
      }
      row.assign(static_cast<size_t>(m.K), 0.0);
      if (!in.sparse) {
        row = st;
        return;
      }
      // §9.7.16.10.8: per chunk of 4 (tf32: 2 = four 16-bit halves; mxf4: 8 = four pairs) a 4-bit
      // index pair, the chunk's nibble. The 8-bit and 4-bit kinds: row i's in D's lane of row i, two
      // columns from the address, chunk q in bits 4q.. of that 64-bit word. f16 and tf32
      // (docs/architecture.md item 17, Figures 262-265 as CUTLASS's tmem_e_frg and Mosaic GPU read
      // them): one column, the address's plus the selector, and per 16 rows a block of 16 lanes:
      // chunks 0-3 of rows i and i + 8 (i % 16 < 8) in D's lane of row i, chunks 4-7 in the lane
      // 8 rows on, row i's in the low 16 bits, row i + 8's in the high, chunk q % 4 at bit 4 (q % 4).
      const bool sel_kind = m.kind == k_f16 || m.kind == k_tf32;
      uint64_t meta = 0;
      if (sel_kind) {
        const uint32_t col = m.m_col + static_cast<uint32_t>(m.id.sel);
        const int base = i - i % 16 + i % 8, half = (i % 16) / 8;
        for (int h = 0; h < 2; ++h)
          meta |= uint64_t{(tcell(c, m.lane(base + 8 * h, 0), col, nullptr, &a) >> (16 * half)) & 0xFFFFu} << (16 * h);
      } else {
        meta = tcell(c, m.lane(i, 0), m.m_col, nullptr, &a);
        meta |= uint64_t{tcell(c, m.lane(i, 0), m.m_col + 1, nullptr, &a)} << 32;
      }
      if (m.kind == k_tf32) {  // 1:2 (§9.7.16.10.8.1): per pair of elements 0b0100 (the first) or 0b1110 (the second)
        for (int q = 0; q < m.Ka; ++q) {
          const uint32_t nib = static_cast<uint32_t>((meta >> (4 * q)) & 0xF);
          if (nib != 0x4 && nib != 0xE) undefined = true;
          row[static_cast<size_t>(2 * q + (nib == 0xE ? 1 : 0))] = st[static_cast<size_t>(q)];
        }
        return;
      }
      // 2:4 (4:8 in pairs for the mxf4 kinds, §9.7.16.10.8.2-3): per chunk two 2-bit positions, the
      // first (bits 0-1) for stored element 0, the second (bits 2-3) for stored element 1.
      const int u = (m.kind == k_mxf4 || m.kind == k_mxf4nvf4) ? 2 : 1;
      for (int q = 0; q < m.Ka / (2 * u); ++q) {
        const uint32_t nib = static_cast<uint32_t>((meta >> (4 * q)) & 0xF);
        if (nib != 0x4 && nib != 0x8 && nib != 0xC && nib != 0x9 && nib != 0xD && nib != 0x6 && nib != 0xE) undefined = true;
        const int i0 = static_cast<int>(nib & 3), i1 = static_cast<int>(nib >> 2);
        for (int e = 0; e < u; ++e) {
          row[static_cast<size_t>(q * 4 * u + i0 * u + e)] = st[static_cast<size_t>(q * 2 * u + e)];
          row[static_cast<size_t>(q * 4 * u + i1 * u + e)] = st[static_cast<size_t>(q * 2 * u + u + e)];
        }
      }
    };
    // Scale factors (§9.7.16.10.7, as ptxgen reads the figures: row r's in lane r % 32 of every
    // 32-lane quarter, column r / 32, the byte the SF ID selects plus the factor's index): each
    // quarter of the data path reads its own copy.
    auto sf = [&](uint32_t col0, int id, int r, int g, uint32_t quarter) {
      const uint32_t word = tcell(c, static_cast<uint32_t>(r % 32) + 32 * quarter, col0 + static_cast<uint32_t>(r / 32), nullptr, &a);
      const uint32_t b = (word >> (8 * (id + g))) & 0xFF;
      return m.id.ue8m0 ? num::ue8m0(b) : num::decode(num::kUE4M3, b & 0x7F);
    };
    // D's cells must be allocated: checked once per column, then written directly.
    for (int n = 0; n < m.N; ++n) tcell(c, m.lane(0, n), m.col(n), nullptr, &a);
    uint32_t* tm = ctas[c].tmem.data();
    // Scale factors per row / column, factor and quarter of the data path.
    std::vector<double> sfa, sfb;
    if (in.scaled) {
      sfa.resize(static_cast<size_t>(m.Mc) * m.nsf * 4);
      sfb.resize(static_cast<size_t>(m.N) * m.nsf * 4);
      for (uint32_t q = 0; q < 4; ++q)
        for (int g = 0; g < m.nsf; ++g) {
          for (int r = 0; r < m.Mc; ++r) sfa[(static_cast<size_t>(r) * m.nsf + g) * 4 + q] = sf(m.sfa_col, m.id.sfa_id, r, g, q);
          for (int n = 0; n < m.N; ++n) sfb[(static_cast<size_t>(n) * m.nsf + g) * 4 + q] = sf(m.sfb_col, m.id.sfb_id, n, g, q);
        }
    }
    const bool f16d = m.kind <= k_f8f6f4 && m.id.dtype == 0;
    std::vector<double> row, row_hi;
    for (int i = 0; i < m.Mc; ++i) {
      undefined = false;
      a_row(i, m.lane(i, 0), row);
      if (m.layout == 'B' && m.a_tmem) a_row(i, m.lane(i, m.N - 1), row_hi);
      for (int n = 0; n < m.N; ++n) {
        const uint32_t lane = m.lane(i, n), col = m.col(n);
        const double* ar = ((m.layout == 'B' && m.a_tmem && n >= m.N / 2) ? row_hi : row).data();
        const double* br = &B[static_cast<size_t>(n) * m.K];
        uint32_t& cellv = tm[lane * kColumns + col];
        if (undefined) {
          cellv = m.kind == k_i8 ? 0x80000000u : f16d ? 0x7E00u : 0x7FC00000u;
          continue;
        }
        if (m.kind == k_i8) {
          int64_t sum = 0;
          for (int k = 0; k < m.K; ++k) sum += static_cast<int64_t>(ar[k]) * static_cast<int64_t>(br[k]);
          int64_t d = sum + (m.accumulate ? static_cast<int64_t>(static_cast<int32_t>(cellv)) : 0);
          if (m.id.sat) d = std::clamp<int64_t>(d, INT32_MIN, INT32_MAX);
          cellv = static_cast<uint32_t>(d);
          continue;
        }
        double sum = 0;
        if (in.scaled) {
          const int per = m.K / m.nsf;
          for (int g = 0; g < m.nsf; ++g) {
            double part = 0;
            for (int k = g * per; k < (g + 1) * per; ++k) part += ar[k] * br[k];
            sum += part * sfa[(static_cast<size_t>(i) * m.nsf + g) * 4 + lane / 32] * sfb[(static_cast<size_t>(n) * m.nsf + g) * 4 + lane / 32];
          }
        } else {
          for (int k = 0; k < m.K; ++k) sum += ar[k] * br[k];
        }
        if (m.accumulate) sum += f16d ? num::f16(cellv) : static_cast<double>(num::f32_of(cellv));
        cellv = f16d ? num::encode_rn(num::kF16, sum) : num::bits_of(static_cast<float>(sum));
      }
    }
  }
}

// ---- tcgen05.cp --------------------------------------------------------------------------------------
void Machine::tc_issue_cp(Thread& t, const Ins& in) {
  Async a;
  a.kind = Async::cp;
  a.ins = &in;
  a.cta = t.cta;
  a.v[0] = addr_of(t, in.o[0]) & 0xFFFFFFFFu;
  a.v[1] = val(t, in.o[1]);
  auto fail_here = [&](const std::string& w) { fail(&t, "tcgen05.cp: " + w); };
  const Desc d = decode_desc(a.v[1], fail_here);
  if (in.cta_group == 2 && ctas.size() < 2) fail(&t, ".cta_group::2 outside a CTA pair");
  if (opt.race_checks) {
    const int rows = in.shape <= 1 ? 128 : in.shape == 2 ? 4 : in.shape == 5 ? 32 : 64;
    const int pieces = (in.shape == 0 || in.shape == 2) ? 2 : 1;
    const Elem chunk{1, 128};
    std::vector<uint32_t> cs = in.cta_group == 2 ? std::vector<uint32_t>{t.cta & ~1u, t.cta | 1u} : std::vector<uint32_t>{t.cta};
    const uint32_t lane0 = static_cast<uint32_t>(a.v[0] >> 16), col0 = static_cast<uint32_t>(a.v[0] & 0xFFFF);
    for (uint32_t c : cs) {
      Region rs{c, false, false, {}};
      int w;
      for (int r = 0; r < rows; ++r)
        for (int j = 0; j < pieces; ++j) rs.units.push_back(piece(d, false, chunk, r, j, w, fail_here) / 16);
      std::sort(rs.units.begin(), rs.units.end());
      rs.units.erase(std::unique(rs.units.begin(), rs.units.end()), rs.units.end());
      check_region(rs, &t, "tcgen05.cp");
      hold(a, std::move(rs));
      // The cells it writes: no asynchronous operation in flight may read or write them.
      Region wt{c, true, true, {}};
      for (int r = 0; r < rows; ++r)
        for (uint32_t l : cp_lanes(in.shape, lane0, r))
          for (uint32_t q = 0; q < 4 * static_cast<uint32_t>(pieces); ++q)
            if (l < kLanes && col0 + q < kColumns) wt.units.push_back(l * kColumns + col0 + q);
      std::sort(wt.units.begin(), wt.units.end());
      wt.units.erase(std::unique(wt.units.begin(), wt.units.end()), wt.units.end());
      check_region(wt, &t, "tcgen05.cp");
      for (uint32_t u : wt.units) tc_access(t, c, u, true, true, "tcgen05.cp", in.line);
      hold(a, std::move(wt));
    }
  }
  trace_issue(a);
  async.push_back(std::move(a));
}

// ---- tcgen05.ld / tcgen05.st (one thread's part of the warp's collective) -------------------------------
void Machine::tc_ld(Thread& t, const Ins& in, uint32_t taddr) {
  const Opnd& dst = in.o[0];
  const int nregs = regs_per_num(in.shape) * in.num;
  if (dst.kind != Opnd::vec || dst.count != nregs) fail(&t, "tcgen05.ld: " + std::to_string(nregs) + " registers expected (Table 49)");
  const uint32_t split = in.shape == 4 ? static_cast<uint32_t>(val(t, in.o[2])) : 0;
  const uint32_t lane0 = taddr >> 16, col0 = taddr & 0xFFFF, q = (t.tid / 32) % 4;
  const int lane_t = static_cast<int>(t.tid % 32);
  for (int j = 0; j < nregs; ++j) {
    int l, c;
    bool h;
    cell(in.shape, lane_t, j, l, c, h);
    const uint32_t lane = lane0 + static_cast<uint32_t>(l);
    if (lane / 32 != q)
      fail(&t, "tcgen05.ld reaches lane " + std::to_string(lane) + ", outside warp quarter " + std::to_string(q) + "'s lanes (PTX ISA 9.7.16.8.1)");
    const uint32_t col = col0 + (in.pack ? 2 * static_cast<uint32_t>(c) : static_cast<uint32_t>(c)) + (h ? split : 0);
    uint32_t v;
    if (opt.race_checks) {
      const Cta& cc = ctas[t.cta];
      for (uint32_t x = 0; x < (in.pack ? 2u : 1u); ++x)
        if (cc.tm_w[lane * kColumns + col + x])
          fail(&t, "race: tcgen05.ld reads tensor memory lane " + std::to_string(lane) + ", column " + std::to_string(col + x) +
                       " that an asynchronous operation issued at ptx line " + std::to_string(cc.tm_line[lane * kColumns + col + x]) +
                       " still writes (no wait for its commit)");
    }
    if (in.pack) v = (tcell(t.cta, lane, col, &t, nullptr) & 0xFFFF) | (tcell(t.cta, lane, col + 1, &t, nullptr) << 16);
    else v = tcell(t.cta, lane, col, &t, nullptr);
    if (opt.race_checks)
      for (uint32_t x = 0; x < (in.pack ? 2u : 1u); ++x) tc_access(t, t.cta, lane * kColumns + col + x, false, false, "tcgen05.ld", in.line);
    const uint32_t s = k.pool[dst.r + static_cast<uint32_t>(j)];
    t.lds.push_back({s, v});
    t.r[s] = 0x7FBADBADu;  // undefined until tcgen05.wait::ld (§9.7.16.8.5)
    t.d[s] = 1;
  }
}

void Machine::tc_st(Thread& t, const Ins& in, uint32_t taddr) {
  const Opnd& src = in.o[in.nops - 1];
  const int nregs = regs_per_num(in.shape) * in.num;
  if (src.kind != Opnd::vec || src.count != nregs) fail(&t, "tcgen05.st: " + std::to_string(nregs) + " registers expected (Table 49)");
  const uint32_t split = in.shape == 4 ? static_cast<uint32_t>(val(t, in.o[1])) : 0;
  const uint32_t lane0 = taddr >> 16, col0 = taddr & 0xFFFF, q = (t.tid / 32) % 4;
  const int lane_t = static_cast<int>(t.tid % 32);
  for (int j = 0; j < nregs; ++j) {
    int l, c;
    bool h;
    cell(in.shape, lane_t, j, l, c, h);
    const uint32_t lane = lane0 + static_cast<uint32_t>(l);
    if (lane / 32 != q)
      fail(&t, "tcgen05.st reaches lane " + std::to_string(lane) + ", outside warp quarter " + std::to_string(q) + "'s lanes (PTX ISA 9.7.16.8.1)");
    const uint32_t col = col0 + (in.pack ? 2 * static_cast<uint32_t>(c) : static_cast<uint32_t>(c)) + (h ? split : 0);
    const uint32_t v = static_cast<uint32_t>(reg(t, k.pool[src.r + static_cast<uint32_t>(j)]));
    for (uint32_t x = 0; x < (in.pack ? 2u : 1u); ++x) {
      tcell(t.cta, lane, col + x, &t, nullptr);  // allocated
      if (opt.race_checks) {
        const Cta& cc = ctas[t.cta];
        const uint32_t u = lane * kColumns + col + x;
        if (cc.tm_w[u] || cc.tm_r[u])
          fail(&t, "race: tcgen05.st writes tensor memory lane " + std::to_string(lane) + ", column " + std::to_string(col + x) +
                       " that an asynchronous operation issued at ptx line " + std::to_string(cc.tm_line[u]) + " still uses");
        tc_access(t, t.cta, u, true, false, "tcgen05.st", in.line);
      }
      // .unpack::16b: the halves into the low 16 bits of two adjacent columns (§9.7.16.8.2)
      t.sts.push_back({t.cta, lane * kColumns + col + x, in.pack ? (v >> (16 * x)) & 0xFFFF : v});
    }
  }
}

}  // namespace ksim
