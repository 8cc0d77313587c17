// Reference model of program-level plans; see refmodel.hpp. Written from the PTX ISA (and, where
// the ISA has only figures, the CUTLASS facts docs/architecture.md lists), calling nothing of
// ptxgen::isa and not the planner's view resolution: it resolves views itself, keeps global,
// shared and tensor memory as bit-addressed element slots, replays every step's instruction bits
// (descriptors, instruction descriptors, tensor-memory addresses, shapes), and compares with a
// logical evaluation of the ops written from docs/spec.md.
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <tuple>

#include "refmodel.hpp"
#include "sim/views.hpp"

namespace refmodel {

namespace {

using namespace ptxgen;
using spec::TmemLayout;
// The views resolved from the spec alone (src/sim/views.hpp, shared with the simulator's reference).
using sim::View;
using sim::Views;

struct Elem {
  double v = 0;
  int bits = 0;
};
using Mem = std::map<uint64_t, Elem>;  // bit address -> element starting there

uint64_t bitsof(uint64_t w, int lo, int hi) { return (w >> lo) & ((uint64_t{1} << (hi - lo + 1)) - 1); }

int vbits(isa::DType t) {
  switch (t) {
    case isa::DType::f16:
    case isa::DType::bf16: return 16;
    case isa::DType::tf32:
    case isa::DType::f32:
    case isa::DType::s32: return 32;
    case isa::DType::e2m3:
    case isa::DType::e3m2: return 6;
    case isa::DType::e2m1: return 4;
    default: return 8;
  }
}
// Storage in global/shared memory: 4/6-bit types padded to 16 elements per 16 bytes, or e2m1 two
// per byte (docs/spec.md; §9.7.16.10.4.4/.6).
bool packed4(isa::DType t, spec::SubByte f) { return t == isa::DType::e2m1 && f == spec::SubByte::packed; }
int container(isa::DType t, spec::SubByte f) { return vbits(t) >= 8 ? vbits(t) : (packed4(t, f) ? 4 : 8); }
// Bit address of element idx of a row-major array in its storage format.
uint64_t elem_bit(isa::DType t, spec::SubByte f, uint64_t idx) {
  const int vb = vbits(t), c = container(t, f);
  if (c == 8 && vb < 8) return idx / 16 * 128 + idx % 16 * static_cast<uint64_t>(vb);  // padded group
  return idx * static_cast<uint64_t>(c);
}

// Round to `mant` explicit mantissa bits, nearest even (f16: 10, bf16: 7).
double round_to(double x, int mant) {
  if (x == 0) return 0;
  int e;
  std::frexp(x, &e);
  const double q = std::ldexp(1.0, e - 1 - mant);
  return std::nearbyint(x / q) * q;
}
double convert(double v, isa::DType to) {
  if (to == isa::DType::bf16) return round_to(v, 7);
  if (to == isa::DType::f16) return round_to(v, 10);
  return v;
}

// ---- canonical shared-memory layouts (§9.7.16.3.3) with the swizzle on the address -----------
struct Desc {
  uint32_t start, lbo, sbo;
  int layout;
};
Desc decode(uint64_t w) {
  if (bitsof(w, 46, 48) != 1 || bitsof(w, 52, 60) != 0) throw std::runtime_error("malformed descriptor");
  return {static_cast<uint32_t>(bitsof(w, 0, 13) << 4), static_cast<uint32_t>(bitsof(w, 16, 29) << 4),
          static_cast<uint32_t>(bitsof(w, 32, 45) << 4), static_cast<int>(bitsof(w, 61, 63))};
}
int swizzle_width(int layout) { return layout == 0 ? 16 : layout == 6 ? 32 : layout == 4 ? 64 : 128; }
// Byte address (swizzled) of 16-byte column j of row i of a K-major matrix.
uint32_t kmajor_chunk(const Desc& d, int i, int j) {
  const int s = swizzle_width(d.layout);
  const uint32_t row = static_cast<uint32_t>(i % 8) * static_cast<uint32_t>(d.layout == 0 ? 16 : s) + static_cast<uint32_t>(i / 8) * d.sbo;
  const uint32_t col = d.layout == 0 ? static_cast<uint32_t>(j) * d.lbo : static_cast<uint32_t>(j) * 16;
  return swizzle(d.layout, d.start + row + col);
}
// Bit address of element (i along M/N, k along K) of an operand (container bits c, value bits vb).
uint64_t operand_bit(const Desc& d, bool mn_major, int c, int vb, int i, int k) {
  const int t = 128 / c;  // elements per 16 bytes
  uint32_t byte16;        // the 16-byte piece holding it
  int within;             // element index inside the piece
  if (!mn_major) {
    byte16 = kmajor_chunk(d, i, k / t);
    within = k % t;
  } else {
    const int s = swizzle_width(d.layout);
    const int per_row = (d.layout == 0 ? 16 : s) * 8 / c;  // elements along MN in one atom row
    const int krows = d.layout == 1 ? 4 : 8;
    uint32_t off;
    if (d.layout == 0)
      off = static_cast<uint32_t>(i / t) * d.sbo + static_cast<uint32_t>(k % 8) * 16 + static_cast<uint32_t>(k / 8) * d.lbo;
    else
      off = static_cast<uint32_t>(i / per_row) * d.lbo + static_cast<uint32_t>(k % krows) * static_cast<uint32_t>(s) +
            static_cast<uint32_t>(k / krows) * d.sbo + static_cast<uint32_t>((i % per_row) / t) * 16;
    byte16 = swizzle(d.layout, d.start + off);
    within = i % t;
  }
  const uint64_t base = uint64_t{byte16} * 8;
  if (c == 8 && vb < 8) return base + static_cast<uint64_t>(within) * static_cast<uint64_t>(vb);  // padded group
  return base + static_cast<uint64_t>(within) * static_cast<uint64_t>(c);
}

// ---- tcgen05.ld/st fragments: thread t, register j -> (lane, column) (CUTLASS TMEM_LOAD traits) -
void cell(isa::LdShape s, int t, int j, int& lane, int& col, bool& half) {
  half = false;
  switch (s) {
    case isa::LdShape::s32x32b: lane = t, col = j; return;
    case isa::LdShape::s16x64b: lane = t / 4 + 8 * (t % 2), col = (t / 2) % 2 + 2 * j; return;
    case isa::LdShape::s16x128b: lane = t / 4 + 8 * (j % 2), col = t % 4 + 4 * (j / 2); return;
    case isa::LdShape::s16x256b: lane = t / 4 + 8 * ((j / 2) % 2), col = 2 * (t % 4) + j % 2 + 8 * (j / 4); return;
    case isa::LdShape::s16x32bx2: lane = t % 16, col = j, half = t >= 16; return;
  }
}

struct Model {
  const plan::Plan& plan;
  const spec::Program& prog;
  Views views;
  Result& res;
  std::map<std::string, Mem> global, tmem;  // tmem bit address: (lane * 512 + column) * 32 + bit
  Mem smem;
  std::map<std::string, std::map<std::tuple<int, int, int>, Mem>> regs;  // (warp, thread, register) -> bits 0-31
  // The logical evaluation.
  struct Matrix {
    int rows = 0;
    int64_t cols = 0;
    std::vector<std::optional<double>> v;
    std::optional<double>& at(int r, int64_t c) { return v[static_cast<size_t>(r * cols + c)]; }
  };
  std::map<std::string, Matrix> lg, ltile, lregs;
  std::map<std::string, isa::DType> reg_type;

  Model(const plan::Plan& p, const spec::Spec& sp, Result& r) : plan(p), prog(*sp.program), views(*sp.program), res(r) {}

  // A CTA pair keeps two of everything but global memory: the members above are the current
  // CTA's, `peer` holds the other's, and switch_to swaps them.
  struct CtaState {
    std::map<std::string, Mem> tmem, ltmem;
    Mem smem;
    std::map<std::string, std::map<std::tuple<int, int, int>, Mem>> regs;
    std::map<std::string, Matrix> ltile, lregs;
    std::map<std::string, isa::DType> reg_type;
    std::set<std::tuple<std::string, int, int, int>> meta_seen;
  } peer;
  int cur = 0;
  void switch_to(int r) {
    if (r == cur) return;
    std::swap(tmem, peer.tmem);
    std::swap(ltmem, peer.ltmem);
    std::swap(smem, peer.smem);
    std::swap(regs, peer.regs);
    std::swap(ltile, peer.ltile);
    std::swap(lregs, peer.lregs);
    std::swap(reg_type, peer.reg_type);
    std::swap(meta_seen, peer.meta_seen);
    cur = r;
  }

  void fail(const std::string& e) {
    if (res.errors.size() < 8) res.errors.push_back(e);
  }

  const spec::GlobalTensor& gdecl(const std::string& n) const {
    for (const auto& g : prog.globals)
      if (g.name == n) return g;
    throw std::runtime_error("no global " + n);
  }
  const spec::SmemTile& tdecl(const std::string& n) const {
    for (const auto& t : prog.smem)
      if (t.name == n) return t;
    throw std::runtime_error("no tile " + n);
  }
  uint32_t tile_offset(const std::string& n) const {
    for (const auto& t : plan.smem)
      if (t.name == n) return t.offset;
    throw std::runtime_error("tile not placed " + n);
  }

  static uint64_t tbit(int lane, int col, int bit) { return (uint64_t(lane) * 512 + uint64_t(col)) * 32 + uint64_t(bit); }

  // Moves the elements of [from, from + n) bits of `a` to `to` in `b`.
  static void move(const Mem& a, uint64_t from, uint64_t n, Mem& b, uint64_t to) {
    for (auto it = b.lower_bound(to); it != b.end() && it->first < to + n;) it = b.erase(it);
    for (auto it = a.lower_bound(from); it != a.end() && it->first < from + n; ++it) b[to + (it->first - from)] = it->second;
  }
  static std::optional<double> read(const Mem& m, uint64_t bit) {
    auto it = m.find(bit);
    if (it == m.end()) return std::nullopt;
    return it->second.v;
  }

  double random_value(isa::DType t, std::mt19937& rng) {
    switch (t) {
      case isa::DType::ue8m0:
      case isa::DType::ue4m3: return std::ldexp(1.0, static_cast<int>(rng() % 3) - 1);
      case isa::DType::b8: return static_cast<double>(rng() % 256);
      case isa::DType::u8: return static_cast<double>(rng() % 4);
      default: return static_cast<double>(static_cast<int>(rng() % 7) - 3);
    }
  }

  void init(unsigned seed) {
    std::mt19937 rng(seed);
    for (const auto& g : prog.globals) {
      Matrix m{static_cast<int>(g.rows), g.cols, {}};
      m.v.resize(static_cast<size_t>(g.rows * g.cols));
      Mem& mem = global[g.name];
      for (int64_t i = 0; i < g.rows * g.cols; ++i) {
        const double v = random_value(g.dtype, rng);
        m.v[static_cast<size_t>(i)] = v;
        mem[elem_bit(g.dtype, g.format, static_cast<uint64_t>(i))] = {v, vbits(g.dtype)};
      }
      lg[g.name] = m;
    }
  }

  // ---- physical replay of one step ----------------------------------------------------------
  void load(const spec::Op& o, const plan::LoadStep& ls) {
    const auto& g = gdecl(o.src.name);
    const auto& t = tdecl(o.dst.name);
    const int c = container(t.dtype, t.format);
    const bool k = t.major == isa::Major::k;
    const int rows = k ? t.rows : t.cols;              // rows of the box arrangement
    const int64_t row_elems = k ? t.cols : t.rows;
    const int row_bytes = static_cast<int>(row_elems * c / 8);
    const int box = t.swizzle == isa::Swizzle::none ? 16 : (t.swizzle == isa::Swizzle::b32 ? 32 : t.swizzle == isa::Swizzle::b64 ? 64 : 128);
    const int code = t.swizzle == isa::Swizzle::none ? 0 : t.swizzle == isa::Swizzle::b32 ? 6 : t.swizzle == isa::Swizzle::b64 ? 4 : t.swizzle == isa::Swizzle::b128 ? 2 : 1;
    const uint32_t base = tile_offset(t.name);
    const int gc = container(g.dtype, g.format);
    // A placed load's piece (docs/spec.md "M = 64") moves its box_rows global rows, from its own
    // first row, to tile rows tile_row0 on; the logical load below says where they belong.
    const int first = ls.tile_row0, count = o.place != spec::Place::rows ? ls.box_rows : rows;
    for (int r = 0; r < count; ++r)
      for (int b = 0; b < row_bytes; b += 16) {
        // TMA-like: boxes of `box` bytes of each row, rows of a box `box` bytes apart.
        const uint32_t off = static_cast<uint32_t>((b / box) * rows * box + (first + r) * box + b % box);
        // CTA 1 of a pair: the plan's byte offset (docs/spec.md: at + per_cta, which the logical load uses).
        const uint64_t gbit = (uint64_t(ls.row0.base + r) * uint64_t(g.cols) + uint64_t(o.at[1])) * uint64_t(gc) + uint64_t(b) * 8 +
                              uint64_t(cur) * uint64_t(ls.cta_bytes) * 8;
        move(global[g.name], gbit, 128, smem, uint64_t(swizzle(code, base + off)) * 8);
      }
  }

  void cp(const plan::CpInstr& c) {
    const Desc d = decode(plan::encoded(c.src));
    const uint32_t lane0 = c.taddr >> 16, col0 = c.taddr & 0xFFFF;
    int rows = 128, bits = 256;
    std::function<std::vector<int>(int)> lanes = [&](int r) { return std::vector<int>{static_cast<int>(lane0) + r}; };
    switch (c.shape) {
      case isa::CpShape::s128x256b: break;
      case isa::CpShape::s128x128b: bits = 128; break;
      case isa::CpShape::s4x256b: rows = 4, lanes = [&](int r) { return std::vector<int>{static_cast<int>(lane0) + 32 * r}; }; break;
      case isa::CpShape::s64x128b_02_13: rows = 64, bits = 128, lanes = [](int r) { return std::vector<int>{r, r + 64}; }; break;
      case isa::CpShape::s64x128b_01_23:
        rows = 64, bits = 128;
        lanes = [](int r) { return r < 32 ? std::vector<int>{r, r + 32} : std::vector<int>{r + 32, r + 64}; };
        break;
      case isa::CpShape::s32x128b_warpx4: rows = 32, bits = 128, lanes = [](int r) { return std::vector<int>{r, r + 32, r + 64, r + 96}; }; break;
    }
    Mem& t = tmem[c.alloc];
    for (int r = 0; r < rows; ++r)
      for (int j = 0; j < bits / 128; ++j) {
        const uint64_t src = uint64_t(kmajor_chunk(d, r, j)) * 8;
        for (int l : lanes(r)) {
          const uint64_t dst = tbit(l, static_cast<int>(col0) + 4 * j, 0);
          if (c.decompress == isa::CpDecompress::none) {
            move(smem, src, 128, t, dst);
          } else {  // §9.7.16.9.1: 16 elements of 4 (6) bits then padding -> 16 8-bit containers
            const int vb = c.decompress == isa::CpDecompress::b4x16_p64 ? 4 : 6;
            for (auto it = t.lower_bound(dst); it != t.end() && it->first < dst + 128;) it = t.erase(it);
            for (int k = 0; k < 16; ++k)
              if (auto v = read(smem, src + uint64_t(vb * k))) t[dst + uint64_t(8 * k)] = {*v, vb};
          }
        }
      }
  }

  // A pair (.cta_group::2, §9.7.16.5): one instruction computes M = 256 rows, 128 in each CTA
  // (layout A, §9.7.16.10.5), each CTA's A from its own shared or tensor memory at the same
  // descriptor or address; B's N columns are the n / 2 rows the descriptor gives in CTA 0, then the
  // same rows in CTA 1; D goes to each CTA's own tensor memory.
  void mma(const plan::MmaStep& m, const spec::Op& o) {
    const int ctas = plan.ir().cta_group;
    for (int v = 0; v < ctas; ++v) {
      switch_to(v);
      mma_in_cta(m, o, ctas == 2);
    }
  }

  void mma_in_cta(const plan::MmaStep& m, const spec::Op& o, bool pair) {
    for (const auto& in : m.instrs) {
      const uint32_t w = plan::encoded(in.idesc);
      const bool scaled = m.scaled;
      const int M = scaled ? static_cast<int>(bitsof(w, 27, 28) << 7) : static_cast<int>(bitsof(w, 24, 28) << 4);
      const int N = static_cast<int>(bitsof(w, 17, 22) << 3);
      const bool ta = bitsof(w, 15, 15), tb = bitsof(w, 16, 16), sparse = bitsof(w, 2, 2);
      if (sparse != m.sparse) fail("sparsity bit disagrees with the instruction spelling");
      // Table 39: K per instruction.
      int K = 0;
      switch (m.kind) {
        case isa::Kind::f16: K = 16; break;
        case isa::Kind::tf32: K = 8; break;
        case isa::Kind::mxf4:
        case isa::Kind::mxf4nvf4: K = 64; break;
        default: K = 32;
      }
      if (sparse) K *= 2;
      // Table 39 / §9.7.16.10.5: a pair is M = 256 (layout A) or M = 128 (layout B dense, C sparse).
      if (M != in.m || (pair ? (M != 256 && M != 128) : (M != 128 && M != 64)) || N != in.n)
        fail("idesc shape " + std::to_string(M) + "x" + std::to_string(N) + " is not the planned one");
      const int Mc = pair ? M / 2 : M;  // rows of this CTA
      const uint32_t dl = in.d_taddr >> 16, dc = in.d_taddr & 0xFFFF;
      // Data-path layouts (§9.7.16.10.5): M = 128 (layout D) row i in lane i; M = 64 (layout F)
      // row i in lane i % 16 + 32 (i / 16) after the address's lane alignment, 0 or 16 (A too).
      // A pair's sparse M = 128 is layout C: layout F's organization in each CTA (§9.7.16.10.5).
      // A pair's dense M = 128 is layout B (§9.7.16.10.5.2): 64 rows per CTA, row i's columns n < N/2
      // at lane i, the rest at lane 64 + i, column n - N/2; lane alignment 0.
      const bool layout_b = pair && M == 128 && !sparse;
      if (Mc == 64 && !layout_b ? (dl != 0 && dl != 16) : dl != 0) fail("D address lane " + std::to_string(dl) + " is no lane alignment of the layout");
      auto row_lane = [Mc](uint32_t base, int i) { return static_cast<int>(base) + (Mc == 64 ? i % 16 + 32 * (i / 16) : i); };
      auto d_bit = [&](int i, int n) {
        if (layout_b) return tbit(i + (n >= N / 2 ? 64 : 0), static_cast<int>(dc) + n % (N / 2), 0);
        return tbit(row_lane(dl, i), static_cast<int>(dc) + n, 0);
      };
      Mem& D = tmem[in.d_alloc];
      if (sparse) {
        check_metadata(m, in, w, Mc, dl, row_lane);
        for (int i = 0; i < Mc; ++i)
          for (int n = 0; n < N; ++n) D.erase(tbit(row_lane(dl, i), static_cast<int>(dc) + n, 0));
        continue;
      }
      // Operands.
      auto tile_of = [&](const std::string& n) { return tdecl(n); };
      const auto& bt = tile_of(o.b.name);
      const int bc = container(bt.dtype, bt.format), bvb = vbits(bt.dtype);
      const Desc bd = decode(plan::encoded(in.b_desc));
      std::function<std::optional<double>(int, int)> A;
      if (in.a_tmem) {
        const View av = views.get(o.a.name);
        const int tb_ = 32 / av.packing;
        const uint32_t al = in.a_taddr >> 16, ac = in.a_taddr & 0xFFFF;
        if (al != dl) fail("A and D addresses differ in lane alignment (§9.7.16.10.5)");
        A = [&, tb_, al, ac, layout_b](int i, int k) -> std::optional<double> {
          const int c = static_cast<int>(ac) + k * tb_ / 32, b = k * tb_ % 32;
          if (!layout_b) return read(tmem[in.a_alloc], tbit(row_lane(al, i), c, b));
          // Layout B: A's row i at lanes i and 64 + i (what .64x128b.warpx2::02_13 writes); both must hold it.
          auto x = read(tmem[in.a_alloc], tbit(i, c, b)), y = read(tmem[in.a_alloc], tbit(64 + i, c, b));
          if (!x || !y || *x != *y) return std::nullopt;
          return x;
        };
      } else {
        const auto& at = tile_of(o.a.name);
        const Desc ad = decode(plan::encoded(in.a_desc));
        const int ac = container(at.dtype, at.format), avb = vbits(at.dtype);
        A = [&, ad, ac, avb](int i, int k) { return read(smem, operand_bit(ad, ta, ac, avb, i, k)); };
      }
      // Scale factors (§9.7.16.10.7): row r's in lane r % 32 of every quarter, column + r / 32, the byte
      // the SF ID selects plus the factor's index within the instruction (CUTLASS tmem_sf_frg).
      const int nsf = m.scale.factors;
      auto sf = [&](const std::string& alloc, uint32_t addr, unsigned id, int r, int k) -> std::optional<double> {
        if (!scaled) return 1.0;
        const int byte = static_cast<int>(id) + k / (K / nsf);
        std::optional<double> v;
        for (int q = 0; q < 4; ++q) {
          auto x = read(tmem[alloc], tbit(r % 32 + 32 * q, static_cast<int>(addr & 0xFFFF) + r / 32, 8 * byte));
          if (!x || (v && *v != *x)) return std::nullopt;  // every replica holds the same factor
          v = x;
        }
        return v;
      };
      const unsigned sfa_id = scaled ? static_cast<unsigned>(bitsof(w, 29, 30)) : 0, sfb_id = scaled ? static_cast<unsigned>(bitsof(w, 4, 5)) : 0;
      // Each operand element once, scaled by its factor (a missing one poisons the products it is in).
      std::vector<std::optional<double>> av(static_cast<size_t>(Mc) * K), bv(static_cast<size_t>(N) * K);
      for (int i = 0; i < Mc; ++i)
        for (int k = 0; k < K; ++k) {
          auto a = A(i, k);
          auto sa = sf(in.sfa_alloc, in.sfa_taddr, sfa_id, i, k);
          if (a && sa) av[static_cast<size_t>(i) * K + k] = *a * *sa;
        }
      for (int n = 0; n < N; ++n)
        for (int k = 0; k < K; ++k) {
          // A pair: column n of B is row n % (N / 2) of CTA n / (N / 2)'s tile at the descriptor.
          const int half = pair ? n / (N / 2) : cur;
          auto b = read(half == cur ? smem : peer.smem, operand_bit(bd, tb, bc, bvb, pair ? n % (N / 2) : n, k));
          auto sb = sf(in.sfb_alloc, in.sfb_taddr, sfb_id, n, k);
          if (b && sb) bv[static_cast<size_t>(n) * K + k] = *b * *sb;
        }
      for (int i = 0; i < Mc; ++i)
        for (int n = 0; n < N; ++n) {
          // known: every product (and the old D it accumulates into) was defined
          double acc = 0.0;
          bool known = true;
          for (int k = 0; k < K && known; ++k) {
            const auto& a = av[static_cast<size_t>(i) * K + k];
            const auto& b = bv[static_cast<size_t>(n) * K + k];
            if (!a || !b) known = false;
            else acc += *a * *b;
          }
          const uint64_t at = d_bit(i, n);
          if (known && in.enable_input_d) {
            const auto old = read(D, at);
            if (old) acc += *old;
            else known = false;
          }
          if (known) D[at] = {acc, 32};
          else D.erase(at);
        }
    }
  }

  // Sparse metadata: the model has no bit layout for it (figures only); it checks that each K step
  // reads its own written columns of the metadata view, in the lanes of all M rows: the selector
  // picks the column of an even pair for tf32/f16 (CUTLASS, Mosaic GPU), two columns with selector
  // 0 otherwise (§9.7.16.10.8.4); for M = 64 the rows sit in layout F at D's lane alignment
  // (§9.7.16.10.8.5), through the same row-to-lane map as D.
  template <class RowLane>
  void check_metadata(const plan::MmaStep& m, const plan::MmaInstr& in, uint32_t w, int M, uint32_t dl, RowLane row_lane) {
    const bool sel_kind = m.kind == isa::Kind::f16 || m.kind == isa::Kind::tf32;
    const int sel = m.scaled ? 0 : static_cast<int>(bitsof(w, 0, 1));
    if (!sel_kind && sel != 0) fail("sparsity selector must be 0 for this kind");
    if (sel_kind && (in.meta_taddr & 1)) fail("metadata address with the selector is not even");
    const uint32_t ml = in.meta_taddr >> 16;
    if (ml != dl) fail("metadata and D addresses differ in lane alignment (§9.7.16.10.8.5)");
    std::vector<int> cols;
    if (sel_kind) cols = {static_cast<int>(in.meta_taddr & 0xFFFF) + sel};
    else cols = {static_cast<int>(in.meta_taddr & 0xFFFF), static_cast<int>(in.meta_taddr & 0xFFFF) + 1};
    for (int c : cols) {
      for (int i = 0; i < M; ++i)
        if (!read(tmem[in.meta_alloc], tbit(row_lane(ml, i), c, 0))) {
          fail("K step " + std::to_string(in.ki) + " reads metadata column " + std::to_string(c) + " of row " + std::to_string(i) +
               " (lane " + std::to_string(row_lane(ml, i)) + "), which holds none");
          return;
        }
      if (!meta_seen.insert({in.meta_alloc, in.mi, c, in.ni}).second)
        fail("metadata column " + std::to_string(c) + " read by two K steps");
    }
  }
  std::set<std::tuple<std::string, int, int, int>> meta_seen;

  // The elements register `reg` of thread t holds after a tcgen05.ld of fragment f.
  void ld(const plan::RegDef& d) {
    auto& rs = regs[d.name];
    rs.clear();
    for (const auto& f : d.frags) {
      const Mem& t = tmem[f.alloc];
      const int l0 = static_cast<int>(f.taddr >> 16), c0 = static_cast<int>(f.taddr & 0xFFFF);
      for (int th = 0; th < 32; ++th)
        for (int j = 0; j < f.regs; ++j) {
          int lane, col;
          bool half;
          cell(f.shape, th, j, lane, col, half);
          Mem r;
          if (f.pack) {  // §9.7.16.8.2: low halves of two adjacent columns
            const int c = c0 + 2 * col + (half ? f.split : 0);
            move(t, tbit(l0 + lane, c, 0), 16, r, 0);
            move(t, tbit(l0 + lane, c + 1, 0), 16, r, 16);
          } else {
            move(t, tbit(l0 + lane, c0 + col + (half ? f.split : 0), 0), 32, r, 0);
          }
          rs[{f.warp, th, f.first_reg + j}] = r;
        }
    }
  }

  void st(const plan::TmemStStep& s) {
    const auto& src = regs[s.src.name];
    for (size_t fi = 0; fi < s.dst.frags.size(); ++fi) {
      const auto& f = s.dst.frags[fi];
      Mem& t = tmem[f.alloc];
      const int l0 = static_cast<int>(f.taddr >> 16), c0 = static_cast<int>(f.taddr & 0xFFFF);
      for (int th = 0; th < 32; ++th)
        for (int j = 0; j < f.regs; ++j) {
          // Build the register the way the kernel does (the sources the plan names, cvt.rn).
          Mem r;
          const auto& el = s.sources[fi][static_cast<size_t>(j)];
          const int eb = 32 / s.dst.elems_per_reg;
          for (size_t e = 0; e < el.size(); ++e) {
            auto it = src.find({f.warp, th, el[e].reg});
            if (it == src.end()) continue;
            const int sb = 32 / s.src.elems_per_reg;
            auto v = read(it->second, uint64_t(el[e].elem * sb));
            if (!v) continue;
            r[uint64_t(e) * uint64_t(eb)] = {s.convert ? convert(*v, s.dst.dtype) : *v, vbits(s.dst.dtype)};
          }
          int lane, col;
          bool half;
          cell(f.shape, th, j, lane, col, half);
          if (f.pack) {
            const int c = c0 + 2 * col + (half ? f.split : 0);
            move(r, 0, 16, t, tbit(l0 + lane, c, 0));
            move(r, 16, 16, t, tbit(l0 + lane, c + 1, 0));
            for (int x : {0, 1}) {  // unpacked: the high half of each column is not an element
              for (auto it2 = t.lower_bound(tbit(l0 + lane, c + x, 16)); it2 != t.end() && it2->first < tbit(l0 + lane, c + x, 32);)
                it2 = t.erase(it2);
            }
          } else {
            move(r, 0, 32, t, tbit(l0 + lane, c0 + col + (half ? f.split : 0), 0));
          }
        }
    }
  }

  void store(const plan::StoreStep& s) {
    const auto& g = gdecl(s.global);
    const auto& rs = regs[s.src.name];
    Mem& mem = global[g.name];
    for (const auto& f : s.src.frags)
      for (int th = 0; th < 32; ++th)
        for (int j = 0; j < f.regs; ++j) {
          int lane, col;
          bool half;
          cell(f.shape, th, j, lane, col, half);
          const int64_t c = (f.pack ? 2 * col : col) + (half ? f.split : 0);
          auto it = rs.find({f.warp, th, f.first_reg + j});
          for (int e = 0; e < s.src.elems_per_reg; ++e) {
            const int row = f.row0 + lane;
            const int64_t ec = f.elem0 + c * (f.pack ? 1 : s.src.view_packing) + e;
            const uint64_t idx = uint64_t(s.row0.base + cur * s.cta_row + row) * uint64_t(g.cols) + uint64_t(s.col0.base + s.piece_col + cur * s.cta_col + ec);
            const uint64_t at = elem_bit(g.dtype, g.format, idx);
            std::optional<double> v;
            if (it != rs.end()) v = read(it->second, uint64_t(e * s.src.elem_bits));
            if (v) mem[at] = {convert(*v, g.dtype), vbits(g.dtype)};
            else mem.erase(at);
          }
        }
  }

  // ---- the logical evaluation (docs/spec.md semantics) --------------------------------------
  // Tensor memory as the views say it is: writes and reads of a view go through this model's own
  // resolution of the view (every replica of a row), independent of the plan's instructions.
  std::map<std::string, Mem> ltmem;

  Matrix read_view(const std::string& n) {
    const View v = views.get(n);
    Matrix m{v.rows, v.row_elems(), {}};
    m.v.resize(static_cast<size_t>(m.rows * m.cols));
    const Mem& t = ltmem[v.alloc];
    for (int r = 0; r < m.rows; ++r)
      for (int64_t e = 0; e < m.cols; ++e) {
        std::optional<double> x;
        bool first = true;
        for (int lane : v.lanes_of(r, e)) {
          auto y = read(t, tbit(lane, v.column_of(r, e), v.bit_of(e)));
          if (first) x = y;
          else if (!y || !x || *x != *y) x.reset();
          first = false;
        }
        m.at(r, e) = x;
      }
    return m;
  }

  void write_view(const std::string& n, Matrix& m) {
    const View v = views.get(n);
    Mem& t = ltmem[v.alloc];
    const int bits = 32 / v.packing;
    for (int r = 0; r < m.rows; ++r)
      for (int64_t e = 0; e < m.cols; ++e)
        for (int lane : v.lanes_of(r, e)) {
          const uint64_t at = tbit(lane, v.column_of(r, e), v.bit_of(e));
          for (auto it = t.lower_bound(at); it != t.end() && it->first < at + uint64_t(bits);) it = t.erase(it);
          if (auto x = m.at(r, e)) t[at] = {*x, vbits(v.dtype)};
        }
  }

  void logical(const spec::Op& o) {
    switch (o.kind) {
      case spec::OpKind::load: {
        const auto& t = tdecl(o.dst.name);
        Matrix m{t.rows, t.cols, {}};
        m.v.resize(static_cast<size_t>(t.rows * t.cols));
        // A placed load ("place") writes some rows; the others keep what they held.
        if (o.place != spec::Place::rows && ltile.count(o.dst.name)) m = ltile.at(o.dst.name);
        auto& g = lg[o.src.name];
        const int r0 = static_cast<int>(o.at[0] + cur * o.per_cta[0]);
        const int64_t c0 = o.at[1] + cur * o.per_cta[1];
        for (int i = 0; i < t.rows; ++i) {
          // Layout F (PTX ISA 9.1 §9.7.16.10.5.6): row j of an M = 64 group in lane 32 (j / 16) +
          // j % 16 + its alignment, which a 128-row copy fills from the same tile row.
          int row = i;
          if (o.place != spec::Place::rows) {
            const bool both = o.place == spec::Place::layout_f;
            if (i >= (both ? t.rows : t.rows / 2)) continue;
            const int j = i % 64, align = both ? 16 * (i % 128 / 64) : o.place == spec::Place::layout_f_16 ? 16 : 0;
            row = 128 * (both ? i / 128 : i / 64) + 32 * (j / 16) + j % 16 + align;
          }
          for (int k = 0; k < t.cols; ++k)
            m.at(row, k) = t.major == isa::Major::k ? g.at(r0 + i, c0 + k) : g.at(r0 + k, c0 + i);
        }
        ltile[o.dst.name] = m;
        return;
      }
      case spec::OpKind::copy: {
        auto& src = ltile[o.src.name];
        Matrix dst = read_view(o.dst.name);
        const int r0 = o.rows ? static_cast<int>((*o.rows)[0]) : 0, r1 = o.rows ? static_cast<int>((*o.rows)[1]) : src.rows;
        const int64_t c0 = o.cols ? (*o.cols)[0] : 0;
        for (int r = r0; r < r1; ++r)
          for (int64_t e = 0; e < dst.cols; ++e) {
            const int dr = (r1 - r0 == 4) ? 32 * (r - r0) : r - r0;  // 4 rows: lanes 0, 32, 64, 96
            dst.at(dr, e) = src.at(r, c0 + e);
          }
        write_view(o.dst.name, dst);
        return;
      }
      case spec::OpKind::mma: return logical_mma(o);
      case spec::OpKind::tmem_load: {
        lregs[o.regs.name] = read_view(o.src.name);
        reg_type[o.regs.name] = views.get(o.src.name).dtype;
        return;
      }
      case spec::OpKind::tmem_store: {
        Matrix m = lregs[o.regs.name];
        const isa::DType to = views.get(o.dst.name).dtype;
        for (auto& x : m.v)
          if (x) x = convert(*x, to);
        write_view(o.dst.name, m);
        return;
      }
      case spec::OpKind::store: {
        Matrix& r = lregs[o.regs.name];
        Matrix& g = lg[o.dst.name];
        const isa::DType to = gdecl(o.dst.name).dtype;
        for (int i = 0; i < r.rows; ++i)
          for (int64_t c = 0; c < r.cols; ++c) {
            auto v = r.at(i, c);
            g.at(static_cast<int>(o.at[0] + cur * o.per_cta[0]) + i, o.at[1] + cur * o.per_cta[1] + c) =
                v ? std::optional<double>(convert(*v, to)) : std::nullopt;
          }
        return;
      }
      default: return;
    }
  }

  // Scale factor (row m, factor g) of a scale view for an operand of R rows: docs/spec.md
  // "Scale factors": column (g / 4) * 4 * ceil(R / 128) + m / 32 of the view, byte g % 4, row m % 32.
  static std::optional<double> logical_sf(Matrix& v, int R, int m, int g) {
    const int64_t col = int64_t(g / 4) * 4 * ((R + 127) / 128) + m / 32;
    return v.at(m % 32, col * 4 + g % 4);
  }

  void logical_mma(const spec::Op& o) {
    Matrix D = read_view(o.d.name);
    const bool a_view = views.has(o.a.name);
    Matrix A = a_view ? read_view(o.a.name) : ltile[o.a.name];
    Matrix& B = ltile[o.b.name];
    // A pair (docs/spec.md "CTA pairs"): D's column n < N / 2 is CTA 0's B row n, the rest CTA 1's.
    const bool pair = plan.ir().cta_group == 2;
    Matrix& B0 = pair && cur == 1 ? peer.ltile[o.b.name] : B;
    Matrix& B1 = pair && cur == 0 ? peer.ltile[o.b.name] : B;
    auto b_at = [&](int64_t n, int64_t k) -> std::optional<double> {
      if (!pair || n < B0.rows) return B0.at(static_cast<int>(n), k);
      return B1.at(static_cast<int>(n - B0.rows), k);
    };
    if (o.metadata) {  // sparse: values depend on metadata the model cannot decode
      for (auto& x : D.v) x.reset();
      write_view(o.d.name, D);
      return;
    }
    Matrix SA, SB;
    if (o.scale_a) {
      SA = read_view(o.scale_a.name);
      SB = read_view(o.scale_b.name);
    }
    for (int m = 0; m < D.rows; ++m)
      for (int64_t n = 0; n < D.cols; ++n) {
        std::optional<double> acc = o.accumulate ? D.at(m, n) : std::optional<double>(0.0);
        for (int64_t k = 0; k < B.cols && acc; ++k) {
          auto a = A.at(m, k), b = b_at(n, k);
          std::optional<double> sa = 1.0, sb = 1.0;
          if (o.scale_a) {  // one factor per `vec` elements of K (Table 56)
            const int g = static_cast<int>(k / o.vec);
            sa = logical_sf(SA, A.rows, m, g);
            sb = logical_sf(SB, pair ? B0.rows + B1.rows : B.rows, static_cast<int>(n), g);  // a pair: all of N
          }
          if (!a || !b || !sa || !sb) acc.reset();
          else *acc += *a * *b * *sa * *sb;
        }
        D.at(m, n) = acc;
      }
    write_view(o.d.name, D);
  }

  // ---- comparisons ----------------------------------------------------------------------------
  // The view's cells as the plan's instructions left them, against the logical evaluation.
  void compare_view(const std::string& n, const std::string& when) {
    const View v = views.get(n);
    Matrix m = read_view(n);
    const Mem& t = tmem[v.alloc];
    for (int r = 0; r < m.rows; ++r)
      for (int64_t e = 0; e < m.cols; ++e) {
        const auto want = m.at(r, e);
        if (!want) continue;
        for (int lane : v.lanes_of(r, e)) {
          auto got = read(t, tbit(lane, v.column_of(r, e), v.bit_of(e)));
          ++res.elements_checked;
          if (!got || *got != *want) {
            fail(when + ": \"" + n + "\" row " + std::to_string(r) + " element " + std::to_string(e) + " (lane " +
                 std::to_string(lane) + ") holds " + (got ? std::to_string(*got) : "nothing") + ", expected " + std::to_string(*want));
            return;
          }
        }
      }
  }

  void compare_globals() {
    for (const auto& g : prog.globals) {
      Matrix& m = lg[g.name];
      for (int64_t i = 0; i < g.rows * g.cols; ++i) {
        const auto want = m.v[static_cast<size_t>(i)];
        auto got = read(global[g.name], elem_bit(g.dtype, g.format, static_cast<uint64_t>(i)));
        if (!want) continue;
        ++res.elements_checked;
        if (!got || *got != *want) {
          fail("global \"" + g.name + "\" element (" + std::to_string(i / g.cols) + ", " + std::to_string(i % g.cols) + ") is " +
               (got ? std::to_string(*got) : "unwritten") + ", expected " + std::to_string(*want));
          return;
        }
      }
    }
  }

  void run(unsigned seed) {
    init(seed);
    const int ctas = plan.ir().cta_group;
    for (size_t i = 0; i < prog.ops.size(); ++i) {
      const spec::Op& o = prog.ops[i];
      // The ops run in both CTAs of a pair; a pair's tcgen05.mma is one instruction for both.
      // Steps are matched by the op's pointer: a placed load is several IR ops (pieces) of one op.
      if (o.kind == spec::OpKind::mma)
        for (const auto& s : plan.roles[0].steps)
          if (s.ptr == o.ptr && s.kind == plan::StepKind::mma) mma(s.mma, o);
      for (int r = 0; r < ctas; ++r) {
        switch_to(r);
        for (const auto& s : plan.roles[0].steps) {
          if (s.ptr != o.ptr) continue;
          switch (s.kind) {
            case plan::StepKind::load: load(o, s.load); break;
            case plan::StepKind::cp:  // .cta_group::2: each CTA's shared memory into its own tensor memory
              for (const auto& c : s.cps) cp(c);
              break;
            case plan::StepKind::tmem_ld: ld(s.ld); break;
            case plan::StepKind::tmem_st: st(s.st); break;
            case plan::StepKind::store: store(s.store); break;
            default: break;
          }
        }
        logical(o);
        const std::string when = ctas == 2 ? o.ptr + " (CTA " + std::to_string(r) + ")" : o.ptr;
        if (o.kind == spec::OpKind::copy || o.kind == spec::OpKind::tmem_store) compare_view(o.dst.name, when);
        if (o.kind == spec::OpKind::mma) compare_view(o.d.name, when);
      }
    }
    switch_to(0);
    compare_globals();
  }
};

}  // namespace

void tmem_cell(isa::LdShape s, int t, int j, int& lane, int& col, bool& half) { cell(s, t, j, lane, col, half); }

Result replay_program(const ptxgen::plan::Plan& p, const ptxgen::spec::Spec& s, unsigned seed) {
  Result res;
  try {
    Model m(p, s, res);
    m.run(seed);
  } catch (const std::exception& e) {
    res.errors.push_back(std::string("model: ") + e.what());
  }
  res.ok = res.errors.empty();
  return res;
}

std::vector<std::string> check_views(const ptxgen::plan::Plan& p, const ptxgen::spec::Spec& s) {
  std::vector<std::string> out;
  Views vs(*s.program);
  for (const auto& n : vs.names()) {
    const View v = vs.get(n);
    auto it = p.views.find(n);
    if (it == p.views.end()) {
      out.push_back("view " + n + " missing from the plan");
      continue;
    }
    const auto& r = it->second;
    if (r.alloc != v.alloc || int(r.lane) != v.lane || int(r.lanes) != v.lanes || int(r.column) != v.col ||
        int(r.columns) != v.cols || r.dtype != v.dtype || r.packing != v.packing || r.layout != v.layout || r.rows != v.rows)
      out.push_back("view " + n + ": the plan says " + r.describe());
  }
  return out;
}

}  // namespace refmodel
