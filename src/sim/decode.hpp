// The tensor-core encodings, decoded from the PTX ISA 9.1 text (and, where it has only figures,
// the readings of docs/architecture.md): shared-memory descriptors (§9.7.16.4.1 Table 40),
// canonical layouts with the swizzle (§9.7.16.3.3), instruction descriptors (§9.7.16.4.2 Tables
// 42-44), element formats, tcgen05.ld/st fragments, and a tcgen05.mma's shapes, data-path layout
// and operands. Used by tcgen05.cpp only; nothing here calls ptxgen.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "internal.hpp"
#include "machine.hpp"
#include "num.hpp"

namespace ksim::tc {

inline uint64_t bits(uint64_t w, int lo, int hi) { return (w >> lo) & ((uint64_t{1} << (hi - lo + 1)) - 1); }

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
inline uint32_t swizzle_width(int layout) { return layout == 0 ? 16 : layout == 6 ? 32 : layout == 4 ? 64 : 128; }

// The swizzle on a shared address (§9.7.16.3.3: Swizzle<B,4,3> on the byte address; 32-byte
// atomicity: 32-byte pieces, Swizzle<2,5,2>).
inline uint32_t swizzle(int layout, uint32_t a) {
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

inline double element(int kind, int type, uint32_t b) {
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
inline int value_bits(int kind, int type) {
  switch (kind) {
    case k_f16: return 16;
    case k_tf32: return 32;
    case k_i8: return 8;
    case k_f8f6f4:
    case k_mxf8f6f4: return type <= 1 ? 8 : type == 5 ? 4 : 6;
    default: return 4;
  }
}
inline Elem smem_elem(int kind, int type) {
  const int vb = value_bits(kind, type);
  if (kind == k_mxf4 || kind == k_mxf4nvf4) return {32, 4};
  if (vb < 8) return {16, vb};
  return {128 / vb, vb};
}
inline int tmem_bits(int kind, int type) {
  if (kind == k_mxf4 || kind == k_mxf4nvf4) return 4;
  return std::max(8, value_bits(kind, type));
}

// tcgen05.ld/st fragments (§9.7.16.2.3.1; the figures are absent from our copy: CUTLASS's TMEM
// load traits, as tests/refmodel_program.cpp reads them): thread t's register j -> (lane, column)
// from the address, `half`: at the second base (immHalfSplitoff) of .16x32bx2.
inline void cell(int shape, int t, int j, int& lane, int& col, bool& half) {
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

inline int regs_per_num(int shape) { return shape == 2 ? 2 : shape == 3 ? 4 : 1; }

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

// ---- wgmma (sm_90a) ---------------------------------------------------------------------------------
// The sm_90 matrix descriptor (§9.7.15.5.1.2.2): start address, leading and stride byte offsets in
// bits 0-13, 16-29, 32-45 (each matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4), the matrix
// base offset in bits 49-51 and the swizzling mode in bits 62-63 (0 none, 1 128-byte, 2 64-byte,
// 3 32-byte); no other field. Not tcgen05's format (Table 40: bits 46-48 a fixed 0b001, the mode
// in bits 61-63): the canonical layouts (§9.7.15.5.1.2.1.3) are the same family, so the result is
// a Desc in tcgen05's layout codes, read through `piece` like tcgen05's.
template <class Fail>
Desc decode_wgmma_desc(uint64_t w, Fail fail) {
  Desc d;
  d.start = static_cast<uint32_t>(bits(w, 0, 13) << 4);
  d.lbo = static_cast<uint32_t>(bits(w, 16, 29) << 4);
  d.sbo = static_cast<uint32_t>(bits(w, 32, 45) << 4);
  if (bits(w, 14, 15) || bits(w, 30, 31) || bits(w, 46, 48) || bits(w, 52, 61))
    fail("wgmma matrix descriptor " + hex(w) + ": bits outside the fields of §9.7.15.5.1.2.2 are set (tcgen05's format?)");
  if (bits(w, 49, 51)) fail("wgmma matrix descriptor " + hex(w) + ": a non-zero matrix base offset is not simulated");
  static const int kLayout[] = {0, 2, 4, 6};  // none, 128B, 64B, 32B as tcgen05's codes
  d.layout = kLayout[bits(w, 62, 63)];
  return d;
}

// Register fragments of a warp of the warpgroup (§9.7.15.5.1.1; the figures are absent from our
// copy: each warp holds 16 rows, 16 (warp % 4) on, laid out as the warp-level mma.m16n8k* fragments
// whose formulas §9.7.14.5.7-10 give, groupID = lane / 4, threadID_in_group = lane % 4).
// D: element j of the N / 2 (f32, s32: one a register; f16: two, the low half first) at row
// groupID + 8 ((j / 2) % 2), column 8 (j / 4) + 2 threadID_in_group + j % 2.
inline void wg_d_cell(int lane, int j, int& row, int& col) {
  row = lane / 4 + 8 * ((j / 2) % 2);
  col = 8 * (j / 4) + 2 * (lane % 4) + j % 2;
}
// A in registers, element i (four registers; 16-bit: two each, 8-bit: four, tf32: one), by the input kind:
// k16 (§9.7.14.5.8): row g + 8 ((i / 2) % 2), column 2 t + i % 2 + 8 (i / 4);
// tf32 k8 (§9.7.14.5.7): row g + 8 (i % 2), column t + 4 (i / 2);
// 8-bit k32 (§9.7.14.5.10): row g + 8 ((i / 4) % 2), column 4 t + i % 4 + 16 (i / 8).
inline void wg_a_cell(int kind, int lane, int i, int& row, int& col) {
  const int g = lane / 4, t = lane % 4;
  switch (kind) {
    case k_f16: row = g + 8 * ((i / 2) % 2), col = 2 * t + i % 2 + 8 * (i / 4); return;
    case k_tf32: row = g + 8 * (i % 2), col = t + 4 * (i / 2); return;
    default: row = g + 8 * ((i / 4) % 2), col = 4 * t + i % 4 + 16 * (i / 8); return;
  }
}

}  // namespace ksim::tc
