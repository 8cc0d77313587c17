// ptxgen/math_fn.hpp — the elementwise functions of register sets (docs/spec.md, "Arithmetic"): the
// vocabulary the spec writes and the IR keeps, with what the PTX ISA says of each f32 instruction
// (§9.7.3): its operands, whether it has an exact (.rn) form, an approximate (.approx) form or
// both, and the documented maximum error of the approximate one.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

namespace ptxgen {

// lt ... ne compare (1.0 where a CMP b holds, else 0.0: set.CMP.f32.f32); select picks b where a
// is nonzero, else c (setp.ne.f32 then selp.f32). convert takes an f32 set to packed pairs of a
// 16-bit float (cvt.rn.bf16x2.f32 / cvt.rn.f16x2.f32, §9.7.9.21), the type the op names.
enum class MathFn : uint8_t { add, sub, mul, fma, min, max, neg, abs, exp2, log2, tanh, rsqrt, rcp, sqrt, lt, le, gt, ge, eq, ne, select, convert };

struct MathFnInfo {
  MathFn fn;
  std::string_view name;   // as the spec writes it ("exp2")
  int operands;            // a; a, b; a, b, c
  bool exact;              // a form without .approx (IEEE round to nearest, or exact: min, neg, ...)
  bool approx;             // a .approx form
  std::string_view ptx;    // the instruction's mnemonic before its type ("ex2"; "set.lt" of set.lt.f32.f32)
  std::string_view isa;    // "§9.7.3.21"
  // The documented error of the approximate form (the ISA's words), "" for exact functions.
  std::string_view bound;
};

inline const std::array<MathFnInfo, 22>& math_fns() {
  static const std::array<MathFnInfo, 22> k = {{
      {MathFn::add, "add", 2, true, false, "add", "§9.7.3.3", ""},
      {MathFn::sub, "sub", 2, true, false, "sub", "§9.7.3.4", ""},
      {MathFn::mul, "mul", 2, true, false, "mul", "§9.7.3.5", ""},
      {MathFn::fma, "fma", 3, true, false, "fma", "§9.7.3.6", ""},
      {MathFn::min, "min", 2, true, false, "min", "§9.7.3.11", ""},
      {MathFn::max, "max", 2, true, false, "max", "§9.7.3.12", ""},
      {MathFn::neg, "neg", 1, true, false, "neg", "§9.7.3.10", ""},
      {MathFn::abs, "abs", 1, true, false, "abs", "§9.7.3.9", ""},
      {MathFn::exp2, "exp2", 1, false, true, "ex2", "§9.7.3.21", "2 ulp from the correctly rounded result"},
      {MathFn::log2, "log2", 1, false, true, "lg2", "§9.7.3.20",
       "absolute error 2^-22 for inputs in (0.5, 2), relative error 2^-22 elsewhere"},
      {MathFn::tanh, "tanh", 1, false, true, "tanh", "§9.7.3.22", "relative error 2^-11"},
      {MathFn::rsqrt, "rsqrt", 1, false, true, "rsqrt", "§9.7.3.16", "relative error 2^-22.9"},
      {MathFn::rcp, "rcp", 1, true, true, "rcp", "§9.7.3.13", "1 ulp"},
      {MathFn::sqrt, "sqrt", 1, true, true, "sqrt", "§9.7.3.15", "relative error 2^-23"},
      // The ordered comparisons (§9.7.6.1): false, so 0.0, where either operand is NaN (ne too).
      {MathFn::lt, "lt", 2, true, false, "set.lt.f32", "§9.7.6.1", ""},
      {MathFn::le, "le", 2, true, false, "set.le.f32", "§9.7.6.1", ""},
      {MathFn::gt, "gt", 2, true, false, "set.gt.f32", "§9.7.6.1", ""},
      {MathFn::ge, "ge", 2, true, false, "set.ge.f32", "§9.7.6.1", ""},
      {MathFn::eq, "eq", 2, true, false, "set.eq.f32", "§9.7.6.1", ""},
      {MathFn::ne, "ne", 2, true, false, "set.ne.f32", "§9.7.6.1", ""},
      // b where a != 0 (ordered: a NaN selects c), else c; exact, the bits of b or c.
      {MathFn::select, "select", 3, true, false, "selp", "§9.7.6.3", ""},
      // f32 to two 16-bit floats in one register, each rounded to nearest even (docs/spec.md,
      // "Packed half-precision arithmetic").
      {MathFn::convert, "convert", 1, true, false, "cvt.rn", "§9.7.9.21", ""},
  }};
  return k;
}
inline const MathFnInfo& info(MathFn f) { return math_fns()[static_cast<size_t>(f)]; }

// The packed half-precision form of a function (§9.7.4: two f16 or bf16 values in one 32-bit
// register, each half computed on its own): add, sub, mul and fma rounded to nearest even (.rn;
// .bf16x2 add/sub/mul need sm_90 and PTX ISA 7.8, fma sm_80), min, max, neg and abs exact (sm_80
// for bf16x2), ex2 and tanh approximate only (.bf16x2: sm_90, PTX 7.8; ex2 of bf16x2 flushes
// subnormals, .ftz). Every target of the program level (sm_100a family) has all of them. The rest
// (log2, rsqrt, rcp, sqrt, the comparisons, select) has no packed instruction.
struct PackedInfo {
  bool has = false;
  std::string_view isa;  // "§9.7.4.4"
  // The approximate forms' documented error (§9.7.4.9-10): for f16 and for bf16.
  std::string_view bound_f16, bound_bf16;
};
inline PackedInfo packed_info(MathFn f) {
  switch (f) {
    case MathFn::add: return {true, "§9.7.4.1", "", ""};
    case MathFn::sub: return {true, "§9.7.4.2", "", ""};
    case MathFn::mul: return {true, "§9.7.4.3", "", ""};
    case MathFn::fma: return {true, "§9.7.4.4", "", ""};
    case MathFn::neg: return {true, "§9.7.4.5", "", ""};
    case MathFn::abs: return {true, "§9.7.4.6", "", ""};
    case MathFn::min: return {true, "§9.7.4.7", "", ""};
    case MathFn::max: return {true, "§9.7.4.8", "", ""};
    case MathFn::tanh: return {true, "§9.7.4.9", "absolute error 2^-10.987", "absolute error 2^-8"};
    case MathFn::exp2: return {true, "§9.7.4.10", "relative error 2^-9.9", "relative error 2^-7"};
    default: return {};
  }
}

// Reductions along each row of a register set (docs/spec.md, "Row reductions"): max and absmax
// exact (max.f32, abs.f32), sum rounded at each add (add.rn.f32) in an order the fragment decides.
enum class ReduceFn : uint8_t { max, sum, absmax };
inline constexpr std::array<std::string_view, 3> kReduceNames = {"max", "sum", "absmax"};

// Activations as named compositions of the elementwise functions (docs/spec.md, "Activations"):
// what a gemm's "activation" and a program's activation ops are lowered into, step by step.
enum class Activation : uint8_t { relu, sigmoid, silu, gelu_tanh, gelu };

// One function of a composition: temporary `out` (the last step's is the result) = fn of its
// operands, each the input (kInput), an earlier temporary (0, 1, ...) or the constant `value`
// (kConstant); `approx`: the function's .approx instruction (the composition is approximate).
struct ComposeStep {
  static constexpr int kInput = -1, kConstant = -2;
  MathFn fn;
  int out;
  std::array<int, 3> in;
  std::array<double, 3> value;
  bool approx;
};

struct ActivationInfo {
  Activation a;
  std::string_view name;     // as the spec writes it ("gelu_tanh")
  std::string_view formula;  // what it computes, exactly
  bool approx;               // built on approximate instructions: the spec says "approx": true
  std::vector<ComposeStep> steps;
};

inline const std::array<ActivationInfo, 5>& activations() {
  using S = ComposeStep;
  constexpr int X = S::kInput, K = S::kConstant;
  // log2(e), sqrt(2 / pi) and sqrt(1 / 2), to double precision (the f32 nearest each, or each product
  // of them, is what the kernel uses).
  constexpr double kLog2e = 1.4426950408889634, kSqrt2OverPi = 0.7978845608028654, kSqrtHalf = 0.7071067811865476;
  // Abramowitz & Stegun 7.1.26's p and a1 ... a5, as published.
  constexpr double kAsP = 0.3275911;
  constexpr std::array<double, 5> kAsA = {0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429};
  static const std::array<ActivationInfo, 5> k = {{
      // max.f32 returns the other operand for a NaN (§9.7.3.12): relu(NaN) = 0.
      {Activation::relu, "relu", "max(x, 0)", false, {{MathFn::max, 0, {X, K, 0}, {0, 0, 0}, false}}},
      // 1 / (1 + 2^(-x log2 e)): ex2.approx of large x gives +inf, and rcp of +inf 0.
      {Activation::sigmoid, "sigmoid", "1 / (1 + exp(-x))", true,
       {{MathFn::mul, 0, {X, K, 0}, {0, -kLog2e, 0}, false},
        {MathFn::exp2, 0, {0, 0, 0}, {0, 0, 0}, true},
        {MathFn::add, 0, {0, K, 0}, {0, 1, 0}, false},
        {MathFn::rcp, 0, {0, 0, 0}, {0, 0, 0}, true}}},
      {Activation::silu, "silu", "x / (1 + exp(-x))", true,
       {{MathFn::mul, 0, {X, K, 0}, {0, -kLog2e, 0}, false},
        {MathFn::exp2, 0, {0, 0, 0}, {0, 0, 0}, true},
        {MathFn::add, 0, {0, K, 0}, {0, 1, 0}, false},
        {MathFn::rcp, 0, {0, 0, 0}, {0, 0, 0}, true},
        {MathFn::mul, 1, {X, 0, 0}, {0, 0, 0}, false}}},
      // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), torch's gelu(approximate="tanh").
      {Activation::gelu_tanh, "gelu_tanh", "0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))", true,
       {{MathFn::mul, 0, {X, X, 0}, {0, 0, 0}, false},
        {MathFn::fma, 0, {0, K, K}, {0, 0.044715, 1}, false},
        {MathFn::mul, 0, {0, X, 0}, {0, 0, 0}, false},
        {MathFn::mul, 0, {0, K, 0}, {0, kSqrt2OverPi, 0}, false},
        {MathFn::tanh, 0, {0, 0, 0}, {0, 0, 0}, true},
        {MathFn::fma, 0, {0, K, K}, {0, 0.5, 0.5}, false},
        {MathFn::mul, 1, {X, 0, 0}, {0, 0, 0}, false}}},
      // 0.5 x (1 + erf(x / sqrt 2)), torch's gelu, with erf of Abramowitz & Stegun 7.1.26 (Handbook of
      // Mathematical Functions, 1964, after Hastings): for z >= 0, erf(z) = 1 - q(t) exp(-z^2) + e(z),
      // t = 1 / (1 + p z), q(t) = a1 t + ... + a5 t^5, |e(z)| <= 1.5e-7. Since x erf(x / sqrt 2) is even
      // in x, gelu(x) = 0.5 x + 0.5 |x| erf(|x| / sqrt 2), and no step depends on x's sign: t from
      // |x| (p / sqrt 2 folded in), -q by Horner with the coefficients negated, exp(-x^2 / 2) / 2 =
      // 2^(x^2 (-log2(e) / 2) - 1) (the halving is the exponent's -1, exact), h = 0.5 - q exp(-x^2 / 2) / 2
      // = erf / 2 by one fma, then 0.5 x + h |x|. From |x| = 5.55 on, q exp(-x^2 / 2) / 2 is below half
      // an ulp of 0.5: h = 0.5 and y = 0.5 x + 0.5 |x|, x or +0 for x < 0 (so the exponential's
      // underflow and x^2's overflow further out change nothing). Error bound: docs/spec.md, "Activations".
      {Activation::gelu, "gelu", "0.5 x (1 + erf(x / sqrt(2)))", true,
       {{MathFn::abs, 0, {X, 0, 0}, {0, 0, 0}, false},
        {MathFn::fma, 1, {0, K, K}, {0, kAsP * kSqrtHalf, 1}, false},
        {MathFn::rcp, 1, {1, 0, 0}, {0, 0, 0}, true},
        {MathFn::fma, 2, {1, K, K}, {0, -kAsA[4], -kAsA[3]}, false},
        {MathFn::fma, 2, {2, 1, K}, {0, 0, -kAsA[2]}, false},
        {MathFn::fma, 2, {2, 1, K}, {0, 0, -kAsA[1]}, false},
        {MathFn::fma, 2, {2, 1, K}, {0, 0, -kAsA[0]}, false},
        {MathFn::mul, 2, {2, 1, 0}, {0, 0, 0}, false},
        {MathFn::mul, 1, {X, X, 0}, {0, 0, 0}, false},
        {MathFn::fma, 1, {1, K, K}, {0, -0.5 * kLog2e, -1}, false},
        {MathFn::exp2, 1, {1, 0, 0}, {0, 0, 0}, true},
        {MathFn::fma, 2, {2, 1, K}, {0, 0, 0.5}, false},
        {MathFn::mul, 2, {2, 0, 0}, {0, 0, 0}, false},
        {MathFn::fma, 2, {X, K, 2}, {0, 0.5, 0}, false}}},
  }};
  return k;
}
inline const ActivationInfo& info(Activation a) { return activations()[static_cast<size_t>(a)]; }

}  // namespace ptxgen
