// Reference model; see refmodel.hpp. Nothing here calls ptxgen::isa.
#include "refmodel.hpp"

#include <cstdint>
#include <map>
#include <random>
#include <stdexcept>

namespace refmodel {

namespace {

uint64_t bits(uint64_t w, int lo, int hi) { return (w >> lo) & ((uint64_t{1} << (hi - lo + 1)) - 1); }

// §9.7.16.4.1 Table 40 (sm_100) and §9.7.15.5.1.2.2 (sm_90), decoded by hand.
struct Desc {
  uint32_t start, lbo, sbo;
  int base_offset;
  int layout;  // in sm_100 codes: 0 none, 1 128B/32B-atom, 2 128B, 4 64B, 6 32B
};
Desc decode_desc(uint64_t w, bool sm90) {
  Desc d;
  d.start = static_cast<uint32_t>(bits(w, 0, 13) << 4);
  d.lbo = static_cast<uint32_t>(bits(w, 16, 29) << 4);
  d.sbo = static_cast<uint32_t>(bits(w, 32, 45) << 4);
  d.base_offset = static_cast<int>(bits(w, 49, 51));
  if (sm90) {
    if (bits(w, 46, 48) != 0 || bits(w, 52, 61) != 0) throw std::runtime_error("sm_90 descriptor reserved bits set");
    const int code = static_cast<int>(bits(w, 62, 63));  // 0 none, 1 128B, 2 64B, 3 32B
    d.layout = code == 0 ? 0 : code == 1 ? 2 : code == 2 ? 4 : 6;
    return d;
  }
  if (bits(w, 46, 48) != 1) throw std::runtime_error("descriptor bits 46-48 are not 0b001");
  if (bits(w, 52, 60) != 0) throw std::runtime_error("descriptor bits 52-60 are not zero");
  d.layout = static_cast<int>(bits(w, 61, 63));
  if (d.layout == 3 || d.layout == 5 || d.layout == 7) throw std::runtime_error("invalid swizzle code");
  return d;
}

int swizzle_bytes_of(int layout) {
  switch (layout) {
    case 0: return 16;
    case 6: return 32;
    case 4: return 64;
    default: return 128;
  }
}

// §9.7.16.4.2 Table 42, decoded by hand.
struct Idesc {
  int m, n, atype, btype, dtype;
  bool ta, tb;
};
Idesc decode_idesc(uint32_t w) {
  Idesc d;
  d.dtype = static_cast<int>(bits(w, 4, 5));
  d.atype = static_cast<int>(bits(w, 7, 9));
  d.btype = static_cast<int>(bits(w, 10, 12));
  d.ta = bits(w, 15, 15);
  d.tb = bits(w, 16, 16);
  d.n = static_cast<int>(bits(w, 17, 22) << 3);
  d.m = static_cast<int>(bits(w, 24, 28) << 4);
  if (bits(w, 6, 6) || bits(w, 23, 23) || bits(w, 29, 29)) throw std::runtime_error("reserved idesc bit set");
  return d;
}

}  // namespace

uint32_t swizzle(int layout, uint32_t a) {
  switch (layout) {
    case 2: return a ^ (((a >> 7) & 7u) << 4);  // 128B: Swizzle<3,4,3>
    case 4: return a ^ (((a >> 7) & 3u) << 4);  // 64B:  Swizzle<2,4,3>
    case 6: return a ^ (((a >> 7) & 1u) << 4);  // 32B:  Swizzle<1,4,3>
    case 1: return a ^ (((a >> 7) & 3u) << 5);  // 128B with 32B atomicity: Swizzle<2,5,2>
    default: return a;
  }
}

// TMA writes a box row by row, each row `w` bytes (the swizzle width, or 16 without swizzle),
// boxes of consecutive `w`-byte slices of the contiguous dimension one after another.
uint32_t tma_offset(bool contiguous_is_k, int swz, bool /*base32b*/, int bits_per, int rows, int k, int row, int col) {
  const int w = swz;
  if (contiguous_is_k) {
    const int kb = col * bits_per / 8;
    return static_cast<uint32_t>((kb / w) * rows * w + row * w + kb % w);
  }
  const int mb = row * bits_per / 8;
  return static_cast<uint32_t>((mb / w) * k * w + col * w + mb % w);
}

namespace {

// The byte offset (before swizzling) of element (i along M/N, j along K) of the matrix a
// descriptor describes, from the canonical layouts of §9.7.16.3.3 (T = 128 / bits).
uint32_t canonical(const Desc& d, bool mn_major, int bits_per, int i, int j) {
  const int t = 128 / bits_per;
  const int sw = swizzle_bytes_of(d.layout);
  if (!mn_major) {
    if (d.layout == 0) {  // ((8,m),(T,2k)) : ((1T,SBO),(1,LBO))
      return static_cast<uint32_t>((i % 8) * 16 + (i / 8) * d.sbo + (j % t) * bits_per / 8 + (j / t) * d.lbo);
    }
    // ((8,m),(T,2k)) : ((sT,SBO),(1,T)): rows sw bytes apart, K contiguous within the row.
    return static_cast<uint32_t>((i % 8) * sw + (i / 8) * d.sbo + j * bits_per / 8);
  }
  if (d.layout == 0) {  // ((T,1,m),(8,k)) : ((1,T,SBO),(1T,LBO))
    return static_cast<uint32_t>((i % t) * bits_per / 8 + (i / t) * d.sbo + (j % 8) * 16 + (j / 8) * d.lbo);
  }
  if (d.layout == 1) {  // 128B, 32B atomicity: atoms of 128 B x 4 K rows (Table 55: 8x4)
    const int per_row = 128 * 8 / bits_per;
    return static_cast<uint32_t>((i % per_row) * bits_per / 8 + (i / per_row) * d.lbo + (j % 4) * 128 +
                                 (j / 4) * d.sbo);
  }
  // ((T,s,m),(8,k)) : ((1,T,LBO),(sT,SBO)), s = sw / 16
  const int per_row = sw * 8 / bits_per;
  return static_cast<uint32_t>((i % per_row) * bits_per / 8 + (i / per_row) * d.lbo + (j % 8) * sw +
                               (j / 8) * d.sbo);
}

int type_bits(ptxgen::isa::Kind k, int code) {
  using ptxgen::isa::Kind;
  switch (k) {
    case Kind::f16: return 16;
    case Kind::tf32: return 32;
    case Kind::i8: return 8;
    case Kind::f8f6f4: return 8;  // 4/6-bit elements sit in 8-bit containers (§9.7.16.10.4.4)
    default: (void)code; return 8;
  }
}

// One CTA's shared memory: element ids at byte addresses (relative to the aligned base).
struct Smem {
  std::map<uint32_t, int> id;  // first byte of an element -> element index
};

}  // namespace

Result replay(const ptxgen::plan::Plan& p, unsigned seed) {
  using namespace ptxgen;
  Result res;
  const plan::Shapes& sh = p.shapes;
  const spec::Gemm& g = *p.spec.gemm;
  const int cta = sh.cta_group;
  const int tm = static_cast<int>(g.tile.m), tn = static_cast<int>(g.tile.n), tk = static_cast<int>(g.tile.k);
  auto fail = [&](const std::string& e) {
    if (res.errors.size() < 8) res.errors.push_back(e);
  };

  std::mt19937 rng(seed);
  std::vector<int> A(static_cast<size_t>(tm) * tk), B(static_cast<size_t>(tn) * tk);
  for (auto& x : A) x = static_cast<int>(rng() % 7) - 3;
  for (auto& x : B) x = static_cast<int>(rng() % 7) - 3;

  // Fill each CTA's shared memory (stage 0) as TMA would.
  auto swz_of = [](isa::Swizzle s) {
    switch (s) {
      case isa::Swizzle::b32: return 6;
      case isa::Swizzle::b64: return 4;
      case isa::Swizzle::b128: return 2;
      case isa::Swizzle::b128_base32b: return 1;
      default: return 0;
    }
  };
  const int a_layout = swz_of(g.swizzle_a), b_layout = swz_of(g.swizzle_b);
  const int a_bits = sh.a.layout.bits, b_bits = sh.b.layout.bits;
  std::vector<Smem> smem(static_cast<size_t>(cta));
  const int a_rows = tm / cta, b_rows = tn / cta;
  for (int v = 0; v < cta; ++v) {
    for (int r = 0; r < a_rows; ++r)
      for (int k = 0; k < tk; ++k) {
        const uint32_t off = tma_offset(g.a.major == isa::Major::k, swizzle_bytes_of(a_layout), a_layout == 1, a_bits,
                                        sh.a.layout.mn, tk, r, k);
        const uint32_t addr = swizzle(a_layout, sh.smem.a_offset[0] + off);
        if (!smem[v].id.emplace(addr, (v * a_rows + r) * tk + k).second) fail("A elements collide in shared memory");
      }
    for (int r = 0; r < b_rows; ++r)
      for (int k = 0; k < tk; ++k) {
        const uint32_t off = tma_offset(g.b.major == isa::Major::k, swizzle_bytes_of(b_layout), b_layout == 1, b_bits,
                                        sh.b.layout.mn, tk, r, k);
        const uint32_t addr = swizzle(b_layout, sh.smem.b_offset[0] + off);
        if (!smem[v].id.emplace(addr, -1 - ((v * b_rows + r) * tk + k)).second) fail("B elements collide in shared memory");
      }
  }
  auto read = [&](int v, uint32_t addr, bool want_a) -> int {
    auto it = smem[v].id.find(addr);
    if (it == smem[v].id.end() || (it->second >= 0) != want_a) {
      fail(std::string("MMA reads ") + (want_a ? "A" : "B") + " at shared address " + std::to_string(addr) +
           ", where TMA wrote no such element");
      return 0;
    }
    return want_a ? A[static_cast<size_t>(it->second)] : B[static_cast<size_t>(-1 - it->second)];
  };

  // Tensor memory of each CTA: (lane, column) -> value; A in TMEM holds element values.
  std::vector<std::map<std::pair<uint32_t, uint32_t>, long>> tmem(static_cast<size_t>(cta));
  std::vector<std::map<std::tuple<uint32_t, uint32_t, int>, int>> tmem_a(static_cast<size_t>(cta));

  // tcgen05.cp .128x256b: 128 rows x 32 bytes from a K-major source into 128 lanes x 8 columns.
  for (const auto& c : p.copies) {
    const Desc d = decode_desc(plan::encoded(c.src), false);
    if (d.base_offset != 0) fail("copy source has a base offset");
    const uint32_t lane0 = c.dst_tmem >> 16, col0 = c.dst_tmem & 0xFFFF;
    const int per32 = 32 / a_bits;
    for (int v = 0; v < cta; ++v)
      for (int row = 0; row < 128; ++row)
        for (int j = 0; j < 256 / a_bits; ++j) {
          const uint32_t addr = swizzle(d.layout, d.start + canonical(d, false, a_bits, row, j));
          tmem_a[v][{lane0 + static_cast<uint32_t>(row), col0 + static_cast<uint32_t>(j / per32), j % per32}] =
              read(v, addr, true);
        }
  }

  const bool wgmma = sh.engine == plan::Engine::wgmma;
  // wgmma: each warpgroup's accumulator in registers, by (row of the CTA tile, column of the tile).
  std::map<std::pair<int, int>, long> regs;
  for (const auto& m : p.mmas) {
    // The instruction's shape: from the instruction descriptor (tcgen05) or the plan (wgmma,
    // whose shape is in the opcode).
    Idesc id{};
    if (wgmma) {
      id.m = m.m;
      id.n = m.n;
      id.ta = g.a.major == isa::Major::mn;
      id.tb = g.b.major == isa::Major::mn;
    } else {
      id = decode_idesc(plan::encoded(p.idescs[static_cast<size_t>(m.idesc)]));
    }
    const int k_instr = 256 / (wgmma ? isa::value_bits(g.a.dtype) : type_bits(sh.kind, id.atype));
    const Desc bd = decode_desc(plan::encoded(m.b_desc), wgmma);
    const int m_cta = id.m / cta;      // rows of A (and D) per CTA
    const int n_cta = id.n / cta;      // rows of B per CTA
    const uint32_t d_lane = m.d_tmem >> 16, d_col = m.d_tmem & 0xFFFF;
    int n0 = 0;  // the N group's first column (wgmma)
    for (int j = 0; j < m.ni; ++j) n0 += sh.n_groups[static_cast<size_t>(j)];
    for (int v = 0; v < cta; ++v) {
      // B of the whole instruction: CTA w holds rows [w*n_cta, (w+1)*n_cta) of the N group.
      std::vector<int> bv(static_cast<size_t>(id.n) * k_instr);
      for (int w = 0; w < cta; ++w)
        for (int n = 0; n < n_cta; ++n)
          for (int j = 0; j < k_instr; ++j)
            bv[static_cast<size_t>(w * n_cta + n) * k_instr + j] =
                read(w, swizzle(bd.layout, bd.start + canonical(bd, id.tb, b_bits, n, j)), false);
      for (int i = 0; i < m_cta; ++i) {
        std::vector<int> av(static_cast<size_t>(k_instr));
        for (int j = 0; j < k_instr; ++j) {
          if (m.a_tmem) {
            const int per32 = 32 / a_bits;
            const uint32_t lane = (m.a_tmem_addr >> 16) + static_cast<uint32_t>(i);
            const uint32_t col = (m.a_tmem_addr & 0xFFFF) + static_cast<uint32_t>(j / per32);
            auto it = tmem_a[v].find({lane, col, j % per32});
            if (it == tmem_a[v].end()) fail("MMA reads A from tensor memory no copy wrote");
            else av[static_cast<size_t>(j)] = it->second;
          } else {
            const Desc ad = decode_desc(plan::encoded(m.a_desc), wgmma);
            av[static_cast<size_t>(j)] = read(v, swizzle(ad.layout, ad.start + canonical(ad, id.ta, a_bits, i, j)), true);
          }
        }
        for (int n = 0; n < id.n; ++n) {
          long acc = 0;
          for (int j = 0; j < k_instr; ++j) acc += long{av[static_cast<size_t>(j)]} * bv[static_cast<size_t>(n) * k_instr + j];
          if (wgmma) {
            long& cell = regs[{m.mi * 64 + i, n0 + n}];
            cell = (m.first ? 0 : cell) + acc;
            continue;
          }
          // Data-path layouts (§9.7.16.10.5): where row i, column n of D lands in this CTA.
          uint32_t lane, col;
          if (cta == 1 && id.m == 64) {  // layout F: 16 rows per 32-lane quarter, from alignment d_lane
            lane = static_cast<uint32_t>((i % 16) + 32 * (i / 16)) + d_lane;
            col = d_col + static_cast<uint32_t>(n);
          } else if (cta == 2 && id.m == 128) {  // layout B: N halves in lanes 0-63 / 64-127
            lane = static_cast<uint32_t>(i + (n >= id.n / 2 ? 64 : 0)) + d_lane;
            col = d_col + static_cast<uint32_t>(n % (id.n / 2));
          } else {  // layouts D (M=128) and A (M=256, 128 rows per CTA)
            lane = static_cast<uint32_t>(i) + d_lane;
            col = d_col + static_cast<uint32_t>(n);
          }
          long& cell = tmem[v][{lane, col}];
          cell = (m.first ? 0 : cell) + acc;
        }
      }
    }
  }

  // Read D back: wgmma from the registers; tcgen05 through the planned epilogue (each
  // tcgen05.ld.32x32b: warp w, thread t reads lane 32w+t), and compare every element of the CTA
  // tile with the plain GEMM. Rows are CTA-local (CTA v holds A rows v*a_rows..), columns are the
  // N tile's (a pair's B halves: CTA w holds columns w*tile.n/2..).
  std::vector<int> covered(static_cast<size_t>(tm) * tn, 0);
  auto check = [&](int v, int row, int col, long got) {
    if (row < 0 || row >= a_rows || col < 0 || col >= tn) {
      fail("a value lands outside the tile: row " + std::to_string(row) + ", column " + std::to_string(col));
      return;
    }
    const int a_index = v * a_rows + row;
    const int w = col / (tn / cta), b_index = w * b_rows + col % (tn / cta);
    long want = 0;
    for (int k = 0; k < tk; ++k)
      want += long{A[static_cast<size_t>(a_index) * tk + k]} * B[static_cast<size_t>(b_index) * tk + k];
    if (got != want)
      fail("D(" + std::to_string(a_index) + "," + std::to_string(col) + ") = " + std::to_string(got) + ", expected " +
           std::to_string(want));
    ++covered[static_cast<size_t>(a_index) * tn + col];
    ++res.elements_checked;
  };
  if (wgmma) {
    for (const auto& [rc, val] : regs) check(0, rc.first, rc.second, val);
  } else {
    for (const auto& e : p.kernel.epilogue)
      for (int v = 0; v < cta; ++v)
        for (int w = 0; w < 4; ++w)
          for (int t = 0; t < 32; ++t)
            for (int j = 0; j < e.num; ++j) {
              const uint32_t lane = static_cast<uint32_t>(32 * w + t), col = e.column + static_cast<uint32_t>(j);
              int row = -1, c = e.col_base + j;
              switch (p.kernel.layout) {
                case plan::Layout::D:
                case plan::Layout::A: row = e.row_base + 32 * w + t; break;
                case plan::Layout::F:
                  row = t < 16 ? e.row_base + 16 * w + t : (e.row_base2 < 0 ? -1 : e.row_base2 + 16 * w + t - 16);
                  break;
                case plan::Layout::B:
                  row = e.row_base + 32 * (w % 2) + t;
                  c = (w < 2 ? e.col_base : e.col_base2) + j;
                  break;
              }
              if (row < 0) continue;  // lanes the layout leaves empty
              auto it = tmem[v].find({lane, col});
              if (it == tmem[v].end()) {
                fail("the epilogue reads lane " + std::to_string(lane) + ", column " + std::to_string(col) +
                     " that no MMA wrote");
                continue;
              }
              check(v, row, c, it->second);
            }
  }
  for (size_t i = 0; i < covered.size(); ++i)
    if (covered[i] != 1) {
      fail("tile element (" + std::to_string(i / tn) + "," + std::to_string(i % tn) + ") stored " +
           std::to_string(covered[i]) + " times");
      break;
    }
  res.ok = res.errors.empty();
  return res;
}

}  // namespace refmodel
