// ptxgen-launch: runs the kernels of a ptxgen launch header on a GPU, through the header's own
// typed launch functions, and checks and times them.
//
//   ptxgen-launch CASE [--m M --n N --k K] [--iters N] [--seed S] [--tolerance T]
//   ptxgen-launch --list          the header's gemm kernels
//   ptxgen-launch --bad-input     what the header refuses on this GPU, and that the context survives
//
// Built with the header it runs (nvcc -DPTXGEN_LAUNCH_HEADER='"kernels.hpp"' -I DIR, which
// tools/h200-grid.py does): every gemm kernel the header holds is a CASE, named after its spec.
// For a CASE it fills fresh random inputs, poisons D and a guard region after it, launches with
// ptxgen::NAME(...) (the header checks the arguments, loads the module, encodes the tensor maps
// and calls cuLaunchKernelEx), checks every element against a reference (float64 on the CPU for
// small problems; cuBLAS for large ones where cuBLAS has the types, else a float64 GPU kernel), and
// times ptxgen::launch of a prepared launch and cuBLAS with CUDA events (median of --iters after
// warm-up). One JSON line on stdout; exit 0 when the result is within tolerance, 1 when it is not,
// 2 on bad input, 3 on a CUDA error or a refused launch (the header's words printed), 4 on a
// timeout (a kernel that does not finish in 20 s).
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
#include <vector>

#ifndef PTXGEN_LAUNCH_HEADER
#define PTXGEN_LAUNCH_HEADER "kernels.hpp"
#endif
#define PTXGEN_CUDA_TYPES 1  // the header's bf16, f16, e4m3, e5m2 are CUDA's own
#include PTXGEN_LAUNCH_HEADER

#ifndef PTXGEN_KERNELS_GEMMS
#error "the launch header must be named kernels.hpp (its X-macro lists are PTXGEN_KERNELS_GEMMS / _PROGRAMS)"
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

// A float64 reference on the GPU, for types cuBLAS's GemmEx does not take.
__global__ void ref_gemm(const double* a, const double* b, double* d, int64_t m, int64_t n, int64_t k) {
  __shared__ double as[16][17], bs[16][17];
  const int64_t row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
  double acc = 0;
  for (int64_t k0 = 0; k0 < k; k0 += 16) {
    as[threadIdx.y][threadIdx.x] = (row < m && k0 + threadIdx.x < k) ? a[row * k + k0 + threadIdx.x] : 0;
    bs[threadIdx.y][threadIdx.x] = (col < n && k0 + threadIdx.y < k) ? b[(k0 + threadIdx.y) * n + col] : 0;
    __syncthreads();
    for (int j = 0; j < 16; ++j) acc += as[threadIdx.y][j] * bs[j][threadIdx.x];
    __syncthreads();
  }
  if (row < m && col < n) d[row * n + col] = acc;
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
  CUdeviceptr a = 0, b = 0, d = 0;
  int64_t lda = 0, ldb = 0, m = 0, n = 0, k = 0;
};
// A gemm launch function's sizes, each its own type (ptxgen::size::m ...), from a Bufs.
#define SIZES(B) ptxgen::size::m{(B).m}, ptxgen::size::n{(B).n}, ptxgen::size::k{(B).k}

struct Options {
  int64_t m = 0, n = 0, k = 0;  // 0: the spec's
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

// Fresh random inputs: floats uniform in [-1, 1) rounded to the type, integers in [-4, 4] (u8 0..8).
// Returns the exact values, row-major (rows x cols).
std::vector<double> fill(const Matrix& x, std::vector<char>& h, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> uf(-1.0, 1.0);
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

void cpu_gemm(const std::vector<double>& ra, const std::vector<double>& rb, std::vector<double>& ref, int64_t m,
              int64_t n, int64_t k) {
  ref.assign(size_t(m) * n, 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t kk = 0; kk < k; ++kk) {
      const double a = ra[size_t(i) * k + kk];
      if (a == 0) continue;
      const double* brow = &rb[size_t(kk) * n];
      double* drow = &ref[size_t(i) * n];
      for (int64_t j = 0; j < n; ++j) drow[j] += a * brow[j];
    }
}

// Runs one gemm kernel of the header: `call` is ptxgen::NAME, `prepare` ptxgen::NAME_prepare.
template <class Launch, class Call, class Prepare>
int run_case(const ptxgen::KernelInfo& info, Call call, Prepare prepare, const Options& opt) {
  const int64_t m = opt.m ? opt.m : info.m, n = opt.n ? opt.n : info.n, k = opt.k ? opt.k : info.k;
  const bool same = m == info.m && n == info.n && k == info.k;
  CK(cuInit(0));
  CUdevice dev;
  CK(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CK(cuCtxSetCurrent(ctx));
  Matrix A = operand(info.tensors[0], m, k, same), B = operand(info.tensors[1], k, n, same);
  Matrix D{parse_type(info.tensors[2].dtype), m, n, true, n};
  const size_t a_bytes = A.elements() * bytes_of(A.type), b_bytes = B.elements() * bytes_of(B.type);
  const size_t d_bytes = D.elements() * bytes_of(D.type), guard = 1 << 16;
  size_t free_b = 0, total_b = 0;
  CK(cuMemGetInfo(&free_b, &total_b));
  if (a_bytes + b_bytes + 2 * (d_bytes + guard) + 8 * (size_t(m) * k + size_t(k) * n + size_t(m) * n) > free_b)
    die(2, "the problem does not fit in device memory (" + std::to_string(free_b >> 20) + " MiB free)");

  std::mt19937_64 rng(opt.seed);
  std::vector<char> ha, hb;
  const std::vector<double> ra = fill(A, ha, rng), rb = fill(B, hb, rng);
  Bufs bufs;
  bufs.lda = A.ld, bufs.ldb = B.ld, bufs.m = m, bufs.n = n, bufs.k = k;
  CK(cuMemAlloc(&bufs.a, a_bytes));
  CK(cuMemAlloc(&bufs.b, b_bytes));
  CK(cuMemAlloc(&bufs.d, d_bytes + guard));
  CK(cuMemcpyHtoD(bufs.a, ha.data(), a_bytes));
  CK(cuMemcpyHtoD(bufs.b, hb.data(), b_bytes));
  CK(cuMemsetD8(bufs.d, 0xFE, d_bytes + guard));  // poison: an improbable value in every type
  CUstream stream;
  CK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));

  // The header's one-shot call: checks, the module for this context, tensor maps, launch.
  CKH(call(bufs, stream));
  sync_with_timeout(stream);

  std::vector<char> hd(d_bytes + guard);
  CK(cuMemcpyDtoH(hd.data(), bufs.d, d_bytes + guard));
  size_t guard_hit = 0;
  for (size_t i = d_bytes; i < d_bytes + guard; ++i) guard_hit += static_cast<unsigned char>(hd[i]) != 0xFE;

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
  if (work <= double(1u << 30)) {
    ref_kind = "float64 CPU";
    cpu_gemm(ra, rb, ref, m, n, k);
  } else if (blas_types) {
    ref_kind = A.type == T::s8 ? "cuBLAS s32" : "cuBLAS f32";
    ref.assign(size_t(m) * n, 0.0);
    const bool integer = A.type == T::s8;
    CUdeviceptr dr;
    CK(cuMemAlloc(&dr, size_t(m) * n * 4));
    const float one = 1, zero = 0;
    const int32_t ione = 1, izero = 0;
    CK(cublasGemmEx(blas, opB, opA, static_cast<int>(n), static_cast<int>(m), static_cast<int>(k),
                    integer ? static_cast<const void*>(&ione) : &one, reinterpret_cast<void*>(bufs.b),
                    cuda_type(B.type), static_cast<int>(B.ld), reinterpret_cast<void*>(bufs.a), cuda_type(A.type),
                    static_cast<int>(A.ld), integer ? static_cast<const void*>(&izero) : &zero,
                    reinterpret_cast<void*>(dr), integer ? CUDA_R_32I : CUDA_R_32F, static_cast<int>(n),
                    integer ? CUBLAS_COMPUTE_32I : CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    sync_with_timeout(stream);
    std::vector<float> hr(size_t(m) * n);
    CK(cuMemcpyDtoH(hr.data(), dr, hr.size() * 4));
    for (size_t i = 0; i < hr.size(); ++i)
      ref[i] = integer ? static_cast<double>(reinterpret_cast<int32_t*>(hr.data())[i]) : hr[i];
    CK(cuMemFree(dr));
  } else {
    ref_kind = "float64 GPU";
    ref.assign(size_t(m) * n, 0.0);
    double *ga, *gb, *gd;
    CK(cudaMalloc(&ga, ra.size() * 8));
    CK(cudaMalloc(&gb, rb.size() * 8));
    CK(cudaMalloc(&gd, ref.size() * 8));
    CK(cudaMemcpy(ga, ra.data(), ra.size() * 8, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(gb, rb.data(), rb.size() * 8, cudaMemcpyHostToDevice));
    ref_gemm<<<dim3(unsigned((n + 15) / 16), unsigned((m + 15) / 16)), dim3(16, 16)>>>(ga, gb, gd, m, n, k);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(ref.data(), gd, ref.size() * 8, cudaMemcpyDeviceToHost));
    cudaFree(ga);
    cudaFree(gb);
    cudaFree(gd);
  }

  // Compare: relative Frobenius error, maximum error, unwritten and non-finite elements.
  double num = 0, den = 0, max_abs = 0;
  size_t unwritten = 0, nonfinite = 0;
  std::vector<unsigned char> poison(bytes_of(D.type), 0xFE);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const size_t idx = D.index(i, j);
      if (std::memcmp(&hd[idx * bytes_of(D.type)], poison.data(), poison.size()) == 0) ++unwritten;
      const double v = load(D.type, hd.data(), idx), r = ref[size_t(i) * n + j];
      if (!std::isfinite(v)) {
        ++nonfinite;
        continue;
      }
      num += (v - r) * (v - r);
      den += r * r;
      max_abs = std::max(max_abs, std::fabs(v - r));
    }
  const double rel = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  const double tolerance = opt.tolerance >= 0 ? opt.tolerance : is_int(D.type) && is_int(A.type) ? 0.0 : 1e-2;
  const bool ok = unwritten == 0 && nonfinite == 0 && guard_hit == 0 && rel <= tolerance;

  // Timing: warm-up, then the median of `iters` launches, each between two events. The kernel
  // runs as the header launches it: a prepared launch (tensor maps encoded once) run by ptxgen::launch.
  CUevent e0, e1;
  CK(cuEventCreate(&e0, CU_EVENT_DEFAULT));
  CK(cuEventCreate(&e1, CU_EVENT_DEFAULT));
  auto time_it = [&](auto&& launch) {
    for (int i = 0; i < 3; ++i) launch();
    sync_with_timeout(stream);
    std::vector<float> ms;
    for (int i = 0; i < opt.iters; ++i) {
      CK(cuEventRecord(e0, stream));
      launch();
      CK(cuEventRecord(e1, stream));
      sync_with_timeout(stream);
      float t = 0;
      CK(cuEventElapsedTime(&t, e0, e1));
      ms.push_back(t);
    }
    return median(ms);
  };
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
  std::printf(", \"launched_through\": \"ptxgen::%s / ptxgen::launch\", \"ok\": %s}\n", info.name, ok ? "true" : "false");
  cublasDestroy(blas);
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
  Gemm here, foreign;
#define FIND(NAME, TA, TB, TD)                                                                                  \
  {                                                                                                             \
    Gemm g{&ptxgen::NAME##_info, [](const Bufs& b, CUstream s) {                                                \
             return ptxgen::NAME(ptxgen::device_pointer<const TA>(b.a), b.lda, ptxgen::device_pointer<const TB>(b.b), \
                                 b.ldb, ptxgen::device_pointer<TD>(b.d), SIZES(b), s);                          \
           }};                                                                                                  \
    if (!here.info && runs_here(*g.info) && plain_bf16(*g.info)) here = g;                                      \
    if (!foreign.info && !runs_here(*g.info)) foreign = g;                                                      \
  }
  PTXGEN_KERNELS_GEMMS(FIND)
#undef FIND
  if (!here.info || !foreign.info) die(2, "--bad-input needs a bf16 sm_90a gemm kernel and a kernel for another target");
  CK(cuInit(0));
  CUdevice dev;
  CK(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CK(cuCtxSetCurrent(ctx));
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

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2)
    die(2, "usage: ptxgen-launch CASE [--m M --n N --k K] [--iters N] [--seed S] [--tolerance T] | --list | --bad-input");
  const std::string which = argv[1];
  if (which == "--bad-input") return bad_input();
  if (which == "--list") {
#define LIST(NAME, TA, TB, TD) std::printf("%s\t%s\n", #NAME, ptxgen::NAME##_info.targets);
    PTXGEN_KERNELS_GEMMS(LIST)
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
    else if (f == "--iters") opt.iters = static_cast<int>(v);
    else if (f == "--seed") opt.seed = static_cast<unsigned>(v);
    else if (f == "--tolerance") opt.tolerance = std::atof(argv[i + 1]);
    else die(2, "unknown option " + f);
  }
  if (opt.m < 0 || opt.n < 0 || opt.k < 0 || opt.iters < 1) die(2, "sizes and --iters must be positive");
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
  die(2, "the header has no gemm kernel " + which + " (--list lists them)");
}
