// Compiled by tests/header_test.cpp against the launch headers of every shipped spec (gemms.hpp:
// specs/gemm_*.json, programs.hpp: specs/prog_*.json) and the toolkit's stub libcuda, then run.
// Without a GPU: every launch function is instantiated, every kernel's checks accept its spec's
// own arguments and refuse bad ones with the words the header documents, and a launch that gets
// past the checks stops at the driver (the stub) instead of launching.
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "gemms.hpp"
#include "programs.hpp"

namespace {

int failures = 0;

void expect(const std::string& what, CUresult got, CUresult want, const char* words) {
  const std::string msg = ptxgen::last_error();
  if (got != want || (words && msg.find(words) == std::string::npos) || (!words && !msg.empty())) {
    std::printf("FAIL %s: CUresult %d (want %d), \"%s\" (want \"%s\")\n", what.c_str(), static_cast<int>(got),
                static_cast<int>(want), msg.c_str(), words ? words : "");
    ++failures;
  }
}

template <class T>
T* at(std::uintptr_t address) {
  return reinterpret_cast<T*>(address);
}

const std::uintptr_t kA = 0x100000, kB = 0x2000000, kD = 0x40000000;  // aligned stand-in device addresses

// Every gemm kernel: its long form instantiated, its spec's own arguments accepted, a null A refused.
#define GEMM(NAME, TA, TB, TD)                                                                                         \
  {                                                                                                                    \
    using F = CUresult (*)(const TA*, std::int64_t, const TB*, std::int64_t, TD*, std::int64_t, std::int64_t,          \
                           std::int64_t, CUstream);                                                                    \
    F f = &ptxgen::NAME;                                                                                               \
    (void)f;                                                                                                           \
    const ptxgen::KernelInfo& i = ptxgen::NAME##_info;                                                                 \
    expect(#NAME " at its spec's sizes",                                                                               \
           ptxgen::NAME##_check(at<const TA>(kA), i.tensors[0].ld, at<const TB>(kB), i.tensors[1].ld, at<TD>(kD), i.m, \
                                i.n, i.k),                                                                             \
           CUDA_SUCCESS, nullptr);                                                                                     \
    expect(#NAME " with a null A", ptxgen::NAME##_check(nullptr, at<const TB>(kB), at<TD>(kD), i.m, i.n, i.k),         \
           CUDA_ERROR_INVALID_VALUE, "a (A, ");                                                                        \
    ++gemms;                                                                                                           \
  }

// Every program: its functions instantiated; the checks accept aligned addresses, refuse a null one.
#define PROGRAM(NAME)                                                                                         \
  {                                                                                                           \
    (void)&ptxgen::NAME;                                                                                      \
    (void)&ptxgen::NAME##_prepare;                                                                            \
    (void)&ptxgen::NAME##_check;                                                                              \
    std::uint64_t p[64] = {};                                                                                 \
    const std::int64_t ld[64] = {};                                                                           \
    const auto& k = ptxgen::detail::k_##NAME::kernel;                                                         \
    for (unsigned t = 0; t < k.tensor_count; ++t) p[t] = kA * (t + 1);                                        \
    ptxgen::detail::ok(); /* detail::check leaves the words of an earlier failure */                          \
    expect(#NAME " with aligned tensors", ptxgen::detail::check(k, {p, ld, nullptr}), CUDA_SUCCESS, nullptr); \
    p[k.tensor_count - 1] = 0;                                                                                \
    expect(#NAME " with a null tensor", ptxgen::detail::check(k, {p, ld, nullptr}), CUDA_ERROR_INVALID_VALUE, \
           "is a null pointer");                                                                              \
    ++programs;                                                                                               \
  }

}  // namespace

int main() {
  int gemms = 0, programs = 0;
  PTXGEN_GEMMS_GEMMS(GEMM)
  PTXGEN_PROGRAMS_PROGRAMS(PROGRAM)

  using ptxgen::bf16;
  const bf16* a = at<const bf16>(kA);
  const bf16* b = at<const bf16>(kB);
  bf16* d = at<bf16>(kD);
  // gemm_sm90_bf16_128x256x64: A m x k and B n x k, both K-major, D m x n.
  auto sm90 = [&](const bf16* x, std::int64_t lda, const bf16* y, std::int64_t ldb, bf16* z, std::int64_t m,
                  std::int64_t n,
                  std::int64_t k) { return ptxgen::gemm_sm90_bf16_128x256x64_check(x, lda, y, ldb, z, m, n, k); };
  const CUresult bad = CUDA_ERROR_INVALID_VALUE;
  expect("good", sm90(a, 64, b, 64, d, 100, 100, 64), CUDA_SUCCESS, nullptr);
  expect("null b", sm90(a, 64, nullptr, 64, d, 100, 100, 64), bad, "b (B, bf16) is a null pointer");
  expect("null d", sm90(a, 64, b, 64, nullptr, 100, 100, 64), bad, "d (D, bf16) is a null pointer");
  expect("misaligned a", sm90(a + 1, 64, b, 64, d, 100, 100, 64), bad,
         "a (A, bf16) at 0x100002 is not 16-byte aligned");
  expect("misaligned d", sm90(a, 64, b, 64, d + 4, 100, 100, 64), bad,
         "d (D, bf16) at 0x40000008 is not 16-byte aligned");
  expect("lda < k", sm90(a, 32, b, 64, d, 100, 100, 64), bad,
         "lda = 32 is less than k = 64: the leading dimension of A counts the k elements of each of its 100 rows");
  expect(
      "lda stride", sm90(a, 100, b, 104, d, 100, 100, 100), bad,
      "lda = 100 puts the rows of A 200 bytes apart: a tensor map's row stride must be a multiple of 16 bytes (lda a "
      "multiple of 8)");
  expect("short form, odd k", ptxgen::gemm_sm90_bf16_128x256x64_check(a, b, d, 100, 100, 100), bad,
         "lda = 100 puts the rows of A 200 bytes apart");
  expect("ldb huge", sm90(a, 64, b, std::int64_t{1} << 45, d, 100, 100, 64), bad, "ldb = 35184372088832 is beyond");
  expect("ldb 2^40 bytes", sm90(a, 64, b, std::int64_t{1} << 39, d, 100, 100, 64), bad,
         "2^40 bytes or more apart, beyond a tensor map's stride");
  expect("m = 0", sm90(a, 64, b, 64, d, 0, 100, 64), bad, "m = 0: the kernel takes sizes from 1 to 2^31-1");
  expect("k = 2^31", sm90(a, std::int64_t{1} << 31, b, std::int64_t{1} << 31, d, 100, 100, std::int64_t{1} << 31), bad,
         "k = 2147483648: the kernel takes sizes from 1 to 2^31-1");
  expect("grid y", sm90(a, 64, b, 64, d, 65535 * 128 + 1, 100, 64), bad,
         "m = 8388481 needs 65536 CTAs along y, one per 128 rows (sm_90a); a grid has at most 65535: m <= 8388480");
  expect("grid y at the limit", sm90(a, 64, b, 64, d, 65535 * 128, 100, 64), CUDA_SUCCESS, nullptr);
  // M-major A and N-major B: the leading dimensions count m and n.
  expect("lda < m (M-major A)", ptxgen::gemm_bf16_mn_major_128x256x64_check(a, 64, b, 256, d, 128, 256, 64), bad,
         "lda = 64 is less than m = 128");
  expect("ldb < n (N-major B)", ptxgen::gemm_bf16_mn_major_128x256x64_check(a, 128, b, 64, d, 128, 256, 64), bad,
         "ldb = 64 is less than n = 256");
  // 4-bit operands through CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B: 32-byte aligned, K a multiple of 128.
  using ptxgen::e2m1x2;
  expect("e2m1 good", ptxgen::gemm_e2m1_e2m1_f8f6f4_check(at<const e2m1x2>(kA), at<const e2m1x2>(kB), d, 256, 256, 256),
         CUDA_SUCCESS, nullptr);
  expect("e2m1 16-byte aligned",
         ptxgen::gemm_e2m1_e2m1_f8f6f4_check(at<const e2m1x2>(kA + 16), at<const e2m1x2>(kB), d, 256, 256, 256), bad,
         "a (A, e2m1) at 0x100010 is not 32-byte aligned");
  expect(
      "e2m1 k = 192", ptxgen::gemm_e2m1_e2m1_f8f6f4_check(at<const e2m1x2>(kA), at<const e2m1x2>(kB), d, 256, 256, 192),
      bad,
      "a (A, e2m1): k = 192 is not a multiple of 128, which a CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B tensor map needs");
  // Programs: fixed shapes, every tensor 16-byte aligned.
  const float* none = nullptr;
  (void)none;
  expect("program null D", ptxgen::prog_tma_pair_bf16_m256_check(a, b, nullptr), bad, "D (f32) is a null pointer");
  expect("program misaligned B", ptxgen::prog_tma_pair_bf16_m256_check(a, b + 2, at<float>(kD)), bad,
         "B (bf16) at 0x2000004 is not 16-byte aligned");
  expect("program good", ptxgen::prog_tma_pair_bf16_m256_check(a, b, at<float>(kD)), CUDA_SUCCESS, nullptr);

  // An unprepared launch is refused; a launch that passes the checks stops at the driver: the stub
  // (or, with a real driver, the missing context) -- never a kernel launch.
  ptxgen::gemm_sm90_bf16_128x256x64_launch unprepared;
  expect("unprepared launch", ptxgen::launch(unprepared, nullptr), CUDA_ERROR_INVALID_HANDLE, "was not prepared");
  const CUresult r = ptxgen::gemm_sm90_bf16_128x256x64(a, 64, b, 64, d, 100, 100, 64, nullptr);
  if (r == CUDA_ERROR_STUB_LIBRARY)
    expect("stub driver", r, CUDA_ERROR_STUB_LIBRARY,
           "cuCtxGetCurrent failed: CUresult 34 (the libcuda this program "
           "loaded is the toolkit's stub: no CUDA driver is installed)");
  else
    expect("no context", r, CUDA_ERROR_INVALID_CONTEXT, "no CUDA context is current on this thread");
  // A refused launch says nothing about other threads' calls.
  expect("refused again", sm90(nullptr, 64, b, 64, d, 100, 100, 64), bad, "a (A, bf16) is a null pointer");
  std::string other;
  std::thread([&] {
    other = ptxgen::last_error();
    (void)sm90(a, 64, b, 64, d, 100, 100, 64);
  }).join();
  if (!other.empty()) {
    std::printf("FAIL a new thread's last_error() is \"%s\"\n", other.c_str());
    ++failures;
  }
  expect("still this thread's", CUDA_ERROR_INVALID_VALUE, bad, "a (A, bf16) is a null pointer");

  std::printf("%d gemm kernels, %d programs, %d failures\n", gemms, programs, failures);
  return failures ? 1 : 0;
}
