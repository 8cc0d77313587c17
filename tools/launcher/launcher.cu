// ptxgen-launch: runs the kernels of a ptxgen launch header on a GPU, through the header's own
// typed launch functions, and checks and times them.
//
//   ptxgen-launch CASE [--m M --n N --k K] [--iters N] [--seed S] [--tolerance T]
//   ptxgen-launch --list          the header's gemm kernels (plain and with a fused bias), their epilogues
//   ptxgen-launch --bad-input     what the header refuses on this GPU, and that the context survives
//   ptxgen-launch --selfcheck     no GPU: the fused epilogues' reference and bound against an f32
//                                 emulation of the kernels' arithmetic, and mutations of it (MXFP8's
//                                 quantization and factor function too)
//
// Built with the header it runs (nvcc -DPTXGEN_LAUNCH_HEADER='"kernels.hpp"' -I DIR, which
// tools/h200-grid.py does): every gemm kernel the header holds is a CASE, named after its spec
// (PTXGEN_KERNELS_GEMMS, and PTXGEN_KERNELS_EPILOGUE_GEMMS for those that take fused epilogue
// inputs after D: C, a bias, a residual).
// For a CASE it fills fresh random inputs, poisons D and a guard region after it, launches with
// ptxgen::NAME(...) (the header checks the arguments, loads the module, encodes the tensor maps
// and calls cuLaunchKernelEx), checks every element against a reference (float64 on the CPU for
// small problems; cuBLAS for large ones where cuBLAS has the types, else a float64 GPU kernel), and
// times ptxgen::launch of a prepared launch and cuBLAS with CUDA events (median of --iters after
// warm-up). One JSON line on stdout; exit 0 when the result is within tolerance, 1 when it is not,
// 2 on bad input, 3 on a CUDA error or a refused launch (the header's words printed), 4 on a
// timeout (a kernel that does not finish in 20 s).
//
// Fused epilogues (docs/spec.md, "Epilogues": D = activation(alpha A·B + beta C + bias) + residual):
// the header says which inputs a kernel takes and their shapes (the bias 1 x n: along N, m x 1:
// along M; C and the residual m x n); the activation and the constants are not in the header, so
// tools/h200-grid.py writes epilogues.hpp beside it from each spec's manifest ("epilogue_ops",
// "epilogue_constants" and the bias's dims), PTXGEN_LAUNCH_EPILOGUES(X): X(NAME, "alpha beta_c bias
// gelu_tanh residual", "n", alpha, beta). For a fused kernel the launcher fills a random bias, C and
// residual of their types (uniform in [-2, 2)), scales A and
// B so that A·B has a standard deviation near 2 (the activations' curved region), and checks every
// element of D against the float64 evaluation of the same formulas (relu = max(x, 0), sigmoid =
// 1 / (1 + exp(-x)), silu = x sigmoid(x), gelu_tanh = 0.5 x (1 + tanh(sqrt(2/pi)(x + 0.044715 x^3))),
// gelu = 0.5 x (1 + erf(x / sqrt 2)), the C library's erf; the kernel's is Abramowitz & Stegun 7.1.26)
// applied, in the manifest's order, to the float64 product (CPU or GPU) or to cuBLAS's f32 product
// (large problems), within a bound per element carried through each step as src/sim/gemm.cpp
// does: the accumulator's (k/8 + 1 roundings of 2^-22 of sum |a b| each: truncating adders; 2^-13
// for 8-bit float inputs; doubled when the reference is cuBLAS's f32 product), times each function's
// slope, plus each function's
// own documented error (add.rn 2^-24 relative; ex2.approx 2 ulp, rcp.approx 1 ulp, tanh.approx
// 2^-11 relative, and the roundings of their arguments), then D's rounding (2^-8 bf16, 2^-11 f16,
// 2^-24 f32). The case passes when no element is further from the reference than its bound
// (--tolerance T: T times the bound; "worst_ratio" is the largest error / bound), nothing is left
// unwritten or non-finite and the guard after D is untouched. Plain kernels keep the relative
// Frobenius error below 1e-2 (--tolerance: that limit).
//
// MXFP8 ("quantize": "mxfp8", the op "mxfp8" last; docs/spec.md "Block-quantized D"): D is e4m3 or
// e5m2, each block of 32 columns of a row divided by its power-of-two factor, whose ue8m0 byte goes
// to the output SFD (128x4 layout). The launcher fills SFD and a guard after it with 0xA5 (no factor
// the kernel computes) and checks, from the format's definition as src/sim/gemm.cpp does, each
// factor byte within the factors of the block's float64 amax range, each element within its bound
// of its value over the factor the kernel chose (saturated at Fmax), and every other byte of SFD
// untouched (check_mxfp8).
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <vector>

#ifndef PTXGEN_LAUNCH_HEADER
#define PTXGEN_LAUNCH_HEADER "kernels.hpp"
#endif
#define PTXGEN_CUDA_TYPES 1  // the header's bf16, f16, e4m3, e5m2 are CUDA's own
#include PTXGEN_LAUNCH_HEADER
#include "ptxgen/activation_bound.hpp"  // the activations' bounds, the simulator's (-I include)

#ifndef PTXGEN_KERNELS_GEMMS
#error "the launch header must be named kernels.hpp (its X-macro lists are PTXGEN_KERNELS_GEMMS / _PROGRAMS)"
#endif
#ifndef PTXGEN_KERNELS_EPILOGUE_GEMMS  // a header from before fused epilogue inputs: no kernel takes one
#define PTXGEN_KERNELS_EPILOGUE_GEMMS(X)
#endif
#ifndef PTXGEN_KERNELS_GROUPED_GEMMS  // a header from before grouped GEMM: no kernel is grouped
#define PTXGEN_KERNELS_GROUPED_GEMMS(X)
#endif
// Each kernel's fused epilogue, written beside the header by tools/h200-grid.py prepare from the
// manifests: X(NAME, "alpha bias gelu_tanh", "n", 0.5, 1) (the epilogue's ops in order, the bias's
// axis or "", alpha and beta).
#if __has_include("epilogues.hpp")
#include "epilogues.hpp"
#define PTXGEN_LAUNCH_HAVE_EPILOGUES 1
#else
#define PTXGEN_LAUNCH_EPILOGUES(X)
#define PTXGEN_LAUNCH_HAVE_EPILOGUES 0
#endif

namespace {

[[noreturn]] void die(int code, const std::string& msg) {
  std::fprintf(stderr, "ptxgen-launch: %s\n", msg.c_str());
  std::exit(code);
}

void check(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return;
  const char* name = "?";
  cuGetErrorName(r, &name);
  die(3, std::string(what) + " failed: " + name);
}
void check(cudaError_t r, const char* what) {
  if (r == cudaSuccess) return;
  die(3, std::string(what) + " failed: " + cudaGetErrorName(r));
}
void check(cublasStatus_t r, const char* what) {
  if (r == CUBLAS_STATUS_SUCCESS) return;
  die(3, std::string(what) + " failed: cuBLAS status " + std::to_string(static_cast<int>(r)));
}
#define CK(x) check((x), #x)
// A call of the header: its CUresult, and its words when it refuses.
#define CKH(x)                                                                    \
  do {                                                                            \
    const CUresult r_ = (x);                                                      \
    if (r_ != CUDA_SUCCESS) die(3, std::string(#x) + ": " + ptxgen::last_error()); \
  } while (0)

// ---- element types --------------------------------------------------------------------------
enum class T { f16, bf16, tf32, f32, e4m3, e5m2, s8, u8, s32 };
T parse_type(const std::string& s) {
  if (s == "f16") return T::f16;
  if (s == "bf16") return T::bf16;
  if (s == "tf32") return T::tf32;
  if (s == "f32") return T::f32;
  if (s == "e4m3") return T::e4m3;
  if (s == "e5m2") return T::e5m2;
  if (s == "s8") return T::s8;
  if (s == "u8") return T::u8;
  if (s == "s32") return T::s32;
  die(2, "the launcher does not handle element type " + s);
}
size_t bytes_of(T t) {
  switch (t) {
    case T::f16:
    case T::bf16: return 2;
    case T::e4m3:
    case T::e5m2:
    case T::s8:
    case T::u8: return 1;
    default: return 4;
  }
}
bool is_int(T t) { return t == T::s8 || t == T::u8 || t == T::s32; }

// Writes the element nearest `v` at p[i] and returns its exact value.
double store(T t, void* p, size_t i, double v) {
  switch (t) {
    case T::f16: {
      __half h = __double2half(v);
      static_cast<__half*>(p)[i] = h;
      return __half2float(h);
    }
    case T::bf16: {
      __nv_bfloat16 h = __double2bfloat16(v);
      static_cast<__nv_bfloat16*>(p)[i] = h;
      return __bfloat162float(h);
    }
    case T::tf32: {  // keep the 10 mantissa bits tf32 has: the MMA ignores the rest
      float f = static_cast<float>(v);
      uint32_t u;
      std::memcpy(&u, &f, 4);
      u &= 0xFFFFE000u;
      std::memcpy(&f, &u, 4);
      static_cast<float*>(p)[i] = f;
      return f;
    }
    case T::f32: static_cast<float*>(p)[i] = static_cast<float>(v); return static_cast<float>(v);
    case T::e4m3: {
      __nv_fp8_e4m3 h(static_cast<float>(v));
      static_cast<__nv_fp8_e4m3*>(p)[i] = h;
      return static_cast<float>(h);
    }
    case T::e5m2: {
      __nv_fp8_e5m2 h(static_cast<float>(v));
      static_cast<__nv_fp8_e5m2*>(p)[i] = h;
      return static_cast<float>(h);
    }
    case T::s8: static_cast<int8_t*>(p)[i] = static_cast<int8_t>(v); return static_cast<int8_t>(v);
    case T::u8: static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(v); return static_cast<uint8_t>(v);
    case T::s32: static_cast<int32_t*>(p)[i] = static_cast<int32_t>(v); return static_cast<int32_t>(v);
  }
  return 0;
}

double load(T t, const void* p, size_t i) {
  switch (t) {
    case T::f16: return __half2float(static_cast<const __half*>(p)[i]);
    case T::bf16: return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
    case T::tf32:
    case T::f32: return static_cast<const float*>(p)[i];
    case T::e4m3: return static_cast<float>(static_cast<const __nv_fp8_e4m3*>(p)[i]);
    case T::e5m2: return static_cast<float>(static_cast<const __nv_fp8_e5m2*>(p)[i]);
    case T::s8: return static_cast<const int8_t*>(p)[i];
    case T::u8: return static_cast<const uint8_t*>(p)[i];
    case T::s32: return static_cast<const int32_t*>(p)[i];
  }
  return 0;
}

// A float64 reference on the GPU, for types cuBLAS's GemmEx does not take; `mag` (when not null)
// gets sum |a b| of each element, the scale of its rounding errors (a fused epilogue's bound).
__global__ void ref_gemm(const double* a, const double* b, double* d, double* mag, int64_t m, int64_t n, int64_t k) {
  __shared__ double as[16][17], bs[16][17];
  const int64_t row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
  double acc = 0, abs_acc = 0;
  for (int64_t k0 = 0; k0 < k; k0 += 16) {
    as[threadIdx.y][threadIdx.x] = (row < m && k0 + threadIdx.x < k) ? a[row * k + k0 + threadIdx.x] : 0;
    bs[threadIdx.y][threadIdx.x] = (col < n && k0 + threadIdx.y < k) ? b[(k0 + threadIdx.y) * n + col] : 0;
    __syncthreads();
    for (int j = 0; j < 16; ++j) {
      acc += as[threadIdx.y][j] * bs[j][threadIdx.x];
      abs_acc += fabs(as[threadIdx.y][j] * bs[j][threadIdx.x]);
    }
    __syncthreads();
  }
  if (row < m && col < n) {
    d[row * n + col] = acc;
    if (mag) mag[row * n + col] = abs_acc;
  }
}

double median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void sync_with_timeout(CUstream s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (;;) {
    CUresult r = cuStreamQuery(s);
    if (r == CUDA_SUCCESS) return;
    if (r != CUDA_ERROR_NOT_READY) check(r, "kernel execution");
    if (std::chrono::steady_clock::now() > deadline) die(4, "the kernel did not finish within 20 s (a hang)");
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}


// A matrix as the header's KernelInfo describes it: logical rows x cols, row-major when its cols
// are contiguous, `ld` the elements between consecutive non-contiguous indices.
struct Matrix {
  T type;
  int64_t rows, cols;
  bool row_major;
  int64_t ld;
  size_t elements() const { return static_cast<size_t>(row_major ? rows * ld : cols * ld); }
  size_t index(int64_t r, int64_t c) const { return static_cast<size_t>(row_major ? r * ld + c : c * ld + r); }
};

// The device buffers and sizes a launch function takes.
struct Bufs {
  CUdeviceptr a = 0, b = 0, d = 0, c = 0, bias = 0, residual = 0, alpha = 0, beta = 0, d_scale = 0, amax = 0, sfd = 0;  // c ... sfd: a fused epilogue's
  CUdeviceptr sfa = 0, sfb = 0;  // block-wise f32 factors (BLOCKWISE_GEMMS)
  int64_t lda = 0, ldb = 0, m = 0, n = 0, k = 0;
};
// A fused epilogue input of type T (EPILOGUE_GEMMS rows), or nothing where the kernel takes none (void).
template <class T>
auto input(CUdeviceptr p) {
  if constexpr (std::is_void_v<T>) return std::tuple<>();
  else return std::tuple<const T*>(ptxgen::device_pointer<const T>(p));
}
// The amax output (EPILOGUE_GEMMS rows), or nothing where the kernel has none (void).
template <class T>
auto output(CUdeviceptr p) {
  if constexpr (std::is_void_v<T>) return std::tuple<>();
  else return std::tuple<T*>(ptxgen::device_pointer<T>(p));
}
// The arguments of an EPILOGUE_GEMMS kernel's launch function, D and the inputs, the amax and SFD after it.
template <class TA, class TB, class TD, class TC, class TBIAS, class TR, class TAL, class TBE, class TS, class TAMAX, class TSFD>
auto epilogue_args(const Bufs& b) {
  return std::tuple_cat(std::make_tuple(ptxgen::device_pointer<const TA>(b.a), b.lda, ptxgen::device_pointer<const TB>(b.b),
                                        b.ldb, ptxgen::device_pointer<TD>(b.d)),
                        input<TC>(b.c), input<TBIAS>(b.bias), input<TR>(b.residual), input<TAL>(b.alpha), input<TBE>(b.beta),
                        input<TS>(b.d_scale), output<TAMAX>(b.amax), output<TSFD>(b.sfd),
                        std::make_tuple(ptxgen::size::m{b.m}, ptxgen::size::n{b.n}, ptxgen::size::k{b.k}));
}
// The arguments of a BLOCKWISE_GEMMS kernel's launch function (docs/spec.md, "Block-wise f32
// factors"): an EPILOGUE_GEMMS row's, with the factors SFA and SFB (const float*) before the sizes.
template <class Tuple, size_t... I>
auto with_factors(const Tuple& e, const Bufs& b, std::index_sequence<I...>) {
  constexpr size_t n = std::tuple_size<Tuple>::value;
  return std::tuple_cat(std::make_tuple(std::get<I>(e)...),
                        std::make_tuple(ptxgen::device_pointer<const float>(b.sfa), ptxgen::device_pointer<const float>(b.sfb)),
                        std::make_tuple(std::get<n - 3>(e), std::get<n - 2>(e), std::get<n - 1>(e)));
}
template <class TA, class TB, class TD, class TC, class TBIAS, class TR, class TAL, class TBE, class TS, class TAMAX, class TSFD>
auto blockwise_args(const Bufs& b) {
  const auto e = epilogue_args<TA, TB, TD, TC, TBIAS, TR, TAL, TBE, TS, TAMAX, TSFD>(b);
  return with_factors(e, b, std::make_index_sequence<std::tuple_size<decltype(e)>::value - 3>());
}
// A gemm launch function's sizes, each its own type (ptxgen::size::m ...), from a Bufs.
#define SIZES(B) ptxgen::size::m{(B).m}, ptxgen::size::n{(B).n}, ptxgen::size::k{(B).k}

struct Options {
  int64_t m = 0, n = 0, k = 0;  // 0: the spec's
  int64_t groups = 0;           // a grouped kernel's (GROUPED_GEMMS); 0: 8
  int64_t align = 0;            // a contiguous grouped kernel's segments' (the spec's groups.align); 0: 128
  int iters = 30;
  unsigned seed = 1;
  double tolerance = -1;
};

// Leading dimensions: the spec's at the spec's sizes; for other sizes the contiguous extent
// rounded up to 16 bytes (the spec's default rule).
Matrix operand(const ptxgen::TensorInfo& t, int64_t rows, int64_t cols, bool same) {
  Matrix x{parse_type(t.dtype), rows, cols, t.cols_contiguous, 0};
  const int64_t contiguous = x.row_major ? cols : rows, eb = static_cast<int64_t>(bytes_of(x.type));
  x.ld = same ? t.ld : (contiguous * eb + 15) / 16 * 16 / eb;
  return x;
}

// Fresh random inputs: floats uniform in [-scale, scale) rounded to the type, integers in [-4, 4]
// (u8 0..8). Returns the exact values, row-major (rows x cols).
std::vector<double> fill(const Matrix& x, std::vector<char>& h, std::mt19937_64& rng, double scale = 1.0) {
  std::uniform_real_distribution<double> uf(-scale, scale);
  std::uniform_int_distribution<int> ui(-4, 4), uu(0, 8);
  h.assign(x.elements() * bytes_of(x.type), 0);
  std::vector<double> r(static_cast<size_t>(x.rows * x.cols));
  for (int64_t i = 0; i < x.rows; ++i)
    for (int64_t j = 0; j < x.cols; ++j) {
      const double v = x.type == T::s8 ? ui(rng) : x.type == T::u8 ? uu(rng) : uf(rng);
      r[static_cast<size_t>(i * x.cols + j)] = store(x.type, h.data(), x.index(i, j), v);
    }
  return r;
}

// ref = A·B in float64 (exact for these inputs up to k of about 2^20); `mag` (when not null) gets
// sum |a b| of each element.
void cpu_gemm(const std::vector<double>& ra, const std::vector<double>& rb, std::vector<double>& ref, int64_t m,
              int64_t n, int64_t k, std::vector<double>* mag = nullptr) {
  ref.assign(size_t(m) * n, 0.0);
  if (mag) mag->assign(size_t(m) * n, 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t kk = 0; kk < k; ++kk) {
      const double a = ra[size_t(i) * k + kk];
      if (a == 0) continue;
      const double* brow = &rb[size_t(kk) * n];
      double* drow = &ref[size_t(i) * n];
      for (int64_t j = 0; j < n; ++j) drow[j] += a * brow[j];
      if (!mag) continue;
      double* mrow = &(*mag)[size_t(i) * n];
      for (int64_t j = 0; j < n; ++j) mrow[j] += std::fabs(a * brow[j]);
    }
}

// ---- fused epilogues -----------------------------------------------------------------------------

// The D scale the launcher passes (a multiplication that rounds, and keeps an e4m3 D in range);
// exact in f32.
constexpr float kDScale = 0.75f;

// A kernel's fused epilogue: its ops in the manifest's order ("bias", then the activation), the
// bias's axis and type.
struct Epilogue {
  std::vector<std::string> ops;
  bool bias = false, bias_m = false;  // a bias input; along M (one element per row of D), else along N
  // A gated activation (swiglu, geglu; docs/spec.md "Epilogues"): B's n rows are the gate's n/2 and
  // up's n/2, D is m x n/2 with D[i][j] = act(P[i][j]) P[i][j + n/2], P = A·B + bias (along N).
  bool gated = false;
  T bias_type = T::f32;
  std::string bias_dtype;
  double alpha = 1, beta = 1;          // as the kernel multiplies: rounded to f32
  // "alpha": "input", "beta": "input" (docs/spec.md, "Epilogues"): the kernel reads the factor from
  // the input alpha (beta), one f32; run_case draws a random one and passes it.
  bool alpha_input = false, beta_input = false;
  bool c = false, residual = false;    // C and residual inputs (m x n)
  bool amax = false;                   // the amax output (one f32): max |value| before D's conversion
  bool d_scale = false;                // D's scale input (one f32; the launcher passes kDScale)
  // A block-quantized D ("quantize": "mxfp8", docs/spec.md "Block-quantized D"): the op "mxfp8",
  // last; D e4m3 or e5m2 over each 32-column block's ue8m0 factor, the factors in the output SFD.
  bool mxfp8 = false;
  T c_type = T::f32, residual_type = T::f32;
  bool fused() const { return !ops.empty(); }
  std::string describe() const {
    std::string s;
    for (const std::string& o : ops)
      s += (s.empty() ? "" : " ") + (o == "bias"    ? "bias(" + std::string(bias_m ? "m" : "n") + ", " + bias_dtype + ")"
                                     : o == "alpha" ? "alpha(" + (alpha_input ? std::string("input") : std::to_string(alpha)) + ")"
                                     : o == "beta_c" ? "beta_c(" + (beta_input ? std::string("input") : std::to_string(beta)) + ")"
                                                     : o);
    return s;
  }
};

// The epilogue of a kernel: the ops and axis from epilogues.hpp, the bias's type and shape from the
// header's tensors (each checked against the other).
Epilogue epilogue_of(const ptxgen::KernelInfo& info) {
  Epilogue e;
  auto tensor = [&](const char* name) -> const ptxgen::TensorInfo* {
    for (size_t i = 3; i < info.tensor_count; ++i)
      if (std::strcmp(info.tensors[i].name, name) == 0) return &info.tensors[i];
    return nullptr;
  };
  const bool has_bias = tensor("bias") != nullptr;
  const char* ops = nullptr;
  const char* along = "";
  double alpha = 1, beta = 1;
#define ROW(NAME, OPS, ALONG, ALPHA, BETA) \
  if (std::strcmp(#NAME, info.name) == 0) ops = OPS, along = ALONG, alpha = ALPHA, beta = BETA;
  PTXGEN_LAUNCH_EPILOGUES(ROW)
#undef ROW
  if (!ops) {
    if (PTXGEN_LAUNCH_HAVE_EPILOGUES)
      die(2, std::string("epilogues.hpp has no row for ") + info.name + " (tools/h200-grid.py prepare writes one per kernel)");
    if (has_bias || tensor("C") || tensor("residual"))
      die(2, std::string(info.name) + " takes epilogue inputs, and its epilogue is not known without epilogues.hpp "
                                      "(tools/h200-grid.py prepare writes it beside the header)");
    return e;
  }
  for (const char* p = ops; *p;) {
    const char* q = p;
    while (*q && *q != ' ') ++q;
    if (q > p) e.ops.emplace_back(p, q);
    p = *q ? q + 1 : q;
  }
  for (const std::string& o : e.ops)
    if (o != "bias" && o != "relu" && o != "sigmoid" && o != "silu" && o != "gelu_tanh" && o != "gelu" && o != "alpha" && o != "c" &&
        o != "beta_c" && o != "residual" && o != "amax" && o != "d_scale" && o != "swiglu" && o != "geglu" &&
        o != "mxfp8")
      die(2, std::string(info.name) + ": the launcher does not evaluate the epilogue op " + o);
  e.alpha = static_cast<float>(alpha);
  e.beta = static_cast<float>(beta);
  auto has = [&](const char* o) { return std::find(e.ops.begin(), e.ops.end(), o) != e.ops.end(); };
  e.c = has("c") || has("beta_c");
  e.residual = has("residual");
  e.amax = has("amax");
  e.d_scale = has("d_scale");
  // An input alpha (beta) is its op with no constant in epilogues.hpp (1 there) and the header's
  // one-f32 input of its name.
  e.alpha_input = tensor("alpha") != nullptr;
  e.beta_input = tensor("beta") != nullptr;
  if ((e.alpha_input && (!has("alpha") || alpha != 1)) || (e.beta_input && (!has("beta_c") || beta != 1)))
    die(2, std::string(info.name) + ": epilogues.hpp and the header disagree on an input alpha or beta");
  for (const char* x : {"alpha", "beta"})
    if (const ptxgen::TensorInfo* t = tensor(x); t && (std::string(t->dtype) != "f32" || t->rows != 1 || t->cols != 1))
      die(2, std::string(info.name) + ": the header's " + x + " is not one f32");
  if (e.d_scale != (tensor("d_scale") != nullptr))
    die(2, std::string(info.name) + ": epilogues.hpp and the header disagree on D's scale");
  if (e.amax != (tensor("amax") != nullptr))
    die(2, std::string(info.name) + ": epilogues.hpp and the header disagree on the amax");
  e.mxfp8 = has("mxfp8");
  if (e.mxfp8 != (tensor("SFD") != nullptr))
    die(2, std::string(info.name) + ": epilogues.hpp and the header disagree on SFD (the MXFP8 factors)");
  if (e.mxfp8 && (e.ops.back() != "mxfp8" || std::string(tensor("SFD")->dtype) != "ue8m0" ||
                  (std::string(info.tensors[2].dtype) != "e4m3" && std::string(info.tensors[2].dtype) != "e5m2")))
    die(2, std::string(info.name) + ": MXFP8 is the epilogue's last op, D e4m3 or e5m2 and SFD ue8m0; the header says D " +
               info.tensors[2].dtype + ", SFD " + tensor("SFD")->dtype);
  for (const auto& [listed, name, type] : {std::make_tuple(e.c, "C", &e.c_type), std::make_tuple(e.residual, "residual", &e.residual_type)}) {
    const ptxgen::TensorInfo* t = tensor(name);
    if (listed != (t != nullptr))
      die(2, std::string(info.name) + ": epilogues.hpp and the header disagree on the input " + name);
    if (t && (t->rows != info.m || t->cols != info.tensors[2].cols))
      die(2, std::string(info.name) + ": the header's " + name + " is not shaped like D");
    if (t) *type = parse_type(t->dtype);
  }
  e.gated = !e.ops.empty() && std::find_if(e.ops.begin(), e.ops.end(), [](const std::string& o) { return o == "swiglu" || o == "geglu"; }) != e.ops.end();
  if (e.gated && (info.tensors[2].cols * 2 != info.n || info.tensors[2].rows != info.m))
    die(2, std::string(info.name) + ": a gated epilogue's D is m x n/2, the header's D is " + std::to_string(info.tensors[2].rows) +
               " x " + std::to_string(info.tensors[2].cols));
  e.bias = std::find(e.ops.begin(), e.ops.end(), "bias") != e.ops.end();
  if (e.bias != has_bias)
    die(2, std::string(info.name) + (has_bias ? ": the header passes a bias, epilogues.hpp lists no \"bias\""
                                              : ": epilogues.hpp lists \"bias\", the header passes none"));
  if (e.bias) {
    const ptxgen::TensorInfo& t = *tensor("bias");
    e.bias_m = std::string(along) == "m";
    if (e.bias_m ? t.cols != 1 || t.rows != info.m : t.rows != 1 || t.cols != info.n)
      die(2, std::string(info.name) + ": epilogues.hpp says the bias lies along " + along + ", the header's bias is " +
                 std::to_string(t.rows) + " x " + std::to_string(t.cols));
    e.bias_type = parse_type(t.dtype);
    e.bias_dtype = t.dtype;
  }
  return e;
}

// One element through the epilogue in float64: x = A·B, b its bias element; `bound` enters as x's
// bound and leaves as the result's, before D's rounding. The same bound as src/sim/gemm.cpp's: each
// activation's from include/ptxgen/activation_bound.hpp, the one copy both include (the error
// entering the function times its largest slope, plus the f32 composition's own: ex2.approx,
// rcp.approx, tanh.approx and the roundings; gelu's Abramowitz & Stegun 7.1.26 1.5e-7 of erf).
// c and r: the element's C and residual. alpha's mul.rn scales the error entering it and rounds
// once; beta C (fma.rn), the residual (add.rn) and D's scale (mul.rn) round once each. `amax`:
// where the epilogue has one, the value and bound it sees (before D's scale). A gated epilogue
// (swiglu, geglu) takes up = P[i][j + n/2] too, with its bias element b_up and its bound: its bias
// is added as the gate's, then the gate's activation (silu, gelu_tanh) and the product y = act(x)
// up, whose bound is act's times |up|, plus |act(x)| times up's, their product, and the mul.rn's
// half ulp.
double apply_epilogue(const Epilogue& e, double x, double b, double c, double r, double& bound,
                      std::pair<double, double>* amax = nullptr, double up = 0, double b_up = 0, double up_bound = 0) {
  const double u = std::ldexp(1.0, -24);
  auto sig = [](double v) { return 1 / (1 + std::exp(-v)); };
  // The reference values from the functions' definitions (gelu's erf the C library's); the bounds
  // from ptxgen/activation_bound.hpp, the simulator's own.
  auto activate = [&](const std::string& f) {
    namespace ab = ptxgen::activation_bound;
    double y = x;
    if (f == "relu") {
      y = std::max(x, 0.0);
      bound = ab::relu(x, y, bound);
    } else if (f == "sigmoid") {
      y = sig(x);
      bound = ab::sigmoid(x, y, bound);
    } else if (f == "silu") {
      y = x * sig(x);
      bound = ab::silu(x, y, bound);
    } else if (f == "gelu_tanh") {
      y = 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
      bound = ab::gelu_tanh(x, y, bound);
    } else if (f == "gelu") {
      y = 0.5 * x * std::erfc(-x / std::sqrt(2.0));
      bound = ab::gelu(x, y, bound);
    }
    x = y;
  };
  for (const std::string& f : e.ops) {
    if (f == "alpha") {
      x *= e.alpha;
      bound = std::fabs(e.alpha) * bound + u * std::fabs(x);
    } else if (f == "c" || f == "beta_c") {
      x += (f == "c" ? 1.0 : e.beta) * c;
      bound += u * std::fabs(x);
    } else if (f == "residual") {
      x += r;
      bound += u * std::fabs(x);
    } else if (f == "amax") {
      if (amax) *amax = {x, bound};
    } else if (f == "d_scale") {  // mul.rn.f32 by D's scale, after the amax
      x *= kDScale;
      bound = kDScale * bound + u * std::fabs(x);
    } else if (f == "bias") {
      x += b;
      bound += u * std::fabs(x);
      up += b_up;
      up_bound += u * std::fabs(up);
    } else if (f == "mxfp8") {  // last: the value and bound go to the block check (check_mxfp8)
    } else if (f == "swiglu" || f == "geglu") {
      activate(f == "swiglu" ? "silu" : "gelu_tanh");
      const double y = x * up;
      bound = bound * std::fabs(up) + std::fabs(x) * up_bound + bound * up_bound + u * std::fabs(y);
      x = y;
    } else {
      activate(f);
    }
  }
  return x;
}

// The accumulator's bound per unit of sum |a b|: k/8 + 1 additions (the smallest K of one
// instruction is 8) each off by at most 2^-22 of it (f32 accumulators, four times round-to-nearest's
// 2^-24: the tensor cores' adders truncate and align internally), 2^-13 for 8-bit float inputs
// (Hopper's fp8 accumulation keeps about 14 bits), 2^-10 for f16 accumulators.
double accumulator_bound(T a_type, const char* accumulator, int64_t k) {
  const std::string acc = accumulator;
  const double unit = acc == "f16"                              ? std::ldexp(1.0, -10)
                      : a_type == T::e4m3 || a_type == T::e5m2 ? std::ldexp(1.0, -13)
                                                               : std::ldexp(1.0, -22);
  return static_cast<double>((k + 7) / 8 + 1) * unit;
}

// D's rounding: relative (u_out: half an ulp) and absolute (half the smallest subnormal step where
// results may be that small: f16's 2^-24, e4m3's 2^-9, e5m2's 2^-16). e4m3 keeps 3 bits of
// significand (half an ulp 2^-4 of the value), e5m2 2 (2^-3).
double output_unit(T d) {
  switch (d) {
    case T::bf16: return std::ldexp(1.0, -8);
    case T::f16: return std::ldexp(1.0, -11);
    case T::e4m3: return std::ldexp(1.0, -4);
    case T::e5m2: return std::ldexp(1.0, -3);
    case T::f32: return std::ldexp(1.0, -24);
    default: return 0.0;
  }
}
double output_floor(T d) {
  switch (d) {
    case T::f16: return std::ldexp(1.0, -25);
    case T::bf16: return std::ldexp(1.0, -134);
    case T::e4m3: return std::ldexp(1.0, -10);
    case T::e5m2: return std::ldexp(1.0, -17);
    default: return std::ldexp(1.0, -150);
  }
}
// The largest finite value of an 8-bit float D, where its conversion saturates (cvt .satfinite),
// and MXFP8's Fmax; 0 for the other types (no saturation).
double fp8_max(T d) { return d == T::e4m3 ? 448.0 : d == T::e5m2 ? 57344.0 : 0.0; }

// ---- MXFP8 (docs/spec.md, "Block-quantized D") --------------------------------------------------
// What the launcher fills SFD with before the launch: no factor the kernel computes (at most 254),
// so a byte the kernel never writes (the layout's padding) still reads 0xA5 after it.
constexpr unsigned char kSfdFill = 0xA5;
// The ue8m0 byte of a block whose largest |value| is a: the biased exponent of 2^ceil(log2(a / Fmax)),
// clamped to 0 .. 254, 0 for a = 0. ceil(log2) exactly, without dividing (a quotient rounds, and
// underflows for the smallest a): frexp gives a = fa 2^ea and Fmax = ff 2^ef, fa and ff in [0.5, 1),
// so a / Fmax = (fa / ff) 2^(ea - ef) with fa / ff in (0.5, 2), whose ceil(log2) is 1 above 1 and 0
// otherwise: ceil(log2(a / Fmax)) = ea - ef + (fa > ff).
int mx_factor(double a, double fmax) {
  if (!(a > 0)) return 0;
  int ea = 0, ef = 0;
  const double fa = std::frexp(a, &ea), ff = std::frexp(fmax, &ef);
  return std::clamp(ea - ef + (fa > ff ? 1 : 0) + 127, 0, 254);
}
// Factor (i, b) of a quantized D of `cols` columns in the 128x4 layout: ceil(cols / 128) blocks of
// 512 bytes per 128 rows, row i % 32 at 16 bytes, (i % 128) / 32 at 4, the block's b % 4.
size_t sfd_offset(int64_t i, int64_t b, int64_t cols) {
  return size_t(((i / 128) * ((cols + 127) / 128) + b / 4) * 512 + (i % 32) * 16 + ((i % 128) / 32) * 4 + b % 4);
}
size_t sfd_bytes(int64_t rows, int64_t cols) { return size_t((rows + 127) / 128 * ((cols + 127) / 128) * 512); }

// A bias of `count` elements of type t, uniform in [-2, 2) rounded to it; returns the exact values.
std::vector<double> fill_bias(T t, int64_t count, std::vector<char>& h, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  h.assign(size_t(count) * bytes_of(t), 0);
  std::vector<double> r(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) r[size_t(i)] = store(t, h.data(), size_t(i), u(rng));
  return r;
}

// The byte D is filled with before a launch, to find elements the kernel never wrote: 0xFE (an
// improbable value in every type: bf16/f16 -1.7e38/-inf's neighbours, an e5m2 NaN), but for an
// e4m3 D its NaN 0xFF, since 0xFE is -448, the value an MXFP8 block's largest element rounds to.
unsigned char poison_byte(T type) { return type == T::e4m3 ? 0xFF : 0xFE; }

// Element-wise comparison of a fused kernel's D with the float64 epilogue of ref (= A·B, with mag =
// sum |a b|): the largest error / bound, where it is, and the relative Frobenius error.
struct FusedCheck {
  double worst = 0, rel = 0, max_abs = 0;
  double amax_lo = 0, amax_hi = 0;  // the amax's range: max |ref| -/+ each element's bound before D's rounding
  size_t unwritten = 0, nonfinite = 0;
  size_t sfd_blocks = 0, sfd_wrong = 0, sfd_padding_written = 0;  // MXFP8: factors checked, out of range, padding bytes changed
  std::string where;
  double num = 0, den = 0;  // the Frobenius sums behind rel
  // An element's error against its bound (a NaN counts as infinitely far); `what` describes it,
  // called only for a new worst (formatting every element would cost seconds at 4096 x 8192).
  template <class What>
  void compare(double v, double r, double bound, What&& what) {
    const double ratio = std::isnan(v) ? INFINITY : std::fabs(v - r) / bound;
    if (std::isfinite(v)) num += (v - r) * (v - r), den += r * r, max_abs = std::max(max_abs, std::fabs(v - r));
    if (ratio > worst) worst = ratio, where = what();
  }
  void fail(const std::string& what) {  // a wrong factor, a written padding byte: shown unless one came before
    if (worst < INFINITY) worst = INFINITY, where = what;
  }
};
// A quantized D (MXFP8), block by block, from the format's definition as src/sim/gemm.cpp checks
// it: q_ref and q_bound are each element's float64 value and bound before the quantization (D's
// m x cols, row-major); block (i, b)'s amax lies within [max(|ref| - bound), max(|ref| + bound)]
// over its 32 elements, so its factor byte x must lie within [mx_factor(lo), mx_factor(hi)] (the
// factor is monotone in amax); each element, decoded, within its bound times 2^(127 - x) (the
// kernel's exact mul.rn by that power) of clamp(ref 2^(127 - x), +-Fmax), plus D's own rounding;
// every byte of `sfd` (the layout and a guard after it) that no factor owns keeps kSfdFill.
void check_mxfp8(const Matrix& D, const std::vector<char>& hd, const std::vector<double>& q_ref,
                 const std::vector<double>& q_bound, const std::vector<unsigned char>& sfd, FusedCheck& c) {
  const double fmax = fp8_max(D.type), u_out = output_unit(D.type), floor_out = output_floor(D.type);
  const int64_t vec = 32;
  std::vector<bool> owned(sfd.size(), false);
  char buf[240];
  for (int64_t i = 0; i < D.rows; ++i)
    for (int64_t b = 0; b < D.cols / vec; ++b) {
      double lo = 0, hi = 0;
      for (int64_t j = b * vec; j < (b + 1) * vec; ++j) {
        const size_t ij = size_t(i * D.cols + j);
        lo = std::max(lo, std::fabs(q_ref[ij]) - q_bound[ij]);
        hi = std::max(hi, std::fabs(q_ref[ij]) + q_bound[ij]);
      }
      const size_t at = sfd_offset(i, b, D.cols);
      owned[at] = true;
      ++c.sfd_blocks;
      const int x = sfd[at], x_lo = mx_factor(lo, fmax), x_hi = mx_factor(hi, fmax);
      if (x < x_lo || x > x_hi) {
        ++c.sfd_wrong;
        std::snprintf(buf, sizeof buf, "SFD(%lld,%lld) = %d, expected %d%s (the block's amax within [%.9g, %.9g])",
                      static_cast<long long>(i), static_cast<long long>(b), x, x_lo,
                      x_hi == x_lo ? "" : (" to " + std::to_string(x_hi)).c_str(), lo, hi);
        c.fail(buf);
        continue;  // its elements are divided by a wrong factor: the factor's error is the one to show
      }
      const double scale = std::ldexp(1.0, 127 - x);
      for (int64_t j = b * vec; j < (b + 1) * vec; ++j) {
        const size_t ij = size_t(i * D.cols + j);
        const double v = load(D.type, hd.data(), D.index(i, j)), r = std::clamp(q_ref[ij] * scale, -fmax, fmax);
        const double bound = q_bound[ij] * scale * (1 + u_out) + u_out * std::fabs(r) + floor_out;
        if (!std::isfinite(v)) ++c.nonfinite;
        c.compare(v, r, bound, [&] {
          std::snprintf(buf, sizeof buf, "D(%lld,%lld) = %.9g (times 2^%d), expected %.9g (bound %.3g)",
                        static_cast<long long>(i), static_cast<long long>(j), v, x - 127, r, bound);
          return std::string(buf);
        });
      }
    }
  for (size_t at = 0; at < sfd.size(); ++at)
    if (!owned[at] && sfd[at] != kSfdFill && c.sfd_padding_written++ == 0) {
      std::snprintf(buf, sizeof buf, "SFD byte %zu (%s) = 0x%02X, written", at,
                    at < sfd_bytes(D.rows, D.cols) ? "padding of the 128x4 layout" : "past the layout", sfd[at]);
      c.fail(buf);
    }
}
// C and residual (when the epilogue has them): m x n row-major. sfd: a quantized D's factors as the
// kernel left them (the layout, then a guard).
FusedCheck check_fused(const Epilogue& e, const Matrix& D, const std::vector<char>& hd, const std::vector<double>& ref,
                       const std::vector<double>& mag, const std::vector<double>& bias, double acc_unit, bool blas_ref,
                       const std::vector<double>& cv = {}, const std::vector<double>& rv = {},
                       const std::vector<unsigned char>& sfd = {}) {
  FusedCheck c;
  const double u_out = output_unit(D.type), floor_out = output_floor(D.type), u = std::ldexp(1.0, -24);
  const double fmax = fp8_max(D.type);  // an 8-bit D saturates there (0: no saturation)
  std::vector<unsigned char> poison(bytes_of(D.type), poison_byte(D.type));
  std::vector<double> q_ref, q_bound;  // MXFP8: each value and bound before the quantization
  if (e.mxfp8) q_ref.assign(size_t(D.rows * D.cols), 0.0), q_bound.assign(size_t(D.rows * D.cols), 0.0);
  // ref and mag are A·B's m x n; a gated D is m x n/2, its element j paired with ref's j + n/2.
  const int64_t width = e.gated ? 2 * D.cols : D.cols;
  for (int64_t i = 0; i < D.rows; ++i)
    for (int64_t j = 0; j < D.cols; ++j) {
      const size_t idx = D.index(i, j), at = size_t(i) * size_t(width) + size_t(j), up = at + size_t(D.cols);
      const size_t dij = size_t(i) * size_t(D.cols) + size_t(j);  // C's and the residual's element (shaped like D)
      std::pair<double, double> seen{0, 0};
      if (std::memcmp(&hd[idx * bytes_of(D.type)], poison.data(), poison.size()) == 0) ++c.unwritten;
      const double v = load(D.type, hd.data(), idx);
      // cuBLAS's f32 product has its own accumulation error, and its rounding to f32.
      double bound = acc_unit * mag[at] * (blas_ref ? 2 : 1) + (blas_ref ? u * std::fabs(ref[at]) : 0.0);
      const double up_bound = e.gated ? acc_unit * mag[up] * (blas_ref ? 2 : 1) + (blas_ref ? u * std::fabs(ref[up]) : 0.0) : 0.0;
      double r = apply_epilogue(e, ref[at], e.bias ? bias[size_t(e.bias_m ? i : j)] : 0.0, e.c ? cv[dij] : 0.0,
                                e.residual ? rv[dij] : 0.0, bound, &seen, e.gated ? ref[up] : 0.0,
                                e.gated && e.bias ? bias[size_t(j + D.cols)] : 0.0, up_bound);
      c.amax_lo = std::max(c.amax_lo, std::fabs(seen.first) - seen.second);
      c.amax_hi = std::max(c.amax_hi, std::fabs(seen.first) + seen.second);
      if (e.mxfp8) {  // checked per block below, against the factor the kernel chose
        q_ref[dij] = r, q_bound[dij] = bound;
        continue;
      }
      if (fmax > 0) r = std::clamp(r, -fmax, fmax);  // cvt .satfinite: clamping moves no value further from another
      bound = bound * (1 + u_out) + u_out * std::fabs(r) + floor_out;
      if (!std::isfinite(v)) {
        if (c.nonfinite++ == 0) c.worst = INFINITY, c.where = "D(" + std::to_string(i) + "," + std::to_string(j) + ") is not finite";
        continue;
      }
      c.compare(v, r, bound, [&] {
        char buf[200];
        std::snprintf(buf, sizeof buf, "D(%lld,%lld) = %.9g, expected %.9g (bound %.3g)", static_cast<long long>(i),
                      static_cast<long long>(j), v, r, bound);
        return std::string(buf);
      });
    }
  if (e.mxfp8) check_mxfp8(D, hd, q_ref, q_bound, sfd, c);
  c.rel = c.den > 0 ? std::sqrt(c.num / c.den) : std::sqrt(c.num);
  return c;
}

// Device 0's primary context, made current on this thread; the device too where asked.
CUcontext primary_context(CUdevice* device = nullptr) {
  CK(cuInit(0));
  CUdevice dev;
  CK(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CK(cuCtxSetCurrent(ctx));
  if (device) *device = dev;
  return ctx;
}

// The comparison of D with its reference: the relative Frobenius error, the largest error, and the
// non-finite elements (left out of the sums).
struct ErrorSum {
  double num = 0, den = 0, max_abs = 0;
  size_t nonfinite = 0;
  void add(double v, double r) {
    if (!std::isfinite(v)) {
      ++nonfinite;
      return;
    }
    num += (v - r) * (v - r);
    den += r * r;
    max_abs = std::max(max_abs, std::fabs(v - r));
  }
  double rel() const { return den > 0 ? std::sqrt(num / den) : std::sqrt(num); }
};

// The median of `iters` launches of `launch` on stream `s`, each between two events, after 3 warm-up launches.
template <class Launch>
double median_ms(CUstream s, int iters, Launch&& launch) {
  CUevent e0, e1;
  CK(cuEventCreate(&e0, CU_EVENT_DEFAULT));
  CK(cuEventCreate(&e1, CU_EVENT_DEFAULT));
  for (int i = 0; i < 3; ++i) launch();
  sync_with_timeout(s);
  std::vector<float> ms;
  for (int i = 0; i < iters; ++i) {
    CK(cuEventRecord(e0, s));
    launch();
    CK(cuEventRecord(e1, s));
    sync_with_timeout(s);
    float t = 0;
    CK(cuEventElapsedTime(&t, e0, e1));
    ms.push_back(t);
  }
  return median(ms);
}

// Runs one gemm kernel of the header: `call` is ptxgen::NAME, `prepare` ptxgen::NAME_prepare.
template <class Launch, class Call, class Prepare>
int run_case(const ptxgen::KernelInfo& info, Call call, Prepare prepare, const Options& opt) {
  const int64_t m = opt.m ? opt.m : info.m, n = opt.n ? opt.n : info.n, k = opt.k ? opt.k : info.k;
  const bool same = m == info.m && n == info.n && k == info.k;
  primary_context();
  Matrix A = operand(info.tensors[0], m, k, same), B = operand(info.tensors[1], k, n, same);
  Epilogue ep = epilogue_of(info);
  // A gated epilogue's D is m x n/2 (the header refuses an odd n).
  const int64_t dn = ep.gated ? n / 2 : n;
  Matrix D{parse_type(info.tensors[2].dtype), m, dn, true, dn};
  const bool fused = ep.fused();
  const size_t a_bytes = A.elements() * bytes_of(A.type), b_bytes = B.elements() * bytes_of(B.type);
  const size_t d_bytes = D.elements() * bytes_of(D.type), guard = 1 << 16;
  size_t free_b = 0, total_b = 0;
  CK(cuMemGetInfo(&free_b, &total_b));
  // A fused reference needs sum |a b| too (8 bytes an element on the GPU, or |A| and |B| for cuBLAS).
  const size_t extra = fused ? a_bytes + b_bytes + 8 * size_t(m) * n + 4 * size_t(m + n) + 8 * size_t(m) * n : 0;
  if (a_bytes + b_bytes + 2 * (d_bytes + guard) + 8 * (size_t(m) * k + size_t(k) * n + size_t(m) * n) + extra > free_b)
    die(2, "the problem does not fit in device memory (" + std::to_string(free_b >> 20) + " MiB free)");

  std::mt19937_64 rng(opt.seed);
  std::vector<char> ha, hb, hbias, hc, hres;
  // A fused epilogue's inputs: A and B uniform in [-s, s) with s^4 k / 9 = 4 (A·B's standard
  // deviation about 2, where the activations bend), the bias, C and the residual in [-2, 2).
  const double scale = fused ? std::min(1.0, std::sqrt(6.0 / std::sqrt(double(k)))) : 1.0;
  const std::vector<double> ra = fill(A, ha, rng, scale), rb = fill(B, hb, rng, scale);
  const std::vector<double> rbias = ep.bias ? fill_bias(ep.bias_type, ep.bias_m ? m : n, hbias, rng) : std::vector<double>();
  const std::vector<double> rc = ep.c ? fill_bias(ep.c_type, m * n, hc, rng) : std::vector<double>();
  const std::vector<double> rres = ep.residual ? fill_bias(ep.residual_type, m * n, hres, rng) : std::vector<double>();
  // An input alpha or beta: a random f32 of either sign, magnitude in [0.5, 2) with a random 23-bit
  // fraction (so that its products round), drawn after every tensor; the reference uses it.
  float alpha_in = 1, beta_in = 1;
  auto random_factor = [&] {
    const uint64_t bits = rng();
    return static_cast<float>((bits & 1 ? -1.0 : 1.0) * std::ldexp(1.0 + std::ldexp(double(bits >> 41), -23), int(bits >> 1 & 1) - 1));
  };
  if (ep.alpha_input) ep.alpha = alpha_in = random_factor();
  if (ep.beta_input) ep.beta = beta_in = random_factor();
  // Block-wise f32 factors (docs/spec.md, "Block-wise f32 factors"): SFA [ceil(k / 128)][m], SFB
  // [ceil(n / 128)][ceil(k / 128)], each a positive f32 2^e (1 + f), e in -8 .. 7, drawn last. The
  // reference is A' B' with A'[i][x] = A[i][x] SFA[x / 128][i] and B'[x][j] = B[x][j] SFB[j / 128][x / 128]
  // in float64: the spec's formula (every product of the sum taken with its two factors).
  bool blockwise = false;
  for (unsigned i = 0; i < info.tensor_count; ++i) blockwise = blockwise || (std::string(info.tensors[i].name) == "SFA" && std::string(info.tensors[i].dtype) == "f32");
  const int64_t kb = (k + 127) / 128, nb = (n + 127) / 128;
  std::vector<float> hsfa, hsfb;
  std::vector<double> ra_ref = ra, rb_ref = rb;
  if (blockwise) {
    auto factor = [&] { const uint64_t bits = rng(); return static_cast<float>(std::ldexp(1.0 + std::ldexp(double(bits >> 41), -23), int(bits & 15) - 8)); };
    for (int64_t i = 0; i < kb * m; ++i) hsfa.push_back(factor());
    for (int64_t i = 0; i < nb * kb; ++i) hsfb.push_back(factor());
    for (int64_t i = 0; i < m; ++i)
      for (int64_t x = 0; x < k; ++x) ra_ref[size_t(i * k + x)] *= hsfa[size_t(x / 128 * m + i)];
    for (int64_t x = 0; x < k; ++x)
      for (int64_t j = 0; j < n; ++j) rb_ref[size_t(x * n + j)] *= hsfb[size_t(j / 128 * kb + x / 128)];
  }
  Bufs bufs;
  bufs.lda = A.ld, bufs.ldb = B.ld, bufs.m = m, bufs.n = n, bufs.k = k;
  CK(cuMemAlloc(&bufs.a, a_bytes));
  CK(cuMemAlloc(&bufs.b, b_bytes));
  CK(cuMemAlloc(&bufs.d, d_bytes + guard));
  CK(cuMemcpyHtoD(bufs.a, ha.data(), a_bytes));
  CK(cuMemcpyHtoD(bufs.b, hb.data(), b_bytes));
  if (ep.d_scale) {
    const float scale = kDScale;
    CK(cuMemAlloc(&bufs.d_scale, 4));
    CK(cuMemcpyHtoD(bufs.d_scale, &scale, 4));
  }
  for (const auto& [on, value, at] : {std::make_tuple(ep.alpha_input, &alpha_in, &bufs.alpha), std::make_tuple(ep.beta_input, &beta_in, &bufs.beta)})
    if (on) {
      CK(cuMemAlloc(at, 4));
      CK(cuMemcpyHtoD(*at, value, 4));
    }
  if (ep.amax) {
    CK(cuMemAlloc(&bufs.amax, 4));
    CK(cuMemsetD32(bufs.amax, 0, 1));  // the kernel raises it: the caller zeroes it
  }
  for (const auto& [h, at] : {std::make_pair(&hsfa, &bufs.sfa), std::make_pair(&hsfb, &bufs.sfb)})
    if (blockwise) {
      CK(cuMemAlloc(at, h->size() * 4));
      CK(cuMemcpyHtoD(*at, h->data(), h->size() * 4));
    }
  // A quantized D's factors: the 128x4 layout of m x dn (ceil(m / 128) ceil(dn / 128) blocks of 512
  // bytes) and a guard after it, all kSfdFill, which no factor the kernel computes equals, so that
  // the check sees every byte the kernel wrote (a user zeroes it instead: docs/spec.md).
  const size_t sfd_len = ep.mxfp8 ? sfd_bytes(m, dn) + 4096 : 0;
  if (ep.mxfp8) {
    CK(cuMemAlloc(&bufs.sfd, sfd_len));
    CK(cuMemsetD8(bufs.sfd, kSfdFill, sfd_len));
  }
  for (const auto& [on, h, at] : {std::make_tuple(ep.bias, &hbias, &bufs.bias), std::make_tuple(ep.c, &hc, &bufs.c),
                                  std::make_tuple(ep.residual, &hres, &bufs.residual)})
    if (on) {
      CK(cuMemAlloc(at, h->size()));
      CK(cuMemcpyHtoD(*at, h->data(), h->size()));
    }
  CK(cuMemsetD8(bufs.d, poison_byte(D.type), d_bytes + guard));  // poison (poison_byte)
  CUstream stream;
  CK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));

  // The header's one-shot call: checks, the module for this context, tensor maps, launch.
  CKH(call(bufs, stream));
  sync_with_timeout(stream);

  std::vector<char> hd(d_bytes + guard);
  CK(cuMemcpyDtoH(hd.data(), bufs.d, d_bytes + guard));
  float amax = 0;
  if (ep.amax) CK(cuMemcpyDtoH(&amax, bufs.amax, 4));
  std::vector<unsigned char> hsfd(sfd_len);
  if (ep.mxfp8) CK(cuMemcpyDtoH(hsfd.data(), bufs.sfd, sfd_len));
  size_t guard_hit = 0;
  for (size_t i = d_bytes; i < d_bytes + guard; ++i) guard_hit += static_cast<unsigned char>(hd[i]) != poison_byte(D.type);

  // Reference.
  std::vector<double> ref;
  std::string ref_kind;
  const double work = double(m) * double(n) * double(k);
  cublasHandle_t blas;
  CK(cublasCreate(&blas));
  CK(cublasSetStream(blas, stream));
  const bool blas_types =
      (A.type == B.type) && (A.type == T::bf16 || A.type == T::f16 || A.type == T::tf32 || A.type == T::s8);
  // cuBLAS is column-major: row-major D (M x N) is column-major D^T = B^T A^T.
  const cublasOperation_t opA = A.row_major ? CUBLAS_OP_N : CUBLAS_OP_T;
  const cublasOperation_t opB = B.row_major ? CUBLAS_OP_N : CUBLAS_OP_T;
  auto cuda_type = [](T t) {
    switch (t) {
      case T::bf16: return CUDA_R_16BF;
      case T::f16: return CUDA_R_16F;
      case T::s8: return CUDA_R_8I;
      case T::s32: return CUDA_R_32I;
      default: return CUDA_R_32F;
    }
  };
  // A fused epilogue's reference: the epilogue in float64 (apply_epilogue) on A·B, with mag = sum
  // |a b| of each element for its bound.
  std::vector<double> mag;
  bool blas_ref = false;
  if (work <= double(1u << 30)) {
    ref_kind = "float64 CPU";
    cpu_gemm(ra_ref, rb_ref, ref, m, n, k, fused ? &mag : nullptr);
  } else if (blas_types && !blockwise) {
    ref_kind = A.type == T::s8 ? "cuBLAS s32" : "cuBLAS f32";
    blas_ref = true;
    const bool integer = A.type == T::s8;
    // A·B (of the operands at pa, pb) into `out`, through cuBLAS with f32 (s32) results.
    auto blas_product = [&](CUdeviceptr pa, CUdeviceptr pb, std::vector<double>& out) {
      out.assign(size_t(m) * n, 0.0);
      CUdeviceptr dr;
      CK(cuMemAlloc(&dr, size_t(m) * n * 4));
      const float one = 1, zero = 0;
      const int32_t ione = 1, izero = 0;
      CK(cublasGemmEx(blas, opB, opA, static_cast<int>(n), static_cast<int>(m), static_cast<int>(k),
                      integer ? static_cast<const void*>(&ione) : &one, reinterpret_cast<void*>(pb),
                      cuda_type(B.type), static_cast<int>(B.ld), reinterpret_cast<void*>(pa), cuda_type(A.type),
                      static_cast<int>(A.ld), integer ? static_cast<const void*>(&izero) : &zero,
                      reinterpret_cast<void*>(dr), integer ? CUDA_R_32I : CUDA_R_32F, static_cast<int>(n),
                      integer ? CUBLAS_COMPUTE_32I : CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
      sync_with_timeout(stream);
      std::vector<float> hr(size_t(m) * n);
      CK(cuMemcpyDtoH(hr.data(), dr, hr.size() * 4));
      for (size_t i = 0; i < hr.size(); ++i)
        out[i] = integer ? static_cast<double>(reinterpret_cast<int32_t*>(hr.data())[i]) : hr[i];
      CK(cuMemFree(dr));
    };
    blas_product(bufs.a, bufs.b, ref);
    if (fused) {
      // sum |a b| = |A|·|B| (exact in every type: the sign bit cleared), through cuBLAS too.
      auto absolute = [](const Matrix& x, std::vector<char> h) {
        for (size_t i = 0; i < x.elements(); ++i) store(x.type, h.data(), i, std::fabs(load(x.type, h.data(), i)));
        return h;
      };
      const std::vector<char> hab = absolute(A, ha), hbb = absolute(B, hb);
      CUdeviceptr pa, pb;
      CK(cuMemAlloc(&pa, a_bytes));
      CK(cuMemAlloc(&pb, b_bytes));
      CK(cuMemcpyHtoD(pa, hab.data(), a_bytes));
      CK(cuMemcpyHtoD(pb, hbb.data(), b_bytes));
      blas_product(pa, pb, mag);
      CK(cuMemFree(pa));
      CK(cuMemFree(pb));
    }
  } else {
    ref_kind = "float64 GPU";
    ref.assign(size_t(m) * n, 0.0);
    double *ga, *gb, *gd, *gm = nullptr;
    CK(cudaMalloc(&ga, ra_ref.size() * 8));
    CK(cudaMalloc(&gb, rb_ref.size() * 8));
    CK(cudaMalloc(&gd, ref.size() * 8));
    if (fused) CK(cudaMalloc(&gm, ref.size() * 8));
    CK(cudaMemcpy(ga, ra_ref.data(), ra_ref.size() * 8, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(gb, rb_ref.data(), rb_ref.size() * 8, cudaMemcpyHostToDevice));
    ref_gemm<<<dim3(unsigned((n + 15) / 16), unsigned((m + 15) / 16)), dim3(16, 16)>>>(ga, gb, gd, gm, m, n, k);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(ref.data(), gd, ref.size() * 8, cudaMemcpyDeviceToHost));
    if (fused) {
      mag.assign(ref.size(), 0.0);
      CK(cudaMemcpy(mag.data(), gm, mag.size() * 8, cudaMemcpyDeviceToHost));
      cudaFree(gm);
    }
    cudaFree(ga);
    cudaFree(gb);
    cudaFree(gd);
  }

  // Compare: relative Frobenius error, maximum error, unwritten and non-finite elements.
  ErrorSum es;
  size_t unwritten = 0;
  std::vector<unsigned char> poison(bytes_of(D.type), poison_byte(D.type));
  for (int64_t i = 0; i < m && !ep.gated; ++i)  // a gated D is no plain product: check_fused below
    for (int64_t j = 0; j < n; ++j) {
      const size_t idx = D.index(i, j);
      if (std::memcmp(&hd[idx * bytes_of(D.type)], poison.data(), poison.size()) == 0) ++unwritten;
      es.add(load(D.type, hd.data(), idx), ref[size_t(i) * n + j]);
    }
  double rel = es.rel(), max_abs = es.max_abs;
  const size_t nonfinite = es.nonfinite;
  double tolerance = opt.tolerance >= 0 ? opt.tolerance : is_int(D.type) && is_int(A.type) ? 0.0 : 1e-2;
  bool ok = unwritten == 0 && nonfinite == 0 && guard_hit == 0 && rel <= tolerance;
  // A fused epilogue: every element within its bound (--tolerance: that many times the bound).
  FusedCheck fc;
  if (fused) {
    fc = check_fused(ep, D, hd, ref, mag, rbias, accumulator_bound(A.type, info.accumulator, k), blas_ref, rc, rres, hsfd);
    rel = fc.rel, max_abs = fc.max_abs;
    unwritten = fc.unwritten;  // what the result line reports is what decides (a gated D has no plain count)
    tolerance = opt.tolerance >= 0 ? opt.tolerance : 1.0;
    ok = fc.unwritten == 0 && fc.nonfinite == 0 && guard_hit == 0 && fc.worst <= tolerance;
    if (ep.amax) {  // within the range, as an element within its bound (tolerance: times the half-width)
      const double mid = (fc.amax_lo + fc.amax_hi) / 2, half = (fc.amax_hi - fc.amax_lo) / 2 + 1e-300;
      const double ratio = std::isfinite(amax) ? std::fabs(amax - mid) / half : INFINITY;
      if (ratio > fc.worst) {
        fc.worst = ratio;
        char buf[160];
        std::snprintf(buf, sizeof buf, "amax = %.9g, expected within [%.9g, %.9g]", static_cast<double>(amax), fc.amax_lo, fc.amax_hi);
        fc.where = buf;
      }
      ok = ok && ratio <= tolerance;
    }
  }

  // Timing: warm-up, then the median of `iters` launches, each between two events. The kernel
  // runs as the header launches it: a prepared launch (tensor maps encoded once) run by ptxgen::launch.
  auto time_it = [&](auto&& launch) { return median_ms(stream, opt.iters, launch); };
  Launch prepared;
  CKH(prepare(bufs, prepared));
  const double ms = time_it([&] { CKH(ptxgen::launch(prepared, stream)); });
  // cuBLAS on the same inputs, writing its standard output type for them (16-bit inputs: the same
  // 16-bit type; tf32: f32; s8: s32): the comparison is the same GEMM at cuBLAS's own epilogue.
  double blas_ms = -1;
  if (blas_types) {
    const bool integer = A.type == T::s8;
    const T out_t = integer ? T::s32 : (A.type == T::tf32 ? T::f32 : A.type);
    const bool f16acc = std::string(info.accumulator) == "f16";
    CUdeviceptr dr;
    CK(cuMemAlloc(&dr, size_t(m) * n * bytes_of(out_t)));
    const float one = 1, zero = 0;
    const __half hone = __float2half(1.f), hzero = __float2half(0.f);
    const int32_t ione = 1, izero = 0;
    const void* alpha = integer ? static_cast<const void*>(&ione) : f16acc ? static_cast<const void*>(&hone) : &one;
    const void* beta = integer ? static_cast<const void*>(&izero) : f16acc ? static_cast<const void*>(&hzero) : &zero;
    const cublasComputeType_t ct = integer             ? CUBLAS_COMPUTE_32I
                                   : f16acc            ? CUBLAS_COMPUTE_16F
                                   : A.type == T::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                       : CUBLAS_COMPUTE_32F;
    auto blas_call = [&] {
      return cublasGemmEx(blas, opB, opA, static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), alpha,
                          reinterpret_cast<void*>(bufs.b), cuda_type(B.type), static_cast<int>(B.ld),
                          reinterpret_cast<void*>(bufs.a), cuda_type(A.type), static_cast<int>(A.ld), beta,
                          reinterpret_cast<void*>(dr), cuda_type(out_t), static_cast<int>(n), ct, CUBLAS_GEMM_DEFAULT);
    };
    if (blas_call() == CUBLAS_STATUS_SUCCESS) blas_ms = time_it([&] { CK(blas_call()); });
    sync_with_timeout(stream);
    CK(cuMemFree(dr));
  }
  const double flops = 2.0 * work;
  std::printf("{\"entry\": \"%s\", \"targets\": \"%s\", \"m\": %lld, \"n\": %lld, \"k\": %lld, \"reference\": \"%s\", "
              "\"rel_err\": %.6g, \"max_abs_err\": %.6g, \"tolerance\": %g, \"unwritten\": %zu, \"nonfinite\": %zu, "
              "\"guard_overwritten\": %zu, \"ms\": %.6g, \"tflops\": %.6g",
              info.name, info.targets, static_cast<long long>(m), static_cast<long long>(n),
              static_cast<long long>(k), ref_kind.c_str(), rel, max_abs, tolerance, unwritten, nonfinite, guard_hit,
              ms, flops / (ms * 1e-3) / 1e12);
  if (blas_ms > 0) std::printf(", \"cublas_ms\": %.6g, \"cublas_tflops\": %.6g", blas_ms, flops / (blas_ms * 1e-3) / 1e12);
  if (fused)  // the bound's ratio (JSON has no infinity: a non-finite element reads 1e308)
    std::printf(", \"epilogue\": \"%s\", \"worst_ratio\": %.6g, \"worst_at\": \"%s\", \"input_scale\": %.6g, "
                "\"cublas_epilogue\": \"none (a plain GEMM)\"",
                ep.describe().c_str(), std::isfinite(fc.worst) ? fc.worst : 1e308, fc.where.c_str(), scale);
  if (ep.mxfp8)  // MXFP8: the factors checked, those outside their range, padding or guard bytes written
    std::printf(", \"sfd_blocks\": %zu, \"sfd_wrong\": %zu, \"sfd_padding_written\": %zu", fc.sfd_blocks, fc.sfd_wrong,
                fc.sfd_padding_written);
  std::printf(", \"launched_through\": \"ptxgen::%s / ptxgen::launch\", \"ok\": %s}\n", info.name, ok ? "true" : "false");
  cublasDestroy(blas);
  return ok ? 0 : 1;
}

// Grouped GEMM (GROUPED_GEMMS rows: masked_m or ends after D, the groups after k; docs/spec.md
// "Grouped GEMM"), fresh random operands per group. Masked layout: `groups` planes of A, B and D at
// capacity m, masked_m drawn per group from the cases of the definition in turn (full, empty, past
// the capacity, negative, then uniform in [0, m]). Contiguous layout: A and D of m rows, B a plane
// per group, the groups' ends drawn as segments of tile.m / 2 + 1 rows (a tile partly valid, then
// padding), none, 2 tile.m - 3, 3, then uniform in [0, 2 tile.m], each starting at the previous end
// rounded up to --align (the spec's groups.align), cut at m. Every valid row of D is compared with
// the float64 product of its row of A and its group's B (relative Frobenius error, as run_case), and
// every byte of the tiles past a group's valid rows (tile.m of the header's first entry), of the
// contiguous layout's rows past the last segment, and of the guard after D must keep the poison.
// Timed as run_case times (a prepared launch); TF/s count the valid rows' 2 rows n k.
// A fused epilogue (epilogues.hpp; the rules build a bias, alpha and the activations with groups):
// each valid element within its bound of apply_epilogue on the group's float64 product, the group's
// own bias (a row of n per group; masked along M each group's column of m; contiguous along M one
// vector over A's rows), a gated D's up half from the group's B. `call` and `prepare` take the bias's
// device pointer after masked_m's place where the kernel has one (TBIAS not void).
template <class Launch, class TBIAS, class Call, class Prepare>
int run_grouped_case(const ptxgen::KernelInfo& info, Call call, Prepare prepare, const Options& opt, int64_t tile_m) {
  const int64_t m = opt.m ? opt.m : info.m, n = opt.n ? opt.n : info.n, k = opt.k ? opt.k : info.k;
  const int64_t G = opt.groups ? opt.groups : 8, align = opt.align ? opt.align : 128;
  const bool contiguous = std::string(info.tensors[info.tensor_count - 1].name) == "ends";  // the last tensor (after a bias)
  const int64_t planes = contiguous ? 1 : G;  // of A and D
  const Epilogue ep = epilogue_of(info);
  if (ep.c || ep.residual || ep.amax || ep.d_scale || ep.mxfp8 || ep.alpha_input || ep.beta_input)
    die(2, std::string(info.name) + ": a grouped kernel with epilogue inputs beyond a bias (" + ep.describe() + ") is not built");
  if (ep.bias != !std::is_void_v<TBIAS>) die(2, std::string(info.name) + ": epilogues.hpp and the header disagree on the bias");
  if (double(planes) * double(m) * double(n) * double(k) > double(int64_t{1} << 34))
    die(2, "a grouped case this large has no CPU reference here: give smaller --m --n --k --groups");
  primary_context();
  const bool same = m == info.m && n == info.n && k == info.k;
  const Matrix A = operand(info.tensors[0], m, k, same), B = operand(info.tensors[1], k, n, same);
  const int64_t dn = ep.gated ? n / 2 : n;  // a gated D: m x n/2
  const Matrix D{parse_type(info.tensors[2].dtype), m, dn, true, dn};
  const size_t a_bytes = A.elements() * bytes_of(A.type), b_bytes = B.elements() * bytes_of(B.type);
  const size_t d_bytes = D.elements() * bytes_of(D.type), guard = 1 << 16;
  std::mt19937_64 rng(opt.seed);
  std::vector<std::vector<double>> ra(static_cast<size_t>(planes)), rb(static_cast<size_t>(G));
  std::vector<char> ha_all, hb_all;
  for (int64_t g = 0; g < G; ++g) {
    std::vector<char> h;
    if (g < planes) {
      ra[static_cast<size_t>(g)] = fill(A, h, rng);
      ha_all.insert(ha_all.end(), h.begin(), h.end());
    }
    rb[static_cast<size_t>(g)] = fill(B, h, rng);
    hb_all.insert(hb_all.end(), h.begin(), h.end());
  }
  std::vector<int32_t> sizes(static_cast<size_t>(G));
  std::uniform_int_distribution<int64_t> any_rows(0, m), seg_rows(0, 2 * tile_m);
  int64_t start = 0;
  for (int64_t g = 0; g < G; ++g) {
    if (contiguous) {
      const int64_t drawn[4] = {tile_m / 2 + 1, 0, 2 * tile_m - 3, 3};
      const int64_t end = std::min(start + (g < 4 ? drawn[g] : seg_rows(rng)), m);
      sizes[static_cast<size_t>(g)] = static_cast<int32_t>(end);
      start = std::min((end + align - 1) / align * align, m);
    } else {
      const int64_t drawn[4] = {m, 0, m + 17, -3};
      sizes[static_cast<size_t>(g)] = static_cast<int32_t>(g < 4 ? drawn[g] : any_rows(rng));
    }
  }
  // The bias: a row of n per group (along N), a column of m per group (masked, along M), or one
  // column of m (contiguous, along M), in [-2, 2) as run_case draws it.
  std::vector<char> hbias;
  const int64_t bias_len = ep.bias_m ? m : n, bias_groups = ep.bias_m && contiguous ? 1 : G;
  const std::vector<double> rbias = ep.bias ? fill_bias(ep.bias_type, bias_len * bias_groups, hbias, rng) : std::vector<double>();
  // Row r of D (of all planes): its group, its plane's row, and whether it is valid (1), written with
  // an unspecified value (2: the rest of a tile that holds valid rows) or untouched (0).
  auto row_of = [&](int64_t r, int64_t& g, int64_t& i) {
    if (!contiguous) {
      g = r / m, i = r % m;
      const int64_t lim = std::clamp<int64_t>(sizes[static_cast<size_t>(g)], 0, m);
      return i < lim ? 1 : i / tile_m * tile_m < lim ? 2 : 0;
    }
    i = r;
    int64_t s0 = 0;
    for (g = 0; g < G; ++g) {
      const int64_t end = std::clamp<int64_t>(sizes[static_cast<size_t>(g)], 0, m), padded = (end + align - 1) / align * align;
      if (r >= s0 && r < padded) return r < end ? 1 : r / tile_m * tile_m < end ? 2 : 0;
      s0 = padded;
    }
    return 0;
  };
  Bufs bufs;
  bufs.lda = A.ld, bufs.ldb = B.ld, bufs.m = m, bufs.n = n, bufs.k = k;
  CUdeviceptr pm;
  CK(cuMemAlloc(&bufs.a, a_bytes * size_t(planes)));
  CK(cuMemAlloc(&bufs.b, b_bytes * size_t(G)));
  CK(cuMemAlloc(&bufs.d, d_bytes * size_t(planes) + guard));
  CK(cuMemAlloc(&pm, size_t(G) * 4));
  CK(cuMemcpyHtoD(bufs.a, ha_all.data(), ha_all.size()));
  CK(cuMemcpyHtoD(bufs.b, hb_all.data(), hb_all.size()));
  CK(cuMemcpyHtoD(pm, sizes.data(), size_t(G) * 4));
  CK(cuMemsetD8(bufs.d, poison_byte(D.type), d_bytes * size_t(planes) + guard));
  if (ep.bias) {
    CK(cuMemAlloc(&bufs.bias, hbias.size()));
    CK(cuMemcpyHtoD(bufs.bias, hbias.data(), hbias.size()));
  }
  // The kernel's call, with the bias after D where it takes one.
  auto launch_args = [&](auto&& f) {
    if constexpr (std::is_void_v<TBIAS>) return f();
    else return f(ptxgen::device_pointer<const TBIAS>(bufs.bias));
  };
  CUstream stream;
  CK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  CKH(launch_args([&](auto... bias) { return call(bufs, pm, G, stream, bias...); }));
  sync_with_timeout(stream);
  std::vector<char> hd(d_bytes * size_t(planes) + guard);
  CK(cuMemcpyDtoH(hd.data(), bufs.d, hd.size()));
  ErrorSum es;
  FusedCheck fc;  // a fused epilogue: each element against its bound
  const double acc_unit = accumulator_bound(A.type, info.accumulator, k), u_out = output_unit(D.type), floor_out = output_floor(D.type);
  size_t unwritten = 0, past_written = 0, guard_hit = 0;
  int64_t valid = 0;
  const std::vector<unsigned char> poison(bytes_of(D.type), poison_byte(D.type));
  for (int64_t r = 0; r < planes * m; ++r) {
    int64_t g = 0, i = 0;
    const int want = row_of(r, g, i);
    const char* plane = hd.data() + size_t(r / m) * d_bytes;
    const std::vector<double>& a = ra[static_cast<size_t>(contiguous ? 0 : g)];
    const std::vector<double>& b = rb[static_cast<size_t>(g)];
    valid += want == 1;
    // float64: A's row i of this plane times column j of the group's B, and sum |a b| for the bound.
    auto product = [&](int64_t j, double& mag) {
      double ref = 0;
      mag = 0;
      for (int64_t x = 0; x < k; ++x) {
        const double p = a[size_t(i) * size_t(k) + size_t(x)] * b[size_t(x) * size_t(n) + size_t(j)];
        ref += p, mag += std::fabs(p);
      }
      return ref;
    };
    for (int64_t j = 0; j < dn; ++j) {
      const size_t idx = D.index(i, j);
      const bool poisoned = std::memcmp(plane + idx * bytes_of(D.type), poison.data(), poison.size()) == 0;
      if (want != 1) {
        past_written += want == 0 && !poisoned;
        continue;
      }
      unwritten += poisoned;
      double mag = 0, up_mag = 0;
      const double ref = product(j, mag), v = load(D.type, plane, idx);
      if (!ep.fused()) {
        es.add(v, ref);
        continue;
      }
      // The group's bias element: its row of n (the up half's at j + n/2), or its column's row.
      const int64_t bias_at = ep.bias_m ? (contiguous ? i : g * m + i) : g * n + j;
      const double up = ep.gated ? product(j + dn, up_mag) : 0.0;
      double bound = acc_unit * mag;
      double y = apply_epilogue(ep, ref, ep.bias ? rbias[size_t(bias_at)] : 0.0, 0.0, 0.0, bound, nullptr, up,
                                ep.gated && ep.bias ? rbias[size_t(bias_at + dn)] : 0.0, acc_unit * up_mag);
      bound = bound * (1 + u_out) + u_out * std::fabs(y) + floor_out;
      if (!std::isfinite(v)) {
        if (fc.nonfinite++ == 0) fc.worst = INFINITY, fc.where = "group " + std::to_string(g) + " D(" + std::to_string(i) + "," + std::to_string(j) + ") is not finite";
        continue;
      }
      fc.compare(v, y, bound, [&] {
        char buf[200];
        std::snprintf(buf, sizeof buf, "group %lld D(%lld,%lld) = %.9g, expected %.9g (bound %.3g)", static_cast<long long>(g),
                      static_cast<long long>(i), static_cast<long long>(j), v, y, bound);
        return std::string(buf);
      });
    }
  }
  for (size_t i = d_bytes * size_t(planes); i < hd.size(); ++i) guard_hit += static_cast<unsigned char>(hd[i]) != poison_byte(D.type);
  fc.rel = fc.den > 0 ? std::sqrt(fc.num / fc.den) : std::sqrt(fc.num);
  const double rel = ep.fused() ? fc.rel : es.rel(), max_abs = ep.fused() ? fc.max_abs : es.max_abs;
  const size_t nonfinite = ep.fused() ? fc.nonfinite : es.nonfinite;
  // A fused epilogue: every element within its bound (--tolerance: that many times the bound).
  const double tolerance = opt.tolerance >= 0 ? opt.tolerance : ep.fused() ? 1.0 : 1e-2;
  const bool ok = unwritten == 0 && nonfinite == 0 && past_written == 0 && guard_hit == 0 && (ep.fused() ? fc.worst : rel) <= tolerance;
  Launch prepared;
  CKH(launch_args([&](auto... bias) { return prepare(bufs, pm, G, prepared, bias...); }));
  const double t = median_ms(stream, opt.iters, [&] { CKH(ptxgen::launch(prepared, stream)); }),
               flops = 2.0 * double(valid) * double(n) * double(k);
  std::string mm;
  for (int64_t g = 0; g < G; ++g) mm += (g ? ", " : "") + std::to_string(sizes[size_t(g)]);
  std::printf("{\"entry\": \"%s\", \"targets\": \"%s\", \"m\": %lld, \"n\": %lld, \"k\": %lld, \"groups\": %lld, \"%s\": [%s], "
              "\"reference\": \"float64 CPU\", \"rel_err\": %.6g, \"max_abs_err\": %.6g, \"tolerance\": %g, \"unwritten\": %zu, "
              "\"nonfinite\": %zu, \"past_rows_written\": %zu, \"guard_overwritten\": %zu, ",
              info.name, info.targets, static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k),
              static_cast<long long>(G), contiguous ? "ends" : "masked_m", mm.c_str(), rel, max_abs, tolerance, unwritten, nonfinite, past_written, guard_hit);
  if (ep.fused())  // as run_case reports a fused epilogue: the largest error / bound of any element, and where
    std::printf("\"epilogue\": \"%s\", \"worst_ratio\": %.6g, \"worst_at\": \"%s\", ", ep.describe().c_str(),
                std::isfinite(fc.worst) ? fc.worst : 1e308, fc.where.c_str());
  std::printf("\"ms\": %.6g, \"tflops\": %.6g, \"launched_through\": \"ptxgen::%s / ptxgen::launch\", \"ok\": %s}\n", t,
              flops / (t * 1e-3) / 1e12, info.name, ok ? "true" : "false");
  return ok ? 0 : 1;
}

// ---- --bad-input: what the header refuses on a real driver --------------------------------------

int bad_failures = 0;

void expect(const char* what, CUresult got, CUresult want, const char* words) {
  const std::string msg = ptxgen::last_error();
  const bool ok = got == want && (!words || msg.find(words) != std::string::npos);
  std::printf("{\"check\": \"%s\", \"ok\": %s, \"result\": %d, \"want\": %d, \"message\": \"", what, ok ? "true" : "false",
              static_cast<int>(got), static_cast<int>(want));
  for (char c : msg) std::printf(c == '"' || c == '\\' ? "\\%c" : "%c", c);
  std::printf("\"}\n");
  bad_failures += !ok;
}

// The first gemm kernel of the header that runs here (sm_90a, bf16 in, bf16 out, K-major A and B),
// and the first that does not (no sm_90a code).
struct Gemm {
  const ptxgen::KernelInfo* info = nullptr;
  CUresult (*call)(const Bufs&, CUstream) = nullptr;
};
bool runs_here(const ptxgen::KernelInfo& i) { return std::strstr(i.targets, "sm_90a") != nullptr; }
bool plain_bf16(const ptxgen::KernelInfo& i) {
  return std::string(i.tensors[0].dtype) == "bf16" && std::string(i.tensors[1].dtype) == "bf16" &&
         std::string(i.tensors[2].dtype) == "bf16" && i.tensors[0].cols_contiguous && !i.tensors[1].cols_contiguous;
}

int bad_input() {
  // here: a plain product (no gated epilogue: its D is not m x n); gated: one whose D is m x n/2.
  Gemm here, foreign, gated;
#define FIND(NAME, TA, TB, TD)                                                                                  \
  {                                                                                                             \
    Gemm g{&ptxgen::NAME##_info, [](const Bufs& b, CUstream s) {                                                \
             return ptxgen::NAME(ptxgen::device_pointer<const TA>(b.a), b.lda, ptxgen::device_pointer<const TB>(b.b), \
                                 b.ldb, ptxgen::device_pointer<TD>(b.d), SIZES(b), s);                          \
           }};                                                                                                  \
    const bool glu = runs_here(*g.info) && epilogue_of(*g.info).gated;                                          \
    if (!here.info && runs_here(*g.info) && plain_bf16(*g.info) && !glu) here = g;                              \
    if (!foreign.info && !runs_here(*g.info)) foreign = g;                                                      \
    if (!gated.info && glu) gated = g;                                                                          \
  }
  PTXGEN_KERNELS_GEMMS(FIND)
#undef FIND
  if (!here.info || !foreign.info) die(2, "--bad-input needs a bf16 sm_90a gemm kernel and a kernel for another target");
  // The first kernel with a fused bias that runs here, bf16 in and out (none: its checks are left out),
  // and the first with a quantized D (MXFP8) that runs here, not gated, bf16 in, K-major.
  Gemm biased, quantized;
#define FIND(NAME, TA, TB, TD, TC, TBIAS, TR, TAL, TBE, TS, TAMAX, TSFD)                                        \
  {                                                                                                             \
    Gemm g{&ptxgen::NAME##_info, [](const Bufs& b, CUstream s) {                                                \
             return std::apply([s](auto... x) { return ptxgen::NAME(x..., s); },                                \
                               epilogue_args<TA, TB, TD, TC, TBIAS, TR, TAL, TBE, TS, TAMAX, TSFD>(b));         \
           }};                                                                                                  \
    const bool only_bias = std::is_void_v<TC> && std::is_void_v<TR> && std::is_void_v<TAL> &&                  \
                           std::is_void_v<TBE> && std::is_void_v<TS> &&                                         \
                           std::is_void_v<TAMAX> && std::is_void_v<TSFD>;                                       \
    const bool here_kmajor = runs_here(*g.info) && !epilogue_of(*g.info).gated &&                               \
                             std::string(g.info->tensors[0].dtype) == "bf16" && g.info->tensors[0].cols_contiguous && \
                             std::string(g.info->tensors[1].dtype) == "bf16" && !g.info->tensors[1].cols_contiguous;  \
    if (!biased.info && only_bias && here_kmajor && plain_bf16(*g.info)) biased = g;                            \
    if (!quantized.info && !std::is_void_v<TSFD> && here_kmajor) quantized = g;                                \
  }
  PTXGEN_KERNELS_EPILOGUE_GEMMS(FIND)
#undef FIND
  CUdevice dev;
  const CUcontext ctx = primary_context(&dev);
  const int64_t m = 256, n = 256, k = 256;
  std::mt19937_64 rng(7);
  Matrix A{T::bf16, m, k, true, k}, B{T::bf16, k, n, false, k};
  std::vector<char> ha, hb;
  const std::vector<double> ra = fill(A, ha, rng), rb = fill(B, hb, rng);
  std::vector<double> ref;
  cpu_gemm(ra, rb, ref, m, n, k);
  Bufs good;
  good.lda = k, good.ldb = k, good.m = m, good.n = n, good.k = k;
  CK(cuMemAlloc(&good.a, ha.size() + 256));
  CK(cuMemAlloc(&good.b, hb.size()));
  CK(cuMemAlloc(&good.d, size_t(m * n * 2)));
  CK(cuMemcpyHtoD(good.a, ha.data(), ha.size()));
  CK(cuMemcpyHtoD(good.b, hb.data(), hb.size()));
  // The result of a launch with `b` in context `c` is right (and the context alive).
  auto correct = [&](const Bufs& b, CUstream s) {
    CK(cuMemsetD8(b.d, 0xFE, size_t(m * n * 2)));
    const CUresult r = here.call(b, s);
    if (r != CUDA_SUCCESS) return r;
    sync_with_timeout(s);
    std::vector<char> hd(size_t(m * n * 2));
    CK(cuMemcpyDtoH(hd.data(), b.d, hd.size()));
    double num = 0, den = 0;
    for (int64_t i = 0; i < m * n; ++i) {
      const double v = load(T::bf16, hd.data(), size_t(i)), x = ref[size_t(i)];
      num += (v - x) * (v - x);
      den += x * x;
    }
    return std::sqrt(num / den) < 1e-2 ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN;
  };
  CUstream s;
  CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  const CUresult bad = CUDA_ERROR_INVALID_VALUE;
  expect("a good launch", correct(good, s), CUDA_SUCCESS, nullptr);
  Bufs x = good;
  x.a = 0;
  expect("null A", here.call(x, s), bad, "a (A, bf16) is a null pointer");
  x = good, x.a += 2;
  expect("misaligned A", here.call(x, s), bad, "is not 16-byte aligned");
  x = good, x.d += 8;
  expect("misaligned D", here.call(x, s), bad, "d (D, bf16) at");
  x = good, x.lda = 260;
  expect("lda whose rows are not 16-byte multiples apart", here.call(x, s), bad, "multiple of 16 bytes (lda a multiple of 8)");
  x = good, x.ldb = 128;
  expect("ldb < k", here.call(x, s), bad, "ldb = 128 is less than k = 256");
  x = good, x.k = 0;
  expect("k = 0", here.call(x, s), bad, "k = 0: the kernel takes sizes from 1 to 2^31-1");
  x = good, x.m = int64_t{65535} * 128 * 2;
  expect("m beyond the grid", here.call(x, s), bad, "CTAs along y");
  x = good, x.n = int64_t{1} << 31;
  expect("n beyond u32", here.call(x, s), bad, "n = 2147483648");
  // A fused bias: refused null or off its 16-byte alignment; a launch right against the float64
  // epilogue (every element within its bound, as a grid case checks it).
  if (biased.info) {
    const Epilogue ep = epilogue_of(*biased.info);
    std::vector<char> hbias;
    const std::vector<double> rbias = fill_bias(ep.bias_type, ep.bias_m ? m : n, hbias, rng);
    Bufs xb = good;
    CK(cuMemAlloc(&xb.bias, hbias.size() + 256));
    CK(cuMemcpyHtoD(xb.bias, hbias.data(), hbias.size()));
    const std::string what = "bias (" + ep.bias_dtype + ")";
    Bufs y = xb;
    y.bias = 0;
    expect("null bias", biased.call(y, s), bad, (what + " is a null pointer").c_str());
    y = xb, y.bias += bytes_of(ep.bias_type);
    expect("misaligned bias", biased.call(y, s), bad, (what + " at").c_str());
    CK(cuMemsetD8(xb.d, 0xFE, size_t(m * n * 2)));
    CUresult r = biased.call(xb, s);
    if (r == CUDA_SUCCESS) {
      sync_with_timeout(s);
      std::vector<char> hd(size_t(m * n * 2));
      CK(cuMemcpyDtoH(hd.data(), xb.d, hd.size()));
      std::vector<double> product, mag;
      cpu_gemm(ra, rb, product, m, n, k, &mag);
      const FusedCheck c = check_fused(ep, Matrix{T::bf16, m, n, true, n}, hd, product, mag, rbias,
                                       accumulator_bound(T::bf16, biased.info->accumulator, k), false);
      r = c.worst <= 1 && c.unwritten == 0 ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN;
      if (r != CUDA_SUCCESS) std::fprintf(stderr, "ptxgen-launch: %s: %s\n", biased.info->name, c.where.c_str());
    }
    expect(("a good launch of " + std::string(biased.info->name) + " (" + ep.describe() + ")").c_str(), r, CUDA_SUCCESS,
           nullptr);
    CK(cuMemFree(xb.bias));
  } else {
    std::printf("{\"note\": \"no sm_90a kernel with a fused bias and bf16 A, B and D: its checks left out\"}\n");
  }
  // A gated epilogue (swiglu, geglu): B's n rows are two halves, so the header refuses an odd n.
  if (gated.info) {
    Bufs y = good;
    y.n = 255;
    expect(("an odd n for " + std::string(gated.info->name) + " (" + epilogue_of(*gated.info).describe() + ")").c_str(),
           gated.call(y, s), bad, "n = 255 is not a multiple of 2");
  } else {
    std::printf("{\"note\": \"no sm_90a kernel with a gated epilogue and no bias: its odd-n check left out\"}\n");
  }
  // A quantized D (MXFP8): n = 112 is not whole blocks of 32 columns, which the header refuses
  // (every pointer valid, so that the size is what it refuses: one scratch buffer for all inputs).
  if (quantized.info) {
    Bufs y = good;
    CUdeviceptr scratch;
    CK(cuMemAlloc(&scratch, size_t(m * n * 4)));
    y.c = y.bias = y.residual = y.alpha = y.beta = y.d_scale = y.amax = y.sfd = scratch;
    y.n = 112;
    expect(("n = 112 for " + std::string(quantized.info->name) + " (" + epilogue_of(*quantized.info).describe() + ")").c_str(),
           quantized.call(y, s), bad, "n = 112 is not a multiple of 32");
    CK(cuMemFree(scratch));
  } else {
    std::printf("{\"note\": \"no sm_90a kernel with a quantized D (MXFP8), bf16 K-major A and B: its n check left out\"}\n");
  }
  // sm_100a code on this sm_90 device.
  expect("a kernel without code for this device", foreign.call(good, s), CUDA_ERROR_NO_BINARY_FOR_GPU,
         "cannot run this kernel: the header holds code for");
  // No current context; a stream of another context; a launch prepared in another context.
  CK(cuCtxSetCurrent(nullptr));
  expect("no current context", here.call(good, nullptr), CUDA_ERROR_INVALID_CONTEXT, "no CUDA context is current");
  CK(cuCtxSetCurrent(ctx));
  CUcontext other;
  CUctxCreateParams params{};
  CK(cuCtxCreate(&other, &params, 0, dev));  // current now
  CUstream other_stream;
  CK(cuStreamCreate(&other_stream, CU_STREAM_NON_BLOCKING));
  CK(cuCtxSetCurrent(ctx));
  expect("a stream of another context", here.call(good, other_stream), CUDA_ERROR_INVALID_CONTEXT,
         "the stream belongs to another CUDA context");
  // The module loads lazily in each context: the other context, first used by 8 threads at once.
  Bufs og = good;
  CK(cuCtxSetCurrent(other));
  CK(cuMemAlloc(&og.a, ha.size()));
  CK(cuMemAlloc(&og.b, hb.size()));
  CK(cuMemAlloc(&og.d, size_t(m * n * 2)));
  CK(cuMemcpyHtoD(og.a, ha.data(), ha.size()));
  CK(cuMemcpyHtoD(og.b, hb.data(), hb.size()));
  std::atomic<int> launched{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      CK(cuCtxSetCurrent(other));
      if (here.call(og, other_stream) == CUDA_SUCCESS) ++launched;
    });
  for (auto& t : threads) t.join();
  sync_with_timeout(other_stream);
  ptxgen::detail::ok();  // what follows is this thread's count of the others' results
  expect("8 threads' first launches in a fresh context", launched == 8 ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN,
         CUDA_SUCCESS, nullptr);
  expect("a good launch in the other context", correct(og, other_stream), CUDA_SUCCESS, nullptr);
  CK(cuCtxSetCurrent(ctx));
  // Every refusal above left the context as it was: the same launch is still right.
  expect("a good launch after every refusal", correct(good, s), CUDA_SUCCESS, nullptr);
  CK(cuCtxDestroy(other));
  std::printf("{\"bad_input_failures\": %d}\n", bad_failures);
  return bad_failures ? 1 : 0;
}

// ---- --selfcheck: the fused reference and its bound, on the host (no GPU) ----------------------

// D as a kernel computes it, emulated in f32: A·B accumulated in k order, then the epilogue's ops
// step by step as math_fn.hpp composes them, each approximate instruction off by its whole documented
// error (ex2 2 ulp, rcp 1 ulp, tanh 2^-11 relative), up or down by the element's parity, then D's
// rounding (a quantized D: the block quantization below first). Mutations: `wrong_axis` adds
// bias[i] for bias[j] (or the reverse), `no_activation` leaves the activation out, `short_k` drops
// the last 8 elements of K; `mx` breaks the MXFP8 quantization one way each.
enum class Mx { none, floor_factor, no_divide, misplaced, double_factor, padding_written };
struct Mutation {
  bool wrong_axis = false, no_activation = false, short_k = false;
  bool swap_gate_up = false;  // gated: the activation applied to up and the product taken with the gate
  Mx mx = Mx::none;
};

// The kernel's factor byte, as ir::Quantize computes it from the f32 bits of the block's amax
// (docs/spec.md, "Block-quantized D"): the biased exponent of amax, plus one where its significand
// exceeds Fmax's (448 and 57344 are both 1.75 2^e: significand bits 0x600000; adding 0x1FFFFF
// carries into the exponent exactly then), less Fmax's exponent (8, 15), clamped to 0 .. 254. An
// integer formulation, independent of mx_factor's frexp that the check uses.
int kernel_factor(float amax, T d) {
  uint32_t bits;
  std::memcpy(&bits, &amax, 4);
  const int rounded_up = static_cast<int>((bits + (0x7FFFFFu - 0x600000u)) >> 23);
  return std::clamp(rounded_up - (d == T::e4m3 ? 8 : 15), 0, 254);
}

// The kernel's block quantization of the f32 values `pre` (D's m x cols, row-major) into hd and the
// factors into sfd (filled with kSfdFill first, as the launcher does): per block of 32 columns of a
// row, the factor of its amax (max of |value|: abs.f32, max.f32), then each value times 2^(127 - x)
// (mul.rn.f32 by the f32 of bits (254 - x) << 23, exact) and D's conversion (RN, .satfinite).
void emulate_mxfp8(const Matrix& D, const std::vector<float>& pre, std::vector<char>& hd, std::vector<unsigned char>& sfd,
                   Mx mx) {
  sfd.assign(sfd_bytes(D.rows, D.cols) + 4096, kSfdFill);
  for (int64_t i = 0; i < D.rows; ++i)
    for (int64_t b = 0; b < D.cols / 32; ++b) {
      float amax = 0;
      for (int64_t j = b * 32; j < b * 32 + 32; ++j) amax = std::fmax(amax, std::fabs(pre[size_t(i * D.cols + j)]));
      int x = kernel_factor(amax, D.type);
      if (mx == Mx::floor_factor) {  // OCP's rule: floor(log2(amax)) less Fmax's exponent (the block's top may saturate)
        uint32_t bits;
        std::memcpy(&bits, &amax, 4);
        x = std::clamp(static_cast<int>(bits >> 23) - (D.type == T::e4m3 ? 8 : 15), 0, 254);
      }
      const int divide_by = mx == Mx::double_factor ? x + 1 : x;  // 2X for X: the stored factor is X
      const uint32_t scale_bits = static_cast<uint32_t>(254 - divide_by) << 23;
      float scale;
      std::memcpy(&scale, &scale_bits, 4);
      if (mx == Mx::no_divide) scale = 1;
      // misplaced: the factors row-major (ceil(cols / 128) * 4 a row) instead of the 128x4 layout
      const size_t at = mx == Mx::misplaced ? size_t(i * ((D.cols + 127) / 128) * 4 + b) : sfd_offset(i, b, D.cols);
      sfd[at] = static_cast<unsigned char>(x);
      for (int64_t j = b * 32; j < b * 32 + 32; ++j) store(D.type, hd.data(), D.index(i, j), pre[size_t(i * D.cols + j)] * scale);
    }
  // padding_written: a factor stored for row m (the layout's padding; m is not a multiple of 128 here)
  if (mx == Mx::padding_written) sfd[sfd_offset(D.rows, 0, D.cols)] = 0;
}

void emulate(const Epilogue& e, const Matrix& D, std::vector<char>& hd, const std::vector<double>& ra,
             const std::vector<double>& rb, int64_t k, const std::vector<double>& bias_n, const std::vector<double>& bias_m,
             Mutation mu, const std::vector<double>& cv = {}, const std::vector<double>& rv = {},
             std::vector<unsigned char>* sfd = nullptr) {
  hd.assign(D.elements() * bytes_of(D.type), 0);
  std::vector<float> pre(e.mxfp8 ? size_t(D.rows * D.cols) : 0);  // a quantized D's values before the quantization
  const int64_t width = e.gated ? 2 * D.cols : D.cols;  // B's columns (a gated D has half of them)
  for (int64_t i = 0; i < D.rows; ++i)
    for (int64_t j = 0; j < D.cols; ++j) {
      float x = 0, up = 0;
      for (int64_t kk = 0; kk < (mu.short_k ? k - 8 : k); ++kk) {
        x += static_cast<float>(ra[size_t(i * k + kk)]) * static_cast<float>(rb[size_t(kk * width + j)]);
        if (e.gated) up += static_cast<float>(ra[size_t(i * k + kk)]) * static_cast<float>(rb[size_t(kk * width + j + D.cols)]);
      }
      if (mu.swap_gate_up) std::swap(x, up);
      const float sgn = (i + j) % 2 ? 1.f : -1.f;
      const size_t at = size_t(i * D.cols + j);
      for (std::string f : e.ops) {
        if (f == "alpha") {
          x *= static_cast<float>(e.alpha);
          continue;
        }
        if (f == "c" || f == "beta_c") {  // fma.rn: one rounding
          x = std::fma(static_cast<float>(cv[at]), f == "c" ? 1.f : static_cast<float>(e.beta), x);
          continue;
        }
        if (f == "residual") {
          x += static_cast<float>(rv[at]);
          continue;
        }
        if (f == "bias") {
          const bool m_axis = e.bias_m != mu.wrong_axis;
          x += static_cast<float>(m_axis ? bias_m[size_t(i)] : bias_n[size_t(j)]);
          if (e.gated) up += static_cast<float>(bias_n[size_t(j + D.cols)]);
          continue;
        }
        if (f == "d_scale") {  // mul.rn.f32 (the amax, before it, changes no value)
          x *= kDScale;
          continue;
        }
        if (f == "amax" || f == "mxfp8" || mu.no_activation) continue;
        const bool glu = f == "swiglu" || f == "geglu";
        if (glu) f = f == "swiglu" ? "silu" : "gelu_tanh";
        if (f == "relu") {
          x = std::fmax(x, 0.f);
        } else if (f == "sigmoid" || f == "silu") {
          const float t = std::exp2(x * -1.44269504f) * (1 + sgn * std::ldexp(1.f, -22));
          const float r = (1 / (t + 1.f)) * (1 + sgn * std::ldexp(1.f, -23));
          x = f == "silu" ? x * r : r;
        } else if (f == "gelu_tanh") {
          const float p = std::fma(x * x, 0.044715f, 1.f), w = (p * x) * 0.797884561f;
          const float t = std::tanh(w) * (1 + sgn * std::ldexp(1.f, -11));
          x = x * std::fma(t, 0.5f, 0.5f);
        } else if (f == "gelu") {  // the kernel's steps (ptxgen/math_fn.hpp), its approximations off by their bounds
          const float a = std::fabs(x), t = (1 / std::fma(a, 0.231641889f, 1.f)) * (1 + sgn * std::ldexp(1.f, -23));
          float nq = std::fma(t, -1.061405429f, 1.453152027f);
          nq = std::fma(nq, t, -1.421413741f);
          nq = std::fma(nq, t, 0.284496736f);
          nq = std::fma(nq, t, -0.254829592f);
          nq = nq * t;
          const float half_e = std::exp2(std::fma(x * x, -0.72134752f, -1.f)) * (1 - sgn * std::ldexp(1.f, -22));
          x = std::fma(x, 0.5f, std::fma(nq, half_e, 0.5f) * a);
        }
        if (glu) x = x * up;
      }
      if (e.mxfp8) pre[at] = x;
      else store(D.type, hd.data(), D.index(i, j), x);
    }
  if (e.mxfp8) emulate_mxfp8(D, pre, hd, *sfd, mu.mx);
}

// The factor function at its edges, for both element types: 0 and the smallest double give 0, Fmax
// 2^j gives 127 + j exactly (the power of two that just holds it), a value one f32 ulp above gives
// one more and one below the same, the clamps at 0 (Fmax 2^-128 and below) and 254 (Fmax 2^128,
// 1e300); and for 200000 random f32 values of every exponent, mx_factor (frexp, float64) against
// the kernel's integer formulation. Returns the failures, printing each.
int check_factor_edges() {
  int failures = 0, checks = 0;
  auto expect = [&](T d, double a, int want, int got, const char* what) {
    ++checks;
    if (got == want) return;
    ++failures;
    std::printf("{\"selfcheck\": \"MXFP8 factor (%s) of %.17g: %s\", \"ok\": false, \"got\": %d, \"want\": %d}\n",
                d == T::e4m3 ? "e4m3" : "e5m2", a, what, got, want);
  };
  for (T d : {T::e4m3, T::e5m2}) {
    const double fmax = fp8_max(d);
    expect(d, 0, 0, mx_factor(0, fmax), "zero");
    expect(d, 5e-324, 0, mx_factor(5e-324, fmax), "the smallest double");
    expect(d, 1e300, 254, mx_factor(1e300, fmax), "clamped to 254");
    for (int j = -130; j <= 130; ++j) {
      const double a = std::ldexp(fmax, j);
      const int want = std::clamp(127 + j, 0, 254);
      expect(d, a, want, mx_factor(a, fmax), "Fmax 2^j");
      const float af = static_cast<float>(a);
      if (std::isfinite(af) && af == a && std::fpclassify(af) == FP_NORMAL) {
        const float above = std::nextafter(af, INFINITY), below = std::nextafter(af, 0.f);
        expect(d, above, std::clamp(128 + j, 0, 254), mx_factor(above, fmax), "one f32 ulp above Fmax 2^j");
        expect(d, below, want, mx_factor(below, fmax), "one f32 ulp below Fmax 2^j");
        expect(d, a, want, kernel_factor(af, d), "Fmax 2^j (the kernel's bits)");
        expect(d, above, std::clamp(128 + j, 0, 254), kernel_factor(above, d), "above (the kernel's bits)");
      }
    }
    std::mt19937_64 rng(5);
    std::uniform_int_distribution<uint32_t> bits(0x00800000u, 0x7F7FFFFFu);  // every positive normal f32
    int differ = 0;
    float first = 0;
    for (int t = 0; t < 200000; ++t) {
      const uint32_t b = bits(rng);
      float a;
      std::memcpy(&a, &b, 4);
      if (mx_factor(a, fmax) != kernel_factor(a, d) && differ++ == 0) first = a;
    }
    expect(d, first, 0, differ, "random f32 values whose mx_factor and kernel factor differ");
  }
  std::printf("{\"selfcheck\": \"MXFP8 factor at its edges and on 400000 random f32\", \"ok\": %s, \"checks\": %d}\n",
              failures ? "false" : "true", checks);
  return failures;
}

int selfcheck() {
  const int64_t m = 96, k = 1000;
  std::mt19937_64 rng(11);
  const double scale = std::sqrt(6.0 / std::sqrt(double(k)));
  int failures = 0, checks = 0;
  const T outs[] = {T::bf16, T::f16, T::f32}, biases[] = {T::f32, T::bf16, T::f16};
  int round = 0;
  // One epilogue (its ops, the bias's axis) with D of type `out` and n columns of B: the emulated
  // kernel passes, each mutation that applies fails.
  auto one = [&](const char* ops, const char* along, T out, int64_t n) {
    Epilogue e;
    for (const char* p = ops; *p;) {
      const char* q = std::strchr(p, ' ');
      e.ops.emplace_back(p, q ? q : p + std::strlen(p));
      p = q ? q + 1 : p + std::strlen(p);
    }
    e.bias = std::string(along) != "";
    auto has = [&](const char* o) { return std::find(e.ops.begin(), e.ops.end(), o) != e.ops.end(); };
    e.alpha = has("alpha") ? 0.5 : 1;
    e.beta = has("beta_c") ? -1.5 : 1;
    e.c = has("c") || has("beta_c");
    e.residual = has("residual");
    e.amax = has("amax");
    e.d_scale = has("d_scale");
    e.mxfp8 = has("mxfp8");
    e.c_type = biases[(round + 1) % 3];
    e.residual_type = biases[(round + 2) % 3];
    e.bias_m = std::string(along) == "m";
    e.bias_type = biases[round++ % 3];
    e.bias_dtype = e.bias_type == T::f32 ? "f32" : e.bias_type == T::bf16 ? "bf16" : "f16";
    bool activation = false;
    for (const char* a : {"relu", "sigmoid", "silu", "gelu_tanh", "gelu", "swiglu", "geglu"}) activation = activation || has(a);
    e.gated = has("swiglu") || has("geglu");
    const int64_t dn = e.gated ? n / 2 : n;  // a gated D: n/2 columns
    Matrix A{T::bf16, m, k, true, k}, B{T::bf16, k, n, true, n}, D{out, m, dn, true, dn};
    std::vector<char> ha, hb, hbn, hbm, hd;
    const std::vector<double> ra = fill(A, ha, rng, scale), rb = fill(B, hb, rng, scale);
    const std::vector<double> bn = fill_bias(e.bias_type, n, hbn, rng), bm = fill_bias(e.bias_type, m, hbm, rng);
    std::vector<char> hc, hr;
    const std::vector<double> cv = fill_bias(e.c_type, m * n, hc, rng), rv = fill_bias(e.residual_type, m * n, hr, rng);
    std::vector<double> ref, mag;
    cpu_gemm(ra, rb, ref, m, n, k, &mag);
    const double unit = accumulator_bound(T::bf16, "f32", k);
    const char* out_name = out == T::bf16 ? "bf16" : out == T::f16 ? "f16" : out == T::f32 ? "f32" : out == T::e4m3 ? "e4m3" : "e5m2";
    auto run = [&](const char* what, Mutation mu, bool want_pass) {
      std::vector<unsigned char> sfd;
      emulate(e, D, hd, ra, rb, k, bn, bm, mu, cv, rv, &sfd);
      const FusedCheck c = check_fused(e, D, hd, ref, mag, e.bias_m ? bm : bn, unit, false, cv, rv, sfd);
      const bool ok = (c.worst <= 1) == want_pass;
      ++checks, failures += !ok;
      std::printf("{\"selfcheck\": \"%s, D %s: %s\", \"ok\": %s, \"worst_ratio\": %.4g, \"worst_at\": \"%s\"}\n",
                  e.describe().c_str(), out_name, what, ok ? "true" : "false", std::isfinite(c.worst) ? c.worst : 1e308,
                  c.where.c_str());
    };
    run("the kernel's arithmetic passes", Mutation{}, true);
    if (e.bias) run("the bias along the other axis fails", Mutation{true, false, false, false}, false);
    if (activation) run("the activation left out fails", Mutation{false, true, false, false}, false);
    // 8 of 1000 products: far outside a 16- or 32-bit D's bound, not always outside an 8-bit D's rounding
    if (bytes_of(out) > 1) run("8 elements of K left out fail", Mutation{false, false, true, false}, false);
    if (e.gated) run("gate and up swapped fails", Mutation{false, false, false, true}, false);
    if (!e.mxfp8) return;
    const std::pair<Mx, const char*> mxs[] = {{Mx::floor_factor, "the factor rounded down (OCP's floor) fails"},
                                              {Mx::no_divide, "the values left undivided fail"},
                                              {Mx::misplaced, "the factors row-major, not in the 128x4 layout, fail"},
                                              {Mx::double_factor, "the values divided by twice the factor fail"},
                                              {Mx::padding_written, "a padding byte of SFD written fails"}};
    for (const auto& [mx, what] : mxs) {
      Mutation mu;
      mu.mx = mx;
      run(what, mu, false);
    }
  };
  const char* sets[][2] = {{"bias", "n"},      {"bias", "m"},          {"relu", ""},          {"sigmoid", ""},
                           {"silu", ""},       {"gelu_tanh", ""},      {"bias gelu_tanh", "n"}, {"bias silu", "m"},
                           {"bias sigmoid", "n"}, {"bias relu", "m"},  {"swiglu", ""},          {"bias geglu", "n"},
                           {"alpha beta_c bias silu residual", "m"}, {"alpha c relu residual", ""},
                           {"gelu", ""},       {"bias gelu", "m"}};
  for (const auto& set : sets)
    for (T out : outs) one(set[0], set[1], out, 80);
  // An 8-bit D with its scale and the amax (saturating conversion, e4m3's and e5m2's rounding).
  for (T out : {T::e4m3, T::e5m2}) one("bias relu amax d_scale", "n", out, 80);
  // MXFP8: 160 columns (5 blocks a row: a second 512-byte column block with one factor and three of
  // padding) and 96 rows (32 rows of padding), each element type.
  const char* mx_sets[][2] = {{"mxfp8", ""}, {"bias gelu_tanh mxfp8", "n"}, {"bias silu amax mxfp8", "m"},
                              {"alpha c relu residual amax d_scale mxfp8", ""}, {"swiglu mxfp8", ""}};
  for (const auto& set : mx_sets)
    for (T out : {T::e4m3, T::e5m2}) one(set[0], set[1], out, std::strcmp(set[0], "swiglu mxfp8") == 0 ? 320 : 160);
  const int factor_failures = check_factor_edges();
  ++checks, failures += factor_failures > 0;
  std::printf("{\"selfcheck_checks\": %d, \"selfcheck_failures\": %d}\n", checks, failures);
  return failures ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2)
    die(2, "usage: ptxgen-launch CASE [--m M --n N --k K] [--iters N] [--seed S] [--tolerance T] | --list | --bad-input"
           " | --selfcheck");
  const std::string which = argv[1];
  if (which == "--bad-input") return bad_input();
  if (which == "--selfcheck") return selfcheck();
  if (which == "--list") {
#define LIST(NAME, ...)                                                                             \
  std::printf("%s\t%s\t%s\n", #NAME, ptxgen::NAME##_info.targets, epilogue_of(ptxgen::NAME##_info).describe().c_str());
    PTXGEN_KERNELS_GEMMS(LIST)
    PTXGEN_KERNELS_EPILOGUE_GEMMS(LIST)
    PTXGEN_KERNELS_BLOCKWISE_GEMMS(LIST)
    PTXGEN_KERNELS_GROUPED_GEMMS(LIST)
#undef LIST
    return 0;
  }
  Options opt;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string f = argv[i];
    const long long v = std::atoll(argv[i + 1]);
    if (f == "--m") opt.m = v;
    else if (f == "--n") opt.n = v;
    else if (f == "--k") opt.k = v;
    else if (f == "--groups") opt.groups = v;
    else if (f == "--align") opt.align = v;
    else if (f == "--iters") opt.iters = static_cast<int>(v);
    else if (f == "--seed") opt.seed = static_cast<unsigned>(v);
    else if (f == "--tolerance") opt.tolerance = std::atof(argv[i + 1]);
    else die(2, "unknown option " + f);
  }
  if (opt.m < 0 || opt.n < 0 || opt.k < 0 || opt.groups < 0 || opt.align < 0 || opt.iters < 1) die(2, "sizes and --iters must be positive");
#define CASE(NAME, TA, TB, TD)                                                                                     \
  if (which == #NAME)                                                                                              \
    return run_case<ptxgen::NAME##_launch>(                                                                        \
        ptxgen::NAME##_info,                                                                                       \
        [](const Bufs& b, CUstream s) {                                                                            \
          return ptxgen::NAME(ptxgen::device_pointer<const TA>(b.a), b.lda, ptxgen::device_pointer<const TB>(b.b), \
                              b.ldb, ptxgen::device_pointer<TD>(b.d), SIZES(b), s);                                \
        },                                                                                                         \
        [](const Bufs& b, ptxgen::NAME##_launch& l) {                                                              \
          return ptxgen::NAME##_prepare(ptxgen::device_pointer<const TA>(b.a), b.lda,                              \
                                        ptxgen::device_pointer<const TB>(b.b), b.ldb,                              \
                                        ptxgen::device_pointer<TD>(b.d), SIZES(b), l);                             \
        },                                                                                                         \
        opt);
  PTXGEN_KERNELS_GEMMS(CASE)
#undef CASE
  // Kernels with fused epilogue inputs: the same, the inputs after D (C, bias, residual: those it takes);
  // with block-wise f32 factors (BLOCKWISE_GEMMS rows, the same columns) SFA and SFB before the sizes.
  // ARGS: epilogue_args or blockwise_args.
#define ROW_CASE(ARGS, NAME, TA, TB, TD, TC, TBIAS, TR, TAL, TBE, TS, TAMAX, TSFD)                                      \
  if (which == #NAME)                                                                                              \
    return run_case<ptxgen::NAME##_launch>(                                                                        \
        ptxgen::NAME##_info,                                                                                       \
        [](const Bufs& b, CUstream s) {                                                                            \
          return std::apply([s](auto... x) { return ptxgen::NAME(x..., s); }, ARGS<TA, TB, TD, TC, TBIAS, TR, TAL, TBE, TS, TAMAX, TSFD>(b)); \
        },                                                                                                         \
        [](const Bufs& b, ptxgen::NAME##_launch& l) {                                                              \
          return std::apply([&l](auto... x) { return ptxgen::NAME##_prepare(x..., l); },                          \
                            ARGS<TA, TB, TD, TC, TBIAS, TR, TAL, TBE, TS, TAMAX, TSFD>(b));                                         \
        },                                                                                                         \
        opt);
#define CASE(...) ROW_CASE(epilogue_args, __VA_ARGS__)
  PTXGEN_KERNELS_EPILOGUE_GEMMS(CASE)
#undef CASE
#define CASE(...) ROW_CASE(blockwise_args, __VA_ARGS__)
  PTXGEN_KERNELS_BLOCKWISE_GEMMS(CASE)
#undef CASE
#undef ROW_CASE
  // Grouped kernels: a bias after D where they take one, masked_m or ends next, the groups after k;
  // the tiles past a group's rows are tile.m's.
#define CASE(NAME, TA, TB, TD, TBIAS)                                                                               \
  if (which == #NAME)                                                                                               \
    return run_grouped_case<ptxgen::NAME##_launch, TBIAS>(                                                          \
        ptxgen::NAME##_info,                                                                                        \
        [](const Bufs& b, CUdeviceptr mm, int64_t g, CUstream s, auto... bias) {                                    \
          return ptxgen::NAME(ptxgen::device_pointer<const TA>(b.a), b.lda, ptxgen::device_pointer<const TB>(b.b),  \
                              b.ldb, ptxgen::device_pointer<TD>(b.d), bias..., ptxgen::device_pointer<const std::int32_t>(mm), \
                              SIZES(b), ptxgen::size::groups{g}, s);                                                \
        },                                                                                                          \
        [](const Bufs& b, CUdeviceptr mm, int64_t g, ptxgen::NAME##_launch& l, auto... bias) {                      \
          return ptxgen::NAME##_prepare(ptxgen::device_pointer<const TA>(b.a), b.lda,                               \
                                        ptxgen::device_pointer<const TB>(b.b), b.ldb, ptxgen::device_pointer<TD>(b.d), \
                                        bias..., ptxgen::device_pointer<const std::int32_t>(mm), SIZES(b),          \
                                        ptxgen::size::groups{g}, l);                                                \
        },                                                                                                          \
        opt, ptxgen::detail::k_##NAME::entries[0].tile_m);
  PTXGEN_KERNELS_GROUPED_GEMMS(CASE)
#undef CASE
  die(2, "the header has no gemm kernel " + which + " (--list lists them)");
}
