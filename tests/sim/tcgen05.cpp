// The tensor-core operations: tcgen05.mma (dense, sparse, block-scaled; cta_group::1 and ::2),
// tcgen05.cp, tcgen05.ld/st. Every descriptor is decoded here from the PTX ISA 9.1 tables
// (§9.7.16.4.1 Table 40, §9.7.16.4.2 Tables 42-44), operands are read through the canonical
// layouts of §9.7.16.3.3 with the swizzle on the absolute shared address, and results land in tensor
// memory through the data-path layouts of §9.7.16.10.5 (read as docs/architecture.md items 7, 8, 12
// and 13 say where the ISA has only figures). Nothing here calls ptxgen.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "machine.hpp"
#include "num.hpp"

namespace ksim {

namespace {

uint64_t bits(uint64_t w, int lo, int hi) { return (w >> lo) & ((uint64_t{1} << (hi - lo + 1)) - 1); }
std::string hex(uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

// §9.7.16.4.1, Table 40.
struct Desc {
  uint32_t start = 0, lbo = 0, sbo = 0;
  int layout = 0;  // 0 none, 1 128B with 32B atomicity, 2 128B, 4 64B, 6 32B
};
template <class Fail>
Desc decode_desc(uint64_t w, Fail fail) {
  Desc d;
  d.start = static_cast<uint32_t>(bits(w, 0, 13) << 4);
  d.lbo = static_cast<uint32_t>(bits(w, 16, 29) << 4);
  d.sbo = static_cast<uint32_t>(bits(w, 32, 45) << 4);
  if (bits(w, 14, 15) || bits(w, 30, 31)) fail("shared-memory descriptor " + hex(w) + ": bits 14-15/30-31 are not zero");
  if (bits(w, 46, 48) != 1) fail("shared-memory descriptor " + hex(w) + ": bits 46-48 are not the fixed constant 0b001");
  if (bits(w, 49, 51)) fail("shared-memory descriptor " + hex(w) + ": a non-zero matrix base offset is not simulated");
  if (bits(w, 52, 52)) fail("shared-memory descriptor " + hex(w) + ": the absolute leading-dimension mode is not simulated");
  if (bits(w, 53, 60)) fail("shared-memory descriptor " + hex(w) + ": bits 53-60 are not the fixed constant 0");
  d.layout = static_cast<int>(bits(w, 61, 63));
  if (d.layout == 3 || d.layout == 5 || d.layout == 7) fail("shared-memory descriptor " + hex(w) + ": invalid swizzling mode");
  return d;
}
uint32_t swizzle_width(int layout) { return layout == 0 ? 16 : layout == 6 ? 32 : layout == 4 ? 64 : 128; }

// The swizzle on a shared address (§9.7.16.3.3: Swizzle<B,4,3> on the byte address; 32-byte
// atomicity: 32-byte pieces, Swizzle<2,5,2>).
uint32_t swizzle(int layout, uint32_t a) {
  switch (layout) {
    case 2: return a ^ (((a >> 7) & 7u) << 4);
    case 4: return a ^ (((a >> 7) & 3u) << 4);
    case 6: return a ^ (((a >> 7) & 1u) << 4);
    case 1: return a ^ (((a >> 7) & 3u) << 5);
    default: return a;
  }
}

// The element format of an operand in shared memory: T elements per 16-byte piece, each `vbits`
// wide from the piece's first bit (8-bit types T = 16; the padded 4/6-bit formats of the f8f6f4
// kinds also T = 16, §9.7.16.10.4.4; packed e2m1 of the mxf4 kinds T = 32).
struct Elem {
  int T = 8, vbits = 16;
};

// Byte address of the 16-byte piece holding element (i along M/N, k along K), from the canonical
// layouts (§9.7.16.3.3), and the element's index inside it.
template <class Fail>
uint32_t piece(const Desc& d, bool mn_major, const Elem& e, int i, int k, int& within, Fail fail) {
  uint32_t off;
  const uint32_t W = swizzle_width(d.layout);
  if (!mn_major) {
    within = k % e.T;
    const uint32_t kc = static_cast<uint32_t>(k / e.T);
    if (d.layout == 0) {  // ((8,m),(T,2k)):((1T,SBO),(1,LBO))
      off = static_cast<uint32_t>(i % 8) * 16 + static_cast<uint32_t>(i / 8) * d.sbo + kc * d.lbo;
    } else {  // ((8,m),(T,2k)):((sT,SBO),(1,T)): rows W bytes apart, K contiguous in the row
      if (d.layout == 1) fail("K-major operand with 32-byte swizzle atomicity is not simulated");
      if (kc * 16 >= W) fail("an instruction's K extent leaves the swizzle atom of a K-major operand");
      off = static_cast<uint32_t>(i % 8) * W + static_cast<uint32_t>(i / 8) * d.sbo + kc * 16;
    }
  } else {
    within = i % e.T;
    const uint32_t ic = static_cast<uint32_t>(i / e.T);
    if (d.layout == 0) {  // ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))
      off = ic * d.sbo + static_cast<uint32_t>(k % 8) * 16 + static_cast<uint32_t>(k / 8) * d.lbo;
    } else if (d.layout == 1) {  // 128 B of MN by 4 K rows per atom (Table 55: 8x4), docs/architecture.md item 6
      off = (ic % 8) * 16 + (ic / 8) * d.lbo + static_cast<uint32_t>(k % 4) * 128 + static_cast<uint32_t>(k / 4) * d.sbo;
    } else {  // ((T,s,m),(8,k)):((1,T,LBO),(sT,SBO)), s = W / 16
      const uint32_t s = W / 16;
      off = (ic % s) * 16 + (ic / s) * d.lbo + static_cast<uint32_t>(k % 8) * W + static_cast<uint32_t>(k / 8) * d.sbo;
    }
  }
  return swizzle(d.layout, d.start + off);
}

// §9.7.16.4.2: Tables 42 (tf32, f16, f8f6f4, i8), 43 (mxf8f6f4), 44 (mxf4, mxf4nvf4).
enum Kind { k_f16, k_tf32, k_f8f6f4, k_i8, k_mxf8f6f4, k_mxf4, k_mxf4nvf4 };
struct Idesc {
  int M = 0, N = 0, atype = 0, btype = 0, dtype = 1, sel = 0, sfa_id = 0, sfb_id = 0;
  bool sparse = false, sat = false, nega = false, negb = false, ta = false, tb = false, ue8m0 = true;
};
template <class Fail>
Idesc decode_idesc(int kind, uint32_t w, Fail fail) {
  Idesc d;
  auto reserved = [&](int lo, int hi) {
    if (bits(w, lo, hi)) fail("instruction descriptor " + hex(w) + ": reserved bit(s) " + std::to_string(lo) + "-" + std::to_string(hi) + " set");
  };
  d.sparse = bits(w, 2, 2);
  d.nega = bits(w, 13, 13);
  d.negb = bits(w, 14, 14);
  d.ta = bits(w, 15, 15);
  d.tb = bits(w, 16, 16);
  d.N = static_cast<int>(bits(w, 17, 22) << 3);
  d.atype = static_cast<int>(bits(w, 7, 9));
  if (kind <= k_i8) {
    d.sel = static_cast<int>(bits(w, 0, 1));
    d.sat = bits(w, 3, 3);
    d.dtype = static_cast<int>(bits(w, 4, 5));
    d.btype = static_cast<int>(bits(w, 10, 12));
    d.M = static_cast<int>(bits(w, 24, 28) << 4);
    reserved(6, 6);
    reserved(23, 23);
    reserved(29, 29);
    if (bits(w, 30, 31)) fail("instruction descriptor " + hex(w) + ": a B-reuse shift applies to .ws only");
    if (!d.sparse && d.sel) fail("instruction descriptor " + hex(w) + ": a sparsity selector without sparsity");
    if (kind != k_i8 && d.sat) fail("instruction descriptor " + hex(w) + ": saturate is for integer types");
  } else {
    d.sfb_id = static_cast<int>(bits(w, 4, 5));
    d.ue8m0 = bits(w, 23, 23);
    d.M = static_cast<int>(bits(w, 27, 28) << 7);
    d.sfa_id = static_cast<int>(bits(w, 29, 30));
    reserved(0, 1);
    reserved(3, 3);
    reserved(6, 6);
    reserved(24, 26);
    if (kind == k_mxf8f6f4) {
      d.btype = static_cast<int>(bits(w, 10, 12));
      reserved(31, 31);
    } else {
      d.btype = static_cast<int>(bits(w, 10, 11));
      reserved(12, 12);
      if (bits(w, 31, 31)) fail("instruction descriptor " + hex(w) + ": K = 96 is not simulated");
      if (d.ta || d.tb) fail("instruction descriptor " + hex(w) + ": the mxf4 kinds do not transpose (Table 51)");
    }
  }
  auto valid = [&](int t) {
    switch (kind) {
      case k_f16: return t == 0 || t == 1;
      case k_tf32: return t == 2;
      case k_f8f6f4:
      case k_mxf8f6f4: return t == 0 || t == 1 || t == 3 || t == 4 || t == 5;
      case k_i8: return t == 0 || t == 1;
      default: return t == 1;
    }
  };
  if (!valid(d.atype) || !valid(d.btype)) fail("instruction descriptor " + hex(w) + ": invalid A/B type for the kind");
  if (kind == k_f16 && d.atype != d.btype) fail("instruction descriptor " + hex(w) + ": f16 with bf16 is not simulated");
  const bool dt_ok = kind == k_i8 ? d.dtype == 2 : kind == k_tf32 ? d.dtype == 1 : kind <= k_f8f6f4 ? (d.dtype == 0 || d.dtype == 1) : true;
  if (!dt_ok) fail("instruction descriptor " + hex(w) + ": invalid D type for the kind");
  if (kind == k_i8 && (d.nega || d.negb)) fail("instruction descriptor " + hex(w) + ": .kind::i8 does not negate (Table 51)");
  if (kind == k_mxf8f6f4 && !d.ue8m0) fail("instruction descriptor " + hex(w) + ": .kind::mxf8f6f4 scales are UE8M0");
  if (kind == k_mxf4 && !d.ue8m0) fail("instruction descriptor " + hex(w) + ": .kind::mxf4 scales are UE8M0");
  return d;
}

double element(int kind, int type, uint32_t b) {
  switch (kind) {
    case k_f16: return type == 0 ? num::f16(b) : num::bf16(b);
    case k_tf32: return num::tf32(b);
    case k_i8: return type == 1 ? static_cast<double>(static_cast<int8_t>(b & 0xFF)) : static_cast<double>(b & 0xFF);
    case k_f8f6f4:
    case k_mxf8f6f4:
      switch (type) {
        case 0: return num::decode(num::kE4M3, b & 0xFF);
        case 1: return num::decode(num::kE5M2, b & 0xFF);
        case 3: return num::decode(num::kE2M3, b & 0x3F);
        case 4: return num::decode(num::kE3M2, b & 0x3F);
        default: return num::decode(num::kE2M1, b & 0xF);
      }
    default: return num::decode(num::kE2M1, b & 0xF);
  }
}

// Bits per element: in shared memory (`vbits` of Elem) and in tensor memory (A: the 8-bit
// containers of .kind::mxf8f6f4 / f8f6f4 for the 4/6-bit types, §9.7.16.10.4.3; two e2m1 per byte
// for the mxf4 kinds, §9.7.16.10.4.5).
int value_bits(int kind, int type) {
  switch (kind) {
    case k_f16: return 16;
    case k_tf32: return 32;
    case k_i8: return 8;
    case k_f8f6f4:
    case k_mxf8f6f4: return type <= 1 ? 8 : type == 5 ? 4 : 6;
    default: return 4;
  }
}
Elem smem_elem(int kind, int type) {
  const int vb = value_bits(kind, type);
  if (kind == k_mxf4 || kind == k_mxf4nvf4) return {32, 4};
  if (vb < 8) return {16, vb};
  return {128 / vb, vb};
}
int tmem_bits(int kind, int type) {
  if (kind == k_mxf4 || kind == k_mxf4nvf4) return 4;
  return std::max(8, value_bits(kind, type));
}

// tcgen05.ld/st fragments (§9.7.16.2.3.1; the figures are absent from our copy: CUTLASS's TMEM
// load traits, as tests/refmodel_program.cpp reads them): thread t's register j -> (lane, column)
// from the address, `half`: at the second base (immHalfSplitoff) of .16x32bx2.
void cell(int shape, int t, int j, int& lane, int& col, bool& half) {
  half = false;
  switch (shape) {
    case 0: lane = t, col = j; return;
    case 1: lane = t / 4 + 8 * (t % 2), col = (t / 2) % 2 + 2 * j; return;
    case 2: lane = t / 4 + 8 * (j % 2), col = t % 4 + 4 * (j / 2); return;
    case 3: lane = t / 4 + 8 * ((j / 2) % 2), col = 2 * (t % 4) + j % 2 + 8 * (j / 4); return;
    default: lane = t % 16, col = j, half = t >= 16; return;
  }
}
// `vbits` bits from bit `bit` of a 16-byte piece (elements never straddle pieces).
inline uint32_t read_bits(const uint8_t* p, int bit, int vbits) {
  const uint8_t* q = p + bit / 8;
  switch (vbits) {
    case 8: return q[0];
    case 16: return uint32_t{q[0]} | uint32_t{q[1]} << 8;
    case 32: return uint32_t{q[0]} | uint32_t{q[1]} << 8 | uint32_t{q[2]} << 16 | uint32_t{q[3]} << 24;
    default: {
      const int sh = bit % 8;
      const uint32_t w = sh + vbits <= 8 ? q[0] : (uint32_t{q[0]} | uint32_t{q[1]} << 8);
      return (w >> sh) & ((1u << vbits) - 1);
    }
  }
}

int regs_per_num(int shape) { return shape == 2 ? 2 : shape == 3 ? 4 : 1; }

// A decoded tcgen05.mma.
struct Mma {
  int kind = 0, M = 0, N = 0, K = 0, Ka = 0, Mc = 0, nsf = 0;
  char layout = 'D';
  bool a_tmem = false, accumulate = false;
  Idesc id;
  Desc ad, bd;
  uint32_t d_lane = 0, d_col = 0, a_lane = 0, a_col = 0, m_lane = 0, m_col = 0, sfa_col = 0, sfb_col = 0;
  Elem ae, be;
  std::vector<uint32_t> ctas;  // the CTAs whose tensor memory the instruction writes (pair: even first)
  // Lane of D row i (per CTA) for column n; the column.
  uint32_t lane(int i, int n) const {
    switch (layout) {
      case 'F':
      case 'C': return d_lane + static_cast<uint32_t>(i % 16 + 32 * (i / 16));
      case 'B': return static_cast<uint32_t>(i + (n >= N / 2 ? 64 : 0));
      default: return d_lane + static_cast<uint32_t>(i);
    }
  }
  uint32_t col(int n) const { return layout == 'B' ? d_col + static_cast<uint32_t>(n % (N / 2)) : d_col + static_cast<uint32_t>(n); }
};

template <class Fail>
Mma decode_mma(const Ins& in, const uint64_t* v, uint32_t cta, uint32_t nctas, Fail fail) {
  Mma m;
  m.kind = in.kind;
  m.a_tmem = in.o[1].kind == Opnd::mem;
  m.id = decode_idesc(in.kind, static_cast<uint32_t>(v[4]), fail);
  if (m.id.sparse != (in.sparse != 0)) fail("the instruction descriptor's sparsity bit disagrees with the spelling (.sp)");
  m.M = m.id.M;
  m.N = m.id.N;
  static const int kk[] = {16, 8, 32, 32, 32, 64, 64};  // K per dense instruction (Table 39)
  m.K = kk[in.kind] * (in.sparse ? 2 : 1);
  m.Ka = in.sparse ? m.K / 2 : m.K;
  const bool pair = in.cta_group == 2;
  if (pair ? !(m.M == 128 || m.M == 256) : !(m.M == 64 || m.M == 128)) fail("M = " + std::to_string(m.M) + " is not a shape of this .cta_group");
  if (in.scaled && m.M != (pair ? 256 : 128)) fail("block scaling at M = " + std::to_string(m.M) + " is not simulated (M = 128; a pair's M = 256)");
  // Table 39: N in steps of 8 (.kind::i8: 8 to 32, then steps of 16), a pair's in steps of 16 (i8: 32).
  const bool n_ok = pair ? (in.kind == k_i8 ? m.N >= 32 && m.N % 32 == 0 : m.N >= 16 && m.N % 16 == 0)
                         : (m.N >= 8 && m.N % 8 == 0 && (in.kind != k_i8 || m.N <= 32 || m.N % 16 == 0));
  if (!n_ok || m.N > 256) fail("N = " + std::to_string(m.N) + " is not an N of Table 39 for this kind and .cta_group");
  m.Mc = pair ? m.M / 2 : m.M;
  m.layout = pair ? (m.M == 256 ? 'A' : in.sparse ? 'C' : 'B') : (m.M == 64 ? 'F' : 'D');
  m.d_lane = static_cast<uint32_t>(v[0] >> 16);
  m.d_col = static_cast<uint32_t>(v[0] & 0xFFFF);
  const bool half = m.layout == 'F' || m.layout == 'C';
  if (half ? !(m.d_lane == 0 || m.d_lane == 16) : m.d_lane != 0)
    fail("D's tensor-memory address has lane " + std::to_string(m.d_lane) + ", not an alignment of data-path layout " + m.layout);
  if (m.a_tmem) {
    m.a_lane = static_cast<uint32_t>(v[1] >> 16);
    m.a_col = static_cast<uint32_t>(v[1] & 0xFFFF);
    if (m.a_lane != (half ? m.d_lane : 0)) fail("A in tensor memory at lane " + std::to_string(m.a_lane) + ": not D's lane alignment (§9.7.16.10.5)");
    if (m.id.ta) fail("A in tensor memory cannot be transposed");
  } else {
    m.ad = decode_desc(v[1], fail);
    m.ae = smem_elem(in.kind, m.id.atype);
  }
  m.bd = decode_desc(v[2], fail);
  m.be = smem_elem(in.kind, m.id.btype);
  if (in.sparse) {
    m.m_lane = static_cast<uint32_t>(v[3] >> 16);
    m.m_col = static_cast<uint32_t>(v[3] & 0xFFFF);
    if (m.m_lane != (half ? m.d_lane : 0)) fail("the sparsity metadata's lane is not D's alignment (§9.7.16.10.8.5)");
    const bool sel_kind = in.kind == k_f16 || in.kind == k_tf32;
    if (!sel_kind && m.id.sel) fail("the sparsity selector must be 0 for this kind (§9.7.16.10.8.4)");
  }
  if (in.scaled) {
    switch (in.sf_vec) {
      case 1: m.nsf = 1; break;
      case 2: m.nsf = 2; break;
      case 4: m.nsf = 4; break;
      case 16: m.nsf = 4; break;
      default: m.nsf = in.kind == k_mxf8f6f4 ? 1 : 2; break;  // .block32; mxf4's default
    }
    const bool ok = in.kind == k_mxf8f6f4 ? m.nsf == 1 : in.kind == k_mxf4 ? m.nsf == 2 : (m.nsf == 2 || m.nsf == 4);
    if (!ok) fail("the scale vector size does not fit the kind (Table 56)");
    if (in.kind == k_mxf4nvf4 && !m.id.ue8m0 && m.nsf != 4) fail("UE4M3 scales need .scale_vec::4X / .block16 (Table 57)");
    if (m.nsf == 4 ? m.id.sfa_id || m.id.sfb_id : m.nsf == 2 ? (m.id.sfa_id % 2 || m.id.sfb_id % 2) : false)
      fail("scale factor ID out of range for the scale vector size");
    if ((v[5] >> 16) || (v[6] >> 16)) fail("scale factors start at lane 0");
    m.sfa_col = static_cast<uint32_t>(v[5] & 0xFFFF);
    m.sfb_col = static_cast<uint32_t>(v[6] & 0xFFFF);
  }
  m.accumulate = v[7] != 0;
  if (pair) {
    if (nctas < 2) fail(".cta_group::2 outside a CTA pair");
    m.ctas = {cta & ~1u, cta | 1u};
  } else {
    m.ctas = {cta};
  }
  return m;
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
      hold(a, std::move(wt));
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
        uint32_t lanes[4];
        int nl = 0;
        switch (in.shape) {
          case 0:
          case 1: lanes[nl++] = lane0 + static_cast<uint32_t>(r); break;
          case 2: lanes[nl++] = lane0 + 32 * static_cast<uint32_t>(r); break;  // docs/spec.md: rows at lanes 0, 32, 64, 96
          case 3: lanes[nl++] = static_cast<uint32_t>(r), lanes[nl++] = static_cast<uint32_t>(r) + 64; break;
          case 4: lanes[nl++] = static_cast<uint32_t>(r < 32 ? r : r + 32), lanes[nl++] = static_cast<uint32_t>(r < 32 ? r + 32 : r + 64); break;
          default:
            for (uint32_t q = 0; q < 4; ++q) lanes[nl++] = static_cast<uint32_t>(r) + 32 * q;
        }
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
    // A row i (as the lane of D row i, column n reads it), expanded from its sparse form.
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
      // index pair, the chunk's nibble; the metadata of row i in D's lane of row i, columns from
      // the address (+ the selector for f16/tf32: one column of 32 bits; else two columns).
      const bool sel_kind = m.kind == k_f16 || m.kind == k_tf32;
      uint64_t meta = tcell(c, m.lane(i, 0), m.m_col + static_cast<uint32_t>(sel_kind ? m.id.sel : 0), nullptr, &a);
      if (!sel_kind) meta |= uint64_t{tcell(c, m.lane(i, 0), m.m_col + 1, nullptr, &a)} << 32;
      if (m.kind == k_tf32) {  // 1:2 (§9.7.16.10.8.1): per pair of elements 0b0100 (the first) or 0b1110 (the second)
        for (int q = 0; q < m.Ka; ++q) {
          const uint32_t nib = static_cast<uint32_t>((meta >> (4 * q)) & 0xF);
          if (nib != 0x4 && nib != 0xE) fail_here("sparsity metadata " + hex(nib) + " is not a meaningful tf32 index (PTX ISA 9.7.16.10.8.1)");
          row[static_cast<size_t>(2 * q + (nib == 0xE ? 1 : 0))] = st[static_cast<size_t>(q)];
        }
        return;
      }
      // 2:4 (4:8 in pairs for the mxf4 kinds, §9.7.16.10.8.2-3): per chunk two 2-bit positions, the
      // first (bits 0-1) for stored element 0, the second (bits 2-3) for stored element 1.
      const int u = (m.kind == k_mxf4 || m.kind == k_mxf4nvf4) ? 2 : 1;
      for (int q = 0; q < m.Ka / (2 * u); ++q) {
        const uint32_t nib = static_cast<uint32_t>((meta >> (4 * q)) & 0xF);
        if (nib != 0x4 && nib != 0x8 && nib != 0xC && nib != 0x9 && nib != 0xD && nib != 0x6 && nib != 0xE)
          fail_here("sparsity metadata " + hex(nib) + " is not a meaningful index pair (PTX ISA 9.7.16.10.8.2)");
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
      a_row(i, m.lane(i, 0), row);
      if (m.layout == 'B' && m.a_tmem) a_row(i, m.lane(i, m.N - 1), row_hi);
      for (int n = 0; n < m.N; ++n) {
        const uint32_t lane = m.lane(i, n), col = m.col(n);
        const double* ar = ((m.layout == 'B' && m.a_tmem && n >= m.N / 2) ? row_hi : row).data();
        const double* br = &B[static_cast<size_t>(n) * m.K];
        uint32_t& cellv = tm[lane * kColumns + col];
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
    for (uint32_t c : cs) {
      Region rs{c, false, false, {}};
      int w;
      for (int r = 0; r < rows; ++r)
        for (int j = 0; j < pieces; ++j) rs.units.push_back(piece(d, false, chunk, r, j, w, fail_here) / 16);
      std::sort(rs.units.begin(), rs.units.end());
      rs.units.erase(std::unique(rs.units.begin(), rs.units.end()), rs.units.end());
      check_region(rs, &t, "tcgen05.cp");
      hold(a, std::move(rs));
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
      }
      // .unpack::16b: the halves into the low 16 bits of two adjacent columns (§9.7.16.8.2)
      t.sts.push_back({t.cta, lane * kColumns + col + x, in.pack ? (v >> (16 * x)) & 0xFFFF : v});
    }
  }
}

}  // namespace ksim
