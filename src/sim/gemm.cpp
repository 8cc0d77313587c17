// See ptxgen/sim.hpp (run_gemm): the gemm template's definition (docs/spec.md) in float64.
#include "ptxgen/sim.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>
#include <set>
#include <sstream>

#include "ptxgen/activation_bound.hpp"
#include "support.hpp"

namespace ptxgen::sim {

using nlohmann::json;

double f16_value(uint16_t bits) { return ksim::num::f16(bits); }

int64_t d_row_unit(const json& mf) {
  int64_t u = 1;
  for (const json& p : mf.at("params"))
    if (p.at("kind") == "tensor_map" && p.at("tensor") == "D") u = 128 / dtype(mf.at("tensors").at("D").at("dtype")).bits;
  // A block-quantized D: whole blocks of a row (the launch header refuses other n).
  if (mf.at("tensors").contains("SFD")) u = std::lcm(u, mf.at("tensors").at("SFD").at("vec").get<int64_t>());
  return u;
}

std::vector<std::array<int64_t, 3>> gemm_sizes(const json& mf, int stages) {
  const int64_t tm = mf.at("tile").at("m"), tn = mf.at("tile").at("n"), tk = mf.at("tile").at("k");
  // Sparse A: k a multiple of tile.k (rule SPARSE-K: TMA's zero fill is no valid metadata). A TMA
  // epilogue: n a whole number of 16-byte rows of D.
  const int64_t tail = mf.at("tensors").at("A").contains("sparse") ? 0 : 1;
  const int64_t u = d_row_unit(mf);
  return {{2 * tm - 5, (2 * tn - 5) / u * u, 2 * tk - 3 * tail}, {tm - 3, std::max<int64_t>((tn - 4) / u * u, 2), (stages + 2) * tk - 5 * tail}};
}

std::vector<int64_t> group_sizes(const json& mf, int64_t m) {
  if (!mf.contains("groups")) return {m};
  const int64_t G = std::min<int64_t>(mf.at("problem").at("groups").get<int64_t>(), 4), tm = mf.at("tile").at("m");
  if (mf.at("groups").at("layout") == "masked") {
    const int64_t drawn[4] = {m + 100, 0, std::clamp<int64_t>(tm / 2 + 1, 1, m), -7};
    return std::vector<int64_t>(drawn, drawn + G);
  }
  // Contiguous: segments of tm / 2 + 1 rows (a tile partly valid, then padding), none, 2 tm - 3
  // (two tiles), 3, each starting at the previous end rounded up to align, cut at m.
  const int64_t align = mf.at("groups").at("align"), drawn[4] = {tm / 2 + 1, 0, 2 * tm - 3, 3};
  std::vector<int64_t> ends;
  int64_t start = 0;
  for (int64_t x = 0; x < G; ++x) {
    ends.push_back(std::min(start + drawn[x], m));
    start = std::min((ends.back() + align - 1) / align * align, m);
  }
  return ends;
}

GroupRow group_row(const json& mf, const std::vector<int64_t>& sizes, int64_t m, int64_t r) {
  if (!mf.contains("groups")) return {0, r, 1};
  const int64_t tm = mf.at("tile").at("m");
  if (mf.at("groups").at("layout") == "masked") {
    const int64_t g = r / m, i = r % m, lim = std::clamp<int64_t>(sizes[static_cast<size_t>(g)], 0, m);
    return {g, r, i < lim ? 1 : i / tm * tm < lim ? 2 : 0};
  }
  const int64_t align = mf.at("groups").at("align");
  int64_t start = 0;
  for (size_t g = 0; g < sizes.size(); ++g) {
    const int64_t end = std::clamp<int64_t>(sizes[g], 0, m), padded = (end + align - 1) / align * align;
    if (r >= start && r < padded) return {static_cast<int64_t>(g), r, r < end ? 1 : r / tm * tm < end ? 2 : 0};
    start = padded;
  }
  return {0, r, 0};  // past every segment
}

namespace {

struct Operand {
  uint64_t addr = 0, pitch = 0, inner = 0, outer = 0;
  std::vector<double> v;  // logical values, row-major over the tensor's dims (dims[0] rows)
  bool first_contiguous = false;
};

int64_t round_up(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

// A block-scale factor tensor in the 128x4 layout (docs/spec.md, "Block scaling"), written here
// from its definition: factor (r, c) of `rows` rows by ceil(k / vec) factors at byte
// ((r / 128) * nkb + c / 4) * 512 + (r % 32) * 16 + ((r % 128) / 32) * 4 + c % 4, nkb = ceil(cols / 4);
// the padding (rows to 128, factors to 4) zero. `v` holds the decoded factors, row-major.
struct Scales {
  uint64_t addr = 0;
  int64_t rows = 0, cols = 0, vec = 0, nkb = 0;
  std::vector<double> v;
};

Scales make_scales(ksim::Global& g, const Dtype& dt, int64_t rows, int64_t k, int64_t vec, std::mt19937& rng,
                   const Inputs& inputs, std::set<std::string>& used, const std::string& name) {
  Scales sc;
  sc.rows = rows;
  sc.vec = vec;
  sc.cols = (k + vec - 1) / vec;
  const InputArray* given = input_for(inputs, used, name, rows, sc.cols);
  sc.nkb = (sc.cols + 3) / 4;
  const int64_t bytes = round_up(rows, 128) * sc.nkb * 4;
  sc.addr = g.alloc(static_cast<size_t>(bytes), 0);
  std::vector<uint8_t>& mem = g.at(sc.addr);
  sc.v.assign(static_cast<size_t>(rows * sc.cols), 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < sc.cols; ++c) {
      const uint32_t b = given ? input_bits(dt, name, *given, r, c) : dt.random(rng);
      const int64_t off = ((r / 128) * sc.nkb + c / 4) * 512 + (r % 32) * 16 + ((r % 128) / 32) * 4 + c % 4;
      mem[static_cast<size_t>(off)] = static_cast<uint8_t>(b);
      sc.v[static_cast<size_t>(r * sc.cols + c)] = dt.decode(b);
    }
  return sc;
}

// Sparse A (docs/spec.md, "Sparse A"), written here from its definition: every chunk of four
// elements of a row keeps two, at positions p0 < p1, stored in order (A is m x k/2), its metadata
// nibble p0 | p1 << 2; .kind::tf32 keeps one of every two, at p, its nibble 0b0100 (p = 0) or 0b1110
// (p = 1); .kind::mxf4 and .kind::mxf4nvf4 keep two pairs of every eight elements, pairs p0 < p1,
// nibble p0 | p1 << 2. The metadata of row r, the chunk at element x of K, lies in atom
// (x / K_atom, r / 128) at byte (j ceil(m/128) + i) x 2048, inside it at the bit the kind's atom
// gives (atom_bit). Rows past m stay zero (no meaningful metadata: the kernel must not store what
// they compute).
struct SparseAtom {
  std::string kind;
  int64_t k = 128;  // elements of K per atom
  bool pairs() const { return kind == "mxf4" || kind == "mxf4nvf4"; }
  // The bit of the chunk's nibble inside its atom, for row r (mod 128) and element x (mod k) of K.
  int64_t bit(int64_t r, int64_t x) const {
    const int64_t m0 = r % 8, m1 = r / 8 % 2, m2 = r / 16;
    if (kind == "f16")  // CUTLASS's ((8,2,8),(16,2,4)) : ((128,16,2048),(1,1024,32)), a bit per element
      return 128 * m0 + 16 * m1 + 2048 * m2 + x % 16 + 1024 * (x / 16 % 2) + 32 * (x / 32);
    if (kind == "tf32")  // ((8,2,8),(8,2,4)) : ((64,8,1024),(1,512,16)), two bits per element
      return 2 * (64 * m0 + 8 * m1 + 1024 * m2 + x % 8 + 512 * (x / 8 % 2) + 16 * (x / 16));
    if (pairs()) return (256 * r + x) / 2;  // (128, 256) : (256, 1), half a bit per element: rows of 16 bytes
    return 128 * r + x;  // the 8-bit kinds: (128, 128) : (128, 1), rows of 16 bytes
  }
};

SparseAtom sparse_atom(const json& meta) {
  SparseAtom a;
  a.kind = meta.at("kind");
  a.k = a.kind == "tf32" ? 64 : a.pairs() ? 256 : 128;
  if (meta.at("layout") != "128x" + std::to_string(a.k) + " atoms") throw std::runtime_error("metadata of .kind::" + a.kind + " not in its atoms");
  return a;
}

uint64_t make_sparse(ksim::Global& g, Operand& op, const Dtype& dt, const SparseAtom& at, int64_t m, int64_t k, std::mt19937& rng) {
  static const int kPairs[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
  const bool tf32 = at.kind == "tf32";
  const int64_t u = at.pairs() ? 2 : 1;  // elements per position: the mxf4 kinds keep pairs
  const int64_t chunk = tf32 ? 2 : 4 * u, keep = chunk / 2;
  const int64_t mp = round_up(m, 128), atoms = (k + at.k - 1) / at.k;
  const uint64_t meta = g.alloc(static_cast<size_t>(mp * atoms * 16), 0);
  std::vector<uint8_t>& e = g.at(meta);
  std::vector<uint8_t>& mem = g.at(op.addr);
  op.v.assign(static_cast<size_t>(m * k), 0.0);
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = 0; c < k / chunk; ++c) {
      const int* p = kPairs[rng() % 6];
      const int p1 = static_cast<int>(rng() % 2);
      for (int64_t h = 0; h < keep; ++h) {
        const uint32_t b = dt.random(rng);
        put_bits(mem, static_cast<uint64_t>(r) * op.pitch * 8 + static_cast<uint64_t>(keep * c + h) * static_cast<uint64_t>(dt.bits), dt.bits, b);
        op.v[static_cast<size_t>(r * k + chunk * c + (tf32 ? p1 : u * p[h / u] + h % u))] = dt.decode(b);
      }
      const uint32_t nibble = tf32 ? (p1 ? 0xEu : 0x4u) : static_cast<uint32_t>(p[0] | p[1] << 2);
      const int64_t x = chunk * c;
      const int64_t bit = ((x / at.k * (mp / 128) + r / 128) * 2048) * 8 + at.bit(r % 128, x % at.k);
      e[static_cast<size_t>(bit / 8)] |= static_cast<uint8_t>(nibble << (bit % 8));
    }
  return meta;
}

}  // namespace

GemmResult run_gemm(const ksim::Kernel& k, const json& mf, int64_t m, int64_t n, int64_t kk, unsigned seed, const ksim::Options& o,
                    int multiprocessors, const Inputs& inputs) {
  GemmResult res;
  std::set<std::string> used;            // the names of `inputs` this run took
  std::vector<std::string> input_names;  // the kernel's inputs, for the message about one it has not
  std::mt19937 rng(seed);
  // A gated activation (docs/spec.md, "Epilogues": swiglu, geglu): `n` is D's width d, whose grid
  // and tiles the manifest states, and B holds 2 d rows, the gate's then up's (the kernel's n).
  const bool gated = mf.contains("derived_sizes") && mf.at("derived_sizes").contains("d");
  const int64_t nd = n;
  if (gated) n = 2 * nd;
  std::map<std::string, int64_t> size = {{"m", m}, {"n", n}, {"k", kk}};
  if (gated) size["d"] = nd;
  // Grouped GEMM, masked layout (docs/spec.md, "Grouped GEMM"): A, B and D one plane per group,
  // and masked_m[G] the groups' valid rows. G is the spec's count up to 4, with masked_m drawn to
  // cover each case of the definition: past the capacity (counts as m), empty, ragged (a tile
  // partly valid, the next tile wholly past it), negative (counts as 0), unless --inputs gives it.
  const std::vector<int64_t> sizes = group_sizes(mf, m);
  const bool grouped = mf.contains("groups"), masked = grouped && mf.at("groups").at("layout") == "masked";
  const int64_t G = static_cast<int64_t>(sizes.size());
  const int64_t d_planes = masked ? G : 1;  // the contiguous layout's D is one GEMM's rows
  if (grouped) size["groups"] = G;
  ksim::Global g;
  std::map<std::string, Operand> ops;
  const json& tensors = mf.at("tensors");
  uint64_t meta = 0;
  SparseAtom atom;
  if (tensors.contains("META")) atom = sparse_atom(tensors.at("META"));
  for (const std::string name : {"A", "B"}) {
    const json& t = tensors.at(name);
    const Dtype dt = dtype(t.at("dtype"));
    Operand op;
    const std::string d0 = t.at("dims")[0], d1 = t.at("dims")[1], c = t.at("contiguous");
    const bool sparse = t.contains("sparse");  // stored with half of k's elements
    input_names.push_back(name);
    const int64_t planes = t.contains("groups") ? G : 1;  // a grouped operand: one plane per group
    const InputArray* given = planes > 1 ? nullptr : input_for(inputs, used, name, size.at(d0), size.at(d1));
    if (sparse && given)
      throw std::runtime_error(name + ".npy: a sparse A is not read from a file (its kept elements and their metadata are drawn "
                               "together); leave it out of --inputs");
    op.first_contiguous = c == d0;
    op.inner = static_cast<uint64_t>(size.at(c) / (sparse ? 2 : 1));
    op.outer = static_cast<uint64_t>(size.at(c == d0 ? d1 : d0));
    // A row stride the host may choose: the row rounded up to 16 bytes, plus 16 (TMA needs a multiple of 16).
    op.pitch = static_cast<uint64_t>(round_up((static_cast<int64_t>(op.inner) * dt.bits + 7) / 8, 16) + 16);
    op.addr = g.alloc(op.pitch * op.outer * static_cast<uint64_t>(planes), 0x5A);  // its planes one after another
    if (sparse) {
      meta = make_sparse(g, op, dt, atom, m, kk, rng);
      ops[name] = std::move(op);
      continue;
    }
    std::vector<uint8_t>& mem = g.at(op.addr);
    const uint64_t plane = static_cast<uint64_t>(size.at(d0) * size.at(d1));
    op.v.assign(static_cast<size_t>(plane) * static_cast<size_t>(planes), 0.0);
    for (uint64_t q = 0; q < static_cast<uint64_t>(planes); ++q)
      for (uint64_t r = 0; r < op.outer; ++r)
        for (uint64_t i = 0; i < op.inner; ++i) {
          // logical (dims[0], dims[1]) index
          const uint64_t x0 = op.first_contiguous ? i : r, x1 = op.first_contiguous ? r : i;
          const uint32_t b = given ? input_bits(dt, name, *given, static_cast<int64_t>(x0), static_cast<int64_t>(x1)) : dt.random(rng);
          put_bits(mem, (q * op.outer + r) * op.pitch * 8 + i * static_cast<uint64_t>(dt.bits), dt.bits, b);
          op.v[static_cast<size_t>(q * plane + x0 * static_cast<uint64_t>(size.at(d1)) + x1)] = dt.decode(b);
        }
    ops[name] = std::move(op);
  }
  // Block scaling: the factor tensors of A's rows and B's columns.
  std::map<std::string, Scales> scales;
  for (const auto& [name, t] : tensors.items())
    if (t.value("layout", "") == "128x4" && t.at("scales") != "D")
      input_names.push_back(name), scales[name] = make_scales(g, dtype(t.at("dtype")), size.at(t.at("dims")[0]), kk, t.at("vec"), rng, inputs, used, name);
  // The fused epilogue's bias (docs/spec.md, "Epilogues"): a row of n (along N) or a column of m;
  // grouped, one per group, one after another (a group's bias along M: its plane of rows, as A's).
  std::vector<double> bias;
  bool bias_m = false;
  int64_t bias_len = 0;  // elements of one group's bias
  uint64_t bias_addr = 0;
  if (tensors.contains("bias")) {
    const Dtype bt = dtype(tensors.at("bias").at("dtype"));
    bias_m = tensors.at("bias").at("dims")[0] == "m";
    bias_len = bias_m ? m : n;
    const int64_t len = bias_len * (tensors.at("bias").contains("groups") ? G : 1);
    input_names.push_back("bias");
    const InputArray* given = len == bias_len ? input_for(inputs, used, "bias", bias_m ? len : 1, bias_m ? 1 : len) : nullptr;
    bias_addr = g.alloc(static_cast<size_t>(len * bt.bits / 8 + 16), 0x3C);
    for (int64_t i = 0; i < len; ++i) {
      const uint32_t b = given ? input_bits(bt, "bias", *given, bias_m ? i : 0, bias_m ? 0 : i) : bt.random(rng);
      put_bits(g.at(bias_addr), static_cast<uint64_t>(i * bt.bits), bt.bits, b);
      bias.push_back(bt.decode(b));
    }
  }
  // C and the residual: m x n like D (gated: m x d), rows as many elements apart, random in their dtype.
  struct Input {
    std::vector<double> v;
    uint64_t addr = 0;
  };
  std::map<std::string, Input> fused;
  for (const char* name : {"C", "residual"}) {
    if (!tensors.contains(name)) continue;
    const Dtype it = dtype(tensors.at(name).at("dtype"));
    Input& x = fused[name];
    input_names.push_back(name);
    const InputArray* given = input_for(inputs, used, name, m, nd);
    x.addr = g.alloc(static_cast<size_t>(m * nd * it.bits / 8 + 16), 0x3D);
    for (int64_t i = 0; i < m * nd; ++i) {
      const uint32_t b = given ? input_bits(it, name, *given, i / nd, i % nd) : it.random(rng);
      put_bits(g.at(x.addr), static_cast<uint64_t>(i * it.bits), it.bits, b);
      x.v.push_back(it.decode(b));
    }
  }
  // The amax output: one f32, zero before the launch (the caller's part).
  uint64_t amax_addr = 0;
  if (tensors.contains("amax")) amax_addr = g.alloc(16, 0x00);
  // The one-f32 inputs (docs/spec.md, "Epilogues"), each at its own address, `value` unless
  // --inputs gives NAME.npy: D's per-tensor scale 0.75 (a multiplication that rounds, and keeps an
  // e4m3 D in range); alpha and beta (their "input" form) random f32s of either sign, magnitude in
  // [0.5, 2) with a random 23-bit fraction (so that the products round), drawn after every tensor.
  std::map<std::string, uint64_t> scalar_addr;
  auto scalar_input = [&](const char* name, double value) {
    if (!tensors.contains(name)) return value;
    const uint64_t addr = g.alloc(16, 0x00);
    scalar_addr[name] = addr;
    input_names.push_back(name);
    uint32_t b = std::bit_cast<uint32_t>(static_cast<float>(value));
    if (const InputArray* given = input_for(inputs, used, name, 1, 1)) b = input_bits(dtype("f32"), name, *given, 0, 0);
    put_bits(g.at(addr), 0, 32, b);
    return static_cast<double>(std::bit_cast<float>(b));
  };
  auto random_factor = [&] {
    const uint32_t bits = static_cast<uint32_t>(rng());
    return (bits & 1 ? -1.0 : 1.0) * std::ldexp(1.0 + std::ldexp(static_cast<double>(bits >> 9), -23), static_cast<int>(bits >> 1 & 1) - 1);
  };
  const double d_scale = scalar_input("d_scale", 0.75);
  const double alpha_in = tensors.contains("alpha") ? scalar_input("alpha", random_factor()) : 0.0;
  const double beta_in = tensors.contains("beta") ? scalar_input("beta", random_factor()) : 0.0;
  // Block-wise f32 factors (docs/spec.md, "Block scaling"): SFA [kb][m] (MN-major), SFB [nb][kb],
  // kb = ceil(k / 128), nb = ceil(n / 128); each a positive f32 2^e (1 + f), e in [-8, 7] and a
  // random 23-bit fraction f (so that their products round), drawn after every other input.
  const bool blockwise = tensors.contains("SFA") && tensors.at("SFA").value("layout", "") != "128x4";
  const int64_t nkb = (kk + 127) / 128, nnb = (n + 127) / 128;
  std::vector<double> bw_sfa, bw_sfb;
  std::map<std::string, uint64_t> factor_addr;
  auto factors = [&](const char* name, int64_t rows, int64_t cols, std::vector<double>& v) {
    input_names.push_back(name);
    const InputArray* given = input_for(inputs, used, name, rows, cols);
    const uint64_t addr = g.alloc(static_cast<size_t>(rows * cols * 4 + 16), 0x00);
    factor_addr[name] = addr;
    for (int64_t i = 0; i < rows * cols; ++i) {
      const uint32_t bits = static_cast<uint32_t>(rng());
      uint32_t b = std::bit_cast<uint32_t>(static_cast<float>(std::ldexp(1.0 + std::ldexp(static_cast<double>(bits >> 9), -23), static_cast<int>(bits & 15) - 8)));
      if (given) b = input_bits(dtype("f32"), name, *given, i / cols, i % cols);
      put_bits(g.at(addr), static_cast<uint64_t>(i * 32), 32, b);
      v.push_back(static_cast<double>(std::bit_cast<float>(b)));
    }
  };
  if (blockwise) {
    factors("SFA", nkb, m, bw_sfa);
    factors("SFB", nnb, nkb, bw_sfb);
  }
  uint64_t sizes_addr = 0;  // masked_m or ends
  if (grouped) {
    sizes_addr = g.alloc(static_cast<size_t>(G * 4), 0x00);  // exactly G entries: a read past them fails
    for (int64_t x = 0; x < G; ++x) put_bits(g.at(sizes_addr), static_cast<uint64_t>(x * 32), 32, static_cast<uint32_t>(sizes[static_cast<size_t>(x)]));
  }
  inputs_all_used(inputs, used, input_names);
  std::vector<std::string> epilogue_ops;
  if (mf.contains("epilogue_ops")) epilogue_ops = mf.at("epilogue_ops").get<std::vector<std::string>>();
  // alpha and beta as the kernel multiplies by them: rounded to f32; the input's value where the
  // kernel takes it as one ("alpha": "input").
  auto constant = [&](const char* name) {
    if (tensors.contains(name)) return std::string(name) == "alpha" ? alpha_in : beta_in;
    return static_cast<double>(static_cast<float>(mf.at("epilogue_constants").at(name).get<double>()));
  };
  const Dtype dd = dtype(tensors.at("D").at("dtype"));
  const uint64_t d_addr = g.alloc(static_cast<size_t>(d_planes * m * nd * dd.bits / 8), 0xEE);
  // D's block-scale factors (a quantized D): m padded to 128 rows by nd / vec factors padded to 4,
  // filled with 0xA5 (no ue8m0 factor the kernel computes: at most 254), which the padding keeps.
  int64_t q_vec = 0, q_stripe = 0;
  uint64_t sfd_addr = 0;
  if (tensors.contains("SFD")) {
    q_vec = tensors.at("SFD").at("vec");
    q_stripe = (nd / q_vec + 3) / 4 * 512;
    sfd_addr = g.alloc(static_cast<size_t>(round_up(m, 128) / 128 * q_stripe), 0xA5);
  }

  ksim::Launch l;
  l.threads = mf.at("block")[0];
  l.dynamic_smem = mf.at("dynamic_shared_memory_bytes");
  for (size_t i = 0; i < 3; ++i) l.cluster[i] = mf.at("cluster")[i];
  const int64_t tm = mf.at("tile").at("m"), tn = mf.at("tile").at("n"), cg = mf.at("cta_group");
  l.grid = {static_cast<uint32_t>(round_up((nd + tn - 1) / tn * cg, l.cluster[0])),
            static_cast<uint32_t>(round_up((m + tm - 1) / tm, l.cluster[1])), static_cast<uint32_t>(d_planes * l.cluster[2])};
  if (mf.value("schedule", "") == "persistent") {  // the launcher's rule (the manifest's grid_rule)
    // Units (a CTA, a pair, a cluster of either, launched as one row) walk blocks of cluster_tiles.
    const int64_t bm = mf.contains("cluster_tiles") ? mf.at("cluster_tiles").at("m").get<int64_t>() : 1;
    const int64_t bn = mf.contains("cluster_tiles") ? mf.at("cluster_tiles").at("n").get<int64_t>() : 1;
    const int64_t per = int64_t{l.cluster[0]} * l.cluster[1] * l.cluster[2];
    // A masked grouped walk: the tiles of every group's capacity (d_planes, one per group).
    const int64_t blocks = ((nd + tn - 1) / tn + bn - 1) / bn * (((m + tm - 1) / tm + bm - 1) / bm) * d_planes;
    const int64_t units = multiprocessors > 0 ? std::min<int64_t>(blocks, multiprocessors / per) : blocks;
    l.grid = {static_cast<uint32_t>(units * per), 1, 1};
  }
  // D as a TMA store's tensor map sees it: n (gated: d) elements a row, rows as many elements apart.
  Operand dop;
  dop.addr = d_addr;
  dop.inner = static_cast<uint64_t>(nd);
  dop.outer = static_cast<uint64_t>(m);
  dop.pitch = static_cast<uint64_t>(nd * dd.bits / 8);
  ops["D"] = dop;
  for (const json& p : mf.at("params")) {
    const std::string name = p.at("name"), kind = p.at("kind");
    if (kind == "tensor_map") {
      const std::string tensor = p.at("tensor");
      for (const json& t : mf.at("tensor_maps")) {
        if (t.at("param") != name) continue;
        if (tensor == "META") {  // 3-D: planes of one atom of K
          const uint64_t rows = static_cast<uint64_t>(round_up(m, 128)), planes = static_cast<uint64_t>((kk + atom.k - 1) / atom.k);
          l.params.push_back(map_param(name, tensor_map(t, meta, 16, rows, 16, planes, rows * 16)));
        } else if (scales.count(tensor)) {  // 3-D: planes of 128 rows, each nkb * 32 lines of 16 bytes
          const Scales& sc = scales.at(tensor);
          const uint64_t lines = static_cast<uint64_t>(sc.nkb * 32), planes = static_cast<uint64_t>((sc.rows + 127) / 128);
          l.params.push_back(map_param(name, tensor_map(t, sc.addr, 16, lines, 16, planes, lines * 16)));
        } else if (t.at("rank") == 3) {  // a grouped operand: G planes of outer rows (the masked layout's D too)
          const Operand& op = ops.at(tensor);
          l.params.push_back(map_param(name, tensor_map(t, op.addr, op.inner, op.outer, op.pitch, static_cast<uint64_t>(G), op.pitch * op.outer)));
        } else {
          const Operand& op = ops.at(tensor);
          l.params.push_back(map_param(name, tensor_map(t, op.addr, op.inner, op.outer, op.pitch)));
        }
      }
    } else if (kind == "global_pointer") {
      const std::string tensor = p.at("tensor");
      l.params.push_back(value(name, tensor == "bias"           ? bias_addr
                                     : tensor == "amax"          ? amax_addr
                                     : scalar_addr.count(tensor) ? scalar_addr.at(tensor)
                                     : factor_addr.count(tensor) ? factor_addr.at(tensor)
                                     : tensor == "SFD"           ? sfd_addr
                                     : tensor == "masked_m" || tensor == "ends" ? sizes_addr
                                     : fused.count(tensor) ? fused.at(tensor).addr
                                                            : d_addr));
    } else {
      l.params.push_back(value(name, static_cast<uint64_t>(size.at(name))));
    }
  }
  g.count_writes(d_addr);  // every element of D written exactly once (checked below)
  try {
    const ksim::Kernel& kr = k;
    res.stats = ksim::run(kr, l, g, o);
    res.ctas = res.stats.ctas;
  } catch (const ksim::Error& e) {
    res.error = e.what();
    return res;
  }
  // float64 reference and the bound: every K step of the accumulator (at most k / 8 of them: the
  // smallest K per instruction) rounds to its type; D rounds once more to its own.
  const std::string acc = mf.at("accumulator");
  const double u_acc = acc == "f32" ? std::ldexp(1.0, -24) : acc == "f16" ? std::ldexp(1.0, -11) : 0.0;
  // D's rounding: half an ulp relative, and for the 8-bit floats half their smallest subnormal absolute.
  const double u_out = dd.name == "bf16"   ? std::ldexp(1.0, -8)
                       : dd.name == "f16"  ? std::ldexp(1.0, -11)
                       : dd.name == "e4m3" ? std::ldexp(1.0, -4)
                       : dd.name == "e5m2" ? std::ldexp(1.0, -3)
                       : dd.name == "e2m1" ? std::ldexp(1.0, -2)
                                           : 0.0;
  const double abs_out = dd.name == "e4m3"   ? std::ldexp(1.0, -10)
                         : dd.name == "e5m2" ? std::ldexp(1.0, -17)
                         : dd.name == "e2m1" ? 0.25
                                             : 0.0;
  const double sat = dd.name == "e4m3" ? 448.0 : dd.name == "e5m2" ? 57344.0 : 0.0;
  const double steps = static_cast<double>((kk + 7) / 8 + 1);
  // Block-wise factors: a K block's partial sums round at most 128 / 8 + 1 times (relative to the
  // magnitudes of their scaled products, as above), the factor's product sa sb (mul.rn) once, and
  // the running sum (fma.rn) once per block after it: relative to the sum of |a b sa sb| in all,
  // 17 + 1 + kb units, and one more for the products of the errors.
  const double blockwise_steps = static_cast<double>((std::min<int64_t>(kk, 128) + 7) / 8 + 1 + 1 + nkb + 1);
  const std::vector<uint8_t>& D = g.at(d_addr);
  const Operand& A = ops.at("A");
  const Operand& B = ops.at("B");
  std::vector<double> bt(static_cast<size_t>(G * n * kk));  // B transposed: [group][n][k]
  for (int64_t q = 0; q < G; ++q)
    for (int64_t x = 0; x < kk; ++x)
      for (int64_t j = 0; j < n; ++j) bt[static_cast<size_t>((q * n + j) * kk + x)] = B.v[static_cast<size_t>((q * kk + x) * n + j)];
  int64_t grp = 0;  // the group of the rows being checked (grouped GEMM; 0 otherwise): its plane of B
  // D = sum_k (A * sa)(B * sb): each element of K scaled by its row's (column's) factor of block k / vec.
  const Scales* sa = scales.count("SFA") ? &scales.at("SFA") : nullptr;
  const Scales* sb = scales.count("SFB") ? &scales.at("SFB") : nullptr;
  if (!sa != !sb) throw std::runtime_error("a manifest with one block-scale tensor");
  std::vector<double> as(static_cast<size_t>(kk), 1.0), bs(static_cast<size_t>(kk), 1.0);
  const double u = std::ldexp(1.0, -24);
  // Column j of the product (+ bias) of row i and its bound: every K step of the accumulator
  // rounds to its type; the bias's add.rn 2^-24 relative.
  auto product = [&](int64_t i, int64_t j, double& ref, double& acc_bound) {
    double mag = 0;
    ref = 0;
    const double* a = &A.v[static_cast<size_t>(i * kk)];  // i: A's row (in all planes)
    const double* b = &bt[static_cast<size_t>((grp * n + j) * kk)];
    if (sa)
      for (int64_t x = 0; x < kk; ++x) {
        as[static_cast<size_t>(x)] = sa->v[static_cast<size_t>(i * sa->cols + x / sa->vec)];
        bs[static_cast<size_t>(x)] = sb->v[static_cast<size_t>(j * sb->cols + x / sb->vec)];
      }
    if (blockwise)  // element k of block kb = k / 128 scaled by SFA[kb][i] SFB[j / 128][kb]
      for (int64_t x = 0; x < kk; ++x) {
        as[static_cast<size_t>(x)] = bw_sfa[static_cast<size_t>(x / 128 * m + i)];
        bs[static_cast<size_t>(x)] = bw_sfb[static_cast<size_t>(j / 128 * nkb + x / 128)];
      }
    for (int64_t x = 0; x < kk; ++x) {
      const double p = a[x] * as[static_cast<size_t>(x)] * b[x] * bs[static_cast<size_t>(x)];
      ref += p;
      mag += std::fabs(p);
    }
    acc_bound = (blockwise ? blockwise_steps : steps) * u_acc * mag;
  };
  // An op of the epilogue with an input or a constant, on column j (of the product: up's columns
  // for its bias) of row i; false for the others. Each rounds once (mul.rn, add.rn, fma.rn).
  auto input_op = [&](const std::string& f, int64_t i, int64_t j, double& ref, double& acc_bound) {
    const size_t ij = static_cast<size_t>(i * nd + j);
    if (f == "alpha") {  // the accumulator's error scaled
      const double a = constant("alpha");
      ref *= a;
      acc_bound = std::fabs(a) * acc_bound + u * std::fabs(ref);
    } else if (f == "c" || f == "beta_c") {
      ref += (f == "c" ? 1.0 : constant("beta")) * fused.at("C").v[ij];
      acc_bound += u * std::fabs(ref);
    } else if (f == "bias") {
      ref += bias[static_cast<size_t>(bias_m ? i : grp * bias_len + j)];  // i: A's row in all planes; one bias row per group (grp 0 ungrouped)
      acc_bound += u * std::fabs(ref);
    } else if (f == "residual") {
      ref += fused.at("residual").v[ij];
      acc_bound += u * std::fabs(ref);
    } else if (f == "d_scale") {
      ref *= d_scale;
      acc_bound = std::fabs(d_scale) * acc_bound + u * std::fabs(ref);
    } else {
      return false;
    }
    return true;
  };
  // The amax's range: the largest |value| before D's scale and conversion lies within each
  // element's bound of its float64 value, so between the largest |ref| - bound and |ref| + bound.
  double amax_lo = 0, amax_hi = 0;
  // An activation in float64 from its formula, its bound carried through (ptxgen/activation_bound.hpp:
  // the input's times the function's largest slope, plus the f32 composition's own).
  auto activate = [&](const std::string& f, double& ref, double& acc_bound) {
    namespace ab = activation_bound;
    const double x = ref;
    auto sig = [](double v) { return 1 / (1 + std::exp(-v)); };
    if (f == "relu") {
      ref = std::max(x, 0.0);
      acc_bound = ab::relu(x, ref, acc_bound);
    } else if (f == "sigmoid") {
      ref = sig(x);
      acc_bound = ab::sigmoid(x, ref, acc_bound);
    } else if (f == "silu") {
      ref = x * sig(x);
      acc_bound = ab::silu(x, ref, acc_bound);
    } else if (f == "gelu_tanh") {
      ref = 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
      acc_bound = ab::gelu_tanh(x, ref, acc_bound);
    } else if (f == "gelu") {
      ref = 0.5 * x * std::erfc(-x / std::sqrt(2.0));  // 1 + erf(w) as erfc(-w), accurate where it is small
      acc_bound = ab::gelu(x, ref, acc_bound);
    } else {
      throw std::runtime_error("a manifest with the epilogue op " + f + ", which the simulation does not evaluate");
    }
  };
  // A quantized D: each element's float64 value and bound before the quantization, checked block
  // by block below.
  std::vector<double> q_ref, q_bound;
  if (sfd_addr) q_ref.assign(static_cast<size_t>(m * nd), 0.0), q_bound.assign(static_cast<size_t>(m * nd), 0.0);
  res.tensors.push_back(tensor_report("D", d_planes * m, nd));
  // A group's rows: its valid ones are checked; the rest of a tile that holds valid rows may be
  // written (unspecified values, once); the tiles past them not at all (docs/spec.md, "Grouped GEMM").
  std::vector<GroupRow> rows;
  for (int64_t r = 0; r < d_planes * m; ++r) rows.push_back(group_row(mf, sizes, m, r));
  // Coverage: each byte of D written by exactly one store (st.global or a TMA store). Right values
  // written twice (a persistent CTA computing a tile another CTA owns) or never (a tile skipped
  // where D's fill happens to be right) are a wrong kernel too.
  if (const std::vector<uint8_t>* w = g.writes(d_addr)) {
    int64_t twice = 0, never = 0, past = 0, first = -1;
    for (size_t b = 0; b < w->size(); ++b) {
      const int64_t row = static_cast<int64_t>(b) * 8 / dd.bits / nd;
      const int want = rows[static_cast<size_t>(row)].want ? 1 : 0;
      if ((*w)[b] != want) {
        (want == 0 ? past : (*w)[b] == 0 ? never : twice) += 1;
        if (first < 0) first = static_cast<int64_t>(b);
      }
    }
    if (first >= 0) {
      const int64_t e = first * 8 / dd.bits;
      res.tensors.back().note = "coverage: " + std::to_string(twice) + " byte(s) of D written more than once, " + std::to_string(never) +
                                " never" + (grouped ? ", " + std::to_string(past) + " in tiles past their group's valid rows" : "") +
                                "; the first, of D(" + std::to_string(e / nd) + "," + std::to_string(e % nd) + "), " +
                                std::to_string((*w)[static_cast<size_t>(first)]) + " time(s) (each must be written exactly once" +
                                (mf.contains("groups") ? ", none of a tile past its group's valid rows)" : ")");
      // A wrong kernel whatever its values: the run fails where a value out of its bound would.
      res.worst = INFINITY;
      res.where = res.tensors.back().note;
      res.tensors.back().worst = INFINITY;
    }
  }
  for (int64_t row = 0; row < d_planes * m; ++row)  // D's row in all groups' planes
    for (int64_t j = 0; j < nd && rows[static_cast<size_t>(row)].want == 1; ++j) {
      const int64_t i = rows[static_cast<size_t>(row)].a;  // A's row
      grp = rows[static_cast<size_t>(row)].g;
      double ref = 0, acc_bound = 0;
      product(i, j, ref, acc_bound);
      const double got = dd.decode(get_bits(D, static_cast<uint64_t>((row * nd + j) * dd.bits), dd.bits));
      for (const std::string& f : epilogue_ops) {
        if (f == "amax") {
          amax_lo = std::max(amax_lo, std::fabs(ref) - acc_bound);
          amax_hi = std::max(amax_hi, std::fabs(ref) + acc_bound);
          continue;
        }
        if (input_op(f, i, j, ref, acc_bound)) continue;
        if (f == "mxfp8" || f == "mxfp4" || f == "nvfp4") continue;  // last: below
        if (f == "swiglu" || f == "geglu") {
          // D[i][j] = act(P[i][j]) * P[i][j + d] (vLLM's SiluAndMul): the gate's bound times |up|,
          // up's times |act(gate)|, and the mul.rn's half ulp.
          if (!gated) throw std::runtime_error("a gated epilogue op without the derived size d");
          double up = 0, up_bound = 0;
          product(i, j + nd, up, up_bound);
          if (std::find(epilogue_ops.begin(), epilogue_ops.end(), "bias") != epilogue_ops.end())
            input_op("bias", i, j + nd, up, up_bound);  // up's own bias, d columns on
          activate(f == "swiglu" ? "silu" : "gelu_tanh", ref, acc_bound);
          const double y = ref * up;
          acc_bound = acc_bound * std::fabs(up) + std::fabs(ref) * up_bound + acc_bound * up_bound + u * std::fabs(y);
          ref = y;
          continue;
        }
        activate(f, ref, acc_bound);
      }
      if (sfd_addr) {
        q_ref[static_cast<size_t>(i * nd + j)] = ref;
        q_bound[static_cast<size_t>(i * nd + j)] = acc_bound;
        continue;
      }
      // An 8-bit float D is converted with .satfinite (docs/spec.md, d.dtype): beyond the range its
      // largest finite value. Clamping moves no value farther from the exact one, so the bound holds.
      if (sat > 0) ref = std::clamp(ref, -sat, sat);
      const double bound = acc_bound * (1 + u_out) + u_out * std::fabs(ref) + abs_out + 1e-300;
      const double err = std::fabs(got - ref);
      const double rel = std::isnan(err) ? INFINITY : (dd.name == "s32" ? (err == 0 ? 0 : INFINITY) : err / bound);
      tally(res.tensors.front(), i, j, got, ref, dd.name == "s32" ? 0.0 : bound);
      ++res.checked;
      if (std::isnan(err) || err > res.max_err) res.max_err = std::isnan(err) ? INFINITY : err;
      if (rel > res.worst || std::isnan(rel)) {
        res.worst = rel;
        std::ostringstream s;
        s << "D(" << row << "," << j << ") = " << got << ", expected " << ref << " (bound " << bound << ")";
        res.where = s.str();
      }
    }
  if (sfd_addr) {
    // MXFP8 (docs/spec.md, "Epilogues"), from its definition: block (i, b) of q_vec columns has the
    // factor 2^ceil(log2(amax / Fmax)), amax its largest |value|, as the ue8m0 byte of that power
    // (its biased exponent, clamped to [0, 254]); D holds each value over the factor, rounded to
    // D's type (saturating at Fmax). The kernel's amax lies within [lo, hi] (each value's bound), so
    // its factor between factor(lo) and factor(hi) (monotone); the elements are checked against the
    // factor the kernel chose, at byte ((i / 128) stripe + b / 4) 512 + (i % 32) 16 + ((i % 128) / 32) 4
    // + b % 4 of SFD (the 128x4 layout), and the padding must keep its fill.
    const double fmax = dd.name == "e4m3" ? 448.0 : dd.name == "e5m2" ? 57344.0 : dd.name == "e2m1" ? 6.0 : 0.0;
    if (fmax == 0) throw std::runtime_error("a quantized D of type " + dd.name);
    auto factor = [&](double a) {
      if (!(a > 0)) return 0;
      int e = 0;
      const double f = std::frexp(a / fmax, &e);  // a / Fmax = f 2^e, f in [0.5, 1)
      return std::clamp((f == 0.5 ? e - 1 : e) + 127, 0, 254);
    };
    // NVFP4 (a ue4m3 factor): X = e4m3(amax / Fmax), RN and saturating, the division a product
    // with 1 / Fmax rounded to f32 and rounded once more (the kernel's mul.rn.f32: 2^-24 relative
    // either way); the elements are the values times 1 / X (rcp.rn.f32 and mul.rn.f32: 2^-24
    // relative each), X = 0 giving FLT_MAX.
    const bool e4m3_factor = tensors.at("SFD").at("dtype") == "ue4m3";
    const double inv_fmax = static_cast<double>(static_cast<float>(1.0 / fmax));
    auto e4m3_factor_of = [&](double a) {
      return static_cast<int>(ksim::num::encode_rn(ksim::num::kE4M3, std::min(a * inv_fmax, 448.0)));
    };
    const std::vector<uint8_t>& SF = g.at(sfd_addr);
    std::vector<bool> written(SF.size(), false);
    res.tensors.push_back(tensor_report("SFD", m, nd / q_vec));
    auto worse = [&](double rel, const std::string& where) {
      if (rel > res.worst || std::isnan(rel)) {
        res.worst = std::isnan(rel) ? INFINITY : rel;
        res.where = where;
      }
    };
    for (int64_t i = 0; i < m; ++i)
      for (int64_t b = 0; b < nd / q_vec; ++b) {
        double lo = 0, hi = 0;
        for (int64_t j = b * q_vec; j < (b + 1) * q_vec; ++j) {
          const size_t ij = static_cast<size_t>(i * nd + j);
          lo = std::max(lo, std::fabs(q_ref[ij]) - q_bound[ij]);
          hi = std::max(hi, std::fabs(q_ref[ij]) + q_bound[ij]);
        }
        const size_t at = static_cast<size_t>((i / 128) * q_stripe + (b / 4) * 512 + (i % 32) * 16 + ((i % 128) / 32) * 4 + b % 4);
        written[at] = true;
        const int x = SF[at];
        const int x_lo = e4m3_factor ? e4m3_factor_of(lo * (1 - std::ldexp(1.0, -23))) : factor(lo);
        const int x_hi = e4m3_factor ? e4m3_factor_of(hi * (1 + std::ldexp(1.0, -23))) : factor(hi);
        // The factor's byte against the range the block's amax allows: its middle within half the range.
        tally(res.tensors.back(), i, b, x, (x_lo + x_hi) / 2.0, x_hi == x_lo ? 0.0 : (x_hi - x_lo) / 2.0);
        if (x < x_lo || x > x_hi) {
          std::ostringstream s;
          s << "SFD(" << i << "," << b << ") = " << x << ", expected " << x_lo << (x_hi != x_lo ? " or " + std::to_string(x_hi) : "")
            << " (the block's amax within [" << lo << ", " << hi << "])";
          worse(INFINITY, s.str());
        }
        const double xv = e4m3_factor ? ksim::num::decode(ksim::num::kE4M3, static_cast<uint32_t>(x)) : 0.0;
        const double scale = !e4m3_factor ? std::ldexp(1.0, 127 - x) : xv > 0 ? 1 / xv : 3.4028234663852886e38;
        for (int64_t j = b * q_vec; j < (b + 1) * q_vec; ++j) {
          const size_t ij = static_cast<size_t>(i * nd + j);
          const double ref = std::clamp(q_ref[ij] * scale, -fmax, fmax);
          const double bound = q_bound[ij] * scale * (1 + u_out) + u_out * std::fabs(ref) + abs_out +
                               (e4m3_factor ? std::ldexp(1.0, -23) * std::fabs(q_ref[ij] * scale) : 0.0);
          const double got = dd.decode(get_bits(D, static_cast<uint64_t>(ij * static_cast<uint64_t>(dd.bits)), dd.bits));
          const double err = std::fabs(got - ref);
          tally(res.tensors.front(), i, j, got, ref, bound);
          ++res.checked;
          if (std::isnan(err) || err > res.max_err) res.max_err = std::isnan(err) ? INFINITY : err;
          const double rel = err / bound;
          if (!(rel <= res.worst)) {
            std::ostringstream s;
            s << "D(" << i << "," << j << ") = " << got << " (times " << (e4m3_factor ? xv : std::ldexp(1.0, x - 127)) << "), expected " << ref
            << " (bound " << bound << ")";
            worse(rel, s.str());
          }
        }
      }
    for (size_t at = 0; at < SF.size(); ++at)
      if (!written[at] && SF[at] != 0xA5) {
        worse(INFINITY, "SFD byte " + std::to_string(at) + " (padding) = " + std::to_string(SF[at]) + ", written");
        if (res.tensors.back().note.empty()) res.tensors.back().note = "padding byte " + std::to_string(at) + " of the 128x4 layout written";
        res.tensors.back().worst = INFINITY;
      }
  }
  if (amax_addr) {
    const std::vector<uint8_t>& am = g.at(amax_addr);
    const double got = static_cast<double>(std::bit_cast<float>(static_cast<uint32_t>(get_bits(am, 0, 32))));
    const double mid = (amax_lo + amax_hi) / 2, half = (amax_hi - amax_lo) / 2 + 1e-300;
    const double rel = std::isnan(got) ? INFINITY : std::fabs(got - mid) / half;
    res.tensors.push_back(tensor_report("amax", 1, 1));
    tally(res.tensors.back(), 0, 0, got, mid, half);
    if (rel > res.worst) {
      res.worst = rel;
      std::ostringstream s;
      s << "amax = " << got << ", expected within [" << amax_lo << ", " << amax_hi << "]";
      res.where = s.str();
    }
  }
  return res;
}

}  // namespace ptxgen::sim
