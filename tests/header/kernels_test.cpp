// Compiled by tests/header_test.cpp against the launch headers of every shipped spec (gemms.hpp:
// specs/gemm_*.json, programs.hpp: specs/prog_*.json; multi.hpp: examples/torch/specs for sm_90a
// and sm_100a) and the toolkit's stub libcuda, then run twice. Without a GPU: every launch function
// is instantiated, every kernel's checks accept its spec's own arguments and refuse bad ones with
// the words the header documents, and a launch that gets past the checks stops at the driver (the
// stub) instead of launching. Run again over tests/header/fake_cuda.cpp (a stand-in libcuda.so.1
// that records what it is asked), the path to cuLaunchKernelEx: the image chosen for the device,
// modules loaded once per context, tensor maps, parameter buffer, grid and cluster.
#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>

#include "gemms.hpp"
#include "multi.hpp"
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
const std::uintptr_t kSA = 0x4000000, kSB = 0x8000000;                 // block-scale factors

// The sizes a gemm kernel takes, each its own type: m, n, k in that order.
namespace sz = ptxgen::size;
#define SIZES(M, N, K) sz::m{M}, sz::n{N}, sz::k{K}

// Every gemm kernel: its long form instantiated, its spec's own arguments accepted, a null A refused.
#define GEMM(NAME, TA, TB, TD)                                                                                        \
  {                                                                                                                   \
    using F = CUresult (*)(const TA*, std::int64_t, const TB*, std::int64_t, TD*, sz::m, sz::n, sz::k, CUstream);     \
    F f = &ptxgen::NAME;                                                                                              \
    (void)f;                                                                                                          \
    const ptxgen::KernelInfo& i = ptxgen::NAME##_info;                                                                \
    expect(#NAME " at its spec's sizes",                                                                              \
           ptxgen::NAME##_check(at<const TA>(kA), i.tensors[0].ld, at<const TB>(kB), i.tensors[1].ld, at<TD>(kD),     \
                                SIZES(i.m, i.n, i.k)),                                                                \
           CUDA_SUCCESS, nullptr);                                                                                    \
    expect(#NAME " with a null A", ptxgen::NAME##_check(nullptr, at<const TB>(kB), at<TD>(kD), SIZES(i.m, i.n, i.k)), \
           CUDA_ERROR_INVALID_VALUE, "a (A, ");                                                                       \
    ++gemms;                                                                                                          \
  }

// Every gemm kernel with a fused bias (after D): its long form instantiated, its spec's own
// arguments accepted, a null bias refused.
#define BIASED_GEMM(NAME, TA, TB, TD, TBIAS)                                                                          \
  {                                                                                                                   \
    using F = CUresult (*)(const TA*, std::int64_t, const TB*, std::int64_t, TD*, const TBIAS*, sz::m, sz::n, sz::k,  \
                           CUstream);                                                                                 \
    F f = &ptxgen::NAME;                                                                                              \
    (void)f;                                                                                                          \
    const ptxgen::KernelInfo& i = ptxgen::NAME##_info;                                                                \
    expect(#NAME " at its spec's sizes",                                                                              \
           ptxgen::NAME##_check(at<const TA>(kA), i.tensors[0].ld, at<const TB>(kB), i.tensors[1].ld, at<TD>(kD),     \
                                at<const TBIAS>(kSA), SIZES(i.m, i.n, i.k)),                                          \
           CUDA_SUCCESS, nullptr);                                                                                    \
    expect(#NAME " with a null bias",                                                                                 \
           ptxgen::NAME##_check(at<const TA>(kA), at<const TB>(kB), at<TD>(kD), nullptr, SIZES(i.m, i.n, i.k)),       \
           CUDA_ERROR_INVALID_VALUE, ": bias (");                                                                               \
    ++gemms;                                                                                                          \
  }

// A fused epilogue input of type T at `address`, or nothing where the kernel does not take it (T void).
template <class T>
auto input(std::uintptr_t address) {
  if constexpr (std::is_void_v<T>) return std::tuple<>();
  else return std::tuple<const T*>(reinterpret_cast<const T*>(address));
}

// Every grouped gemm kernel (its bias, one per group, after D where it takes one; masked_m or ends
// next; size::groups after k): its long form instantiated, its spec's own arguments accepted, a null
// masked_m or ends refused, and (masked) more groups than 65535 refused. `check` is NAME_check.
template <class TA, class TB, class TD, class TBIAS, class Check>
void grouped_gemm(const std::string& name, const ptxgen::KernelInfo& i, Check check) {
  auto call = [&](auto... x) { return check(x...); };
  const std::int32_t* rows = at<const std::int32_t>(kSA);
  const auto sizes = std::make_tuple(SIZES(i.m, i.n, i.k));
  expect(name + " at its spec's sizes",
         std::apply(call, std::tuple_cat(std::make_tuple(at<const TA>(kA), i.tensors[0].ld, at<const TB>(kB), i.tensors[1].ld, at<TD>(kD)),
                                         input<TBIAS>(kSB), std::make_tuple(rows), sizes, std::make_tuple(sz::groups{8}))),
         CUDA_SUCCESS, nullptr);
  const auto head = std::tuple_cat(std::make_tuple(at<const TA>(kA), at<const TB>(kB), at<TD>(kD)), input<TBIAS>(kSB));
  const bool masked = std::string(i.tensors[i.tensor_count - 1].name) == "masked_m";  // else ends: the contiguous layout
  expect(name + " with a null masked_m or ends",
         std::apply(call, std::tuple_cat(head, std::make_tuple(static_cast<const std::int32_t*>(nullptr)), sizes, std::make_tuple(sz::groups{8}))),
         CUDA_ERROR_INVALID_VALUE, masked ? "masked_m (s32) is a null pointer" : "ends (s32) is a null pointer");
  // The masked layout's groups at most 65535 (a data-parallel grid's z); the contiguous layout's any number.
  expect(name + " with 65536 groups", std::apply(call, std::tuple_cat(head, std::make_tuple(rows), sizes, std::make_tuple(sz::groups{65536}))),
         masked ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS, masked ? "groups = 65536: the masked layout takes at most 65535 groups" : nullptr);
}

#define GROUPED_GEMM(NAME, TA, TB, TD, TBIAS)                                                                         \
  {                                                                                                                   \
    grouped_gemm<TA, TB, TD, TBIAS>(#NAME, ptxgen::NAME##_info, [](auto... x) { return ptxgen::NAME##_check(x...); }); \
    ++gemms;                                                                                                          \
  }


// An amax output of type T at `address`, or nothing (T void).
template <class T>
auto output(std::uintptr_t address) {
  if constexpr (std::is_void_v<T>) return std::tuple<>();
  else return std::tuple<T*>(reinterpret_cast<T*>(address));
}

// Every gemm kernel with fused inputs beyond a bias (C, a residual) or outputs (an amax, a quantized
// D's factors SFD): the call its EPILOGUE_GEMMS row describes (the present ones after D, in the
// order C, bias, residual, alpha, beta, d_scale, amax, SFD) accepted at its spec's sizes, and with
// its first input (or the amax, or SFD) null refused by its name, an input alpha or beta (one f32)
// null refused by its name too; a quantized D's n that is no whole number of blocks refused. Kernels
// with only a bias are counted by BIASED_GEMM. `check` is the kernel's NAME_check.
template <class TA, class TB, class TD, class TC, class TBIAS, class TR, class TAL, class TBE, class TS, class TAMAX, class TSFD,
          class Check>
void epilogue_gemm(const std::string& name, const ptxgen::KernelInfo& i, Check check, int& gemms) {
  if constexpr (!std::is_void_v<TC> || !std::is_void_v<TR> || !std::is_void_v<TAL> || !std::is_void_v<TBE> || !std::is_void_v<TS> ||
                !std::is_void_v<TAMAX> || !std::is_void_v<TSFD>) {
    auto call = [&](auto... x) { return check(x...); };
    const auto head = std::make_tuple(at<const TA>(kA), at<const TB>(kB), at<TD>(kD));
    const auto tail = std::make_tuple(SIZES(i.m, i.n, i.k));
    const auto sfd = output<TSFD>(kSA);
    const auto factors = std::tuple_cat(input<TAL>(kSB), input<TBE>(kSB));  // alpha, beta: one f32 each
    expect(name + " at its spec's sizes",
           std::apply(call, std::tuple_cat(head, input<TC>(kSA), input<TBIAS>(kSB), input<TR>(kSA), factors, input<TS>(kSA),
                                           output<TAMAX>(kSB), sfd, tail)),
           CUDA_SUCCESS, nullptr);
    if constexpr (!std::is_void_v<TAL>)
      expect(name + " with a null alpha",
             std::apply(call, std::tuple_cat(head, input<TC>(kSA), input<TBIAS>(kSB), input<TR>(kSA), std::tuple<const TAL*>(nullptr),
                                             input<TBE>(kSB), input<TS>(kSA), output<TAMAX>(kSB), sfd, tail)),
             CUDA_ERROR_INVALID_VALUE, "alpha (f32) is a null pointer");
    if constexpr (!std::is_void_v<TBE>)
      expect(name + " with a null beta",
             std::apply(call, std::tuple_cat(head, input<TC>(kSA), input<TBIAS>(kSB), input<TR>(kSA), input<TAL>(kSB),
                                             std::tuple<const TBE*>(nullptr), input<TS>(kSA), output<TAMAX>(kSB), sfd, tail)),
             CUDA_ERROR_INVALID_VALUE, "beta (f32) is a null pointer");
    if constexpr (!std::is_void_v<TC>)
      expect(name + " with a null C",
             std::apply(call, std::tuple_cat(head, std::tuple<const TC*>(nullptr), input<TBIAS>(kSB), input<TR>(kSA), factors,
                                             input<TS>(kSA), output<TAMAX>(kSB), sfd, tail)),
             CUDA_ERROR_INVALID_VALUE, "c (C, ");
    else if constexpr (!std::is_void_v<TR>)
      expect(name + " with a null residual",
             std::apply(call, std::tuple_cat(head, input<TBIAS>(kSB), std::tuple<const TR*>(nullptr), factors, input<TS>(kSA),
                                             output<TAMAX>(kSB), sfd, tail)),
             CUDA_ERROR_INVALID_VALUE, "residual (residual, ");
    else if constexpr (!std::is_void_v<TAMAX>)
      expect(name + " with a null amax",
             std::apply(call, std::tuple_cat(head, input<TBIAS>(kSB), factors, input<TS>(kSA), std::tuple<TAMAX*>(nullptr), sfd, tail)),
             CUDA_ERROR_INVALID_VALUE, "amax (f32) is a null pointer");
    if constexpr (!std::is_void_v<TSFD>) {
      // A quantized D: its factors' pointer, and n a whole number of blocks (of 32, NVFP4's of 16).
      constexpr bool nvfp4 = std::is_same_v<TSFD, ptxgen::ue4m3>;  // a ue4m3 factor per 16; the MX formats' ue8m0 per 32
      const auto others = std::tuple_cat(input<TC>(kSA), input<TBIAS>(kSB), input<TR>(kSA), factors, input<TS>(kSA), output<TAMAX>(kSB));
      expect(name + " with a null SFD", std::apply(call, std::tuple_cat(head, others, std::tuple<TSFD*>(nullptr), tail)),
             CUDA_ERROR_INVALID_VALUE, nvfp4 ? "sfd (SFD, ue4m3) is a null pointer" : "sfd (SFD, ue8m0) is a null pointer");
      // (MXFP8 and MXFP4: n = 112, whose rows a TMA store's map of an 8-bit D can stride, 112 bytes, so
      // that the refusal is the factors' and not the map's; NVFP4: 100, not a multiple of 16.)
      const std::int64_t bad_n = nvfp4 ? 100 : 112;
      expect(name + " with n = " + std::to_string(bad_n),
             std::apply(call, std::tuple_cat(head, others, sfd, std::make_tuple(SIZES(i.m, bad_n, i.k)))), CUDA_ERROR_INVALID_VALUE,
             nvfp4 ? "n = 100 is not a multiple of 16" : "n = 112 is not a multiple of 32");
    }
    ++gemms;
  }
}
#define EPILOGUE_GEMM(NAME, TA, TB, TD, TC, TBIAS, TR, TAL, TBE, TS, TAMAX, TSFD)                                                   \
  epilogue_gemm<TA, TB, TD, TC, TBIAS, TR, TAL, TBE, TS, TAMAX, TSFD>(#NAME, ptxgen::NAME##_info,                                    \
                                                                   [](auto... x) { return ptxgen::NAME##_check(x...); }, gemms);

// Every gemm kernel with block-wise f32 factors (docs/spec.md, "Block-wise f32 factors"): the call
// its BLOCKWISE_GEMMS row describes (the fused epilogue's tensors after D as an EPILOGUE_GEMMS row's,
// then const float* sfa and sfb) accepted at its spec's sizes, a null SFA and a null SFB refused by
// their names.
template <class TA, class TB, class TD, class TC, class TBIAS, class TR, class TAL, class TBE, class TS, class TAMAX, class TSFD,
          class Check>
void blockwise_gemm(const std::string& name, const ptxgen::KernelInfo& i, Check check, int& gemms) {
  auto call = [&](auto... x) { return check(x...); };
  const auto head = std::tuple_cat(std::make_tuple(at<const TA>(kA), at<const TB>(kB), at<TD>(kD)), input<TC>(kSA), input<TBIAS>(kSB),
                                   input<TR>(kSA), input<TAL>(kSB), input<TBE>(kSB), input<TS>(kSA), output<TAMAX>(kSB), output<TSFD>(kSA));
  const auto tail = std::make_tuple(SIZES(i.m, i.n, i.k));
  const float* sfa = at<const float>(kSA);
  const float* sfb = at<const float>(kSB);
  expect(name + " at its spec's sizes", std::apply(call, std::tuple_cat(head, std::make_tuple(sfa, sfb), tail)), CUDA_SUCCESS, nullptr);
  expect(name + " with a null SFA", std::apply(call, std::tuple_cat(head, std::make_tuple(static_cast<const float*>(nullptr), sfb), tail)),
         CUDA_ERROR_INVALID_VALUE, "sfa (SFA, ");
  expect(name + " with a null SFB", std::apply(call, std::tuple_cat(head, std::make_tuple(sfa, static_cast<const float*>(nullptr)), tail)),
         CUDA_ERROR_INVALID_VALUE, "sfb (SFB, ");
  ++gemms;
}
#define BLOCKWISE_GEMM(NAME, TA, TB, TD, TC, TBIAS, TR, TAL, TBE, TS, TAMAX, TSFD)                                                  \
  blockwise_gemm<TA, TB, TD, TC, TBIAS, TR, TAL, TBE, TS, TAMAX, TSFD>(#NAME, ptxgen::NAME##_info,                                   \
                                                                    [](auto... x) { return ptxgen::NAME##_check(x...); }, gemms);

// Every block-scaled gemm kernel (the factors after D): its long form instantiated, its spec's own
// arguments accepted, a null SFB refused, and a k that is no multiple of the factor vector refused.
#define SCALED_GEMM(NAME, TA, TB, TD, TS)                                                                              \
  {                                                                                                                    \
    using F = CUresult (*)(const TA*, std::int64_t, const TB*, std::int64_t, TD*, const TS*, const TS*, sz::m, sz::n,  \
                           sz::k, CUstream);                                                                           \
    F f = &ptxgen::NAME;                                                                                               \
    (void)f;                                                                                                           \
    const ptxgen::KernelInfo& i = ptxgen::NAME##_info;                                                                 \
    const TS* sfa = at<const TS>(kSA);                                                                                 \
    const TS* sfb = at<const TS>(kSB);                                                                                 \
    expect(#NAME " at its spec's sizes",                                                                               \
           ptxgen::NAME##_check(at<const TA>(kA), i.tensors[0].ld, at<const TB>(kB), i.tensors[1].ld, at<TD>(kD), sfa, \
                                sfb, SIZES(i.m, i.n, i.k)),                                                            \
           CUDA_SUCCESS, nullptr);                                                                                     \
    expect(#NAME " with a null SFB",                                                                                   \
           ptxgen::NAME##_check(at<const TA>(kA), at<const TB>(kB), at<TD>(kD), sfa, nullptr, SIZES(i.m, i.n, i.k)),   \
           CUDA_ERROR_INVALID_VALUE, "sfb (SFB, ");                                                                    \
    expect(#NAME " with k - 8",                                                                                        \
           ptxgen::NAME##_check(at<const TA>(kA), i.tensors[0].ld, at<const TB>(kB), i.tensors[1].ld, at<TD>(kD), sfa, \
                                sfb, SIZES(i.m, i.n, i.k - 8)),                                                        \
           CUDA_ERROR_INVALID_VALUE, "k = ");                                                                          \
    ++gemms;                                                                                                           \
  }

// Every gemm kernel of sparse A (the metadata after D): its long form instantiated, its spec's own
// arguments accepted, a null META refused, and a k that is no multiple of tile.k refused.
#define SPARSE_GEMM(NAME, TA, TB, TD)                                                                                \
  {                                                                                                                  \
    using F = CUresult (*)(const TA*, std::int64_t, const TB*, std::int64_t, TD*, const std::uint8_t*, sz::m, sz::n, \
                           sz::k, CUstream);                                                                         \
    F f = &ptxgen::NAME;                                                                                             \
    (void)f;                                                                                                         \
    const ptxgen::KernelInfo& i = ptxgen::NAME##_info;                                                               \
    const std::uint8_t* meta = at<const std::uint8_t>(kSA);                                                          \
    expect(#NAME " at its spec's sizes",                                                                             \
           ptxgen::NAME##_check(at<const TA>(kA), i.tensors[0].ld, at<const TB>(kB), i.tensors[1].ld, at<TD>(kD),    \
                                meta, SIZES(i.m, i.n, i.k)),                                                         \
           CUDA_SUCCESS, nullptr);                                                                                   \
    expect(#NAME " with a null META",                                                                                \
           ptxgen::NAME##_check(at<const TA>(kA), at<const TB>(kB), at<TD>(kD), nullptr, SIZES(i.m, i.n, i.k)),      \
           CUDA_ERROR_INVALID_VALUE, "meta (META, b8) is a null pointer");                                           \
    expect(#NAME " with k - 32",                                                                                     \
           ptxgen::NAME##_check(at<const TA>(kA), i.tensors[0].ld, at<const TB>(kB), i.tensors[1].ld, at<TD>(kD),    \
                                meta, SIZES(i.m, i.n, i.k - 32)),                                                    \
           CUDA_ERROR_INVALID_VALUE, "is not a multiple of");                                                        \
    ++gemms;                                                                                                         \
  }

// Every block-scaled gemm kernel of sparse A (the factors after D, then the metadata): its long form
// instantiated, its spec's own arguments accepted, a null META refused, and a k that is no multiple of
// tile.k (nor of the factor vector) refused.
#define SPARSE_SCALED_GEMM(NAME, TA, TB, TD, TS)                                                                       \
  {                                                                                                                    \
    using F = CUresult (*)(const TA*, std::int64_t, const TB*, std::int64_t, TD*, const TS*, const TS*,                \
                           const std::uint8_t*, sz::m, sz::n, sz::k, CUstream);                                        \
    F f = &ptxgen::NAME;                                                                                               \
    (void)f;                                                                                                           \
    const ptxgen::KernelInfo& i = ptxgen::NAME##_info;                                                                 \
    const TS* sfa = at<const TS>(kSA);                                                                                 \
    const TS* sfb = at<const TS>(kSB);                                                                                 \
    const std::uint8_t* meta = at<const std::uint8_t>(kSA);                                                            \
    expect(#NAME " at its spec's sizes",                                                                               \
           ptxgen::NAME##_check(at<const TA>(kA), i.tensors[0].ld, at<const TB>(kB), i.tensors[1].ld, at<TD>(kD), sfa, \
                                sfb, meta, SIZES(i.m, i.n, i.k)),                                                      \
           CUDA_SUCCESS, nullptr);                                                                                     \
    expect(                                                                                                            \
        #NAME " with a null META",                                                                                     \
        ptxgen::NAME##_check(at<const TA>(kA), at<const TB>(kB), at<TD>(kD), sfa, sfb, nullptr, SIZES(i.m, i.n, i.k)), \
        CUDA_ERROR_INVALID_VALUE, "meta (META, b8) is a null pointer");                                                \
    expect(#NAME " with k - 32",                                                                                       \
           ptxgen::NAME##_check(at<const TA>(kA), i.tensors[0].ld, at<const TB>(kB), i.tensors[1].ld, at<TD>(kD), sfa, \
                                sfb, meta, SIZES(i.m, i.n, i.k - 32)),                                                 \
           CUDA_ERROR_INVALID_VALUE, "is not a multiple of");                                                          \
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
    std::int64_t sz[16];  /* a program's sizes (those with a grid): 256 each */                               \
    for (auto& z : sz) z = 256;                                                                               \
    const auto& k = ptxgen::detail::k_##NAME::kernel;                                                         \
    for (unsigned t = 0; t < k.tensor_count; ++t) p[t] = kA * (t + 1);                                        \
    ptxgen::detail::ok(); /* detail::check leaves the words of an earlier failure */                          \
    expect(#NAME " with aligned tensors", ptxgen::detail::check(k, {p, ld, sz}), CUDA_SUCCESS, nullptr);     \
    p[k.tensor_count - 1] = 0;                                                                                \
    expect(#NAME " with a null tensor", ptxgen::detail::check(k, {p, ld, sz}), CUDA_ERROR_INVALID_VALUE,     \
           "is a null pointer");                                                                              \
    ++programs;                                                                                               \
  }

// ---- Through the fake driver (tests/header/fake_cuda.cpp) ----------------------------------------

template <class F>
F sym(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
}

void same(const std::string& what, long long got, long long want) {
  if (got != want) {
    std::printf("FAIL %s: %lld (want %lld)\n", what.c_str(), got, want);
    ++failures;
  }
}

template <class T>
long long word(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return static_cast<long long>(v);
}

CUcontext ctx(std::uintptr_t i) { return reinterpret_cast<CUcontext>(i); }
CUstream stream_of(std::uintptr_t c) { return reinterpret_cast<CUstream>((c << 8) | 0x10); }

// Returns false when the driver is not the fake.
bool fake_driver() {
  auto set = sym<void (*)(CUcontext, int, int)>("fake_cuda_set");
  auto set_clusters = sym<void (*)(int)>("fake_cuda_set_clusters");
  if (!set) return false;
  auto loaded = sym<int (*)()>("fake_cuda_modules_loaded");
  auto launches = sym<int (*)()>("fake_cuda_launches");
  auto config = sym<const CUlaunchConfig* (*)()>("fake_cuda_config");
  auto expect_params = sym<void (*)(int)>("fake_cuda_expect_params");
  auto params = sym<void** (*)()>("fake_cuda_params");
  auto entry = sym<const char* (*)()>("fake_cuda_entry");
  auto encodes = sym<int (*)()>("fake_cuda_encodes");
  auto encode = sym<void (*)(int, void**, cuuint64_t*, cuuint64_t*, cuuint32_t*, int*, int*)>("fake_cuda_encode");
  using ptxgen::bf16;
  const bf16* a = at<const bf16>(kA);
  const bf16* b = at<const bf16>(kB);
  bf16* d = at<bf16>(kD);
  auto map = [&](int i, std::uintptr_t address, long long d0, long long d1, long long stride, long long b0,
                 long long b1, int type) {
    void* p = nullptr;
    cuuint64_t dims[2], st = 0;
    cuuint32_t box[2];
    int t = 0, sw = 0;
    encode(i, &p, dims, &st, box, &t, &sw);
    const std::string w = "tensor map " + std::to_string(i);
    same(w + " address", static_cast<long long>(reinterpret_cast<std::uintptr_t>(p)), static_cast<long long>(address));
    same(w + " dims[0]", static_cast<long long>(dims[0]), d0);
    same(w + " dims[1]", static_cast<long long>(dims[1]), d1);
    same(w + " stride", static_cast<long long>(st), stride);
    same(w + " box[0]", box[0], b0);
    same(w + " box[1]", box[1], b1);
    same(w + " type", t, type);
  };

  // An sm_90a kernel on a compute capability 9.0 device: A 1000 x 1024, B 999 x 1024 with ldb 1032.
  set(ctx(1), 90, 232448);
  ptxgen::gemm_sm90_bf16_128x256x64_launch l;
  expect("fake: prepare",
         ptxgen::gemm_sm90_bf16_128x256x64_prepare(a, 1024, b, 1032, d, sz::m{1000}, sz::n{999}, sz::k{1024}, l),
         CUDA_SUCCESS, nullptr);
  same("fake: modules loaded", loaded(), 1);
  same("fake: entry looked up", std::string(entry()) == "gemm_sm90_bf16_128x256x64", 1);
  same("fake: grid x = ceil(999 / 256)", l.grid[0], 4);
  same("fake: grid y = ceil(1000 / 128)", l.grid[1], 8);
  same("fake: grid z", l.grid[2], 1);
  same("fake: block", l.block[0], 288);
  same("fake: shared bytes", l.shared_bytes, 197696);
  same("fake: encodes", encodes(), 2);
  map(0, kA, 1024, 1000, 2048, 64, 128, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
  map(1, kB, 1024, 999, 2064, 64, 256, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
  // The .param list, in the manifest's order: d, then tmap_a, tmap_b (128 bytes, 64-aligned), m, n, k.
  const std::uint16_t offsets[] = {0, 64, 192, 320, 324, 328};
  for (int i = 0; i < 6; ++i) same("fake: offset " + std::to_string(i), l.offsets[i], offsets[i]);
  same("fake: d", word<std::uint64_t>(l.params + 0), static_cast<long long>(kD));
  same("fake: tmap_a holds A's map", word<std::uint64_t>(l.params + 64), static_cast<long long>(kA));
  same("fake: tmap_b holds B's map", word<std::uint64_t>(l.params + 192), static_cast<long long>(kB));
  same("fake: m", word<std::uint32_t>(l.params + 320), 1000);
  same("fake: n", word<std::uint32_t>(l.params + 324), 999);
  same("fake: k", word<std::uint32_t>(l.params + 328), 1024);
  expect_params(6);
  expect("fake: launch", ptxgen::launch(l, stream_of(1)), CUDA_SUCCESS, nullptr);
  same("fake: launches", launches(), 1);
  const CUlaunchConfig& c = *config();
  same("fake: gridDimX", c.gridDimX, 4);
  same("fake: gridDimY", c.gridDimY, 8);
  same("fake: blockDimX", c.blockDimX, 288);
  same("fake: sharedMemBytes", c.sharedMemBytes, 197696);
  same("fake: no cluster attribute", c.numAttrs, 0);
  same("fake: stream", static_cast<long long>(reinterpret_cast<std::uintptr_t>(c.hStream)), 0x110);
  for (int i = 0; i < 6; ++i)
    same("fake: kernelParams[" + std::to_string(i) + "]",
         static_cast<long long>(reinterpret_cast<std::uintptr_t>(params()[i])),
         static_cast<long long>(reinterpret_cast<std::uintptr_t>(l.params + offsets[i])));
  // One module per context: the same context again loads nothing, another context its own.
  expect("fake: one-shot", ptxgen::gemm_sm90_bf16_128x256x64(a, b, d, sz::m{128}, sz::n{256}, sz::k{64}, nullptr),
         CUDA_SUCCESS, nullptr);
  same("fake: modules loaded, same context", loaded(), 1);
  set(ctx(2), 90, 232448);
  expect("fake: another context",
         ptxgen::gemm_sm90_bf16_128x256x64(a, b, d, sz::m{128}, sz::n{256}, sz::k{64}, nullptr), CUDA_SUCCESS, nullptr);
  same("fake: modules loaded, two contexts", loaded(), 2);
  expect("fake: launch prepared in another context", ptxgen::launch(l, nullptr), CUDA_ERROR_INVALID_CONTEXT,
         "the current CUDA context is not the one the launch was prepared in");
  expect("fake: another context's stream",
         ptxgen::gemm_sm90_bf16_128x256x64(a, b, d, sz::m{128}, sz::n{256}, sz::k{64}, stream_of(1)),
         CUDA_ERROR_INVALID_CONTEXT, "the stream belongs to another CUDA context than the current one");
  set(nullptr, 90, 232448);
  expect("fake: no context", ptxgen::gemm_sm90_bf16_128x256x64(a, b, d, sz::m{128}, sz::n{256}, sz::k{64}, nullptr),
         CUDA_ERROR_INVALID_CONTEXT, "no CUDA context is current on this thread");
  // The image for the device: sm_90a code on a 10.0 device is refused; two targets, each its own.
  set(ctx(3), 100, 232448);
  expect("fake: sm_90a code on 10.0",
         ptxgen::gemm_sm90_bf16_128x256x64(a, b, d, sz::m{128}, sz::n{256}, sz::k{64}, nullptr),
         CUDA_ERROR_NO_BINARY_FOR_GPU,
         "the current context's device (Fake GPU, compute capability 10.0) cannot run this kernel: the header holds "
         "code for sm_90a only");
  ptxgen::torch_linear_bf16_launch t;
  expect("fake: sm_100a entry on 10.0",
         ptxgen::torch_linear_bf16_prepare(a, b, d, sz::m{128}, sz::n{256}, sz::k{64}, t), CUDA_SUCCESS, nullptr);
  same("fake: sm_100a block", t.block[0], 192);
  same("fake: sm_100a target", std::string(t.entry->target) == "sm_100a", 1);
  set(ctx(4), 90, 232448);
  expect("fake: sm_90a entry on 9.0", ptxgen::torch_linear_bf16_prepare(a, b, d, sz::m{128}, sz::n{256}, sz::k{64}, t),
         CUDA_SUCCESS, nullptr);
  same("fake: sm_90a block", t.block[0], 288);
  set(ctx(5), 103, 232448);
  expect("fake: neither on 10.3", ptxgen::torch_linear_bf16_prepare(a, b, d, sz::m{128}, sz::n{256}, sz::k{64}, t),
         CUDA_ERROR_NO_BINARY_FOR_GPU, "the header holds code for sm_90a, sm_100a only");
  set(ctx(6), 90, 100000);
  expect("fake: too little shared memory",
         ptxgen::torch_linear_bf16_prepare(a, b, d, sz::m{128}, sz::n{256}, sz::k{64}, t), CUDA_ERROR_INVALID_VALUE,
         "sm_90a needs 197696 bytes of dynamic shared memory per block; the device allows 100000");
  // A persistent kernel: one CTA per tile up to the device's 132 multiprocessors (the fake's), one
  // row of them; more tiles than a 32-bit count are refused before anything is launched.
  set(ctx(8), 90, 232448);
  ptxgen::gemm_sm90_bf16_128x256x64_persistent_launch pe;
  expect("fake: persistent, 32 tiles",
         ptxgen::gemm_sm90_bf16_128x256x64_persistent_prepare(a, b, d, sz::m{1000}, sz::n{999}, sz::k{64}, pe),
         CUDA_SUCCESS, nullptr);
  same("fake: persistent grid x = 8 x 4 tiles", pe.grid[0], 32);
  same("fake: persistent grid y", pe.grid[1], 1);
  expect("fake: persistent, 1024 tiles",
         ptxgen::gemm_sm90_bf16_128x256x64_persistent_prepare(a, b, d, sz::m{4096}, sz::n{8192}, sz::k{64}, pe),
         CUDA_SUCCESS, nullptr);
  same("fake: persistent grid x = 132 multiprocessors", pe.grid[0], 132);
  expect("fake: persistent, 2^47 tiles",
         ptxgen::gemm_sm90_bf16_128x256x64_persistent_prepare(a, b, d, sz::m{2147483647}, sz::n{2147483647}, sz::k{64},
                                                              pe),
         CUDA_ERROR_INVALID_VALUE, "a persistent kernel walks at most 2^31-1");
  // A persistent CTA pair (tcgen05, cta_group 2): one pair per tile up to the 132 multiprocessors'
  // 66 pairs, CTAs 2p and 2p + 1 a cluster; a tile count that does not fit 32 bits is refused even
  // though the launch would take only 132 CTAs.
  set(ctx(9), 100, 232448);
  ptxgen::gemm_bf16_cta2_m128_a_tmem_persistent_launch pp;
  expect("fake: persistent pair, 15 tiles",
         ptxgen::gemm_bf16_cta2_m128_a_tmem_persistent_prepare(a, b, d, sz::m{600}, sz::n{300}, sz::k{64}, pp),
         CUDA_SUCCESS, nullptr);
  same("fake: persistent pair grid x = 5 x 3 tiles x 2", pp.grid[0], 30);
  same("fake: persistent pair cluster x", pp.cluster[0], 2);
  expect("fake: persistent pair, 262144 tiles",
         ptxgen::gemm_bf16_cta2_m128_a_tmem_persistent_prepare(a, b, d, sz::m{16384}, sz::n{262144}, sz::k{64}, pp),
         CUDA_SUCCESS, nullptr);
  same("fake: persistent pair grid x = 66 pairs", pp.grid[0], 132);
  expect("fake: persistent pair, 2^47 tiles",
         ptxgen::gemm_bf16_cta2_m128_a_tmem_persistent_prepare(a, b, d, sz::m{2147483647}, sz::n{1073741824}, sz::k{64},
                                                               pp),
         CUDA_ERROR_INVALID_VALUE, "a persistent kernel walks at most 2^31-1");
  // A persistent sm_90a cluster of 2 multicasting B: clusters walk blocks of 2 x 1 tiles, at most
  // as many clusters as the device holds at once (cuOccupancyMaxActiveClusters: the fake says 60).
  set(ctx(8), 90, 232448);
  set_clusters(60);
  ptxgen::gemm_sm90_bf16_128x256x64_multicast_b_persistent_launch mc;
  expect("fake: persistent cluster, 1000 x 1000",
         ptxgen::gemm_sm90_bf16_128x256x64_multicast_b_persistent_prepare(a, b, d, sz::m{1000}, sz::n{1000}, sz::k{64},
                                                                          mc),
         CUDA_SUCCESS, nullptr);
  same("fake: persistent cluster grid x = 4 x 4 blocks of 2 x 1 tiles, 2 CTAs each", mc.grid[0], 32);
  same("fake: persistent cluster x", mc.cluster[0], 2);
  same("fake: persistent cluster y", mc.cluster[1], 1);
  same("fake: persistent cluster block", mc.block[0], 384);
  expect("fake: persistent cluster, 4096 x 8192",
         ptxgen::gemm_sm90_bf16_128x256x64_multicast_b_persistent_prepare(a, b, d, sz::m{4096}, sz::n{8192}, sz::k{64},
                                                                          mc),
         CUDA_SUCCESS, nullptr);
  same("fake: persistent cluster grid x = 60 clusters the device holds", mc.grid[0], 120);
  set_clusters(0);
  // A cluster of 16 CTAs is past the portable 8: the header opts the kernel in once, at load.
  auto non_portable = sym<int (*)()>("fake_cuda_non_portable");
  const int np0 = non_portable();
  ptxgen::gemm_sm90_bf16_128x256x64_multicast_b_x16_launch x16;
  expect("fake: a cluster of 16",
         ptxgen::gemm_sm90_bf16_128x256x64_multicast_b_x16_prepare(a, b, d, sz::m{1000}, sz::n{1000}, sz::k{64}, x16),
         CUDA_SUCCESS, nullptr);
  same("fake: a cluster of 16 opted in to non-portable sizes", non_portable() - np0, 1);
  same("fake: a cluster of 16, y", x16.cluster[1], 16);
  same("fake: grid y = 8 tile rows rounded up to the cluster", x16.grid[1], 16);
  set(ctx(9), 100, 232448);
  // tcgen05's TMA epilogue: D's map has boxes of 64 bf16 columns by the CTA's 128 rows.
  ptxgen::gemm_bf16_persistent_tma_128x256x64_launch tt;
  const int t0 = encodes();
  expect("fake: tcgen05 tma epilogue, n = 1000",
         ptxgen::gemm_bf16_persistent_tma_128x256x64_prepare(a, b, d, sz::m{1000}, sz::n{1000}, sz::k{64}, tt),
         CUDA_SUCCESS, nullptr);
  same("fake: tcgen05 tma epilogue maps (A, B and D)", encodes() - t0, 3);
  map(t0, kD, 1000, 1000, 2000, 64, 128, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
  same("fake: tcgen05 tma epilogue, persistent grid x = 8 x 4 tiles", tt.grid[0], 32);
  expect("fake: tcgen05 tma epilogue, n = 1001",
         ptxgen::gemm_bf16_persistent_tma_128x256x64_prepare(a, b, d, sz::m{1000}, sz::n{1001}, sz::k{64}, tt),
         CUDA_ERROR_INVALID_VALUE, "n = 1001 puts the rows of D 2002 bytes apart");
  set(ctx(8), 90, 232448);
  // The TMA epilogue reaches D through a tensor map too: its rows (n elements) must be 16 bytes
  // apart, which the direct epilogue does not need; the launch function's arguments are the same.
  ptxgen::gemm_sm90_bf16_128x256x64_tma_epilogue_launch te;
  const int e0 = encodes();
  expect("fake: tma epilogue, n = 1000",
         ptxgen::gemm_sm90_bf16_128x256x64_tma_epilogue_prepare(a, b, d, sz::m{1000}, sz::n{1000}, sz::k{64}, te),
         CUDA_SUCCESS, nullptr);
  same("fake: tma epilogue maps (A, B and D)", encodes() - e0, 3);
  map(e0, kD, 1000, 1000, 2000, 64, 64, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);  // D's: n x m, boxes of 64 x 64
  expect("fake: tma epilogue, n = 999",
         ptxgen::gemm_sm90_bf16_128x256x64_tma_epilogue_prepare(a, b, d, sz::m{1000}, sz::n{999}, sz::k{64}, te),
         CUDA_ERROR_INVALID_VALUE, "n = 999 puts the rows of D 1998 bytes apart");
  // "epilogue": "auto": D's map is encoded where its rows are 16-byte multiples apart; elsewhere
  // the header passes zeros for it (the kernel tests the same and stores directly), not a refusal.
  ptxgen::gemm_sm90_bf16_128x256x64_auto_epilogue_launch ae;
  const int e1 = encodes();
  expect("fake: auto epilogue, n = 1000",
         ptxgen::gemm_sm90_bf16_128x256x64_auto_epilogue_prepare(a, b, d, sz::m{1000}, sz::n{1000}, sz::k{64}, ae),
         CUDA_SUCCESS, nullptr);
  same("fake: auto epilogue maps (A, B and D)", encodes() - e1, 3);
  map(e1, kD, 1000, 1000, 2000, 64, 64, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
  const int e2 = encodes();
  expect("fake: auto epilogue, n = 999",
         ptxgen::gemm_sm90_bf16_128x256x64_auto_epilogue_prepare(a, b, d, sz::m{1000}, sz::n{999}, sz::k{64}, ae),
         CUDA_SUCCESS, nullptr);
  same("fake: auto epilogue, n = 999: A's and B's maps only", encodes() - e2, 2);
  expect("fake: auto epilogue, n = 999 launches", ptxgen::launch(ae, nullptr), CUDA_SUCCESS, nullptr);
  // A 2 x 2 cluster: the grid in whole clusters, the cluster attribute set.
  set(ctx(7), 100, 232448);
  ptxgen::gemm_bf16_cluster_2x2_launch cl;
  expect("fake: cluster prepare",
         ptxgen::gemm_bf16_cluster_2x2_prepare(a, b, d, sz::m{1000}, sz::n{1100}, sz::k{64}, cl), CUDA_SUCCESS,
         nullptr);
  expect_params(6);
  expect("fake: cluster launch", ptxgen::launch(cl, nullptr), CUDA_SUCCESS, nullptr);
  same("fake: cluster gridDimX = 9 rounded to 2", config()->gridDimX, 10);
  same("fake: cluster gridDimY = 8", config()->gridDimY, 8);
  same("fake: cluster attribute", config()->numAttrs, 1);
  same("fake: cluster attribute id", config()->attrs[0].id, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
  same("fake: cluster x", config()->attrs[0].value.clusterDim.x, 2);
  same("fake: cluster y", config()->attrs[0].value.clusterDim.y, 2);
  // A block-scaled kernel: the factors' maps follow A's and B's, rank 3 (planes of 128 rows, each 32
  // lines of 16 bytes per 4 factors of a row), encoded from m, n and k.
  auto encode3 = sym<void (*)(int, int*, cuuint64_t*, cuuint64_t*, cuuint32_t*)>("fake_cuda_encode3");
  set(ctx(9), 100, 232448);
  ptxgen::gemm_mxf8f6f4_e4m3_e2m3_sm100a_launch sl;
  const int s0 = encodes();
  expect("fake: block-scaled prepare",
         ptxgen::gemm_mxf8f6f4_e4m3_e2m3_sm100a_prepare(at<const ptxgen::e4m3>(kA), at<const ptxgen::e2m3x16>(kB), d,
                                                        at<const ptxgen::ue8m0>(kSA), at<const ptxgen::ue8m0>(kSB),
                                                        sz::m{300}, sz::n{260}, sz::k{640}, sl),
         CUDA_SUCCESS, nullptr);
  same("fake: block-scaled maps (A, B, SFA, SFB)", encodes() - s0, 4);
  for (int i : {2, 3}) {
    map(s0 + i, i == 2 ? kSA : kSB, 16, 160, 16, 16, 32, CU_TENSOR_MAP_DATA_TYPE_UINT8);  // 5 blocks of 4 factors: 160 lines
    int rank = 0;
    cuuint64_t planes = 0, plane_stride = 0;
    cuuint32_t box_planes = 0;
    encode3(s0 + i, &rank, &planes, &plane_stride, &box_planes);
    same("fake: factor map rank", rank, 3);
    same("fake: factor map planes (300 or 260 rows)", static_cast<long long>(planes), 3);
    same("fake: factor map plane stride", static_cast<long long>(plane_stride), 160 * 16);
    same("fake: factor map box planes", box_planes, 1);
  }
  // Sparse A: A's map is m x k/2; the metadata's rank 3 (planes of 128 of k, each m padded to 128 rows).
  ptxgen::gemm_sparse_e4m3_sm100a_launch spl;
  const int p0 = encodes();
  expect("fake: sparse prepare",
         ptxgen::gemm_sparse_e4m3_sm100a_prepare(at<const ptxgen::e4m3>(kA), at<const ptxgen::e4m3>(kB), at<float>(kD),
                                                 at<const std::uint8_t>(kSA), sz::m{300}, sz::n{260}, sz::k{512}, spl),
         CUDA_SUCCESS, nullptr);
  same("fake: sparse maps (A, B, META)", encodes() - p0, 3);
  map(p0, kA, 256, 300, 256, 128, 128, CU_TENSOR_MAP_DATA_TYPE_UINT8);  // k/2 = 256 elements of A per row
  map(p0 + 2, kSA, 16, 384, 16, 16, 128, CU_TENSOR_MAP_DATA_TYPE_UINT8);
  {
    int rank = 0;
    cuuint64_t planes = 0, plane_stride = 0;
    cuuint32_t box_planes = 0;
    encode3(p0 + 2, &rank, &planes, &plane_stride, &box_planes);
    same("fake: metadata map rank", rank, 3);
    same("fake: metadata map planes (512 of k)", static_cast<long long>(planes), 4);
    same("fake: metadata map plane stride (384 rows)", static_cast<long long>(plane_stride), 384 * 16);
  }
  // Sparse NVFP4 (4:8 pairs, ue4m3 factors per 32 of k): A's map is m x k/2 packed e2m1, the factors'
  // maps follow B's (a 4-factor block per 128 of k), the metadata's last, its atoms 256 of k a plane.
  ptxgen::gemm_sparse_mxf4nvf4_ue4m3_cta2_sm100a_launch snv;
  const int n0 = encodes();
  expect("fake: sparse block-scaled prepare",
         ptxgen::gemm_sparse_mxf4nvf4_ue4m3_cta2_sm100a_prepare(
             at<const ptxgen::e2m1x2>(kA), at<const ptxgen::e2m1x2>(kB), at<float>(kD), at<const ptxgen::ue4m3>(kSA),
             at<const ptxgen::ue4m3>(kSB), at<const std::uint8_t>(kSA), sz::m{300}, sz::n{260}, sz::k{1024}, snv),
         CUDA_SUCCESS, nullptr);
  same("fake: sparse block-scaled maps (A, B, SFA, SFB, META)", encodes() - n0, 5);
  for (int i : {2, 3, 4}) {
    int rank = 0;
    cuuint64_t planes = 0, plane_stride = 0;
    cuuint32_t box_planes = 0;
    encode3(n0 + i, &rank, &planes, &plane_stride, &box_planes);
    same("fake: sparse block-scaled rank-3 map " + std::to_string(i), rank, 3);
    // Factors: 32 per row over k = 1024, 8 blocks of 4: 256 lines a plane of 128 rows (3 for 300 rows,
    // 3 for 260 columns). Metadata: 4 atoms of 256 of k, each 300 rows padded to 384.
    same("fake: sparse block-scaled planes " + std::to_string(i), static_cast<long long>(planes), i == 4 ? 4 : 3);
    same("fake: sparse block-scaled plane stride " + std::to_string(i), static_cast<long long>(plane_stride),
         i == 4 ? 384 * 16 : 256 * 16);
  }
  // Sparse tf32 (1:2): the metadata's atoms hold 64 of k, so a plane per 64.
  ptxgen::gemm_sparse_tf32_sm100a_launch spt;
  const int q0 = encodes();
  expect("fake: sparse tf32 prepare",
         ptxgen::gemm_sparse_tf32_sm100a_prepare(at<const float>(kA), at<const float>(kB), at<float>(kD),
                                                 at<const std::uint8_t>(kSA), sz::m{300}, sz::n{260}, sz::k{512}, spt),
         CUDA_SUCCESS, nullptr);
  same("fake: sparse tf32 maps (A, B, META)", encodes() - q0, 3);
  map(q0 + 2, kSA, 16, 384, 16, 16, 128, CU_TENSOR_MAP_DATA_TYPE_UINT8);
  {
    int rank = 0;
    cuuint64_t planes = 0, plane_stride = 0;
    cuuint32_t box_planes = 0;
    encode3(q0 + 2, &rank, &planes, &plane_stride, &box_planes);
    same("fake: tf32 metadata map rank", rank, 3);
    same("fake: tf32 metadata map planes (512 of k)", static_cast<long long>(planes), 8);
    same("fake: tf32 metadata map plane stride (384 rows)", static_cast<long long>(plane_stride), 384 * 16);
    same("fake: tf32 metadata map box planes", box_planes, 1);
  }
  // A program: pointers in name order, then its TMA loads' maps, over the fixed shapes.
  const int before = encodes();
  ptxgen::prog_tma_pair_bf16_m256_launch pl;
  expect("fake: program prepare", ptxgen::prog_tma_pair_bf16_m256_prepare(a, b, at<float>(kD), pl), CUDA_SUCCESS,
         nullptr);
  same("fake: program maps", encodes() - before, 2);
  map(before, kA, 128, 256, 128, 128, 128, CU_TENSOR_MAP_DATA_TYPE_UINT8);  // A: 256 rows of 128 bytes
  map(before + 1, kB, 128, 128, 128, 128, 64, CU_TENSOR_MAP_DATA_TYPE_UINT8);
  const std::uint16_t poff[] = {0, 8, 16, 64, 192};
  for (int i = 0; i < 5; ++i) same("fake: program offset " + std::to_string(i), pl.offsets[i], poff[i]);
  same("fake: program p_D", word<std::uint64_t>(pl.params + 16), static_cast<long long>(kD));
  same("fake: program tmap_1 holds B's map", word<std::uint64_t>(pl.params + 192), static_cast<long long>(kB));
  expect_params(5);
  expect("fake: program launch", ptxgen::launch(pl, nullptr), CUDA_SUCCESS, nullptr);
  same("fake: program grid", config()->gridDimX, 2);
  same("fake: program cluster", config()->attrs[0].value.clusterDim.x, 2);
  same("fake: program block", config()->blockDimX, 128);
  return true;
}

}  // namespace

int main() {
  int gemms = 0, programs = 0;
  PTXGEN_GEMMS_GEMMS(GEMM)
  PTXGEN_GEMMS_SCALED_GEMMS(SCALED_GEMM)
  PTXGEN_GEMMS_SPARSE_GEMMS(SPARSE_GEMM)
  PTXGEN_GEMMS_SPARSE_SCALED_GEMMS(SPARSE_SCALED_GEMM)
  PTXGEN_GEMMS_BIASED_GEMMS(BIASED_GEMM)
  PTXGEN_GEMMS_EPILOGUE_GEMMS(EPILOGUE_GEMM)
  PTXGEN_GEMMS_BLOCKWISE_GEMMS(BLOCKWISE_GEMM)
  PTXGEN_GEMMS_GROUPED_GEMMS(GROUPED_GEMM)
  PTXGEN_PROGRAMS_PROGRAMS(PROGRAM)

  using ptxgen::bf16;
  // "alpha": "input", "beta": "input" (docs/spec.md, "Epilogues"): one const float* each, after C
  // (and a bias, a residual), alpha before beta; EPILOGUE_GEMM's null checks pin which is which.
  {
    using F = CUresult (*)(const bf16*, std::int64_t, const bf16*, std::int64_t, bf16*, const bf16*, const float*, const float*,
                           sz::m, sz::n, sz::k, CUstream);
    F f = &ptxgen::gemm_bf16_128x128x64_alpha_beta_input;
    using G = CUresult (*)(const bf16*, std::int64_t, const bf16*, std::int64_t, bf16*, const float*, const float*, const float*,
                           sz::m, sz::n, sz::k, CUstream);
    G g = &ptxgen::gemm_sm90_bf16_128x128x64_alpha_beta_input;
    (void)f;
    (void)g;
  }
  const bf16* a = at<const bf16>(kA);
  const bf16* b = at<const bf16>(kB);
  bf16* d = at<bf16>(kD);
  // gemm_sm90_bf16_128x256x64: A m x k and B n x k, both K-major, D m x n.
  auto sm90 = [&](const bf16* x, std::int64_t lda, const bf16* y, std::int64_t ldb, bf16* z, std::int64_t m,
                  std::int64_t n, std::int64_t k) {
    return ptxgen::gemm_sm90_bf16_128x256x64_check(x, lda, y, ldb, z, sz::m{m}, sz::n{n}, sz::k{k});
  };
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
  expect("short form, odd k", ptxgen::gemm_sm90_bf16_128x256x64_check(a, b, d, sz::m{100}, sz::n{100}, sz::k{100}), bad,
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
  // Grouped (masked): each group's plane of A, B and D is the tensor maps' group stride, below 2^40
  // bytes (docs/spec.md, "Grouped GEMM").
  auto masked = [&](std::int64_t lda, std::int64_t m, std::int64_t n, std::int64_t k) {
    return ptxgen::gemm_sm90_bf16_128x256x64_masked_check(a, lda, b, k, d, at<const std::int32_t>(kSA), sz::m{m}, sz::n{n}, sz::k{k},
                                                          sz::groups{8});
  };
  expect("grouped", masked(64, 100, 256, 64), CUDA_SUCCESS, nullptr);
  expect("grouped, odd m", masked(72, 101, 256, 64), CUDA_SUCCESS, nullptr);  // rows 16-byte multiples apart: so are the groups
  expect("grouped, a plane of A of 2^40 bytes", masked(std::int64_t{1} << 38, 8, 256, 64), bad,
         "a (A, bf16): a group of 8 rows of lda = 274877906944 spans 2^40 bytes or more, beyond a tensor map's group stride");
  // M-major A and N-major B: the leading dimensions count m and n.
  expect("lda < m (M-major A)",
         ptxgen::gemm_bf16_mn_major_128x256x64_check(a, 64, b, 256, d, sz::m{128}, sz::n{256}, sz::k{64}), bad,
         "lda = 64 is less than m = 128");
  expect("ldb < n (N-major B)",
         ptxgen::gemm_bf16_mn_major_128x256x64_check(a, 128, b, 64, d, sz::m{128}, sz::n{256}, sz::k{64}), bad,
         "ldb = 64 is less than n = 256");
  // 4-bit operands through CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B: 32-byte aligned, K a multiple of 128.
  using ptxgen::e2m1x2;
  expect("e2m1 good",
         ptxgen::gemm_e2m1_e2m1_f8f6f4_check(at<const e2m1x2>(kA), at<const e2m1x2>(kB), d, sz::m{256}, sz::n{256},
                                             sz::k{256}),
         CUDA_SUCCESS, nullptr);
  expect("e2m1 16-byte aligned",
         ptxgen::gemm_e2m1_e2m1_f8f6f4_check(at<const e2m1x2>(kA + 16), at<const e2m1x2>(kB), d, sz::m{256}, sz::n{256},
                                             sz::k{256}),
         bad, "a (A, e2m1) at 0x100010 is not 32-byte aligned");
  expect(
      "e2m1 k = 192",
      ptxgen::gemm_e2m1_e2m1_f8f6f4_check(at<const e2m1x2>(kA), at<const e2m1x2>(kB), d, sz::m{256}, sz::n{256},
                                          sz::k{192}),
      bad,
      "a (A, e2m1): k = 192 is not a multiple of 128, which a CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B tensor map needs");
  // Gated activations (docs/spec.md, "Epilogues"): n is B's rows, two halves, so an odd n is refused
  // before anything else; D is m x n/2, its rows n/2 elements apart (a TMA store's map strides them).
  expect("geglu, n even", ptxgen::gemm_bf16_128x256x64_persistent_tma_geglu_check(a, b, d, sz::m{100}, sz::n{256}, sz::k{64}),
         CUDA_SUCCESS, nullptr);
  expect("geglu, n odd", ptxgen::gemm_bf16_128x256x64_persistent_tma_geglu_check(a, b, d, sz::m{100}, sz::n{7}, sz::k{64}), bad,
         "n = 7 is not a multiple of 2: the kernel's d = n / 2 (a gated activation: B's n rows are the gate's and up's halves, D has "
         "n / 2 columns)");
  expect("geglu, D's rows n/2 apart", ptxgen::gemm_bf16_128x256x64_persistent_tma_geglu_check(a, b, d, sz::m{100}, sz::n{20}, sz::k{64}),
         bad, "d = 10 puts the rows of D 20 bytes apart: a tensor map's row stride must be a multiple of 16 bytes");
  expect("swiglu with a bias, n odd",
         ptxgen::gemm_sm90_bf16_128x256x64_bias_swiglu_check(a, b, d, at<const bf16>(kSA), sz::m{100}, sz::n{255}, sz::k{64}), bad,
         "n = 255 is not a multiple of 2");
  // Block scaling: k a multiple of the factor vector, checked after the operands' own checks.
  {
    using ptxgen::e2m1x2;
    using ptxgen::ue8m0;
    float* df = at<float>(kD);
    expect("mxf4 good",
           ptxgen::gemm_mxf4_sm100a_check(at<const e2m1x2>(kA), at<const e2m1x2>(kB), df, at<const ue8m0>(kSA),
                                          at<const ue8m0>(kSB), sz::m{300}, sz::n{260}, sz::k{4096}),
           CUDA_SUCCESS, nullptr);
    expect(
        "mxf4 k = 4088",
        ptxgen::gemm_mxf4_sm100a_check(at<const e2m1x2>(kA), 4096, at<const e2m1x2>(kB), 4096, df, at<const ue8m0>(kSA),
                                       at<const ue8m0>(kSB), sz::m{300}, sz::n{260}, sz::k{4088}),
        bad, "k = 4088 is not a multiple of 32, the elements of k each factor of sfa (SFA, ue8m0) scales");
    expect("mxf4 misaligned SFB",
           ptxgen::gemm_mxf4_sm100a_check(at<const e2m1x2>(kA), at<const e2m1x2>(kB), df, at<const ue8m0>(kSA),
                                          at<const ue8m0>(kSB + 8), sz::m{300}, sz::n{260}, sz::k{4096}),
           bad, "sfb (SFB, ue8m0) at 0x8000008 is not 16-byte aligned");
  }
  // Sparse A: A is m x k/2 (its short form's lda k/2), k a multiple of tile.k (the metadata's K block).
  {
    using ptxgen::e4m3;
    float* df = at<float>(kD);
    const std::uint8_t* meta = at<const std::uint8_t>(kSA);
    expect("sparse good",
           ptxgen::gemm_sparse_e4m3_sm100a_check(at<const e4m3>(kA), at<const e4m3>(kB), df, meta, sz::m{300},
                                                 sz::n{260}, sz::k{512}),
           CUDA_SUCCESS, nullptr);
    expect("sparse lda < k/2",
           ptxgen::gemm_sparse_e4m3_sm100a_check(at<const e4m3>(kA), 128, at<const e4m3>(kB), 512, df, meta, sz::m{300},
                                                 sz::n{260}, sz::k{512}),
           bad, "lda = 128 is less than k/2 = 256");
    expect("sparse k = 640",
           ptxgen::gemm_sparse_e4m3_sm100a_check(at<const e4m3>(kA), at<const e4m3>(kB), df, meta, sz::m{300},
                                                 sz::n{260}, sz::k{640}),
           bad, "k = 640 is not a multiple of 256, the K block whose meta (META, b8) the kernel reads whole");
    // Sparse and block-scaled: k a multiple of the factor vector (64 of k) and of tile.k (512).
    using ptxgen::e2m1x2;
    using ptxgen::ue8m0;
    const ue8m0* sfa = at<const ue8m0>(kSA);
    const ue8m0* sfb = at<const ue8m0>(kSB);
    ptxgen::bf16* db = at<ptxgen::bf16>(kD);
    expect("sparse mxf4 good",
           ptxgen::gemm_sparse_mxf4_sm103a_check(at<const e2m1x2>(kA), at<const e2m1x2>(kB), db, sfa, sfb, meta,
                                                 sz::m{300}, sz::n{260}, sz::k{1024}),
           CUDA_SUCCESS, nullptr);
    expect("sparse mxf4 k = 1056",
           ptxgen::gemm_sparse_mxf4_sm103a_check(at<const e2m1x2>(kA), 1024, at<const e2m1x2>(kB), 2048, db, sfa, sfb,
                                                 meta, sz::m{300}, sz::n{260}, sz::k{1056}),
           bad, "k = 1056 is not a multiple of 64, the elements of k each factor of sfa (SFA, ue8m0) scales");
    expect("sparse mxf4 k = 1088",
           ptxgen::gemm_sparse_mxf4_sm103a_check(at<const e2m1x2>(kA), 1024, at<const e2m1x2>(kB), 2048, db, sfa, sfb,
                                                 meta, sz::m{300}, sz::n{260}, sz::k{1088}),
           bad, "k = 1088 is not a multiple of 512, the K block whose meta (META, b8) the kernel reads whole");
  }
  // Programs: fixed shapes, every tensor 16-byte aligned.
  const float* none = nullptr;
  (void)none;
  expect("program null D", ptxgen::prog_tma_pair_bf16_m256_check(a, b, nullptr), bad, "D (f32) is a null pointer");
  expect("program misaligned B", ptxgen::prog_tma_pair_bf16_m256_check(a, b + 2, at<float>(kD)), bad,
         "B (bf16) at 0x2000004 is not 16-byte aligned");
  expect("program good", ptxgen::prog_tma_pair_bf16_m256_check(a, b, at<float>(kD)), CUDA_SUCCESS, nullptr);
  // A program's sizes in name order, each its own type: each value reaches the size of its name.
  expect("program sizes good",
         ptxgen::prog_pipelined_gemm_bf16_check(a, b, at<float>(kD), sz::k{512}, sz::m{256}, sz::n{128}), CUDA_SUCCESS,
         nullptr);
  expect("program k = 0", ptxgen::prog_pipelined_gemm_bf16_check(a, b, at<float>(kD), sz::k{0}, sz::m{256}, sz::n{128}),
         bad, "k = 0: the kernel takes sizes from 1 to 2^31-1");
  expect("program m = 0", ptxgen::prog_pipelined_gemm_bf16_check(a, b, at<float>(kD), sz::k{512}, sz::m{0}, sz::n{128}),
         bad, "m = 0: the kernel takes sizes from 1 to 2^31-1");
  expect("program n = 0", ptxgen::prog_pipelined_gemm_bf16_check(a, b, at<float>(kD), sz::k{512}, sz::m{256}, sz::n{0}),
         bad, "n = 0: the kernel takes sizes from 1 to 2^31-1");

  if (fake_driver()) {
    std::printf("through the fake driver: %d gemm kernels, %d programs, %d failures\n", gemms, programs, failures);
    return failures ? 1 : 0;
  }
  // An unprepared launch is refused; a launch that passes the checks stops at the driver: the stub
  // (or, with a real driver, the missing context) -- never a kernel launch.
  ptxgen::gemm_sm90_bf16_128x256x64_launch unprepared;
  expect("unprepared launch", ptxgen::launch(unprepared, nullptr), CUDA_ERROR_INVALID_HANDLE, "was not prepared");
  const CUresult r = ptxgen::gemm_sm90_bf16_128x256x64(a, 64, b, 64, d, sz::m{100}, sz::n{100}, sz::k{64}, nullptr);
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
