// A shared library of ptxgen kernels for PyTorch (through ctypes: torch_gemm.py), made of the launch
// header `ptxgen build specs/*.json --header kernels.hpp` writes. Only cuda.h and libcuda: no torch
// headers, no CUDA runtime. Tensors come as addresses and row strides (elements), the stream as
// torch.cuda.current_stream().cuda_stream; the header checks them all and says what is wrong.
#include <cstdint>

#include "kernels.hpp"

extern "C" {

// out[m x n] = x[m x k] . w[n x k]^T (torch.nn.functional.linear): x and w row-major with row
// strides ldx and ldw, out row-major and contiguous.
int ptxgen_torch_linear(std::uint64_t x, std::int64_t ldx, std::uint64_t w, std::int64_t ldw, std::uint64_t out,
                        std::int64_t m, std::int64_t n, std::int64_t k, std::uint64_t stream) {
  return ptxgen::torch_linear_bf16(ptxgen::device_pointer<const ptxgen::bf16>(x), ldx,
                                   ptxgen::device_pointer<const ptxgen::bf16>(w), ldw,
                                   ptxgen::device_pointer<ptxgen::bf16>(out), ptxgen::size::m{m}, ptxgen::size::n{n},
                                   ptxgen::size::k{k}, reinterpret_cast<CUstream>(static_cast<std::uintptr_t>(stream)));
}

// out[m x n] = a[m x k] . b[k x n] (torch.matmul): a and b row-major with row strides lda, ldb.
int ptxgen_torch_matmul(std::uint64_t a, std::int64_t lda, std::uint64_t b, std::int64_t ldb, std::uint64_t out,
                        std::int64_t m, std::int64_t n, std::int64_t k, std::uint64_t stream) {
  return ptxgen::torch_matmul_bf16(ptxgen::device_pointer<const ptxgen::bf16>(a), lda,
                                   ptxgen::device_pointer<const ptxgen::bf16>(b), ldb,
                                   ptxgen::device_pointer<ptxgen::bf16>(out), ptxgen::size::m{m}, ptxgen::size::n{n},
                                   ptxgen::size::k{k}, reinterpret_cast<CUstream>(static_cast<std::uintptr_t>(stream)));
}

// What the last failing call on this thread said.
const char* ptxgen_torch_error() { return ptxgen::last_error(); }
}
