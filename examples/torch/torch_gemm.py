#!/usr/bin/env python3
"""ptxgen kernels called on torch tensors: the shared library `make` builds (ptxgen_torch.cpp over the
generated launch header), loaded with ctypes. Checked against torch.matmul, timed against it, and
fed bad input, which the header refuses with a message instead of launching.

  python3 torch_gemm.py [build/libptxgen_torch.so]
"""
import ctypes
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))


class Ptxgen:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        for f in (self.lib.ptxgen_torch_linear, self.lib.ptxgen_torch_matmul):
            f.argtypes = [ctypes.c_uint64, ctypes.c_int64, ctypes.c_uint64, ctypes.c_int64, ctypes.c_uint64,
                          ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint64]
            f.restype = ctypes.c_int
        self.lib.ptxgen_torch_error.restype = ctypes.c_char_p

    def _call(self, f, a, b, m, n, k):
        for t in (a, b):
            if t.dtype != torch.bfloat16 or not t.is_cuda or t.dim() != 2 or t.stride(1) != 1:
                raise ValueError("bf16 CUDA matrices with contiguous rows expected")
        out = torch.empty(m, n, dtype=torch.bfloat16, device=a.device)
        r = f(a.data_ptr(), a.stride(0), b.data_ptr(), b.stride(0), out.data_ptr(), m, n, k,
              torch.cuda.current_stream(a.device).cuda_stream)
        if r != 0:
            raise RuntimeError("CUresult %d: %s" % (r, self.lib.ptxgen_torch_error().decode()))
        return out

    def linear(self, x, w):
        """x @ w.T (torch.nn.functional.linear without bias): x [m, k], w [n, k]."""
        return self._call(self.lib.ptxgen_torch_linear, x, w, x.shape[0], w.shape[0], x.shape[1])

    def matmul(self, a, b):
        """a @ b: a [m, k], b [k, n]."""
        return self._call(self.lib.ptxgen_torch_matmul, a, b, a.shape[0], b.shape[1], a.shape[1])


def rel_err(x, ref):
    return ((x.double() - ref).norm() / ref.norm()).item()


def bench(f, iters=30, calls=1):
    """Median milliseconds per call, of `iters` timings of `calls` calls between two CUDA events."""
    for _ in range(3):
        f()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        for _ in range(calls):
            f()
        e1.record()
        e1.synchronize()
        times.append(e0.elapsed_time(e1) / calls)
    return sorted(times)[len(times) // 2]


def main():
    lib = Ptxgen(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "build", "libptxgen_torch.so"))
    torch.manual_seed(0)
    dev = torch.device("cuda")
    failed = 0

    def report(name, ok, text):
        nonlocal failed
        failed += not ok
        print("%-4s %-44s %s" % ("ok" if ok else "FAIL", name, text), flush=True)

    for m, n, k in [(4096, 4096, 4096), (1000, 999, 1024), (256, 200, 1000), (77, 33, 64)]:
        x = torch.randn(m, k, device=dev).bfloat16()
        w = torch.randn(n, k, device=dev).bfloat16()
        ldb = (n + 7) // 8 * 8 + 8  # a view of wider rows: ldb > n, rows a multiple of 16 bytes apart
        b = torch.randn(k, ldb, device=dev).bfloat16()[:, :n]
        ref_l = torch.matmul(x.double(), w.double().t())
        ref_m = torch.matmul(x.double(), b.double())
        got_l, got_m = lib.linear(x, w), lib.matmul(x, b)
        tl, tm = torch.matmul(x, w.t()), torch.matmul(x, b)
        e_l, e_m = rel_err(got_l, ref_l), rel_err(got_m, ref_m)
        report("linear %dx%dx%d" % (m, n, k), e_l < 1e-2,
               "rel err %.2e vs float64 (torch.matmul bf16: %.2e); max |ptxgen - torch.matmul| %.3g"
               % (e_l, rel_err(tl, ref_l), (got_l.float() - tl.float()).abs().max().item()))
        report("matmul %dx%dx%d (ldb %d)" % (m, n, k, ldb), e_m < 1e-2,
               "rel err %.2e vs float64 (torch.matmul bf16: %.2e)" % (e_m, rel_err(tm, ref_m)))
        if m == 4096:
            # One call between the events (the Python call's host time shows when the GPU waits for
            # it), and 10 back to back (the GPU busy: the kernels' own rate).
            flops = 2.0 * m * n * k
            for calls in (1, 10):
                t_p = bench(lambda: lib.linear(x, w), calls=calls)
                t_t = bench(lambda: torch.matmul(x, w.t()), calls=calls)
                print("     linear 4096^3, %2d call(s) per timing: ptxgen %.1f TFLOP/s, torch.matmul %.1f TFLOP/s "
                      "(median of 30, CUDA events)" % (calls, flops / t_p / 1e9, flops / t_t / 1e9), flush=True)

    # Bad input: refused with the header's words, never launched.
    x = torch.randn(256, 1004, device=dev).bfloat16()
    w = torch.randn(256, 1004, device=dev).bfloat16()
    cases = [
        ("k = 1004: rows 2008 bytes apart", lambda: lib.linear(x, w), "multiple of 16 bytes"),
        ("a view one element in", lambda: lib.linear(torch.randn(64, 1032, device=dev).bfloat16()[:, 1:1025],
                                                     torch.randn(64, 1024, device=dev).bfloat16()), "not 16-byte aligned"),
    ]
    for name, f, words in cases:
        try:
            f()
            report("refuses " + name, False, "launched")
        except RuntimeError as e:
            report("refuses " + name, words in str(e), str(e)[:150])
    # After the refusals the device is fine: a last product is right.
    x = torch.randn(512, 512, device=dev).bfloat16()
    e = rel_err(lib.matmul(x, x), torch.matmul(x.double(), x.double()))
    torch.cuda.synchronize()
    report("a launch after the refusals", e < 1e-2, "rel err %.2e" % e)
    print("%d failed" % failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
