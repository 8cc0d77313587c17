// Calls every gemm kernel of the generated launch header (kernels.hpp, from specs/kernels.txt)
// through its typed function, whatever the specs are: the header's X-macro list names each kernel
// with its element types. Without a GPU only the argument checks run (they need no CUDA call);
// on a GPU each kernel runs on A = 1, B = 2 and every element of D must be 2k. A kernel without
// code for the GPU is refused with a message, not launched.
#define PTXGEN_CUDA_TYPES 1  // the header's bf16, f16, e4m3, e5m2 are CUDA's own types
#include <cstdio>
#include <type_traits>
#include <vector>

#include "kernels.hpp"

namespace {

// Each size the launch functions take is its own type (ptxgen::size::m{256}): sizes in another
// order than the function's, or bare integers, do not compile.
namespace sz = ptxgen::size;

template <class T>
T* fake(std::uintptr_t address) {
  return reinterpret_cast<T*>(address);
}

// Returns 1 when a kernel's result is wrong or a CUDA call fails.
template <class TA, class TB, class TD, class Launch>
int run(const ptxgen::KernelInfo& info, Launch launch, CUstream stream) {
  const std::int64_t m = 256, n = 256, k = 256;
  if (!stream) {  // no GPU: the checks, at the spec's own sizes
    const CUresult r = launch(fake<const TA>(0x100000), fake<const TB>(0x200000), fake<TD>(0x300000), sz::m{info.m},
                              sz::n{info.n}, sz::k{info.k}, nullptr, true);
    std::printf("%s: arguments %s %s\n", info.name, r == CUDA_SUCCESS ? "accepted" : "refused:", ptxgen::last_error());
    return r != CUDA_SUCCESS;
  }
  constexpr bool numeric = std::is_constructible<TA, float>::value && std::is_constructible<TB, float>::value &&
                           std::is_constructible<float, TD>::value;
  if constexpr (!numeric) {
    std::printf("%s: skipped (no host conversion for its element types)\n", info.name);
    return 0;
  } else {
    const std::vector<TA> a(static_cast<size_t>(m * k), TA(1.0f));
    const std::vector<TB> b(static_cast<size_t>(k * n), TB(2.0f));
    std::vector<TD> d(static_cast<size_t>(m * n));
    CUdeviceptr da, db, dd;
    if (cuMemAlloc(&da, a.size() * sizeof(TA)) || cuMemAlloc(&db, b.size() * sizeof(TB)) ||
        cuMemAlloc(&dd, d.size() * sizeof(TD)) || cuMemcpyHtoD(da, a.data(), a.size() * sizeof(TA)) ||
        cuMemcpyHtoD(db, b.data(), b.size() * sizeof(TB)) || cuMemsetD8(dd, 0xFF, d.size() * sizeof(TD)))
      return 1;
    const CUresult r = launch(ptxgen::device_pointer<const TA>(da), ptxgen::device_pointer<const TB>(db),
                              ptxgen::device_pointer<TD>(dd), sz::m{m}, sz::n{n}, sz::k{k}, stream, false);
    int wrong = 0;
    if (r == CUDA_ERROR_NO_BINARY_FOR_GPU) {
      std::printf("%s: not for this GPU: %s\n", info.name, ptxgen::last_error());
    } else if (r != CUDA_SUCCESS) {
      std::printf("%s: %s\n", info.name, ptxgen::last_error());
      wrong = 1;
    } else if (cuStreamSynchronize(stream) || cuMemcpyDtoH(d.data(), dd, d.size() * sizeof(TD))) {
      std::printf("%s: the kernel failed\n", info.name);
      wrong = 1;
    } else {
      for (const TD& x : d) wrong |= float(x) != 2.0f * k;
      std::printf("%s: %s\n", info.name, wrong ? "WRONG" : "ok, every element 2k");
    }
    cuMemFree(da);
    cuMemFree(db);
    cuMemFree(dd);
    return wrong;
  }
}

}  // namespace

int main() {
  int devices = 0;
  CUstream stream = nullptr;
  CUcontext ctx;
  CUdevice dev;
  if (cuInit(0) == CUDA_SUCCESS && cuDeviceGetCount(&devices) == CUDA_SUCCESS && devices > 0) {
    if (cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx) ||
        cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING))
      return 1;
  } else {
    std::printf("no CUDA device: the checks alone\n");
  }
  int wrong = 0;
  // Per kernel NAME: NAME_check(...) without a GPU, NAME(..., stream) with one.
#define RUN(NAME, TA, TB, TD)                                                                           \
  wrong += run<TA, TB, TD>(                                                                             \
      ptxgen::NAME##_info,                                                                              \
      [](const TA* a, const TB* b, TD* d, sz::m m, sz::n n, sz::k k, CUstream s, bool check_only) {     \
        return check_only ? ptxgen::NAME##_check(a, b, d, m, n, k) : ptxgen::NAME(a, b, d, m, n, k, s); \
      },                                                                                                \
      stream);
  PTXGEN_KERNELS_GEMMS(RUN)
#undef RUN
  return wrong ? 1 : 0;
}
