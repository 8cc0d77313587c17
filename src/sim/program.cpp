// See ptxgen/sim.hpp (run_program). The reference: the ops of docs/spec.md ("The program level") evaluated
// in float64 on the inputs the simulation got, tensor memory as element slots at the bit
// addresses the views give (views.hpp), every value carrying an error bound that the
// f32 accumulation and each conversion widen.
#include "ptxgen/sim.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "views.hpp"
#include "support.hpp"

namespace ptxgen::sim {

using nlohmann::json;
namespace spec = ptxgen::spec;
using ptxgen::isa::DType;

namespace {

std::string dname(DType t) { return std::string(ptxgen::isa::name(t)); }
bool is_float(DType t) {
  return t == DType::f16 || t == DType::bf16 || t == DType::tf32 || t == DType::f32 || t == DType::e4m3 || t == DType::e5m2 ||
         t == DType::e2m3 || t == DType::e3m2 || t == DType::e2m1 || t == DType::ue8m0 || t == DType::ue4m3;
}
double unit_roundoff(DType t) {
  if (t == DType::bf16) return std::ldexp(1.0, -8);
  if (t == DType::f16) return std::ldexp(1.0, -11);
  return 0;  // f32 stores keep the f32 register; raw types are bits
}

struct Elem {
  bool def = false;
  double v = 0;       // the value (exact, before the conversions err accounts for)
  uint32_t code = 0;  // its encoding in the slot (raw reads: casts to b8)
  double err = 0;     // bound on |hardware value - v|
};
// An elementwise function (docs/spec.md, "Arithmetic") evaluated in float64 from the spec's
// meaning, with a bound on the hardware's distance from the exact value: the operands' bounds
// carried through the function (its range over the boxes they allow, by each function's
// monotonicity) plus the instruction's own error, as the PTX ISA documents it (§9.7.3): .rn
// rounding 2^-24 relative (and half the smallest subnormal); ex2.approx 2 ulp from the correctly
// rounded result (2.5 ulp from exact), rcp.approx 1 ulp (1.5 from exact), lg2.approx 2^-22 absolute
// in (0.5, 2) and relative elsewhere, tanh.approx 2^-11, rsqrt.approx 2^-22.9, sqrt.approx 2^-23
// relative; min, max, neg and abs are exact.
//
// With `t` f16 or bf16, the packed instruction (docs/spec.md, "Packed half-precision arithmetic";
// PTX ISA 9.1 §9.7.4) on one half: .rn rounds to t's nearest (unit roundoff 2^-11 for f16, 2^-8 for
// bf16, and half the smallest subnormal, 2^-25 and 2^-134); ex2.approx has relative error 2^-9.9
// (f16) or 2^-7 (bf16, whose .ftz flushes a subnormal result to 0: at most 2^-126 more), tanh.approx
// absolute 2^-10.987 or 2^-8 (§9.7.4.9-10).
Elem math(ptxgen::MathFn f, bool approx, const Elem& a, const Elem& b, const Elem& c, DType t = DType::f32) {
  using F = ptxgen::MathFn;
  const int n = ptxgen::info(f).operands;
  if (!a.def || (n >= 2 && !b.def) || (n >= 3 && !c.def)) return Elem{};
  struct I {
    double lo, hi;
  };
  auto box = [](const Elem& x) { return I{x.v - x.err, x.v + x.err}; };
  const I A = box(a), B = box(b), C = box(c);
  auto mono = [&](double (*g)(double), bool increasing) {
    return increasing ? I{g(A.lo), g(A.hi)} : I{g(A.hi), g(A.lo)};
  };
  const double inf = INFINITY;
  double v = 0;
  I r{0, 0};
  switch (f) {
    case F::add: v = a.v + b.v, r = {A.lo + B.lo, A.hi + B.hi}; break;
    case F::sub: v = a.v - b.v, r = {A.lo - B.hi, A.hi - B.lo}; break;
    case F::mul:
    case F::fma: {
      const double p[] = {A.lo * B.lo, A.lo * B.hi, A.hi * B.lo, A.hi * B.hi};
      r = {*std::min_element(p, p + 4), *std::max_element(p, p + 4)};
      v = a.v * b.v;
      if (f == F::fma) v += c.v, r = {r.lo + C.lo, r.hi + C.hi};
      break;
    }
    case F::min: v = std::min(a.v, b.v), r = {std::min(A.lo, B.lo), std::min(A.hi, B.hi)}; break;
    case F::max: v = std::max(a.v, b.v), r = {std::max(A.lo, B.lo), std::max(A.hi, B.hi)}; break;
    case F::neg: v = -a.v, r = {-A.hi, -A.lo}; break;
    case F::abs:
      v = std::fabs(a.v);
      r = A.lo >= 0 ? A : A.hi <= 0 ? I{-A.hi, -A.lo} : I{0, std::max(-A.lo, A.hi)};
      break;
    case F::exp2: v = std::exp2(a.v), r = mono([](double x) { return std::exp2(x); }, true); break;
    case F::tanh: v = std::tanh(a.v), r = mono([](double x) { return std::tanh(x); }, true); break;
    case F::log2:
      v = std::log2(a.v);
      r = A.lo > 0 ? mono([](double x) { return std::log2(x); }, true) : I{-inf, inf};
      break;
    case F::sqrt:
      v = std::sqrt(a.v);
      r = A.lo >= 0 ? mono([](double x) { return std::sqrt(x); }, true) : I{-inf, inf};
      break;
    case F::rsqrt:
      v = 1 / std::sqrt(a.v);
      r = A.lo > 0 ? mono([](double x) { return 1 / std::sqrt(x); }, false) : I{-inf, inf};
      break;
    case F::rcp:
      v = 1 / a.v;
      r = A.lo > 0 || A.hi < 0 ? mono([](double x) { return 1 / x; }, false) : I{-inf, inf};
      break;
    case F::lt:
    case F::le:
    case F::gt:
    case F::ge:
    case F::eq:
    case F::ne: {
      // 1 where a CMP b holds, else 0 (docs/spec.md, "Arithmetic"): certain where every value the
      // operands' boxes allow decides it the same way, else either.
      bool yes = false, no = false;
      switch (f) {
        case F::lt: v = a.v < b.v, yes = A.hi < B.lo, no = A.lo >= B.hi; break;
        case F::le: v = a.v <= b.v, yes = A.hi <= B.lo, no = A.lo > B.hi; break;
        case F::gt: v = a.v > b.v, yes = A.lo > B.hi, no = A.hi <= B.lo; break;
        case F::ge: v = a.v >= b.v, yes = A.lo >= B.hi, no = A.hi < B.lo; break;
        case F::eq: v = a.v == b.v, yes = A.lo == A.hi && B.lo == B.hi && A.lo == B.lo, no = A.hi < B.lo || B.hi < A.lo; break;
        default: v = a.v != b.v, no = A.lo == A.hi && B.lo == B.hi && A.lo == B.lo, yes = A.hi < B.lo || B.hi < A.lo; break;
      }
      r = yes ? I{1, 1} : no ? I{0, 0} : I{0, 1};
      break;
    }
    case F::convert: v = a.v, r = A; break;  // its rounding: Eval::convert
    case F::select:
      // b where a is nonzero, else c: either, where a's box holds 0 and other values.
      v = a.v != 0 ? b.v : c.v;
      r = A.lo > 0 || A.hi < 0 ? B : A.lo == 0 && A.hi == 0 ? C : I{std::min(B.lo, C.lo), std::max(B.hi, C.hi)};
      break;
  }
  const double M = std::max(std::fabs(r.lo), std::fabs(r.hi));
  // Round to nearest changes nothing where the result can only be one f32 value (x * 0 of an exact
  // 0, say): without this, a product zeroed by a mask kept 2^-150 of doubt, and a comparison of it
  // with 0 allowed both outcomes.
  const bool half = t == DType::f16 || t == DType::bf16;
  const ksim::num::Format& hf = t == DType::bf16 ? ksim::num::kBF16 : ksim::num::kF16;
  const bool exact_point = r.lo == r.hi && (half ? ksim::num::decode(hf, ksim::num::encode_rn(hf, r.lo)) == r.lo
                                                 : static_cast<double>(static_cast<float>(r.lo)) == r.lo);
  const double ulp = std::ldexp(1.0, -23), rn = exact_point ? 0 : std::ldexp(1.0, -24) * M + std::ldexp(1.0, -150);
  double own = 0;
  if (half) {
    const bool bf = t == DType::bf16;
    const double hrn = exact_point ? 0 : unit_roundoff(t) * M + std::ldexp(1.0, bf ? -134 : -25);
    switch (f) {
      case F::add:
      case F::sub:
      case F::mul:
      case F::fma: own = hrn; break;
      case F::exp2: own = (bf ? std::ldexp(1.0, -7) : std::pow(2.0, -9.9)) * M + std::ldexp(1.0, bf ? -126 : -24); break;
      case F::tanh: own = bf ? std::ldexp(1.0, -8) : std::pow(2.0, -10.987); break;
      default: own = 0; break;  // min, max, neg, abs: exact (the rules admit no other packed function)
    }
  } else {
  switch (f) {
    case F::add:
    case F::sub:
    case F::mul:
    case F::fma: own = rn; break;
    case F::min:
    case F::max:
    case F::neg:
    case F::abs:
    case F::lt:
    case F::le:
    case F::gt:
    case F::ge:
    case F::eq:
    case F::ne:
    case F::select: own = 0; break;
    case F::exp2: own = 2.5 * (ulp * M + std::ldexp(1.0, -149)); break;
    case F::log2: own = std::ldexp(1.0, -22) * std::max(1.0, M); break;
    case F::tanh: own = std::ldexp(1.0, -11) * M; break;
    case F::rsqrt: own = std::pow(2.0, -22.9) * M; break;
    case F::rcp: own = approx ? 1.5 * (ulp * M + std::ldexp(1.0, -149)) : rn; break;
    case F::sqrt: own = approx ? std::ldexp(1.0, -23) * M : rn; break;
    case F::convert: own = 0; break;  // Eval::convert's
  }
  }
  Elem y;
  y.def = true;
  y.v = v;
  y.err = std::max(std::fabs(r.hi - v), std::fabs(v - r.lo)) + own;
  if (std::isnan(y.err)) y.err = inf;
  y.code = half ? ksim::num::encode_rn(hf, v) : ksim::num::bits_of(static_cast<float>(v));
  return y;
}

// An activation (docs/spec.md, "Activations") of x: the value straight from its formula in float64
// (std:: functions), and the bound carried through the instructions the kernel runs, by math()
// per instruction. The composition is written out here from the formulas, not read from ptxgen's
// table (ptxgen/math_fn.hpp), so a wrong step or constant there shows as a value out of bounds.
// Each constant is the f32 nearest the exact one (what the kernel's immediate holds): the exact
// value, with the f32 rounding as its bound.
Elem activation(ptxgen::Activation act, const Elem& x) {
  using F = ptxgen::MathFn;
  using A = ptxgen::Activation;
  if (!x.def) return x;
  auto k = [](double c) {
    Elem e;
    e.def = true;
    e.v = c;
    e.err = std::fabs(static_cast<double>(static_cast<float>(c)) - c);
    return e;
  };
  auto f1 = [](F f, const Elem& a) { return math(f, true, a, Elem{}, Elem{}); };  // the approximate instruction
  auto f2 = [](F f, const Elem& a, const Elem& b) { return math(f, false, a, b, Elem{}); };
  auto f3 = [](F f, const Elem& a, const Elem& b, const Elem& c) { return math(f, false, a, b, c); };
  const double pi = std::acos(-1.0), log2e = 1 / std::log(2.0);
  // sigmoid = 1 / (1 + 2^(-x log2 e)): mul, ex2.approx, add, rcp.approx.
  auto sigmoid = [&] { return f1(F::rcp, f2(F::add, f1(F::exp2, f2(F::mul, x, k(-log2e))), k(1))); };
  Elem y;
  double v = 0;
  switch (act) {
    case A::relu:
      y = f2(F::max, x, k(0));
      v = std::max(x.v, 0.0);
      break;
    case A::sigmoid:
      y = sigmoid();
      v = 1 / (1 + std::exp(-x.v));
      break;
    case A::silu:
      y = f2(F::mul, x, sigmoid());
      v = x.v / (1 + std::exp(-x.v));
      break;
    case A::gelu_tanh: {
      // 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3) as x (1 + 0.044715 x^2) sqrt(2/pi):
      // mul, fma, mul, mul, tanh.approx, fma (0.5 t + 0.5), mul.
      const Elem u = f2(F::mul, f2(F::mul, f3(F::fma, f2(F::mul, x, x), k(0.044715), k(1)), x), k(std::sqrt(2 / pi)));
      y = f2(F::mul, x, f3(F::fma, f1(F::tanh, u), k(0.5), k(0.5)));
      v = 0.5 * x.v * (1 + std::tanh(std::sqrt(2 / pi) * (x.v + 0.044715 * x.v * x.v * x.v)));
      break;
    }
    case A::gelu: {
      // The kernel's erf is Abramowitz & Stegun 7.1.26, for z = |x| / sqrt 2 >= 0: 1 - q(t) exp(-z^2),
      // t = 1 / (1 + p z), within 1.5e-7 of erf(z); and gelu(x) = 0.5 x + 0.5 |x| erf(|x| / sqrt 2).
      // Its steps: abs; fma (|x| p / sqrt 2 + 1), rcp.approx; -q by Horner (four fma and a mul, the
      // coefficients negated); mul x x, fma (by -log2(e) / 2, minus 1), ex2.approx: exp(-x^2 / 2) / 2;
      // h = fma(-q, exp / 2, 0.5); mul by |x|; fma(x, 0.5, h |x|). The chain's float64 value is the
      // approximation, so the approximation's 0.5 |x| 1.5e-7 joins the bound carried through it.
      const double p = 0.3275911, a1 = 0.254829592, a2 = -0.284496736, a3 = 1.421413741, a4 = -1.453152027, a5 = 1.061405429;
      const Elem ax = math(F::abs, false, x, Elem{}, Elem{});
      const Elem t = f1(F::rcp, f3(F::fma, ax, k(p / std::sqrt(2.0)), k(1)));
      Elem nq = f3(F::fma, t, k(-a5), k(-a4));
      for (double c : {a3, a2, a1}) nq = f3(F::fma, nq, t, k(-c));
      nq = f2(F::mul, nq, t);
      const Elem half_e = f1(F::exp2, f3(F::fma, f2(F::mul, x, x), k(-log2e / 2), k(-1)));
      y = f3(F::fma, x, k(0.5), f2(F::mul, f3(F::fma, nq, half_e, k(0.5)), ax));
      y.err += 0.5 * std::fabs(x.v) * 1.5e-7;
      // 0.5 x (1 + erf(x / sqrt 2)) with 1 + erf(w) as erfc(-w), which keeps its relative accuracy
      // where it is small (x << 0).
      v = 0.5 * x.v * std::erfc(-x.v / std::sqrt(2.0));
      break;
    }
  }
  // The bound is on the distance from the exact value; the formula evaluated in float64 is off by
  // a few 2^-53 relative (gelu_tanh, gelu: of x, where 1 + tanh or 1 - q exp cancels), far below
  // f32's 2^-24, which a slack of 2^-40 covers.
  y.err += std::ldexp(1.0, -40) * (std::fabs(v) + (act == A::gelu_tanh || act == A::gelu ? std::fabs(x.v) : 0));
  y.v = v;
  y.code = ksim::num::bits_of(static_cast<float>(v));
  return y;
}

struct Matrix {
  int rows = 0;
  int64_t cols = 0;
  std::vector<Elem> e;
  // A register set's element type: f32, or f16 / bf16 for packed pairs (a convert's result and the
  // packed functions of it), which a store of that type writes as they are.
  DType t = DType::f32;
  Matrix() = default;
  Matrix(int r, int64_t c) : rows(r), cols(c), e(static_cast<size_t>(r * c)) {}
  Elem& at(int r, int64_t c) { return e[static_cast<size_t>(r * cols + c)]; }
};

// Bit address of element idx of a row-major array in its storage format (docs/spec.md globals).
uint64_t elem_bit(DType t, spec::SubByte f, uint64_t idx) {
  const int vb = ptxgen::isa::value_bits(t);
  if (vb < 8 && !(t == DType::e2m1 && f == spec::SubByte::packed)) return idx / 16 * 128 + idx % 16 * static_cast<uint64_t>(vb);
  return idx * static_cast<uint64_t>(vb < 8 ? 4 : vb);
}

struct Cta {  // one CTA's state in the evaluation
  std::map<std::string, Matrix> tiles, regs;
  std::map<std::string, std::map<uint64_t, Elem>> tmem;  // allocation -> bit address -> element starting there
};

struct Eval {
  const spec::Program& p;
  Views views;
  std::map<std::string, Matrix> g;   // globals (inputs: values; outputs: the reference)
  std::map<std::string, DType> gtype;
  std::vector<Cta> cta;
  std::map<std::string, int64_t> size;  // the run's problem sizes
  // The bytes of the factor tensors the kernel wrote (quantize judges elements by its factors).
  const std::map<std::string, std::vector<uint8_t>>* factors = nullptr;
  int64_t m_tile = 0, n_tile = 0, kb = 0;  // the CTA's output tile, the loop's iteration
  explicit Eval(const spec::Program& pp) : p(pp), views(pp), cta(static_cast<size_t>(pp.cta_group)) {}

  // A load's or store's first row (i = 0) or column (1) in CTA r of a pair (docs/spec.md "at").
  int64_t pos(const spec::Op& o, size_t i, int r) const {
    const spec::AtStep& st = o.at_step[i];
    return o.at[i] + m_tile * st.m_tile + n_tile * st.n_tile + kb * st.k_block + r * o.per_cta[i];
  }

  const spec::SmemTile& tile(const std::string& n) const {
    for (const auto& t : p.smem)
      if (t.name == n) return t;
    throw std::runtime_error("no tile " + n);
  }
  static uint64_t tbit(int lane, int col, int bit) { return (uint64_t(lane) * 512 + uint64_t(col)) * 32 + uint64_t(bit); }

  Matrix read_view(int r, const std::string& n) {
    const View v = views.get(n);
    Matrix m(v.rows, v.row_elems());
    auto& t = cta[static_cast<size_t>(r)].tmem[v.alloc];
    for (int row = 0; row < m.rows; ++row)
      for (int64_t e = 0; e < m.cols; ++e) {
        Elem x;
        bool first = true;
        for (int lane : v.lanes_of(row, e)) {  // every replica must hold the element
          auto it = t.find(tbit(lane, v.column_of(row, e), v.bit_of(e)));
          Elem y = it == t.end() ? Elem{} : it->second;
          if (first) x = y;
          else if (!y.def || !x.def || y.code != x.code) x.def = false;
          first = false;
        }
        m.at(row, e) = x;
      }
    return m;
  }
  void write_view(int r, const std::string& n, Matrix& m) {
    const View v = views.get(n);
    auto& t = cta[static_cast<size_t>(r)].tmem[v.alloc];
    const int bits = 32 / v.packing;
    for (int row = 0; row < m.rows; ++row)
      for (int64_t e = 0; e < m.cols; ++e)
        for (int lane : v.lanes_of(row, e)) {
          const uint64_t at = tbit(lane, v.column_of(row, e), v.bit_of(e));
          for (auto it = t.lower_bound(at); it != t.end() && it->first < at + uint64_t(bits);) it = t.erase(it);
          if (m.at(row, e).def) t[at] = m.at(row, e);
        }
  }

  // The largest finite value of an 8- or 4-bit float (OCP MX v1.0 §5.3: e4m3 448, e5m2 57344, e2m1 6).
  static double fmax_of(DType t) { return t == DType::e4m3 ? 448.0 : t == DType::e5m2 ? 57344.0 : t == DType::e2m1 ? 6.0 : 0.0; }
  // A value converted to `to` (cvt.rn for f16/bf16; cvt.rn.satfinite for the 8- and 4-bit floats;
  // the bits for raw types), with its bound.
  static Elem convert(Elem x, DType to) {
    if (!x.def) return x;
    const double u = unit_roundoff(to);
    if (const double fmax = fmax_of(to); fmax > 0) {
      // Round to nearest even, a value beyond the largest finite one becomes it (.satfinite,
      // §9.7.9.21): the clamp moves no value further from the exact one, and the rounding adds
      // half an ulp (relative 2^-4, 2^-3, 2^-2 of e4m3, e5m2, e2m1 normals) or half the smallest
      // subnormal (2^-10, 2^-17, 0.25).
      using namespace ksim::num;
      const Format& f = to == DType::e4m3 ? kE4M3 : to == DType::e5m2 ? kE5M2 : kE2M1;
      const double ur = to == DType::e4m3 ? std::ldexp(1.0, -4) : to == DType::e5m2 ? std::ldexp(1.0, -3) : std::ldexp(1.0, -2);
      const double ua = to == DType::e4m3 ? std::ldexp(1.0, -10) : to == DType::e5m2 ? std::ldexp(1.0, -17) : 0.25;
      x.v = std::clamp(x.v, -fmax, fmax);
      x.err = x.err * (1 + ur) + ur * std::fabs(x.v) + ua;
      x.code = encode_rn(f, x.v);
      return x;
    }
    if (to == DType::bf16 || to == DType::f16) {
      x.err += u * (std::fabs(x.v) + x.err);
      x.code = ksim::num::encode_rn(to == DType::bf16 ? ksim::num::kBF16 : ksim::num::kF16, x.v);
    } else if (to == DType::f32) {
      x.code = ksim::num::bits_of(static_cast<float>(x.v));
    }
    return x;
  }
  // The tile row a placed load ("place", docs/spec.md "M = 64") puts the i-th row it reads in:
  // layout F (PTX ISA 9.1 §9.7.16.10.5.6) keeps row j of an M = 64 group in lane 32 (j / 16) +
  // j % 16 + the alignment, and a 128-row copy moves tile row l to lane l. -1: the load reads no
  // such row (a one-alignment load reads half of the tile's rows).
  static int placed_row(spec::Place pl, int rows, int i) {
    if (pl == spec::Place::rows) return i;
    const bool both = pl == spec::Place::layout_f;
    if (i >= (both ? rows : rows / 2)) return -1;
    const int slab = both ? i / 128 : i / 64, j = i % 64;
    const int align = both ? 16 * (i % 128 / 64) : pl == spec::Place::layout_f_16 ? 16 : 0;
    return 128 * slab + 32 * (j / 16) + j % 16 + align;
  }
  void load(int r, const spec::Op& o) {
    const auto& t = tile(o.dst.name);
    auto& tiles = cta[static_cast<size_t>(r)].tiles;
    // A placed load writes some of the tile's rows; the others keep what they held.
    Matrix m = o.place != spec::Place::rows && tiles.count(o.dst.name) ? tiles.at(o.dst.name) : Matrix(t.rows, t.cols);
    Matrix& src = g.at(o.src.name);
    const int64_t r0 = pos(o, 0, r), c0 = pos(o, 1, r);
    // Past the tensor's extents (run-time sizes) TMA fills zeros (§5.5).
    auto at = [&](int64_t row, int64_t col) {
      return row < src.rows && col < src.cols ? src.at(static_cast<int>(row), col) : Elem{true, 0, 0, 0};
    };
    for (int i = 0; i < t.rows; ++i) {
      const int row = placed_row(o.place, t.rows, i);
      if (row < 0) continue;
      for (int k = 0; k < t.cols; ++k) m.at(row, k) = t.major == ptxgen::isa::Major::k ? at(r0 + i, c0 + k) : at(r0 + k, c0 + i);
    }
    tiles[o.dst.name] = m;
  }

  void copy(int r, const spec::Op& o) {
    Matrix& src = cta[static_cast<size_t>(r)].tiles.at(o.src.name);
    Matrix dst = read_view(r, o.dst.name);
    const int r0 = o.rows ? static_cast<int>((*o.rows)[0]) : 0, r1 = o.rows ? static_cast<int>((*o.rows)[1]) : src.rows;
    const int64_t c0 = o.cols ? (*o.cols)[0] : 0;
    for (int row = r0; row < r1; ++row)
      for (int64_t e = 0; e < dst.cols; ++e) {
        const int dr = (r1 - r0 == 4) ? 32 * (row - r0) : row - r0;  // 4 rows (.4x256b): lanes 0, 32, 64, 96
        dst.at(dr, e) = src.at(row, c0 + e);
      }
    write_view(r, o.dst.name, dst);
  }

  // The factor of row m, block gi of a scale view for an operand of R rows (docs/spec.md "Scale
  // factors"): column (gi / 4) * 4 * ceil(R / 128) + m / 32, byte gi % 4, row m % 32.
  static Elem sf(Matrix& v, int R, int m, int gi) {
    const int64_t col = int64_t(gi / 4) * 4 * ((R + 127) / 128) + m / 32;
    return v.at(m % 32, col * 4 + gi % 4);
  }

  void mma(int r, const spec::Op& o) {
    Cta& c = cta[static_cast<size_t>(r)];
    Matrix D = read_view(r, o.d.name);
    const bool a_view = views.has(o.a.name);
    Matrix A = a_view ? read_view(r, o.a.name) : c.tiles.at(o.a.name);
    const DType at = a_view ? views.get(o.a.name).dtype : tile(o.a.name).dtype;
    const bool pair = p.cta_group == 2;
    Matrix& B0 = cta[0].tiles.at(o.b.name);
    Matrix& B1 = pair ? cta[1].tiles.at(o.b.name) : B0;
    const int64_t K = B0.cols;
    auto b_at = [&](int64_t n) -> Matrix& { return !pair || n < B0.rows ? B0 : B1; };
    auto b_row = [&](int64_t n) { return static_cast<int>(!pair || n < B0.rows ? n : n - B0.rows); };
    // Sparse A (docs/spec.md; §9.7.16.10.8): row m's stored elements expanded through its metadata,
    // one 4-bit index pair per chunk: 2:4 (1:2 for tf32; 4:8 in pairs for the packed e2m1 of the mxf4
    // kinds). The 8-bit and 4-bit kinds: the row's metadata elements (bytes) read low nibble first.
    // f16 and tf32 (docs/architecture.md item 17): K step s (8 chunks) in the view's 32-bit column s,
    // chunks 0-3 of rows m and m + 8 of each 16-row block in the row of m % 8 + 16 (m / 16), chunks
    // 4-7 in the row 8 on; rows m % 16 < 8 in its low 16 bits, the others in its high 16 bits.
    Matrix Afull = A;
    if (o.metadata) {
      Matrix M = read_view(r, o.metadata.name);
      Afull = Matrix(A.rows, K);
      const bool tf32 = at == DType::tf32;
      const bool permuted = tf32 || at == DType::f16 || at == DType::bf16;
      const int u = (at == DType::e2m1 && tile_format(o.a.name) == spec::SubByte::packed) ? 2 : 1;
      for (int m = 0; m < A.rows; ++m) {
        for (int64_t k = 0; k < K; ++k) Afull.at(m, k) = Elem{true, 0, 0, 0};
        const int64_t chunks = tf32 ? K / 2 : K / (4 * u);
        for (int64_t q = 0; q < chunks; ++q) {
          const int64_t c = q % 8;
          const Elem& mb = permuted ? M.at(m - m % 16 + m % 8 + 8 * static_cast<int>(c / 4), 4 * (q / 8) + 2 * ((m % 16) / 8) + (c % 4) / 2)
                                    : M.at(m, q / 2);
          if (!mb.def) {
            for (int64_t k = 0; k < K; ++k) Afull.at(m, k).def = false;
            break;
          }
          const uint32_t nib = (mb.code >> (4 * (q % 2))) & 0xF;
          if (tf32) {
            Afull.at(m, 2 * q + (nib == 0xE ? 1 : 0)) = A.at(m, q);
            continue;
          }
          const int i0 = static_cast<int>(nib & 3), i1 = static_cast<int>(nib >> 2);
          for (int e = 0; e < u; ++e) {
            Afull.at(m, q * 4 * u + i0 * u + e) = A.at(m, q * 2 * u + e);
            Afull.at(m, q * 4 * u + i1 * u + e) = A.at(m, q * 2 * u + u + e);
          }
        }
      }
    }
    Matrix SA, SB;
    if (o.scale_a) {
      SA = read_view(r, o.scale_a.name);
      SB = read_view(r, o.scale_b.name);
    }
    // A factor covers `vec` elements of K, counted in A's stored elements when A is sparse: the
    // block-scaled sparse instructions take one factor per instruction of K = 64 with vec 32
    // (Table 56), as the planner issues them.
    const int64_t block = o.metadata ? 2 * o.vec : o.vec;
    // Each instruction (K >= 8) rounds D to its type: f32, or f16 for an f16 accumulator view.
    const bool f16d = views.get(o.d.name).dtype == DType::f16;
    const double u_acc = std::ldexp(1.0, f16d ? -11 : -24) * static_cast<double>(K / 8 + 2);
    const int64_t brows = pair ? B0.rows + B1.rows : B0.rows;
    for (int m = 0; m < D.rows; ++m)
      for (int64_t n = 0; n < D.cols; ++n) {
        Elem acc{true, 0, 0, 0};
        double mag = 0;
        for (int64_t k = 0; k < K && acc.def; ++k) {
          const Elem& a = Afull.at(m, k);
          const Elem& b = b_at(n).at(b_row(n), k);
          double s = 1;
          if (o.scale_a) {
            const int gi = static_cast<int>(k / block);
            const Elem x = sf(SA, A.rows, m, gi), y = sf(SB, static_cast<int>(brows), static_cast<int>(n), gi);
            if (!x.def || !y.def) acc.def = false;
            s = x.v * y.v;
          }
          if (!a.def || !b.def) acc.def = false;
          acc.v += a.v * b.v * s;
          mag += std::fabs(a.v * b.v * s);
          acc.err += a.err * std::fabs(b.v * s);
        }
        if (o.accumulate || (o.accumulate_after_first && kb > 0)) {
          const Elem& old = D.at(m, n);
          if (!old.def) acc.def = false;
          acc.v += old.v;
          acc.err += old.err;
          mag += std::fabs(old.v);
        }
        if (at == DType::s8 || at == DType::u8) {  // .kind::i8: exact s32
          acc.code = static_cast<uint32_t>(static_cast<int64_t>(acc.v));
        } else {
          acc.err += u_acc * mag;
          acc.code = f16d ? ksim::num::encode_rn(ksim::num::kF16, acc.v) : ksim::num::bits_of(static_cast<float>(acc.v));
        }
        D.at(m, n) = acc;
      }
    write_view(r, o.d.name, D);
  }

  spec::SubByte tile_format(const std::string& n) const {
    for (const auto& t : p.smem)
      if (t.name == n) return t.format;
    return spec::SubByte::padded;
  }

  // amax (docs/spec.md, "Arithmetic"): dst[0] = max(dst[0], |x|) over the elements x of `a` a
  // store at `at` puts inside `of`. The kernel's f32 values lie within their bounds of the exact
  // ones, so its maximum lies within the largest bound of the largest |exact value|.
  void amax(int r, const spec::Op& o) {
    const Matrix& a = cta[static_cast<size_t>(r)].regs.at(o.a.name);
    const Matrix& of = g.at(o.of.name);
    Elem& out = g.at(o.dst.name).at(0, 0);
    const int64_t r0 = pos(o, 0, r), c0 = pos(o, 1, r);
    for (int i = 0; i < a.rows; ++i)
      for (int64_t j = 0; j < a.cols; ++j) {
        if (r0 + i >= of.rows || c0 + j >= of.cols) continue;
        const Elem& x = a.e[static_cast<size_t>(i * a.cols + j)];
        if (!x.def) out.def = false;
        out.v = std::max(out.v, std::fabs(x.v));
        out.err = std::max(out.err, x.err);
      }
    out.code = ksim::num::bits_of(static_cast<float>(out.v));
  }

  // Block quantization (docs/spec.md, "Arithmetic": "Block quantization"), from its definition:
  // block b of row i (vec columns of `of` from vec b) has amax = its largest |value| and the factor
  // X = 2^ceil(log2(amax / Fmax)) (ue8m0: its biased exponent clamped to 0 .. 254; 0 for a block
  // of zeros), or for nvfp4 X = e4m3(amax / Fmax) (RN, saturating; the kernel multiplies by the
  // f32 of 1 / Fmax and rounds that product, 2^-24 relative each way); the result is each value
  // over X (times 2^(127 - x), exact; nvfp4: times min(1 / X, FLT_MAX), rcp.rn and mul.rn, 2^-23
  // relative). The kernel's amax lies within [lo, hi] (each value's bound), so its factor lies
  // between the factors of lo and hi (both monotone): the factor byte's reference is that range,
  // and the result is evaluated with the factor the kernel chose (read from its output), so that
  // an element is judged on its own rounding, not on which side of a power of two its block fell.
  void quantize(int r, const spec::Op& o) {
    using namespace ksim::num;
    const Matrix& a = cta[static_cast<size_t>(r)].regs.at(o.a.name);
    const Matrix& of = g.at(o.of.name);
    Matrix& sf = g.at(o.dst.name);
    const spec::Quantize fmt = *o.quantize;
    const int vec = spec::quantize_vec(fmt);
    const bool e4m3_factor = fmt == spec::Quantize::nvfp4;
    const double fmax = fmax_of(gtype.at(o.of.name));
    const double inv_fmax = static_cast<double>(static_cast<float>(1.0 / fmax));
    auto factor = [&](double am) -> int {
      if (e4m3_factor) return static_cast<int>(encode_rn(kE4M3, std::min(am * inv_fmax, 448.0)));
      if (!(am > 0)) return 0;
      int e = 0;
      const double f = std::frexp(am / fmax, &e);  // am / Fmax = f 2^e, f in [0.5, 1)
      return std::clamp((f == 0.5 ? e - 1 : e) + 127, 0, 254);
    };
    auto value = [&](int x) { return e4m3_factor ? decode(kE4M3, static_cast<uint32_t>(x)) : std::ldexp(1.0, x - 127); };
    const int64_t r0 = pos(o, 0, r), c0 = pos(o, 1, r);
    const int64_t stripe = (of.cols + 4 * vec - 1) / (4 * vec);  // 512-byte blocks per 128 rows
    Matrix y(a.rows, a.cols);
    for (int i = 0; i < a.rows; ++i)
      for (int64_t j0 = 0; j0 < a.cols; j0 += vec) {
        double lo = 0, hi = 0;
        bool def = true;
        for (int64_t j = j0; j < j0 + vec && j < a.cols; ++j) {
          const Elem& x = a.e[static_cast<size_t>(i * a.cols + j)];
          def = def && x.def;
          lo = std::max(lo, std::fabs(x.v) - x.err);
          hi = std::max(hi, std::fabs(x.v) + x.err);
        }
        const int x_lo = factor(e4m3_factor ? lo * (1 - std::ldexp(1.0, -23)) : lo);
        const int x_hi = factor(e4m3_factor ? hi * (1 + std::ldexp(1.0, -23)) : hi);
        int x = x_lo;
        const int64_t row = r0 + i, b = (c0 + j0) / vec;
        const bool inside = row < of.rows && c0 + j0 < of.cols;
        if (inside) {
          const int64_t at = (row / 128 * stripe + b / 4) * 512 + row % 32 * 16 + row % 128 / 32 * 4 + b % 4;
          Elem& want = sf.at(static_cast<int>(at / 16), at % 16);
          want.def = def;
          want.v = (value(x_lo) + value(x_hi)) / 2;
          want.err = (value(x_hi) - value(x_lo)) / 2;
          want.code = static_cast<uint32_t>(x_lo);
          if (factors) {  // the kernel's factor, where it lies in the range (else the range's, and the byte fails)
            const int got = (*factors).at(o.dst.name)[static_cast<size_t>(at)];
            if (got >= x_lo && got <= x_hi) x = got;
          }
        }
        const double xv = value(x);
        const double scale = !e4m3_factor ? 1 / xv : xv > 0 ? 1 / xv : 3.4028234663852886e38;
        for (int64_t j = j0; j < j0 + vec && j < a.cols; ++j) {
          Elem e = a.e[static_cast<size_t>(i * a.cols + j)];
          e.v *= scale;
          e.err = e.err * scale + (e4m3_factor ? std::ldexp(1.0, -23) * std::fabs(e.v) : 0.0) + std::ldexp(1.0, -150);
          e.code = bits_of(static_cast<float>(e.v));
          y.at(i, j) = e;
        }
      }
    cta[static_cast<size_t>(r)].regs[o.regs.name] = std::move(y);
  }

  void op(const spec::Op& o) {
    if (o.kind == spec::OpKind::loop) {
      // max(1, ceil(size / block)) iterations, or `trips`.
      const int64_t trips = o.trips ? o.trips : std::max<int64_t>(1, (size.at(o.over.name) + o.block - 1) / o.block);
      for (kb = 0; kb < trips; ++kb)
        for (const auto& b : o.body) op(b);
      kb = 0;
      return;
    }
    for (int r = 0; r < p.cta_group; ++r) {
      Cta& c = cta[static_cast<size_t>(r)];
      switch (o.kind) {
        case spec::OpKind::load: load(r, o); break;
        case spec::OpKind::copy: copy(r, o); break;
        case spec::OpKind::mma:
          // A pair's MMA reads both CTAs' B tiles: run it once both have loaded (ops run in
          // order in both CTAs; the loads came earlier).
          mma(r, o);
          break;
        case spec::OpKind::tmem_load: c.regs[o.regs.name] = read_view(r, o.src.name); break;
        case spec::OpKind::fill: {
          // The elements of the view `like`, each the f32 nearest the value (docs/spec.md, "Register
          // sets carried across the loop"); nothing is read.
          const View v = views.get(o.like.name);
          Matrix y(v.rows, v.row_elems());
          Elem e;
          e.def = true;
          e.v = static_cast<double>(static_cast<float>(o.value[0].value_or(0)));
          e.code = ksim::num::bits_of(static_cast<float>(e.v));
          for (auto& x : y.e) x = e;
          c.regs[o.regs.name] = std::move(y);
          break;
        }
        case spec::OpKind::math: {
          if (o.activation) {  // of a register set (the rules refuse a constant)
            Matrix y = c.regs.at(o.a.name);
            for (auto& e : y.e) e = activation(*o.activation, e);
            if (o.glu) {  // gated: act(gate) * up, one mul.rn.f32 (docs/spec.md, "Activations")
              const Matrix& up = c.regs.at(o.b.name);
              for (size_t i = 0; i < y.e.size(); ++i) y.e[i] = math(ptxgen::MathFn::mul, false, y.e[i], up.e[i], Elem{});
            }
            c.regs[o.regs.name] = std::move(y);
            break;
          }
          // An operand is a register set or a constant (the f32 nearest the spec's number, exact;
          // in a packed function the 16-bit float nearest it: the number, bounded by that rounding).
          const std::array<const spec::Ref*, 3> in = {&o.a, &o.b, &o.c};
          const Matrix* shape = nullptr;
          for (size_t k = 0; k < 3 && !shape; ++k)
            if (!o.value[k] && *in[k]) shape = &c.regs.at(in[k]->name);
          const DType t = shape->t;
          auto at = [&](size_t k, size_t i) {
            if (o.value[k]) {
              Elem e;
              e.def = true;
              e.v = static_cast<double>(static_cast<float>(*o.value[k]));
              if (t != DType::f32) {
                const ksim::num::Format& hf = t == DType::bf16 ? ksim::num::kBF16 : ksim::num::kF16;
                e.v = *o.value[k];
                e.err = std::fabs(ksim::num::decode(hf, ksim::num::encode_rn(hf, e.v)) - e.v);
              }
              return e;
            }
            return *in[k] ? c.regs.at(in[k]->name).e[i] : shape->e[i];
          };
          Matrix y(shape->rows, shape->cols);
          if (o.fn == ptxgen::MathFn::convert) {  // to packed pairs: cvt.rn of each element
            for (size_t i = 0; i < y.e.size(); ++i) y.e[i] = convert(shape->e[i], o.convert_to);
            y.t = o.convert_to;
          } else {
            for (size_t i = 0; i < y.e.size(); ++i) y.e[i] = math(o.fn, o.approx, at(0, i), at(1, i), at(2, i), t);
            y.t = t;
          }
          c.regs[o.regs.name] = std::move(y);
          break;
        }
        case spec::OpKind::reduce: {
          // Each row's max or absmax (exact in f32: within the largest of the elements' bounds)
          // or sum (f32 adds in any order: (n - 1) 2^-24 of the sum of magnitudes, plus the
          // elements' bounds), in every element of the row.
          const Matrix& a = c.regs.at(o.a.name);
          Matrix y(a.rows, a.cols);
          for (int i = 0; i < a.rows; ++i) {
            Elem e;
            e.def = true;
            double mag = 0;
            for (int64_t j = 0; j < a.cols; ++j) {
              const Elem& x = a.e[static_cast<size_t>(i * a.cols + j)];
              if (!x.def) e.def = false;
              const double v = o.reduce_fn == ptxgen::ReduceFn::absmax ? std::fabs(x.v) : x.v;
              if (o.reduce_fn == ptxgen::ReduceFn::sum) {
                e.v += v;
                e.err += x.err;
                mag += std::fabs(v);
              } else {
                e.v = j == 0 ? v : std::max(e.v, v);
                e.err = std::max(e.err, x.err);
              }
            }
            if (o.reduce_fn == ptxgen::ReduceFn::sum) e.err += 1.01 * static_cast<double>(a.cols - 1) * std::ldexp(1.0, -24) * mag;
            e.code = ksim::num::bits_of(static_cast<float>(e.v));
            for (int64_t j = 0; j < a.cols; ++j) y.e[static_cast<size_t>(i * a.cols + j)] = e;
          }
          c.regs[o.regs.name] = std::move(y);
          break;
        }
        case spec::OpKind::read: {
          // Register (i, j) of `like`'s elements: the tensor's element at `at` + (i, j), along an
          // extent of 1 its only row (column); past the extents 0. Converted to f32 exactly.
          const Matrix& like = c.regs.at(o.like.name);
          const Matrix& src = g.at(o.src.name);
          const int64_t r0 = pos(o, 0, r), c0 = pos(o, 1, r);
          Matrix y(like.rows, like.cols);
          for (int i = 0; i < y.rows; ++i)
            for (int64_t j = 0; j < y.cols; ++j) {
              const int64_t row = src.rows == 1 ? 0 : r0 + i, col = src.cols == 1 ? 0 : c0 + j;
              Elem e;
              e.def = true;
              if (row < src.rows && col < src.cols) e.v = src.e[static_cast<size_t>(row * src.cols + col)].v;
              e.code = ksim::num::bits_of(static_cast<float>(e.v));
              y.at(i, j) = e;
            }
          c.regs[o.regs.name] = std::move(y);
          break;
        }
        case spec::OpKind::amax: amax(r, o); break;
        case spec::OpKind::quantize: quantize(r, o); break;
        case spec::OpKind::tmem_store: {
          Matrix m = c.regs.at(o.regs.name);
          const DType to = views.get(o.dst.name).dtype;
          for (auto& x : m.e) x = convert(x, to);
          write_view(r, o.dst.name, m);
          break;
        }
        case spec::OpKind::store: {
          Matrix& regs = c.regs.at(o.regs.name);
          Matrix& out = g.at(o.dst.name);
          const DType to = gtype.at(o.dst.name);
          const int64_t r0 = pos(o, 0, r), c0 = pos(o, 1, r);
          for (int i = 0; i < regs.rows; ++i)
            for (int64_t j = 0; j < regs.cols; ++j)
              if (r0 + i < out.rows && c0 + j < out.cols)  // a store writes inside the tensor's extents
                out.at(static_cast<int>(r0 + i), c0 + j) = regs.t == to ? regs.at(i, j) : convert(regs.at(i, j), to);
          break;
        }
        default: break;
      }
    }
  }

  void run() {
    // One CTA (pair) per output tile of a grid, each with its own shared and tensor memory.
    int64_t tiles_m = 1, tiles_n = 1;
    if (p.grid) {
      tiles_m = (size.at(p.grid->m.name) + p.grid->tile_m - 1) / p.grid->tile_m;
      tiles_n = (size.at(p.grid->n.name) + p.grid->tile_n - 1) / p.grid->tile_n;
    }
    for (m_tile = 0; m_tile < tiles_m; ++m_tile)
      for (n_tile = 0; n_tile < tiles_n; ++n_tile) {
        cta.assign(static_cast<size_t>(p.cta_group), Cta{});
        for (const auto& o : p.ops) op(o);
      }
  }
};

}  // namespace

ProgramSteps program_steps(const spec::Program& p) {
  ProgramSteps st;
  if (p.grid) st.tile_m = p.grid->tile_m, st.tile_n = p.grid->tile_n;
  for (const auto& o : p.ops)
    if (o.kind == spec::OpKind::loop && !o.over.name.empty()) st.k = o.over.name, st.block = o.block;
  // A grid dimension no op's position steps along (a tile as wide as the problem) keeps its size.
  bool m_steps = false, n_steps = false;
  std::function<void(const spec::Op&)> scan = [&](const spec::Op& o) {
    for (const auto& s : o.at_step) m_steps = m_steps || s.m_tile, n_steps = n_steps || s.n_tile;
    for (const auto& b : o.body) scan(b);
  };
  for (const auto& o : p.ops) scan(o);
  if (m_steps && p.grid) st.m = p.grid->m.name;
  if (n_steps && p.grid) st.n = p.grid->n.name;
  return st;
}

std::map<std::string, int64_t> ProgramSteps::sizes(int64_t m_size, int64_t n_size, int64_t kblocks, int64_t kpart) const {
  std::map<std::string, int64_t> z;
  if (!m.empty()) z[m] = m_size;
  if (!n.empty()) z[n] = n_size;
  if (!k.empty()) z[k] = kblocks * block - kpart;
  return z;
}

ProgramResult run_program(const ksim::Kernel& k, const spec::Program& prog, const json& mf, unsigned seed, const ksim::Options& o,
                          const std::map<std::string, int64_t>& sizes, const Inputs& inputs) {
  ProgramResult res;
  std::set<std::string> used;
  std::vector<std::string> input_names;
  std::mt19937 rng(seed);
  // The run's sizes (the spec's unless given) and the globals' extents in them.
  spec::Program p = prog;
  std::map<std::string, int64_t> size;
  for (auto& z : p.sizes) {
    if (sizes.count(z.name) && !z.of) z.value = sizes.at(z.name);
    size[z.name] = z.value;
  }
  for (auto& z : p.sizes)  // derived sizes follow the run's (docs/spec.md: ceil(of / div) * mul)
    if (z.of) size[z.name] = z.value = (size.at(z.of.name) + z.div - 1) / z.div * z.mul;
  for (auto& gt : p.globals) {
    if (!gt.rows_size.empty()) gt.rows = size.at(gt.rows_size);
    if (!gt.cols_size.empty()) gt.cols = size.at(gt.cols_size);
  }
  Eval ev(p);
  ev.size = size;
  std::map<std::string, bool> is_output, zeroed;
  bool tf32_sparse = false;
  std::function<void(const spec::Op&)> scan = [&](const spec::Op& op) {
    if (op.kind == spec::OpKind::store || op.kind == spec::OpKind::amax || op.kind == spec::OpKind::quantize) is_output[op.dst.name] = true;
    if (op.kind == spec::OpKind::amax) zeroed[op.dst.name] = true;  // the caller zeroes an amax (the kernel only raises it)
    if (op.kind == spec::OpKind::mma && op.metadata) {
      const DType at = ev.views.has(op.a.name) ? ev.views.get(op.a.name).dtype : ev.tile(op.a.name).dtype;
      tf32_sparse = tf32_sparse || at == DType::tf32;
    }
    for (const auto& b : op.body) scan(b);
  };
  for (const auto& op : p.ops) scan(op);
  ksim::Global gm;
  std::map<std::string, uint64_t> addr;
  for (const auto& gt : p.globals) {
    const int sb = spec::storage_bits(gt.dtype, gt.format);
    addr[gt.name] = gm.alloc(static_cast<size_t>((gt.rows * gt.cols * sb + 7) / 8), is_output[gt.name] && !zeroed[gt.name] ? 0xEE : 0x00);
    ev.gtype[gt.name] = gt.dtype;
    Matrix m(static_cast<int>(gt.rows), gt.cols);
    if (zeroed[gt.name])  // an amax starts at the 0 the caller wrote
      for (auto& e : m.e) e = Elem{true, 0, 0, 0};
    if (is_output[gt.name] && (gt.dtype == DType::ue8m0 || gt.dtype == DType::ue4m3))  // factors: the padding keeps its fill
      for (auto& e : m.e) e = Elem{true, dtype(dname(gt.dtype)).decode(0xEE), 0xEE, 0};
    if (!is_output[gt.name]) {
      std::vector<uint8_t>& mem = gm.at(addr[gt.name]);
      const Dtype dt = dtype(dname(gt.dtype));
      input_names.push_back(gt.name);
      const InputArray* given = input_for(inputs, used, gt.name, gt.rows, gt.cols);
      for (int64_t i = 0; i < gt.rows * gt.cols; ++i) {
        uint32_t b = given ? 0 : dt.random(rng);
        if (given) {
          b = input_bits(dt, gt.name, *given, i / gt.cols, i % gt.cols);
        } else if (gt.dtype == DType::b8) {  // every nibble a valid sparsity index (the metadata; other bytes are bits anyway)
          static const uint32_t pairs[] = {0x4, 0x8, 0xC, 0x9, 0xD, 0xE};
          auto nib = [&]() { return tf32_sparse ? (rng() % 2 ? 0x4u : 0xEu) : pairs[rng() % 6]; };
          b = nib() | nib() << 4;
        }
        put_bits(mem, elem_bit(gt.dtype, gt.format, static_cast<uint64_t>(i)), dt.bits, b);
        m.e[static_cast<size_t>(i)] = Elem{true, dt.decode(b), b, 0};
      }
    }
    ev.g[gt.name] = m;
  }
  inputs_all_used(inputs, used, input_names);
  ksim::Launch l;
  l.threads = mf.at("block")[0];
  l.dynamic_smem = mf.at("dynamic_shared_memory_bytes");
  for (size_t i = 0; i < 3; ++i) {
    l.cluster[i] = mf.at("cluster")[i];
    l.grid[i] = mf.at("grid")[i];
  }
  if (p.grid) {  // one CTA (pair) per tile of the run's sizes (the manifest's grid rule)
    l.grid[0] = static_cast<uint32_t>((size.at(p.grid->n.name) + p.grid->tile_n - 1) / p.grid->tile_n * p.cta_group);
    l.grid[1] = static_cast<uint32_t>((size.at(p.grid->m.name) + p.grid->tile_m - 1) / p.grid->tile_m);
  }
  for (const json& prm : mf.at("params")) {
    const std::string name = prm.at("name");
    if (prm.at("kind") == "u32") {  // a size parameter (derived sizes are none)
      l.params.push_back(value(name, static_cast<uint64_t>(size.at(name))));
    } else if (prm.at("kind") == "tensor_map") {
      const std::string tensor = prm.at("tensor");
      const spec::GlobalTensor* gt = nullptr;
      for (const auto& x : p.globals)
        if (x.name == tensor) gt = &x;
      for (const json& t : mf.at("tensor_maps"))
        if (t.at("param") == name) {
          // The map's extents follow the run's: the inner dimension in the map's units per row.
          const json& spec_gt = mf.at("tensors").at(tensor);
          const int64_t spec_cols = spec_gt.at("shape")[1], inner = t.at("global_dims")[0];
          const int64_t row_bytes = gt->cols * spec::storage_bits(gt->dtype, gt->format) / 8;
          l.params.push_back(map_param(name, tensor_map(t, addr.at(tensor), static_cast<uint64_t>(gt->cols * inner / spec_cols),
                                                        static_cast<uint64_t>(gt->rows), static_cast<uint64_t>(row_bytes))));
        }
    } else {
      l.params.push_back(value(name, addr.at(prm.at("tensor"))));
    }
  }
  try {
    res.stats = ksim::run(k, l, gm, o);
  } catch (const ksim::Error& e) {
    res.error = e.what();
    return res;
  }
  std::map<std::string, std::vector<uint8_t>> factors;
  for (const auto& gt : p.globals)
    if (is_output[gt.name] && (gt.dtype == DType::ue8m0 || gt.dtype == DType::ue4m3)) factors[gt.name] = gm.at(addr[gt.name]);
  ev.factors = &factors;
  ev.run();
  for (const auto& gt : p.globals) {
    if (!is_output[gt.name]) continue;
    const std::vector<uint8_t>& mem = gm.at(addr[gt.name]);
    const Dtype dt = dtype(dname(gt.dtype));
    Matrix& want = ev.g.at(gt.name);
    res.outputs += gt.rows * gt.cols;
    res.tensors.push_back(tensor_report(gt.name, gt.rows, gt.cols));
    TensorReport& tr = res.tensors.back();
    for (int64_t i = 0; i < gt.rows * gt.cols; ++i) {
      const Elem& w = want.e[static_cast<size_t>(i)];
      if (!w.def) continue;  // nothing defined lands there (e.g. lanes a 4-row copy leaves unwritten)
      const uint32_t b = get_bits(mem, elem_bit(gt.dtype, gt.format, static_cast<uint64_t>(i)), dt.bits);
      double err, ratio;
      if (is_float(gt.dtype)) {
        err = std::fabs(dt.decode(b) - w.v);
        const double bound = w.err + 1e-300;
        ratio = std::isnan(err) ? INFINITY : err / bound;
        if (!std::isnan(err) && err > res.max_err) res.max_err = err;
      } else {
        err = b == static_cast<uint32_t>(w.code & ((uint64_t{1} << dt.bits) - 1)) ? 0 : INFINITY;
        ratio = err;
      }
      // Raw outputs compare their bits: equal, bound 0.
      if (is_float(gt.dtype)) tally(tr, i / gt.cols, i % gt.cols, dt.decode(b), w.v, w.err + 1e-300);
      else tally(tr, i / gt.cols, i % gt.cols, b, w.code & ((uint64_t{1} << dt.bits) - 1), 0.0);
      ++res.checked;
      if (ratio > res.worst || std::isnan(ratio)) {
        res.worst = std::isnan(ratio) ? INFINITY : ratio;
        std::ostringstream s;
        s << gt.name << "(" << i / gt.cols << "," << i % gt.cols << ") = " << dt.decode(b) << " (bits " << b << "), expected "
          << w.v << " (bits " << w.code << ", bound " << w.err << ")";
        res.where = s.str();
      }
    }
  }
  return res;
}

}  // namespace ptxgen::sim
