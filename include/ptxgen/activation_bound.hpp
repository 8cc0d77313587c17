// The error bounds of the fused epilogue's activations (docs/spec.md, "Epilogues" and
// "Activations"), one copy for the two checkers that carry an element's bound through the epilogue:
// the simulator's float64 reference (src/sim/gemm.cpp) and the GPU launcher's
// (tools/launcher/launcher.cu, built by nvcc from a copy of the tree with -I include). Plain C++
// over doubles, <cmath> only, so both compilers take it.
//
// Each function takes the activation's input x (the float64 value), y = act(x) (the float64
// reference value, which each caller computes on its own from the activation's definition, e.g.
// gelu from std::erfc: the references stay independent of each other and of the kernel's
// composition) and `in`, the bound entering the activation, and returns the bound leaving it: `in`
// times the function's largest slope (relu 1, sigmoid 1/4, silu 1.1, gelu_tanh and gelu 1.13), plus
// the f32 composition's own error (ptxgen/math_fn.hpp): add.rn 2^-24 relative; ex2.approx 2 ulp
// (PTX ISA §9.7.3.21), rcp.approx 1 ulp (§9.7.3.13) and the f32 log2(e); tanh.approx 2^-11
// relative (§9.7.3.22), and the roundings of each step's argument; plus 2^-126, where a result
// underflows.
#pragma once

#include <cmath>

namespace ptxgen::activation_bound {

inline constexpr double kU = 0x1p-24;     // f32 round to nearest: half an ulp, relative
inline constexpr double kTiny = 0x1p-126;  // f32's smallest normal

// max(x, 0): exact, slope 1.
inline double relu(double /*x*/, double /*y*/, double in) { return in; }

// 1 / (1 + 2^(-x log2 e)): ex2.approx (2 ulp), rcp.approx (1 ulp), the f32 log2(e) and the rounding
// of x log2(e) (|x| u of the exponent, relative to y).
inline double sigmoid(double x, double y, double in) { return 0.25 * in + y * (8 * kU + std::fabs(x) * kU) + kTiny; }

// x sigmoid(x): sigmoid's error plus the mul.rn (y = x sigmoid(x), so |x| sigmoid(x) = |y|).
inline double silu(double x, double y, double in) { return 1.1 * in + std::fabs(y) * (10 * kU + std::fabs(x) * kU) + kTiny; }

// 0.5 x (1 + tanh(w)), w = sqrt(2/pi) (x + 0.044715 x^3): tanh.approx's 2^-11 relative, w's roundings
// (8 u of |w| + 1), and the last fma and mul (2 u of y).
inline double gelu_tanh(double x, double y, double in) {
  const double w = 0.7978845608028654 * (x + 0.044715 * x * x * x), t = std::tanh(w);
  return 1.13 * in + 0.5 * std::fabs(x) * (std::fabs(t) * 0x1p-11 + 8 * kU * (std::fabs(w) + 1)) + 2 * kU * std::fabs(y) + kTiny;
}

// 0.5 x (1 + erf(x / sqrt 2)). The kernel computes 0.5 x + 0.5 |x| erf(|x| / sqrt 2) with Abramowitz
// & Stegun 7.1.26's erf, 1 - q(t) e, e = exp(-x^2 / 2), t = 1 / (1 + p |x| / sqrt 2), within 1.5e-7
// (so 0.5 |x| 1.5e-7 of gelu); then each step's error to first order, in units of u: t relative 5
// (the fma's rounding and its constant's, rcp.approx's 1.5 ulp); q by Horner, each fma's rounding
// times the power of t it is scaled by, plus t's error times t q'(t) and the f32 coefficients' own;
// e relative 5 (ex2.approx, 2.5 ulp) plus the exponent's error, 3 roundings of 0.72 x^2 and one of 1
// (times ln 2); then h = 0.5 - q e / 2 (fma), h |x| (mul) and 0.5 x + h |x| (fma), a rounding each.
inline double gelu(double x, double y, double in) {
  const double a = std::fabs(x), t = 1 / (1 + 0.3275911 / std::sqrt(2.0) * a), e = std::exp(-0.5 * x * x);
  const double c[] = {0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429};
  double h = c[4], rounding = 0, slope = 0, coefs = 0, tk = 1;
  for (int i = 3; i >= 0; --i) h = h * t + c[i], rounding += std::fabs(h) * std::pow(t, i + 1);
  for (int i = 0; i < 5; ++i) {
    tk *= t;
    slope += (i + 1) * c[i] * tk;
    coefs += std::fabs(static_cast<double>(static_cast<float>(c[i])) - c[i]) * tk;
  }
  const double q = h * t, dq = kU * (5 * std::fabs(slope) + rounding + q) + coefs, half = 0.5 - 0.5 * q * e;
  const double own = a * (0.5 * e * (dq + q * kU * (5.7 + 1.51 * x * x)) + kU * half) + kU * half * a + kU * std::fabs(y);
  return 1.13 * in + 0.5 * a * 1.5e-7 + 1.05 * own + kTiny;
}

}  // namespace ptxgen::activation_bound
