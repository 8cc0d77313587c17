// Reference model; see refmodel.hpp. Nothing here calls ptxgen::isa.
#include "refmodel.hpp"

#include <cstdint>
#include <climits>
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
constexpr int kNone = INT32_MIN;
struct Smem {
  std::vector<int> id = std::vector<int>(1u << 18, kNone);  // first byte of an element -> element index
  bool put(uint32_t addr, int v) {
    if (addr >= id.size() || id[addr] != kNone) return false;
    id[addr] = v;
    return true;
  }
};

// A sparse-free grid of cells: tensor memory (128 lanes x 512 columns, `depth` values per cell)
// or the registers of a tile; remembers which cells were written.
struct Cells {
  uint32_t rows, cols, depth;
  std::vector<long> v;
  std::vector<char> set;
  Cells(uint32_t r, uint32_t c, uint32_t d = 1) : rows(r), cols(c), depth(d), v(size_t(r) * c * d), set(v.size()) {}
  long* at(uint32_t r, uint32_t c, uint32_t k = 0) {
    if (r >= rows || c >= cols || k >= depth) return nullptr;
    return &v[(size_t(r) * cols + c) * depth + k];
  }
  bool written(uint32_t r, uint32_t c, uint32_t k = 0) const {
    return r < rows && c < cols && k < depth && set[(size_t(r) * cols + c) * depth + k];
  }
  void write(uint32_t r, uint32_t c, uint32_t k, long x) {
    if (long* p = at(r, c, k)) {
      *p = x;
      set[static_cast<size_t>(p - v.data())] = 1;
    }
  }
};

}  // namespace

Result replay(const ptxgen::plan::Plan& p, const ptxgen::spec::Gemm& g, unsigned seed) {
  using namespace ptxgen;
  Result res;
  const int cta = p.ir().cta_group;
  const int tm = static_cast<int>(g.tile.m), tn = static_cast<int>(g.tile.n), tk = static_cast<int>(g.tile.k);
  const int a_rows = tm / cta, b_rows = tn / cta;
  auto fail = [&](const std::string& e) {
    if (res.errors.size() < 8) res.errors.push_back(e);
  };
  const bool wgmma = p.ir().engine == ir::Engine::wgmma;
  const plan::RolePlan* producer = nullptr;
  const plan::RolePlan* issuer = nullptr;
  const plan::RolePlan* epilogue = nullptr;
  for (const auto& r : p.roles) {
    if (r.ir().name == "producer") producer = &r;
    // Ping-pong consumers each compute whole tiles: the first stands for both.
    if (r.ir().name == "mma" || r.ir().name == "consumer" || r.ir().name == "consumer0") issuer = &r;
    if (r.ir().name == "epilogue" || r.ir().name == "consumer" || r.ir().name == "consumer0") epilogue = &r;
  }
  // The K loops: the producer's first step, the issuer's first loop (a persistent issuer first waits
  // for its accumulator buffer).
  auto first_loop = [](const plan::RolePlan* r) -> const plan::Step* {
    for (const auto& st : r->steps)
      if (st.kind == plan::StepKind::loop) return &st;
    return nullptr;
  };
  if (!producer || !issuer || !epilogue || producer->steps.empty() || producer->steps[0].kind != plan::StepKind::loop ||
      !first_loop(issuer)) {
    fail("the plan has no producer loop and MMA loop");
    return res;
  }

  // The logical CTA tile (all CTAs of a pair): A is tm x tk, B is tn x tk (N rows), small integers.
  std::mt19937 rng(seed);
  std::vector<int> A(static_cast<size_t>(tm) * tk), B(static_cast<size_t>(tn) * tk);
  for (auto& x : A) x = static_cast<int>(rng() % 7) - 3;
  for (auto& x : B) x = static_cast<int>(rng() % 7) - 3;
  auto swz_of = [](isa::Swizzle s) {
    switch (s) {
      case isa::Swizzle::b32: return 6;
      case isa::Swizzle::b64: return 4;
      case isa::Swizzle::b128: return 2;
      case isa::Swizzle::b128_base32b: return 1;
      default: return 0;
    }
  };
  std::map<std::string, const plan::SmemPlacement*> tiles;
  for (const auto& t : p.smem) tiles[t.name] = &t;

  // Shared memory of each CTA, stage 0 of the first K block, as TMA writes each planned load: the
  // load's rows of the CTA's part of the operand (a row-placed load puts them at tile_row0 on).
  std::vector<Smem> smem(static_cast<size_t>(cta));
  for (const auto& st : producer->steps[0].body) {
    if (st.kind != plan::StepKind::load) continue;
    const plan::LoadStep& l = st.load;
    const bool is_a = l.global == "A";
    const spec::Operand& op = is_a ? g.a : g.b;
    const plan::SmemPlacement& t = *tiles.at(l.tile);
    const int layout = swz_of(t.layout.swizzle);
    const bool kc = op.major == isa::Major::k;
    const int rows = kc ? l.box_rows : t.layout.mn;  // MN rows of the operand this load brings
    for (int v = 0; v < cta; ++v)
      for (int r = 0; r < rows; ++r)
        for (int k = 0; k < tk; ++k) {
          // The operand row (CTA-local) and the tile row it lands in.
          const int src_row = kc ? static_cast<int>(l.row0.base) + r : r;
          const int tile_row = kc ? l.tile_row0 + r : r;
          const uint32_t off = tma_offset(kc, swizzle_bytes_of(layout), layout == 1, t.bits, t.layout.mn, tk, tile_row, k);
          const uint32_t addr = swizzle(layout, t.offset + off);
          const int row_in_tile = v * (is_a ? a_rows : b_rows) + src_row;
          const int id = row_in_tile * tk + k;
          if (!smem[static_cast<size_t>(v)].put(addr, is_a ? id : -1 - id))
            fail(std::string(is_a ? "A" : "B") + " elements collide in shared memory");
        }
  }
  auto read = [&](int v, uint32_t addr, bool want_a) -> int {
    const auto& sm = smem[static_cast<size_t>(v)];
    const int id = addr < sm.id.size() ? sm.id[addr] : kNone;
    if (id == kNone || (id >= 0) != want_a) {
      fail(std::string("MMA reads ") + (want_a ? "A" : "B") + " at shared address " + std::to_string(addr) +
           ", where TMA wrote no such element");
      return 0;
    }
    return want_a ? A[static_cast<size_t>(id)] : B[static_cast<size_t>(-1 - id)];
  };

  // Tensor memory of each CTA: (lane, column) -> value; A in TMEM holds element values.
  std::vector<Cells> tmem(static_cast<size_t>(cta), Cells(128, 512));
  std::vector<Cells> tmem_a(static_cast<size_t>(cta), Cells(128, 512, 4));
  const int a_bits = tiles.at("a")->bits, b_bits = tiles.at("b")->bits;
  // wgmma: each warpgroup's accumulator in registers, by (row of the CTA tile, column of the tile).
  Cells regs(static_cast<uint32_t>(tm), static_cast<uint32_t>(tn));

  for (const auto& st : first_loop(issuer)->body) {
    // tcgen05.cp (§9.7.16.9.2): .128x256b / .128x128b write source row r to lane r; .64x128b
    // .warpx2::02_13 writes it to lanes r and 64 + r. Each CTA its own shared into its own tensor memory.
    for (const auto& c : st.cps) {
      const Desc d = decode_desc(plan::encoded(c.src), false);
      if (d.base_offset != 0) fail("copy source has a base offset");
      const uint32_t lane0 = c.taddr >> 16, col0 = c.taddr & 0xFFFF;
      const int per32 = 32 / a_bits;
      int src_rows = 128, width = 256;
      bool twice = false;
      if (c.shape == isa::CpShape::s128x128b) width = 128;
      else if (c.shape == isa::CpShape::s64x128b_02_13) src_rows = 64, width = 128, twice = true;
      else if (c.shape != isa::CpShape::s128x256b) fail("a tcgen05.cp shape the model does not replay");
      for (int v = 0; v < cta; ++v)
        for (int row = 0; row < src_rows; ++row)
          for (int j = 0; j < width / a_bits; ++j) {
            const uint32_t addr = swizzle(d.layout, d.start + canonical(d, false, a_bits, row, j));
            // Rows no load wrote (a layout-F slab's lanes of a piece that does not exist) copy
            // nothing the model knows: their cells stay unwritten, and an MMA reading them fails.
            const auto& ids = smem[static_cast<size_t>(v)].id;
            if (addr >= ids.size() || ids[addr] == kNone) continue;
            const int x = read(v, addr, true);
            for (uint32_t rep = 0; rep < (twice ? 2u : 1u); ++rep)
              tmem_a[static_cast<size_t>(v)].write(lane0 + static_cast<uint32_t>(row) + 64 * rep, col0 + static_cast<uint32_t>(j / per32),
                                                   static_cast<uint32_t>(j % per32), x);
          }
    }
    if (st.kind != plan::StepKind::mma) continue;
    const plan::MmaStep& ms = st.mma;
    for (const auto& m : ms.instrs) {
      Idesc id{};
      if (wgmma) {
        id.m = m.m;
        id.n = m.n;
        id.ta = g.a.major == isa::Major::mn;
        id.tb = g.b.major == isa::Major::mn;
      } else {
        id = decode_idesc(plan::encoded(m.idesc));
      }
      const int k_instr = 256 / (wgmma ? isa::value_bits(g.a.dtype) : type_bits(ms.kind, id.atype));
      const Desc bd = decode_desc(plan::encoded(m.b_desc), wgmma);
      const int m_cta = id.m / cta;  // rows of A (and D) per CTA
      const int n_cta = id.n / cta;  // rows of B per CTA
      const uint32_t d_lane = m.d_taddr >> 16, d_col = m.d_taddr & 0xFFFF;
      int n0 = 0;  // wgmma: the N group's first column
      for (const auto& x : ms.instrs)
        if (x.ki == m.ki && x.mi == m.mi && x.ni < m.ni) n0 += x.n;
      // wgmma: warpgroups of warpgroup_rows rows each, instruction M group mi 64 rows into them.
      const int warpgroups = wgmma ? tm / ms.warpgroup_rows : 1;
      for (int v = 0; v < cta; ++v)
        for (int wg = 0; wg < warpgroups; ++wg) {
          // B of the whole instruction: CTA w holds rows [w*n_cta, (w+1)*n_cta) of the N group.
          std::vector<int> bv(static_cast<size_t>(id.n) * k_instr);
          for (int w = 0; w < cta; ++w)
            for (int n = 0; n < n_cta; ++n)
              for (int j = 0; j < k_instr; ++j)
                bv[static_cast<size_t>(w * n_cta + n) * k_instr + j] =
                    read(w, swizzle(bd.layout, bd.start + canonical(bd, id.tb, b_bits, n, j)), false);
          for (int i = 0; i < m_cta; ++i) {
            // A's row i sits where D's row i does (§9.7.16.10.5); layout F from the lane alignment.
            uint32_t a_lane = static_cast<uint32_t>(i);
            if (cta == 1 && id.m == 64) a_lane = static_cast<uint32_t>((i % 16) + 32 * (i / 16));
            std::vector<int> av(static_cast<size_t>(k_instr));
            for (int j = 0; j < k_instr; ++j) {
              if (m.a_tmem) {
                const int per32 = 32 / a_bits;
                const uint32_t lane = (m.a_taddr >> 16) + a_lane;
                const uint32_t col = (m.a_taddr & 0xFFFF) + static_cast<uint32_t>(j / per32);
                if (!tmem_a[static_cast<size_t>(v)].written(lane, col, static_cast<uint32_t>(j % per32)))
                  fail("MMA reads A from tensor memory no copy wrote");
                else
                  av[static_cast<size_t>(j)] = static_cast<int>(*tmem_a[static_cast<size_t>(v)].at(lane, col, static_cast<uint32_t>(j % per32)));
              } else {
                Desc ad = decode_desc(plan::encoded(m.a_desc), wgmma);
                ad.start += static_cast<uint32_t>(wg) * ms.a_warpgroup_stride;  // warpgroup wg's rows
                av[static_cast<size_t>(j)] = read(v, swizzle(ad.layout, ad.start + canonical(ad, id.ta, a_bits, i, j)), true);
              }
            }
            for (int n = 0; n < id.n; ++n) {
              long acc = 0;
              for (int j = 0; j < k_instr; ++j) acc += long{av[static_cast<size_t>(j)]} * bv[static_cast<size_t>(n) * k_instr + j];
              if (wgmma) {
                const uint32_t r = static_cast<uint32_t>(wg * ms.warpgroup_rows + 64 * m.mi + i), c = static_cast<uint32_t>(n0 + n);
                const long prev = !m.enable_input_d || !regs.written(r, c) ? 0 : *regs.at(r, c);
                regs.write(r, c, 0, prev + acc);
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
              Cells& tc = tmem[static_cast<size_t>(v)];
              if (!tc.at(lane, col)) {
                fail("an MMA writes outside tensor memory (lane " + std::to_string(lane) + ", column " + std::to_string(col) + ")");
                continue;
              }
              const long prev = !m.enable_input_d || !tc.written(lane, col) ? 0 : *tc.at(lane, col);
              tc.write(lane, col, 0, prev + acc);
            }
          }
        }
    }
  }

  // Read D back and compare every element of the CTA tile with the plain GEMM. Rows are the tile's
  // (CTA v's stores carry v x the rank part of their origin), columns the N tile's.
  std::vector<int> covered(static_cast<size_t>(tm) * tn, 0);
  auto check = [&](int row, int col, long got) {
    if (row < 0 || row >= tm || col < 0 || col >= tn) {
      fail("a value lands outside the tile: row " + std::to_string(row) + ", column " + std::to_string(col));
      return;
    }
    // Column col of the N tile: in a pair, CTA w holds B rows w * tn/2 .. of it.
    long want = 0;
    for (int k = 0; k < tk; ++k) want += long{A[static_cast<size_t>(row) * tk + k]} * B[static_cast<size_t>(col) * tk + k];
    if (got != want)
      fail("D(" + std::to_string(row) + "," + std::to_string(col) + ") = " + std::to_string(got) + ", expected " + std::to_string(want));
    ++covered[static_cast<size_t>(row) * tn + col];
    ++res.elements_checked;
  };
  const plan::RegDef* loaded = nullptr;
  for (const auto& st : epilogue->steps) {
    if (st.kind == plan::StepKind::tmem_ld) loaded = &st.ld;
    if (st.kind != plan::StepKind::store) continue;
    const plan::StoreStep& sto = st.store;
    if (wgmma) {
      for (uint32_t r = 0; r < regs.rows; ++r)
        for (uint32_t c = 0; c < regs.cols; ++c)
          if (regs.written(r, c)) check(static_cast<int>(sto.row0.base + r), static_cast<int>(sto.col0.base + c), *regs.at(r, c));
      continue;
    }
    if (!loaded) {
      fail("a store of registers no tcgen05.ld loaded");
      continue;
    }
    for (int v = 0; v < cta; ++v)
      for (const auto& f : loaded->frags)
        for (int t = 0; t < 32; ++t)
          for (int j = 0; j < f.regs; ++j) {
            int dl = 0, dc = 0;
            bool half = false;
            tmem_cell(f.shape, t, j, dl, dc, half);
            const uint32_t lane = (f.taddr >> 16) + static_cast<uint32_t>(dl), col = (f.taddr & 0xFFFF) + static_cast<uint32_t>(dc);
            if (!tmem[static_cast<size_t>(v)].written(lane, col)) {
              fail("the epilogue reads lane " + std::to_string(lane) + ", column " + std::to_string(col) + " that no MMA wrote");
              continue;
            }
            const int row = static_cast<int>(sto.row0.base + v * sto.row0.rank) + f.row0 + dl;
            const int c = static_cast<int>(sto.col0.base + sto.piece_col + f.elem0) + dc;  // a piece of a box: from its column
            check(row, c, *tmem[static_cast<size_t>(v)].at(lane, col));
          }
  }
  for (size_t i = 0; i < covered.size(); ++i)
    if (covered[i] != 1) {
      fail("tile element (" + std::to_string(i / tn) + "," + std::to_string(i % tn) + ") stored " + std::to_string(covered[i]) + " times");
      break;
    }
  res.ok = res.errors.empty();
  return res;
}

}  // namespace refmodel
