// Calls the kernels through their generated launch headers (proj_launch.hpp, score_launch.hpp):
// what a program that uses ptxgen writes. Each kernel runs once on fresh random inputs and is
// checked against a CPU reference; a kernel without code for this GPU is refused with a message.
// Without a GPU (or driver) only the argument checks run, which need no CUDA call.
#define PTXGEN_CUDA_TYPES 1  // the headers' bf16, f16, e4m3, e5m2 are CUDA's own types
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "proj_launch.hpp"
#include "score_launch.hpp"

namespace {

// D[m x n] = A[m x k] . B[n x k]^T on the GPU through `launch`, checked against doubles.
// Returns 1 when the result is wrong or a CUDA call fails; 0 when right or refused for this GPU.
template <class TA, class TB, class TD, class Launch>
int gemm(const char* name, Launch launch, std::int64_t m, std::int64_t n, std::int64_t k, CUstream stream) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<TA> a(static_cast<size_t>(m * k));
  std::vector<TB> b(static_cast<size_t>(n * k));
  std::vector<double> ref(static_cast<size_t>(m * n), 0.0);
  for (auto& x : a) x = TA(u(rng));
  for (auto& x : b) x = TB(u(rng));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t kk = 0; kk < k; ++kk)
        ref[static_cast<size_t>(i * n + j)] +=
            double(float(a[static_cast<size_t>(i * k + kk)])) * double(float(b[static_cast<size_t>(j * k + kk)]));
  CUdeviceptr da = 0, db = 0, dd = 0;
  if (cuMemAlloc(&da, a.size() * sizeof(TA)) || cuMemAlloc(&db, b.size() * sizeof(TB)) ||
      cuMemAlloc(&dd, ref.size() * sizeof(TD)) || cuMemcpyHtoD(da, a.data(), a.size() * sizeof(TA)) ||
      cuMemcpyHtoD(db, b.data(), b.size() * sizeof(TB))) {
    std::printf("%s: a CUDA call failed\n", name);
    return 1;
  }
  int wrong = 0;
  // Each size is its own type: m, n and k in another order would not compile.
  const CUresult r =
      launch(ptxgen::device_pointer<const TA>(da), ptxgen::device_pointer<const TB>(db), ptxgen::device_pointer<TD>(dd),
             ptxgen::size::m{m}, ptxgen::size::n{n}, ptxgen::size::k{k}, stream);
  if (r == CUDA_ERROR_NO_BINARY_FOR_GPU) {
    std::printf("%s: not for this GPU: %s\n", name, ptxgen::last_error());
  } else if (r != CUDA_SUCCESS) {
    std::printf("%s: %s\n", name, ptxgen::last_error());
    wrong = 1;
  } else {
    std::vector<TD> d(ref.size());
    if (cuStreamSynchronize(stream) || cuMemcpyDtoH(d.data(), dd, d.size() * sizeof(TD))) {
      std::printf("%s: the kernel failed\n", name);
      wrong = 1;
    } else {
      double num = 0, den = 0;
      for (size_t i = 0; i < d.size(); ++i) {
        const double e = double(float(d[i])) - ref[i];
        num += e * e;
        den += ref[i] * ref[i];
      }
      const double rel = std::sqrt(num / den);
      wrong = !(rel < 2e-2);
      std::printf("%s: %s (%lld x %lld x %lld, relative error %.2e)\n", name, wrong ? "WRONG" : "ok",
                  static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k), rel);
    }
  }
  cuMemFree(da);
  cuMemFree(db);
  cuMemFree(dd);
  return wrong;
}

}  // namespace

int main() {
  // The checks alone: no GPU needed. A K of 100 bf16 elements puts A's rows 200 bytes apart.
  const CUresult c = ptxgen::qkv_bf16_128x192x64_check(
      ptxgen::device_pointer<const ptxgen::bf16>(0x10000), ptxgen::device_pointer<const ptxgen::bf16>(0x20000),
      ptxgen::device_pointer<ptxgen::bf16>(0x30000), ptxgen::size::m{256}, ptxgen::size::n{384}, ptxgen::size::k{100});
  std::printf("check: CUresult %d: %s\n", static_cast<int>(c), ptxgen::last_error());

  int devices = 0;
  if (cuInit(0) != CUDA_SUCCESS || cuDeviceGetCount(&devices) != CUDA_SUCCESS || devices == 0) {
    std::printf("no CUDA device: nothing launched\n");
    return 0;
  }
  CUdevice dev;
  CUcontext ctx;
  CUstream stream;
  if (cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx) ||
      cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING))
    return 1;
  int wrong = 0;
  using ptxgen::bf16;
  using ptxgen::f16;
  wrong += gemm<bf16, bf16, bf16>("qkv_bf16_128x192x64", [](auto... x) { return ptxgen::qkv_bf16_128x192x64(x...); },
                                  256, 384, 128, stream);
  wrong += gemm<f16, f16, f16>("out_f16_64x128x64", [](auto... x) { return ptxgen::out_f16_64x128x64(x...); }, 200,
                               256, 192, stream);
  wrong += gemm<ptxgen::e5m2, ptxgen::e4m3, f16>(
      "qk_e5m2_128x128x128", [](auto... x) { return ptxgen::qk_e5m2_128x128x128(x...); }, 128, 128, 128, stream);
  return wrong ? 1 : 0;
}
