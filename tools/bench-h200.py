#!/usr/bin/env python3
"""Speed on hardware: ptxgen's sm_90a GEMMs against cuBLAS, Triton and Mosaic GPU, in one process.

  tools/bench-h200.py prepare [--only S1,S2]   # here: the config specs, one launch header for all of
                                               # them and a ctypes shim over it, in .device/bench/
                                               # (ignored by git; carry .device to the GPU machine);
                                               # reports the fused configs that spill registers
  tools/bench-h200.py check                    # here: compile the shim with g++ (-Werror, the toolkit's
                                               # cuda.h, stub libcuda) and load it with ctypes
  tools/bench-h200.py profile NAME M N K       # on the GPU machine, under ncu: launches one config
  tools/bench-h200.py run --blockwise [--shape MxNxK]
                                               # on the GPU machine: the block-wise scaled FP8
                                               # configs and their peers alone (below)
  tools/bench-h200.py run --grouped            # on the GPU machine: the grouped (masked) bf16
                                               # configs and their peers alone (below)
  tools/bench-h200.py run [--quick] [--fused] [--no-compile] [--shape MxNxK]
                                               # on the GPU machine (torch, triton, jax): builds the
                                               # shim, then per shape times every ptxgen config of its
                                               # type and the peers, checks every ptxgen result, and
                                               # prints ptxgen / peer ratios; $OUT/bench.json.
                                               # --fused: the fused shapes only (their fused and
                                               # quantized-D configs, plain twins, cuBLAS, the fused
                                               # and GEMM-then-quantize peers); --no-compile:
                                               # without torch.compile (it autotunes for minutes);
                                               # --shape 4096x8192x4096: that shape alone

Every time is the median of 30 single launches between CUDA events after 5 warm-up launches (Mosaic
GPU: its own profiler, 30 iterations, which times the kernel alone), on the same fresh random inputs
for ptxgen, cuBLAS and Triton. The launches of one shape are timed in rounds, every ptxgen config
and peer once a round, so that the GPU's clocks drifting over the run (power, heat) do not favour
whichever was timed first. Before each timed launch the GPU is kept busy (torch.cuda._sleep) while
the host enqueues the start event, the launch and the end event, so the events time the kernel on the
GPU, not the host's launch path (Python, argument checks, tensor-map encoding), as Mosaic's profiler
does: without it a 0.3 ms kernel carried 5-15 us of host time.
Each ptxgen result is compared with a float32 cuBLAS product of the same (rounded) inputs: relative
Frobenius error below 1e-2, no NaN. Ratios are what to read: absolute figures drift about 5 % between
runs of the same machine.

Fused epilogues (issue 28's targets): bf16 D = gelu_tanh(A·B + bias), the bias a bf16 row of N, at
4096 x 8192 x 4096, 8192^3 and 4096 x 14336 x 4096. ptxgen's fused configs (128 x 256 cooperative,
persistent and data-parallel, ping-pong 128 x 128, and the planner's own choice per shape) run in the
same rounds as their plain twins (the same kernel without the epilogue), ptxgen's other plain configs,
cuBLAS's plain GEMM and the fused peers on the same inputs: torch._addmm_activation(bias, a, b^T,
use_gelu=True) (cuBLASLt's GELU_BIAS epilogue, one kernel; the run checks on f32 inputs that its GELU
is the tanh form, as torch's own fallback at::gelu_(result, "tanh") is), cuBLAS's GEMM with the bias
in its epilogue then torch's gelu (torch.addmm, F.gelu: two kernels), cuBLAS's plain GEMM then the bias
and gelu (eager torch), and torch.compile of F.gelu(a @ b.t() + bias, approximate="tanh") in mode
max-autotune-no-cudagraphs with GEMM backends TRITON (Triton's GEMM template with the bias and gelu in
its epilogue; $PTXGEN_BENCH_COMPILE_BACKENDS=ATEN,TRITON lets autotuning choose cuBLAS where faster).
Each fused result (ptxgen's and the peers') is checked against the float32 gelu_tanh(A·B + bias) the
same way. The fused line of a shape gives ptxgen's best fused config against ptxgen's best plain
config (target >= 0.97) and against the best fused peer (target >= 1.05), and each fused config
against its twin. TF/s count 2 m n k, the epilogue's work left out.

A quantized D (issue 28's target: e4m3 output with the amax, at least 0.95x ptxgen's bf16-output GEMM
and 1.3x a GEMM followed by a separate quantize kernel), bf16 A and B at 4096 x 8192 x 4096 and 8192^3:
ptxgen's e4m3_amax configs (D e4m3 = sat(A·B x scale), the scale an f32 input, 448 / the product's
amax as a delayed-scaling recipe passes it; the amax of A·B an f32 output) and mxfp8 configs ("quantize":
"mxfp8": D e4m3 over a ue8m0 factor per 32 columns of a row, SFD in the 128x4 layout), each on the
direct-store kernels (an 8-bit D is stored from the registers: 128 x 256 persistent and data-parallel,
ping-pong 128 x 128 with 5 and 6 stages) beside its plain bf16 twin, and the planner's choice against
the plain default. The peers, on the same inputs in the same rounds: cuBLAS's bf16 GEMM (torch.mm)
then the quantization in eager torch and compiled by torch.compile (default mode): for e4m3_amax the
same work (amax of the product, the product times the given scale, saturated, cast to float8_e4m3fn)
and the current-scaling recipe (amax, then scale = 448 / amax, then the cast); for mxfp8 the block
quantization (blocks of 32, amax, the factor exponent ceil(log2(amax / 448)) from frexp, scale,
saturate, cast, the factors scattered into the 128x4 layout). Each result, ptxgen's and the peers', is
dequantized (D / scale; D times its block's factor read from SFD) and checked against the float32
product (relative Frobenius error below 0.05: e4m3 keeps 3 bits) and the amax within 1e-2 of the
product's. The quant lines of a shape give ptxgen's best config of each kind against ptxgen's best
plain GEMM of the run (target >= 0.95) and against the fastest GEMM-then-quantize peer of that kind
(target >= 1.3; MXFP8 has no target of its own: the same two ratios are printed), and each config
against its twin. TF/s count 2 m n k.

GEMM + SwiGLU (issue 28's targets; docs/spec.md "Epilogues", gated activations): D = silu(P[:, :d]) *
P[:, d:], P = A·B^T, at d = 8192, 8192 and 14336 (4096 x 8192 x 4096, 8192^3, 4096 x 14336 x 4096
read as M x d x K: the shape's N is D's width d, as in an MLP's up-projection with intermediate size
d), so B holds 2 d rows (the stacked [W_gate; W_up]) and the GEMM is M x 2d x K; bf16, no bias (the
Llama MLP's). Its rows are those kernel shapes (4096x16384x4096, 8192x16384x8192, 4096x28672x4096):
ptxgen's swiglu configs (128 x 256 persistent and data-parallel, ping-pong 128 x 128, the planner's
choice) beside their plain twins (the same kernel storing A·B^T, M x 2d) and ptxgen's plain configs,
cuBLAS's plain GEMM, and the peers: torch's mm then F.silu(x[:, :d]) * x[:, d:] (cuBLAS and two
elementwise kernels, eager) and torch.compile of that expression (the mode and GEMM backends of the
gelu peers). Every result is checked against the float32 silu(ref[:, :d]) * ref[:, d:]. TF/s count
the GEMM's 2 M (2 d) K; the swiglu line gives ptxgen's best swiglu config against ptxgen's best plain
config of the same kernel shape (target >= 0.97) and against the best peer (target >= 1.05).

Block-wise scaled FP8 (issue 30, `run --blockwise`; docs/spec.md "Block-wise f32 factors"): e4m3 A
and B, bf16 D = sum over K blocks kb of SFA[kb][m] SFB[n / 128][kb] (A[m, kb's 128] . B[n, kb's 128]),
DeepSeek-V3's 1 x 128 and 128 x 128 f32 factors, at 4096 x 7168 x 16384, 4096 x 7168 x 7168 (the
issue's measurement) and DeepSeek-V3's shapes m = 4096, (n, k) in (2112, 7168), (24576, 1536),
(7168, 16384), (4096, 7168), (7168, 2048). ptxgen's configs: the persistent TMA-store 128 x 128
cooperative kernel (registers 40 / 232) with 4 and 5 stages, the direct store, the data-parallel kernel, ping-pong consumers of 64 rows
(registers 40 / 232, 6 stages), and the planner's choice per shape; each fixed config twice, with
one set of partial sums (`_p1`: a K block promoted once its wgmmas completed) and with two (`_p2`:
promoted while the next block's wgmmas run, "scale": {"partials": 2}). The factors are random positive
2^e (1 + f), e in -4 .. 4. Each ptxgen result is checked against the float64 product of the
dequantized operands (A[m, k] SFA[k / 128][m], B[n, k] SFB[n / 128][k / 128]: the same sum in exact
arithmetic): relative Frobenius error below 5e-3 (bf16 D keeps 8 bits, 2^-9 relative), no NaN. The
peers in the same rounds: torch._scaled_mm with block-wise scales (scale_a the (m, ceil(k / 128))
view SFA.t(), m-major; scale_b the (ceil(k / 128), ceil(n / 128)) view whose transpose is SFB with
rows ceil(k / 128) rounded up to 4 apart: torch's BlockWise1x128 x BlockWise128x128 pair, cuBLASLt on
CUDA 12.9+), checked the same way, or its error printed where this torch or GPU refuses it; and
cuBLAS's e4m3 GEMM with per-tensor scales (torch._scaled_mm, scales 1) as the ceiling, checked against
the float32 unscaled product. The blockwise line gives ptxgen's best config against the block-wise
peer and the ceiling.

Grouped GEMM (issue 30, `run --grouped`; docs/spec.md "Grouped GEMM"): bf16, the MoE shapes of
GROUPED_SHAPES (8 groups of capacity 4096 and 32 of capacity 1024, N = 4096 and 7168, K = 7168 and
2048), the tokens per group drawn uneven (multiples of 128 from 128 to the capacity, the 32-group
shapes with one empty group). ptxgen's masked configs (A [G, cap, K], B [G, N, K], D [G, cap, N],
masked_m[G]) and contiguous configs (the tokens packed, A [T, K], D [T, N], ends[G], align 128), each
with 128 x 256 and 128 x 128 tiles, TMA-store and direct epilogues, and the planner's choice, against,
in the same rounds on the same tokens: torch._grouped_mm of the tokens packed contiguously
(A [T, K], B [G, N, K] transposed, offs the groups' ends: torch's MoE path, cuBLAS or CUTLASS grouped),
torch.bmm over the full capacity (dense batched: the work the masks save), and one launch per group of
ptxgen's dense kernel of the same tile (128 x 256 x 64, 4 stages, TMA store) at m = the group's tokens.
Every result is checked against a float32 cuBLAS product of each group's valid rows (relative
Frobenius error below 1e-2, no NaN), and the rows of D past a group's valid tiles must keep their
fill. TF/s count the useful 2 T N K, T the tokens of all groups.
"""
import copy
import json
import os
import subprocess
import sys

import h200_specs  # tools/, beside this script

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, ".device", "bench")

BASE = h200_specs.base(4096, 8192, 4096)

# The types of a config: A and B, D (the header's C++ element types are the same names).
TYPES = {"bf16": ("bf16", "bf16"), "f16": ("f16", "f16"), "e4m3": ("e4m3", "bf16")}


def configs():
    """(name, dtype, gemm patch): explicit tile / stage / launch-order choices per type."""
    out = []
    for t, (tm, tn, tk, st) in [("bf16", c) for c in ((128, 256, 64, 4), (128, 128, 64, 4), (128, 128, 64, 6),
                                                       (256, 128, 64, 4), (64, 256, 64, 4))] + \
                               [("f16", (128, 256, 64, 4))] + \
                               [("e4m3", c) for c in ((128, 256, 128, 4), (128, 128, 128, 4))]:
        for sched, epi, stages in (("data_parallel", "direct", st), ("data_parallel", "tma", st),
                                   ("persistent", "direct", st), ("persistent", "tma", st if tm * tn < 32768 else 3)):
            if tn % 64:
                continue
            name = "%s_%dx%dx%d_s%d_%s%s" % (t, tm, tn, tk, stages, epi, "_pers" if sched == "persistent" else "")
            out.append((name, t, {"a": {"dtype": t}, "b": {"dtype": t}, "d": {"dtype": TYPES[t][1]},
                                  "tile": {"m": tm, "n": tn, "k": tk}, "stages": stages, "schedule": sched,
                                  "epilogue": epi}))
    # ptxgen's own choices: each shape's spec with tile, stages and cluster left out (they depend on
    # the shape: skinny M takes tile.n 128), timed on that shape only.
    for (M, N, K, t) in SHAPES:
        out.append(("%s_default_%dx%dx%d" % (t, M, N, K), t, {"m": M, "n": N, "k": K, "a": {"dtype": t}, "b": {"dtype": t},
                                                         "d": {"dtype": TYPES[t][1]}, "default": True}))
    # Clusters multicasting the shared operand ([1, 2, 1]: B, [2, 1, 1]: A, [2, 2, 1]: both) and register budgets
    # (a producer warpgroup of 40, consumers of 232), on the persistent TMA-epilogue kernel.
    rb = {"producer": 40, "consumer": 232}
    for t, (tm, tn, tk) in (("bf16", (128, 256, 64)), ("f16", (128, 256, 64)), ("e4m3", (128, 256, 128))):
        for cl, regs in (((1, 2, 1), None), ((1, 2, 1), rb), ((2, 1, 1), rb), ((1, 1, 1), rb), ((2, 2, 1), rb)):
            if t != "bf16" and (cl != (1, 2, 1) or not regs):
                continue
            name = "%s_%dx%dx%d_s3_tma_pers_c%d%d%s" % (t, tm, tn, tk, cl[0], cl[1], "_regs" if regs else "")
            patch = {"a": {"dtype": t}, "b": {"dtype": t}, "d": {"dtype": TYPES[t][1]}, "tile": {"m": tm, "n": tn, "k": tk},
                     "stages": 3, "schedule": "persistent", "epilogue": "tma", "cluster": list(cl)}
            if regs:
                patch["registers"] = regs
            out.append((name, t, patch))
    # The 16-bit D staged through two 16 KB subtiles (issue 33) leaves room for a fourth stage.
    for cl in ((1, 1, 1), (1, 2, 1), (2, 1, 1)):
        out.append(("bf16_128x256x64_s4_tma_pers_c%d%d_regs" % cl[:2], "bf16",
                    {"tile": {"m": 128, "n": 256, "k": 64}, "stages": 4, "schedule": "persistent", "epilogue": "tma",
                     "cluster": list(cl), "registers": rb}))
    # Ping-pong consumers: two warpgroups taking alternate tiles of the persistent CTA, each the
    # whole tile, so that one's epilogue overlaps the other's main loop (with and without budgets).
    for t, (tm, tn, tk, st) in (("bf16", (128, 128, 64, 4)), ("bf16", (128, 128, 64, 5)), ("bf16", (64, 256, 64, 4)),
                                ("bf16", (128, 192, 64, 3)),
                                ("f16", (128, 128, 64, 4)), ("e4m3", (128, 128, 128, 4))):
        for regs in (None, rb):
            if (t != "bf16" or tm * tn > 128 * 128) and not regs:  # whole tiles above 128 x 128 need the budgets
                continue
            name = "%s_%dx%dx%d_s%d_tma_pp%s" % (t, tm, tn, tk, st, "_regs" if regs else "")
            patch = {"a": {"dtype": t}, "b": {"dtype": t}, "d": {"dtype": TYPES[t][1]}, "tile": {"m": tm, "n": tn, "k": tk},
                     "stages": st, "schedule": "persistent", "epilogue": "tma", "consumers": "pingpong"}
            if regs:
                patch["registers"] = regs
            out.append((name, t, patch))
    # Ping-pong with the direct epilogue: its st.global of each element overlaps the other
    # consumer's main loop, and without staging tiles the ring has room for more stages.
    for t, (tm, tn, tk, st) in (("bf16", (128, 128, 64, 5)), ("bf16", (128, 128, 64, 6)), ("bf16", (64, 256, 64, 5)),
                                ("f16", (128, 128, 64, 6)), ("e4m3", (128, 128, 128, 6))):
        name = "%s_%dx%dx%d_s%d_direct_pp_regs" % (t, tm, tn, tk, st)
        out.append((name, t, {"a": {"dtype": t}, "b": {"dtype": t}, "d": {"dtype": TYPES[t][1]}, "tile": {"m": tm, "n": tn, "k": tk},
                              "stages": st, "schedule": "persistent", "epilogue": "direct", "consumers": "pingpong",
                              "registers": rb}))
    # m = 256 (two tile rows of 128): 128 x 128 tiles, where Mosaic GPU's kernel leads, with and
    # without a [1, 2, 1] cluster multicasting B to both tile rows, timed on that shape only.
    for st in (4, 5, 6):
        for cl in ((1, 1, 1), (1, 2, 1)):
            for sched in ("data_parallel", "persistent"):
                name = "bf16_m256_128x128x64_s%d_tma%s_c%d%d" % (st, "_pers" if sched == "persistent" else "", cl[0], cl[1])
                out.append((name, "bf16", {"a": {"dtype": "bf16"}, "b": {"dtype": "bf16"}, "d": {"dtype": "bf16"},
                                           "tile": {"m": 128, "n": 128, "k": 64}, "stages": st, "schedule": sched,
                                           "epilogue": "tma", "cluster": list(cl), "only_shape": [256, 16384, 8192]}))
        if st == 6:
            continue  # ping-pong: two staging tiles leave room for 5 stages
        out.append(("bf16_m256_128x128x64_s%d_tma_pp_c12" % st, "bf16",
                    {"a": {"dtype": "bf16"}, "b": {"dtype": "bf16"}, "d": {"dtype": "bf16"}, "tile": {"m": 128, "n": 128, "k": 64},
                     "stages": st, "schedule": "persistent", "epilogue": "tma", "consumers": "pingpong", "cluster": [1, 2, 1],
                     "only_shape": [256, 16384, 8192]}))
    # Fused epilogues (issue 28's targets): bf16 GEMM + bias (bf16, along N) + GELU (tanh form) on the
    # three MLP shapes, each config named with its plain twin (the same kernel without the epilogue),
    # which the same rounds time too. Budgets where 128 x 256 tiles need them: without 40 / 232 the
    # persistent TMA kernel spills about 870 bytes (ptxas); ping-pong 128 x 128 spills 28 bytes with
    # them and none without (prepare reports the fused kernels that spill).
    # The fused kernels, each a tile part of its name, its plain twin and its patch (GEMM + SwiGLU
    # takes the first three).
    bf = {"a": {"dtype": "bf16"}, "b": {"dtype": "bf16"}, "d": {"dtype": "bf16"}}
    fused_kernels = (
        ("128x256x64_s3_tma_pers_regs", "bf16_128x256x64_s3_tma_pers_c11_regs",
         {"tile": {"m": 128, "n": 256, "k": 64}, "stages": 3, "schedule": "persistent", "epilogue": "tma",
          "cluster": [1, 1, 1], "registers": rb}),
        ("128x256x64_s4_tma_regs", "bf16_128x256x64_s4_tma",
         {"tile": {"m": 128, "n": 256, "k": 64}, "stages": 4, "schedule": "data_parallel", "epilogue": "tma",
          "registers": rb}),
        ("128x128x64_s5_tma_pp", "bf16_128x128x64_s5_tma_pp",
         {"tile": {"m": 128, "n": 128, "k": 64}, "stages": 5, "schedule": "persistent", "epilogue": "tma",
          "consumers": "pingpong"}),
        ("128x128x64_s4_tma_pp", "bf16_128x128x64_s4_tma_pp",
         {"tile": {"m": 128, "n": 128, "k": 64}, "stages": 4, "schedule": "persistent", "epilogue": "tma",
          "consumers": "pingpong"}))
    for tail, twin, patch in fused_kernels:
        out.append(("bf16_fused_bias_gelu_" + tail, "bf16",
                    dict(patch, **bf, **FUSED_EPILOGUE, shapes=[list(s) for s in FUSED_SHAPES], twin=twin)))
    # ptxgen's own choices with the epilogue, per shape (the twin: the same shape's plain default).
    for (M, N, K) in FUSED_SHAPES:
        out.append(("bf16_fused_bias_gelu_default_%dx%dx%d" % (M, N, K), "bf16",
                    dict({"m": M, "n": N, "k": K, "a": {"dtype": "bf16"}, "b": {"dtype": "bf16"}, "d": {"dtype": "bf16"},
                          "default": True, "twin": "bf16_default_%dx%dx%d" % (M, N, K)}, **FUSED_EPILOGUE)))
    # A quantized D (issue 28: e4m3 output with the amax, at least 0.95x ptxgen's bf16-output GEMM and
    # 1.3x a GEMM followed by a separate quantize kernel), bf16 A and B: D e4m3 times its per-tensor
    # scale with the amax, and MXFP8 (e4m3 over a ue8m0 factor per 32 columns, SFD in the 128x4
    # layout). Each kernel with its plain twin: the direct-store ones beside their direct-store bf16
    # twins, and the TMA-store ones (an 8-bit D staged in boxes of 128 one-byte columns) with the
    # tile and schedule of the bf16 TMA best, beside it (s4: the 8-bit staging tile, half a bf16
    # one's, leaves room for a fourth stage); the planner's choice per shape against the plain default.
    quant_kernels = (
        ("128x256x64_s4_direct_pers_regs", "bf16_128x256x64_s4_direct_pers",
         {"tile": {"m": 128, "n": 256, "k": 64}, "stages": 4, "schedule": "persistent", "epilogue": "direct",
          "registers": rb}),
        ("128x256x64_s4_direct_regs", "bf16_128x256x64_s4_direct",
         {"tile": {"m": 128, "n": 256, "k": 64}, "stages": 4, "schedule": "data_parallel", "epilogue": "direct",
          "registers": rb}),
        ("128x128x64_s5_direct_pp_regs", "bf16_128x128x64_s5_direct_pp_regs",
         {"tile": {"m": 128, "n": 128, "k": 64}, "stages": 5, "schedule": "persistent", "epilogue": "direct",
          "consumers": "pingpong", "registers": rb}),
        ("128x128x64_s6_direct_pp_regs", "bf16_128x128x64_s6_direct_pp_regs",
         {"tile": {"m": 128, "n": 128, "k": 64}, "stages": 6, "schedule": "persistent", "epilogue": "direct",
          "consumers": "pingpong", "registers": rb}),
        ("128x256x64_s3_tma_pers_regs", "bf16_128x256x64_s3_tma_pers_c11_regs",
         {"tile": {"m": 128, "n": 256, "k": 64}, "stages": 3, "schedule": "persistent", "epilogue": "tma",
          "cluster": [1, 1, 1], "registers": rb}),
        ("128x256x64_s4_tma_pers_regs", "bf16_128x256x64_s3_tma_pers_c11_regs",
         {"tile": {"m": 128, "n": 256, "k": 64}, "stages": 4, "schedule": "persistent", "epilogue": "tma",
          "cluster": [1, 1, 1], "registers": rb}),
        ("128x128x64_s5_tma_pp", "bf16_128x128x64_s5_tma_pp",
         {"tile": {"m": 128, "n": 128, "k": 64}, "stages": 5, "schedule": "persistent", "epilogue": "tma",
          "consumers": "pingpong"}))
    bf_in = {"a": {"dtype": "bf16"}, "b": {"dtype": "bf16"}}
    for kind, qpatch in QUANT.items():
        for tail, twin, patch in quant_kernels:
            out.append(("bf16_%s_%s" % (kind, tail), "bf16", dict(merged(patch, bf_in, qpatch), quant=kind, twin=twin,
                                                                  shapes=[list(s) for s in QUANT_SHAPES])))
        for (M, N, K) in QUANT_SHAPES:
            out.append(("bf16_%s_default_%dx%dx%d" % (kind, M, N, K), "bf16",
                        dict(merged({"m": M, "n": N, "k": K}, bf_in, qpatch), default=True, quant=kind,
                             twin="bf16_default_%dx%dx%d" % (M, N, K))))
    # Block-wise scaled FP8 (issue 30, `run --blockwise`): e4m3 A and B with f32 factors (1 x 128,
    # 128 x 128), bf16 D, on BW_SHAPES only.
    bw = {"a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "d": {"dtype": "bf16"}, "scale": {"dtype": "f32"}}
    t128 = {"tile": {"m": 128, "n": 128, "k": 128}, "consumers": "cooperative"}
    for tail, patch in (("128x128x128_s4_tma_pers_regs", dict(t128, stages=4, schedule="persistent", epilogue="tma", registers=rb)),
                        ("128x128x128_s5_tma_pers_regs", dict(t128, stages=5, schedule="persistent", epilogue="tma", registers=rb)),
                        ("128x128x128_s6_tma_pers_regs", dict(t128, stages=6, schedule="persistent", epilogue="tma", registers=rb)),
                        ("128x128x128_s5_tma_pers_c12_regs", dict(t128, stages=5, schedule="persistent", epilogue="tma", registers=rb,
                                                                  cluster=[1, 2, 1])),
                        ("128x128x128_s6_tma_pers_c12_regs", dict(t128, stages=6, schedule="persistent", epilogue="tma", registers=rb,
                                                                  cluster=[1, 2, 1])),
                        ("128x128x128_s6_tma_pers_c21_regs", dict(t128, stages=6, schedule="persistent", epilogue="tma", registers=rb,
                                                                  cluster=[2, 1, 1])),
                        ("128x128x128_s5_direct_pers_regs", dict(t128, stages=5, schedule="persistent", epilogue="direct", registers=rb)),
                        ("128x128x128_s4_tma_regs", dict(t128, stages=4, schedule="data_parallel", epilogue="tma", registers=rb)),
                        ("64x128x128_s6_tma_pp_regs", {"tile": {"m": 64, "n": 128, "k": 128}, "stages": 6, "schedule": "persistent",
                                                       "epilogue": "tma", "consumers": "pingpong", "registers": rb})):
        # One set of partial sums and two (docs/spec.md, "Block-wise f32 factors": scale.partials).
        for sets in (1, 2):
            out.append(("e4m3_bw_%s_p%d" % (tail, sets), "e4m3",
                        dict(merged(patch, bw, {"scale": {"partials": sets}}), blockwise=True, shapes=[list(x) for x in BW_SHAPES])))
    for (M, N, K) in BW_SHAPES:
        out.append(("e4m3_bw_default_%dx%dx%d" % (M, N, K), "e4m3",
                    dict(merged({"m": M, "n": N, "k": K}, bw), default=True, blockwise=True, shapes=[[M, N, K]])))
    # Grouped GEMM, masked and contiguous layouts (issue 30, `run --grouped`): bf16, data-parallel
    # (the group is the grid's z, or found by a search of the ends), the persistent walk over (group,
    # tile), and the dense twin one launch per group is timed with.
    grp = {"groups": {"layout": "masked", "count": 8}, "schedule": "data_parallel"}
    for tail, patch in (("128x256x64_s4_tma", {"tile": {"m": 128, "n": 256, "k": 64}, "stages": 4, "epilogue": "tma"}),
                        ("128x256x64_s4_direct", {"tile": {"m": 128, "n": 256, "k": 64}, "stages": 4, "epilogue": "direct"}),
                        ("128x128x64_s5_tma", {"tile": {"m": 128, "n": 128, "k": 64}, "stages": 5, "epilogue": "tma"}),
                        ("128x128x64_s6_tma", {"tile": {"m": 128, "n": 128, "k": 64}, "stages": 6, "epilogue": "tma"})):
        out.append(("bf16_masked_" + tail, "bf16", dict(merged(patch, grp), grouped=True)))
        out.append(("bf16_contig_" + tail, "bf16", dict(merged(patch, grp, {"groups": {"layout": "contiguous", "align": 128}}), grouped=True)))
    # The persistent walk over (group, tile): cooperative 128 x 256 (3 stages beside the staging
    # tile) and ping-pong 128 x 128 consumers.
    for tail, patch in (("128x256x64_s3_pers_tma", {"tile": {"m": 128, "n": 256, "k": 64}, "stages": 3, "epilogue": "tma"}),
                        ("128x128x64_s4_pp_tma", {"tile": {"m": 128, "n": 128, "k": 64}, "stages": 4, "epilogue": "tma", "consumers": "pingpong"})):
        pers = {"schedule": "persistent"}
        out.append(("bf16_masked_" + tail, "bf16", dict(merged(patch, grp, pers), grouped=True)))
        out.append(("bf16_contig_" + tail, "bf16", dict(merged(patch, grp, pers, {"groups": {"layout": "contiguous", "align": 128}}), grouped=True)))
    out.append(("bf16_masked_default", "bf16", dict(merged({"groups": {"layout": "masked", "count": 8}}), grouped=True, default=True)))
    out.append(("bf16_contig_default", "bf16", dict(merged({"groups": {"layout": "contiguous", "count": 8}}), grouped=True, default=True)))
    out.append(("bf16_grouped_dense_128x256x64_s4_tma", "bf16",
                dict({"tile": {"m": 128, "n": 256, "k": 64}, "stages": 4, "epilogue": "tma", "schedule": "data_parallel"},
                     grouped_dense=True)))
    # GEMM + SwiGLU (D = silu(P[:, :d]) * P[:, d:]), timed on the kernel shapes M x 2d x K of
    # GLU_SHAPES, each config with its plain twin (the same kernel storing P); the planner's choice
    # against the plain default of the kernel shape (added where SHAPES has none).
    for tail, twin, patch in fused_kernels[:3]:
        out.append(("bf16_swiglu_" + tail, "bf16", dict(patch, **bf, **GLU_EPILOGUE,
                                                          shapes=[list(glu_kernel_shape(s)) for s in GLU_SHAPES],
                                                          twin=twin, glu=True)))
    for (M, d, K) in GLU_SHAPES:
        kM, kN, kK = glu_kernel_shape((M, d, K))
        if (kM, kN, kK, "bf16") not in SHAPES:
            out.append(("bf16_default_%dx%dx%d" % (kM, kN, kK), "bf16", dict({"m": kM, "n": kN, "k": kK, "default": True}, **bf)))
        out.append(("bf16_swiglu_default_%dx%dx%d" % (M, d, K), "bf16",
                    dict({"m": kM, "n": kN, "k": kK, "default": True, "twin": "bf16_default_%dx%dx%d" % (kM, kN, kK), "glu": True},
                         **bf, **GLU_EPILOGUE)))
    return out


# (M, N, K, dtype): the shape set of the speed issue. Wide N: LLM projections (Llama-3 8B's MLP up
# and down, a 128K-vocabulary head); skinny M: decode-sized batches against large weights.
SHAPES = [
    (4096, 8192, 4096, "bf16"), (8192, 8192, 8192, "bf16"), (4096, 8192, 4096, "f16"), (4096, 8192, 4096, "e4m3"),
    (4096, 14336, 4096, "bf16"), (4096, 4096, 14336, "bf16"), (4096, 28672, 4096, "bf16"),
    (128, 16384, 8192, "bf16"), (256, 16384, 8192, "bf16"),
]
QUICK = [(4096, 8192, 4096, "bf16"), (128, 16384, 8192, "bf16")]
# The fused configs' shapes (bf16, in SHAPES too) and epilogue: D = gelu_tanh(A·B + bias), bias a bf16 row of N.
FUSED_SHAPES = [(4096, 8192, 4096), (8192, 8192, 8192), (4096, 14336, 4096)]
FUSED_EPILOGUE = {"bias": {"dtype": "bf16", "along": "n"}, "activation": "gelu_tanh"}
# GEMM + SwiGLU's shapes (M, d, K): D is M x d, B holds 2 d rows (gate, then up), the GEMM M x 2d x K.
GLU_SHAPES = [(4096, 8192, 4096), (8192, 8192, 8192), (4096, 14336, 4096)]
GLU_EPILOGUE = {"activation": "swiglu"}


# A quantized D's shapes (bf16 A and B, in SHAPES and FUSED_SHAPES too) and its two kinds: D e4m3 with
# its per-tensor scale (an input, as cuBLASLt's scale_d) and the amax, and MXFP8.
QUANT_SHAPES = [(4096, 8192, 4096), (8192, 8192, 8192)]
QUANT = {"e4m3_amax": {"d": {"dtype": "e4m3", "scale": True}, "amax": True},
         "mxfp8": {"d": {"dtype": "e4m3"}, "quantize": "mxfp8"}}
# Block-wise scaled FP8's shapes (M, N, K): the measurement and DeepSeek-V3's (m = 4096).
# Grouped (masked): (groups, capacity, N, K).
GROUPED_SHAPES = [(8, 4096, 4096, 7168), (8, 4096, 7168, 2048), (32, 1024, 4096, 7168), (32, 1024, 7168, 2048)]
BW_SHAPES = [(4096, 7168, 16384), (4096, 7168, 7168), (4096, 2112, 7168), (4096, 24576, 1536), (4096, 4096, 7168),
             (4096, 7168, 2048)]
# The kernel inputs and outputs after D that a config's epilogue adds, in the launch function's order
# (docs/build.md: C, bias, residual, d_scale, amax, SFD, then block-wise f32 factors' SFA and SFB), and
# their C++ pointer types.
EXTRA_ARGS = (("bias", "const ptxgen::%s*"), ("d_scale", "const float*"), ("amax", "float*"), ("sfd", "ptxgen::ue8m0*"),
              ("sfa", "const float*"), ("sfb", "const float*"))


def merged(*patches):
    """One gemm patch from several (later members win, objects merged member by member)."""
    g = {}
    for p in patches:
        h200_specs.merge(g, copy.deepcopy(p))
    return g


def extra_args(gemm):
    """The pointer arguments after D of a prepared config's gemm spec: bias, d_scale, amax, sfd, and
    block-wise f32 factors' sfa and sfb."""
    bw = gemm.get("scale", {}).get("dtype") == "f32"
    return [a for a, on in (("bias", "bias" in gemm), ("d_scale", gemm.get("d", {}).get("scale")),
                            ("amax", gemm.get("amax")), ("sfd", gemm.get("quantize") == "mxfp8"), ("sfa", bw), ("sfb", bw)) if on]


def glu_kernel_shape(s):
    """The kernel's sizes (m, n = B's rows, k) of a GEMM + SwiGLU shape (M, d, K)."""
    return (s[0], 2 * s[1], s[2])


def timed_on(c, shape, t):
    """Whether config c is timed on shape [M, N, K] of type t: its type's shapes, or those it names."""
    if c["dtype"] != t:
        return False
    if "shapes" in c:
        return shape in c["shapes"]
    return c.get("shape", shape) == shape


merge = h200_specs.merge


def prepare(only):
    ptxgen = os.environ.get("PTXGEN", os.path.join(ROOT, "build", "ptxgen"))
    types = {name: t for name, t, _ in configs()}
    # --only: comma-separated substrings, any of which selects a config.
    chosen = [(name, patch) for name, _, patch in configs() if not only or any(o in name for o in only.split(","))]
    listed, paths = [], []
    defaults = {name for name, patch in chosen if patch.get("default")}
    only_shape = {name: patch["only_shape"] for name, patch in chosen if "only_shape" in patch}  # timed on that shape alone
    shapes = {name: patch["shapes"] for name, patch in chosen if "shapes" in patch}  # timed on these shapes alone
    twins = {name: patch["twin"] for name, patch in chosen if "twin" in patch}  # a fused config's plain kernel
    glus = {name for name, patch in chosen if patch.get("glu")}  # GEMM + SwiGLU: D is m x n/2
    quants = {name: patch["quant"] for name, patch in chosen if "quant" in patch}  # a quantized D: its kind
    blockwise = {name for name, patch in chosen if patch.get("blockwise")}  # f32 factors: `run --blockwise`
    grouped = {name for name, patch in chosen if patch.get("grouped")}  # masked_m, groups: `run --grouped`
    grouped_dense = {name for name, patch in chosen if patch.get("grouped_dense")}  # timed by `run --grouped` only
    chosen = [(name, {k: v for k, v in patch.items()
                      if k not in ("default", "only_shape", "shapes", "twin", "glu", "quant", "blockwise", "grouped", "grouped_dense")})
              for name, patch in chosen]
    for name, spec, path in h200_specs.write_specs(BENCH, "b_", chosen, BASE):
        if name in defaults:  # what ptxgen chooses: the spec leaves the tile and stages out
            del spec["gemm"]["tile"], spec["gemm"]["stages"]
            with open(path, "w") as f:
                json.dump(spec, f, indent=1)
        entry = {"name": name, "dtype": types[name], "gemm": spec["gemm"]}
        if name in defaults:
            entry["shape"] = [spec["gemm"]["m"], spec["gemm"]["n"], spec["gemm"]["k"]]
        if name in only_shape:
            entry["shape"] = only_shape[name]
        if name in shapes:
            entry["shapes"] = shapes[name]
        if "bias" in spec["gemm"] or "activation" in spec["gemm"]:
            entry["epilogue"] = {"bias": spec["gemm"].get("bias", {}).get("dtype"), "activation": spec["gemm"].get("activation")}
            entry["twin"] = twins.get(name)
        if name in glus:
            entry["glu"] = True
        if name in quants:
            entry["quant"] = quants[name]
            entry["twin"] = twins.get(name)
        if name in blockwise:
            entry["blockwise"] = True
        if name in grouped or name in grouped_dense:
            # Timed by `run --grouped` alone, on every grouped shape (no shape of `run`'s).
            entry["grouped" if name in grouped else "grouped_dense"] = True
            entry.pop("shape", None)
            entry["shapes"] = []
        entry["d"] = spec["gemm"]["d"]["dtype"]
        entry["args"] = extra_args(spec["gemm"])
        listed.append(entry)
        paths.append(path)
    header = os.path.join(BENCH, "kernels.hpp")
    r = subprocess.run([ptxgen, "build", *paths, "--header", header, "-q"], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("ptxgen build --header failed:\n%s%s" % (r.stdout, r.stderr))
    # The shim: one C function per kernel over the header's typed launch function (packed leading
    # dimensions: A is m x k, B is n x k, D is m x n, all row-major), for ctypes.
    shim = ['// Generated by tools/bench-h200.py prepare: ctypes entry points over kernels.hpp.',
            '#include <cstdint>', '#include "kernels.hpp"', 'extern "C" {']
    for c in listed:
        ta = TYPES[c["dtype"]][0]
        # After D, the epilogue's pointers (c["args"]: a bias, D's scale, the amax, SFD), each a
        # uint64 device address for ctypes, typed as the header's launch function takes it.
        types = dict(EXTRA_ARGS)
        params = "".join("std::uint64_t %s, " % x for x in c["args"])
        passed = "".join("ptxgen::device_pointer<%s>(%s), " % (
            (types[x] % c["epilogue"]["bias"] if x == "bias" else types[x]).rstrip("*"), x) for x in c["args"])
        if c.get("grouped"):  # masked_m after D, the groups after k
            shim.append(
                "int b_%s(std::uint64_t a, std::uint64_t b, std::uint64_t d, std::uint64_t masked_m, std::int64_t m, std::int64_t n, "
                "std::int64_t k, std::int64_t groups, std::uint64_t s) {\n  return ptxgen::b_%s(ptxgen::device_pointer<const ptxgen::%s>(a), "
                "ptxgen::device_pointer<const ptxgen::%s>(b), ptxgen::device_pointer<ptxgen::%s>(d), "
                "ptxgen::device_pointer<const std::int32_t>(masked_m), ptxgen::size::m{m}, ptxgen::size::n{n}, ptxgen::size::k{k}, "
                "ptxgen::size::groups{groups}, reinterpret_cast<CUstream>(static_cast<std::uintptr_t>(s)));\n}" % (
                    c["name"], c["name"], ta, ta, c["d"]))
            continue
        shim.append(
            "int b_%s(std::uint64_t a, std::uint64_t b, std::uint64_t d, %sstd::int64_t m, std::int64_t n, std::int64_t k, "
            "std::uint64_t s) {\n  return ptxgen::b_%s(ptxgen::device_pointer<const ptxgen::%s>(a), "
            "ptxgen::device_pointer<const ptxgen::%s>(b), ptxgen::device_pointer<ptxgen::%s>(d), %s"
            "ptxgen::size::m{m}, ptxgen::size::n{n}, ptxgen::size::k{k}, "
            "reinterpret_cast<CUstream>(static_cast<std::uintptr_t>(s)));\n}" % (c["name"], params, c["name"], ta, ta, c["d"],
                                                                                  passed))
    shim += ["const char* bench_error() { return ptxgen::last_error(); }", "}"]
    with open(os.path.join(BENCH, "shim.cpp"), "w") as f:
        f.write("\n".join(shim) + "\n")
    with open(os.path.join(BENCH, "configs.json"), "w") as f:
        json.dump(listed, f, indent=1)
    fused = [p for c, p in zip(listed, paths) if "epilogue" in c or "quant" in c]
    bw = [p for c, p in zip(listed, paths) if c.get("blockwise")]
    spills = h200_specs.spills(ptxgen, fused + bw)
    print("prepared %d configs in %s (%s: %d bytes), %d fused (%d of them a quantized D), %d block-wise%s" % (
        len(listed), BENCH, header, os.path.getsize(header), len(fused), sum("quant" in c for c in listed), len(bw),
        "; spills or serialized wgmmas: " + ", ".join(spills) if spills else "; none spills, none serializes its wgmmas"))


def tflops(m, n, k, ms):
    return 2.0 * m * n * k / (ms * 1e-3) / 1e12


def shim_command(lib_path, compiler=None, extra=()):
    """The command that builds the prepared shim: nvcc where there is one (the GPU machine), else
    g++ with the toolkit's headers ($CUDA_HOME, /usr/local/cuda): it is host code over the header."""
    import shutil
    cuda = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    src = os.path.join(BENCH, "shim.cpp")
    compiler = compiler or ("nvcc" if shutil.which("nvcc") else "g++")
    if compiler == "nvcc":
        return ["nvcc", "-std=c++17", "-O2", "-shared", "-Xcompiler", "-fPIC", "-I" + BENCH, src, "-o", lib_path,
                *extra, "-lcuda"]
    return [compiler, "-std=c++17", "-O2", "-shared", "-fPIC", "-Wall", "-Wextra", "-Werror", "-I" + BENCH,
            "-I" + os.path.join(cuda, "include"), src, "-o", lib_path, *extra, "-lcuda"]


def shim_library(lib_path):
    """Builds the prepared shim (on the GPU machine) and loads it."""
    import ctypes
    b = subprocess.run(shim_command(lib_path), capture_output=True, text=True)
    if b.returncode != 0:
        sys.exit("building the shim failed:\n" + b.stdout + b.stderr)
    return ctypes.CDLL(lib_path)


def check():
    """Here, without a GPU: compiles the prepared shim with g++ (-Wall -Wextra -Werror, the toolkit's
    cuda.h, linked against its stub libcuda), loads it with ctypes and finds every config's entry
    point, and checks that each fused config's plain twin was prepared too."""
    import tempfile
    cuda = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    stubs = os.path.join(cuda, "lib64", "stubs")
    cfgs = json.load(open(os.path.join(BENCH, "configs.json")))
    names = {c["name"] for c in cfgs}
    missing = ["%s (twin of %s)" % (c["twin"], c["name"]) for c in cfgs
               if ("epilogue" in c or "quant" in c) and c.get("twin") not in names]
    with tempfile.TemporaryDirectory() as tmp:
        lib = os.path.join(tmp, "shim.so")
        b = subprocess.run(shim_command(lib, "g++", ["-L" + stubs]), capture_output=True, text=True)
        if b.returncode != 0:
            sys.exit("g++ could not build the shim:\n" + b.stdout + b.stderr)
        # The stub is libcuda.so; the library asks for libcuda.so.1 (the driver's name).
        os.symlink(os.path.join(stubs, "libcuda.so"), os.path.join(tmp, "libcuda.so.1"))
        probe = ("import ctypes, json, sys\nlib = ctypes.CDLL(sys.argv[1])\n"
                 "names = [c['name'] for c in json.load(open(sys.argv[2]))]\n"
                 "missing = [n for n in names if not hasattr(lib, 'b_' + n)]\n"
                 "print(len(names) - len(missing), 'entry points;', 'missing: %s' % missing if missing else 'none missing')\n"
                 "sys.exit(1 if missing else 0)\n")
        r = subprocess.run([sys.executable, "-c", probe, lib, os.path.join(BENCH, "configs.json")], capture_output=True,
                           text=True, env=dict(os.environ, LD_LIBRARY_PATH=tmp))
        print("shim compiled with g++ and loaded: %s%s" % ((r.stdout + r.stderr).strip(),
                                                         "; twins missing: " + ", ".join(missing) if missing else ""))
        print("fused: %d configs (%s), on %s" % (
            sum("epilogue" in c for c in cfgs), ", ".join(sorted({describe(c) for c in cfgs if "epilogue" in c})),
            ", ".join("%dx%dx%d" % s for s in FUSED_SHAPES + [glu_kernel_shape(g) for g in GLU_SHAPES])))
        print("quantized D: %s, on %s" % (
            ", ".join("%d %s" % (sum(c.get("quant") == q for c in cfgs), q) for q in QUANT),
            ", ".join("%dx%dx%d" % s for s in QUANT_SHAPES)))
        print("block-wise f32 factors (run --blockwise): %d configs, on %s" % (
            sum(bool(c.get("blockwise")) for c in cfgs), ", ".join("%dx%dx%d" % s for s in BW_SHAPES)))
        return 1 if r.returncode or missing else 0


def describe(c):
    """A fused config's epilogue in words: "bias(bf16) gelu_tanh", "swiglu"."""
    e = c["epilogue"]
    return ("bias(%s) " % e["bias"] if e["bias"] else "") + e["activation"]


def takes_bias(c):
    return "epilogue" in c and bool(c["epilogue"]["bias"])


def sfd_index(torch, M, N, dev):
    """Where factor (i, b) of an M x N MXFP8 D lies in SFD (docs/spec.md, "Block-quantized D": the
    128x4 layout), as an M x N/32 tensor of byte offsets: ((i / 128) ceil(N / 128) + b / 4) 512 +
    (i % 32) 16 + ((i % 128) / 32) 4 + b % 4."""
    i = torch.arange(M, device=dev).view(M, 1)
    b = torch.arange(N // 32, device=dev).view(1, N // 32)
    return ((i // 128) * ((N + 127) // 128) + b // 4) * 512 + (i % 32) * 16 + ((i % 128) // 32) * 4 + b % 4


def sfd_bytes(M, N):
    return (M + 127) // 128 * ((N + 127) // 128) * 512


def quant_peers(torch, kind, scale, index, compile_peer):
    """The peers of a quantized D, each a callable of the bf16 product x (M x N) returning what the
    fused kernel leaves: cuBLAS's GEMM (torch.mm) is called before it, so each peer is the GEMM then a
    separate quantization, eager torch and (compile_peer) torch.compile of the same function (its
    default mode: the quantization is a memory-bound reduction and cast, no GEMM to tune).
    e4m3_amax: (D, amax) with D = sat(x * scale) in e4m3 and amax = max |x| (delayed scaling: the
    fused kernel's work, scale given), and the current-scaling recipe for comparison: amax, then
    scale = 448 / amax, then the cast (a reduction that must finish before the cast starts).
    mxfp8: (D, SFD): per block of 32 columns of a row, its amax, the factor exponent e = ceil(log2(amax
    / 448)) (x = e + 127, clamped to 0 .. 254), D = sat(x / 2^e) in e4m3, the factors scattered into the
    128x4 layout (`index`: each factor's byte)."""
    fp8 = torch.float8_e4m3fn

    def delayed(x, s):
        return (x.float() * s).clamp(-448.0, 448.0).to(fp8), x.abs().amax().float()

    def current(x):  # its D is checked with the run's scale: its own differs by the bf16 product's rounding, 2^-9
        amax = x.abs().amax().float()
        s = 448.0 / amax.clamp(min=1e-30)
        return (x.float() * s).clamp(-448.0, 448.0).to(fp8), amax

    def mx(x, idx):
        M, N = x.shape
        blocks = x.float().view(M, N // 32, 32)
        amax = blocks.abs().amax(dim=-1)
        # 2^e >= amax / 448 with e the least such integer: frexp gives amax = f 2^p (f in [0.5, 1)),
        # 448 = 0.875 2^9, so e = p - 9 + (f > 0.875); a zero block gets the smallest factor.
        f, p = torch.frexp(amax)
        e = torch.where(amax > 0, p - 9 + (f > 0.875).to(p.dtype), torch.full_like(p, -127)).clamp(-127, 127)
        q = (blocks * torch.exp2(-e.float()).unsqueeze(-1)).clamp(-448.0, 448.0).to(fp8).view(M, N)
        sfd = torch.zeros(sfd_bytes(M, N), dtype=torch.uint8, device=x.device)
        sfd[idx.reshape(-1)] = (e + 127).to(torch.uint8).reshape(-1)
        return q, sfd

    if kind == "e4m3_amax":
        peers = {"then_amax_scale_cast": lambda x: delayed(x, scale),
                 "then_current_scaling": current}
    else:
        peers = {"then_mx_quantize": lambda x: mx(x, index)}
    if compile_peer:
        for name, fn in list(peers.items()):
            compiled = torch.compile(fn, dynamic=False)
            peers[name + "_compiled"] = compiled
    return peers


def dequantize(torch, kind, outs, scale, index):
    """The float32 values a quantized D stands for: D / scale (e4m3_amax: outs = (D, amax)), or each
    element times its block's factor 2^(x - 127) read from SFD at `index` (mxfp8: outs = (D, SFD))."""
    d, extra = outs
    if kind == "e4m3_amax":
        return d.float() / scale
    M, N = d.shape
    factors = torch.exp2(extra[index.reshape(-1)].float().view(M, N // 32, 1) - 127)
    return (d.float().view(M, N // 32, 32) * factors).view(M, N)


def timed_launch(torch, fn):
    """One launch of fn between CUDA events, the GPU kept busy while the host enqueues them."""
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(2_000_000)  # about 1 ms of GPU time, while the host enqueues what follows
    e0.record()
    fn()
    e1.record()
    e1.synchronize()
    return e0.elapsed_time(e1)


def bench_rounds(torch, fns, reps=30):
    """Median milliseconds of each callable: warm-up, then `reps` rounds that time every callable
    once each, so that a drift of the clocks over the run (power, heat) falls on all alike."""
    import statistics
    for fn in fns.values():
        for _ in range(5):
            fn()
    torch.cuda.synchronize()
    ts = {k: [] for k in fns}
    for _ in range(reps):
        for k, fn in fns.items():
            ts[k].append(timed_launch(torch, fn))
    return {k: statistics.median(v) for k, v in ts.items()}


def load_configs(torch):
    """The shim (built here, on the GPU machine) and the prepared configs, each with its entry point
    `fn` (ctypes: the device addresses of A, B, D and the config's `args`, m, n, k, the stream)."""
    import ctypes
    lib = shim_library("/tmp/ptxgen-bench.so")
    lib.bench_error.restype = ctypes.c_char_p
    cfgs = json.load(open(os.path.join(BENCH, "configs.json")))
    for c in cfgs:
        f = getattr(lib, "b_" + c["name"])
        f.argtypes = ([ctypes.c_uint64] * 4 + [ctypes.c_int64] * 4 + [ctypes.c_uint64] if c.get("grouped") else
                      [ctypes.c_uint64] * (3 + len(c.get("args", []))) + [ctypes.c_int64] * 3 + [ctypes.c_uint64])
        f.restype = ctypes.c_int
        c["fn"] = f
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    return lib, cfgs


def run(quick=False, fused_only=False, compile_peer=True, only_shape=None):
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # JAX shares the GPU with torch
    import torch
    import torch.nn.functional as F
    out_dir = os.environ.get("OUT", "/tmp")
    lib, cfgs = load_configs(torch)
    dev = torch.device("cuda")
    tdt = {"bf16": torch.bfloat16, "f16": torch.float16, "e4m3": torch.float8_e4m3fn}

    def bench_all(fns, reps=30):
        return bench_rounds(torch, fns, reps)

    def rel_err(x, ref):
        return ((x.float() - ref).norm() / ref.norm()).item()

    triton_mm = triton_kernel()
    gelu_form = torch_gelu_form(torch) if any("epilogue" in c for c in cfgs) else None
    if gelu_form:
        print("torch._addmm_activation(use_gelu=True) (cuBLASLt GELU_BIAS epilogue): %s" % gelu_form["verdict"], flush=True)
    glu_shapes = [glu_kernel_shape(g) + ("bf16",) for g in GLU_SHAPES]
    shapes = QUICK if quick else SHAPES + [s for s in glu_shapes if s not in SHAPES]
    if fused_only:
        shapes = [(M, N, K, "bf16") for (M, N, K) in FUSED_SHAPES] + glu_shapes
    if only_shape:
        shapes = [sh for sh in shapes if "%dx%dx%d" % sh[:3] == only_shape]
    results, failed = [], 0
    for (M, N, K, t) in shapes:
        torch.manual_seed(M * 31 + N * 7 + K)
        a32 = torch.randn(M, K, device=dev) * 0.5
        b32 = torch.randn(N, K, device=dev) * 0.5
        a, bm = a32.to(tdt[t]), b32.to(tdt[t])
        out_t = torch.bfloat16 if t in ("bf16", "e4m3") else torch.float16
        ref = a.float() @ bm.float().t()
        row = {"shape": [M, N, K], "dtype": t, "ptxgen": {}, "peers": {}}
        stream = torch.cuda.current_stream().cuda_stream
        fns = {}  # what is timed together: (kind, name) -> callable
        mine = [c for c in cfgs if timed_on(c, [M, N, K], t)]
        if not mine:
            continue  # prepared with --only: no config of this shape's type
        fused = [c for c in mine if "epilogue" in c and not c.get("glu")]
        glu = [c for c in mine if c.get("glu")]
        quant = [c for c in mine if "quant" in c]
        if fused_only:  # the fused configs, their plain twins and the plain peers
            twins = {c["twin"] for c in fused + glu + quant}
            mine = [c for c in mine if "epilogue" in c or "quant" in c or c["name"] in twins]
        # A quantized D: the per-tensor scale a delayed-scaling recipe would pass (448 / the product's
        # amax, an f32), where each MXFP8 factor lies in SFD, and the product's amax.
        if quant:
            qscale_t = torch.tensor([448.0 / ref.abs().max().item()], dtype=torch.float32, device=dev)
            qscale = qscale_t.item()
            qindex = sfd_index(torch, M, N, dev)
            ref_amax = ref.abs().max().item()

        def check_quant(kind, outs):
            """A quantized D's error: its dequantized values against the float32 product (relative
            Frobenius, below 0.05: e4m3 keeps 3 bits, about 2.5 % RMS), and for e4m3_amax the amax
            within 1e-2 of the product's (its rounding to bf16 and the accumulation aside, equal)."""
            deq = dequantize(torch, kind, outs, qscale, qindex)
            err = rel_err(deq, ref)
            ok = err < 0.05 and not torch.isnan(deq).any().item()
            res = {"rel_err": err}
            if kind == "e4m3_amax":
                res["amax_rel_err"] = abs(outs[1].item() - ref_amax) / ref_amax
                ok = ok and res["amax_rel_err"] < 1e-2
            res["ok"] = ok
            return res
        # The fused inputs: a bf16 bias row of N, and the float32 reference gelu_tanh(A·B + bias).
        if fused:
            bias = (torch.randn(N, device=dev) * 0.5).to(out_t)
            fref = F.gelu(ref + bias.float(), approximate="tanh")
        # GEMM + SwiGLU: D is M x N/2, silu of the product's first half times its second.
        if glu:
            half = N // 2
            gref = F.silu(ref[:, :half]) * ref[:, half:]
        for c in mine:
            if "quant" in c:  # D e4m3; D's scale and a zeroed amax (e4m3_amax) or SFD (mxfp8) after it
                d = torch.empty(M, N, device=dev, dtype=torch.float8_e4m3fn)
                bufs = {"d_scale": qscale_t, "amax": torch.zeros(1, device=dev, dtype=torch.float32),
                        "sfd": torch.zeros(sfd_bytes(M, N), device=dev, dtype=torch.uint8)}
                ptrs = [bufs[x].data_ptr() for x in c["args"]]
                outs = (d, bufs["amax"] if c["quant"] == "e4m3_amax" else bufs["sfd"])
            else:
                d = torch.empty(M, N // 2 if c.get("glu") else N, device=dev, dtype=out_t)
                bufs = {}
                ptrs = [bias.data_ptr()] if takes_bias(c) else []
            # `keep` holds the tensors behind ptrs (bare addresses) for as long as the call is timed.
            call = lambda c=c, d=d, ptrs=ptrs, keep=bufs: c["fn"](a.data_ptr(), bm.data_ptr(), d.data_ptr(), *ptrs, M, N, K,
                                                                  stream)
            r = call()
            if r != 0:
                row["ptxgen"][c["name"]] = {"error": "CUresult %d: %s" % (r, lib.bench_error().decode())}
                continue
            torch.cuda.synchronize()
            if "quant" in c:
                row["ptxgen"][c["name"]] = dict(check_quant(c["quant"], outs), quant=c["quant"])
                failed += not row["ptxgen"][c["name"]]["ok"]
                fns[("ptxgen", c["name"])] = call  # the amax is raised again each launch (a max: no zeroing needed)
                continue
            err = rel_err(d, gref if c.get("glu") else fref if "epilogue" in c else ref)
            ok = err < 1e-2 and not torch.isnan(d.float()).any().item()
            failed += not ok
            row["ptxgen"][c["name"]] = {"rel_err": err, "ok": ok}
            if "epilogue" in c:
                row["ptxgen"][c["name"]]["fused"] = describe(c)
            fns[("ptxgen", c["name"])] = call
        # cuBLAS (cuBLASLt for fp8 through torch._scaled_mm), Triton, Mosaic GPU.
        if t == "e4m3":
            one = torch.ones((), device=dev)
            blas = lambda: torch._scaled_mm(a, bm.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
        else:
            blas = lambda: a @ bm.t()
        fns[("peers", "cublas")] = blas
        if triton_mm and not fused_only:
            for cfg in ((128, 256, 64, 3, 8), (128, 128, 64, 4, 4)) if t != "e4m3" else ((128, 256, 128, 3, 8), (128, 128, 128, 4, 4)):
                try:
                    c_out = torch.empty(M, N, device=dev, dtype=out_t)
                    fn = triton_mm(a, bm, c_out, *cfg)
                    fn()
                    torch.cuda.synchronize()
                    err = ((c_out.float() - ref).norm() / ref.norm()).item()
                    key = "triton_%dx%dx%d_s%d_w%d" % cfg
                    if err < 1e-2:
                        fns[("peers", key)] = fn
                    else:
                        row["peers"][key] = "wrong (rel err %.2g)" % err
                except Exception as ex:  # a config a shape cannot take
                    row["peers"]["triton_error"] = repr(ex)[:160]
        # The fused peers (checked against the same reference: gelu_tanh(A·B + bias)) and GEMM +
        # SwiGLU's (against silu(ref[:, :d]) * ref[:, d:]), each checked before it is timed.
        def check_peers(kind, peers, want):
            row[kind] = {}
            for key, fn in peers.items():
                try:
                    out = fn()
                    torch.cuda.synchronize()
                    err = rel_err(out, want)
                except Exception as ex:  # torch.compile or an op this torch lacks
                    row[kind][key] = "error: " + repr(ex)[:200]
                    continue
                if err < 1e-2 and not torch.isnan(out.float()).any().item():
                    fns[(kind, key)] = fn
                else:
                    row[kind][key] = "wrong (rel err %.2g)" % err
        if fused:
            check_peers("fused_peers", fused_peers(torch, F, a, bm, bias, compile_peer), fref)
        if glu:
            check_peers("glu_peers", glu_peers(torch, F, a, bm, compile_peer), gref)
        # A quantized D's peers: cuBLAS's bf16 GEMM (torch.mm) then a separate quantization, each
        # checked as ptxgen's result is, then timed whole (the GEMM and the quantization).
        if quant:
            row["quant_peers"] = {}
            for kind in sorted({c["quant"] for c in quant}):
                for key, q in quant_peers(torch, kind, qscale, qindex, compile_peer).items():
                    name = "%s:cublas_mm_%s" % (kind, key)
                    fn = lambda q=q: q(a @ bm.t())
                    try:
                        res = check_quant(kind, fn())
                    except Exception as ex:  # torch.compile or an op this torch lacks
                        row["quant_peers"][name] = "error: " + repr(ex)[:200]
                        continue
                    if res["ok"]:
                        fns[("quant_peers", name)] = fn
                    else:
                        row["quant_peers"][name] = "wrong (%s)" % json.dumps(res)
        for (kind, name), ms in bench_all(fns).items():
            if kind == "ptxgen":
                row["ptxgen"][name]["tflops"] = round(tflops(M, N, K, ms), 1)
            else:
                row[kind][name] = round(tflops(M, N, K, ms), 1)
        if t == "bf16" and not fused_only:
            row["peers"].update(mosaic(M, N, K))
        plain_ok = {k: v for k, v in row["ptxgen"].items() if "tflops" in v and v.get("ok") and "fused" not in v and
                    "quant" not in v}
        best_cfg = max((v["tflops"], k) for k, v in plain_ok.items()) if plain_ok else (float("nan"), "none")
        peers = {k: v for k, v in row["peers"].items() if isinstance(v, float)}
        best_peer = max((v, k) for k, v in peers.items())
        dflt = [v["tflops"] for k, v in plain_ok.items() if "_default_" in k]
        row["default_tflops"] = dflt[0] if dflt else None
        row["best"] = {"ptxgen": best_cfg[1], "ptxgen_tflops": best_cfg[0], "peer": best_peer[1],
                       "peer_tflops": best_peer[0], "vs_cublas": round(best_cfg[0] / peers["cublas"], 3),
                       "vs_best_peer": round(best_cfg[0] / best_peer[0], 3)}
        if fused:
            row["fused"] = fused_summary(row, {c["name"]: c["twin"] for c in fused}, best_cfg)
            if gelu_form:
                row["fused"]["addmm_activation_gelu_form"] = gelu_form["verdict"]
        if glu:
            row["glu"] = fused_summary(row, {c["name"]: c["twin"] for c in glu}, best_cfg, "glu_peers", "swiglu")
        if quant:
            row["quant"] = {kind: quant_summary(row, kind, {c["name"]: c["twin"] for c in quant}, best_cfg)
                            for kind in sorted({c["quant"] for c in quant})}
        results.append(row)
        print(report(row), flush=True)
    with open(os.path.join(out_dir, "bench.json"), "w") as f:
        json.dump(results, f, indent=1)
    print("%d shapes, %d wrong ptxgen results" % (len(results), failed))
    return 1 if failed else 0


def blockwise_inputs(torch, M, N, K, dev):
    """e4m3 A (M x K) and B (N x K), the f32 factors SFA [kb][m] and SFB [nb][kb] (docs/spec.md,
    "Block-wise f32 factors"; random positive 2^e (1 + f), e in -4 .. 4), and the float64 product of
    the dequantized operands, A[m, k] SFA[k / 128][m] times B[n, k] SFB[n / 128][k / 128]."""
    kb, nb = (K + 127) // 128, (N + 127) // 128
    a = (torch.randn(M, K, device=dev) * 0.5).to(torch.float8_e4m3fn)
    bm = (torch.randn(N, K, device=dev) * 0.5).to(torch.float8_e4m3fn)

    def factors(rows, cols):
        e = torch.randint(-4, 5, (rows, cols), device=dev).float()
        return (torch.exp2(e) * (1 + torch.rand(rows, cols, device=dev))).contiguous()
    sfa, sfb = factors(kb, M), factors(nb, kb)
    blocks = torch.arange(K, device=dev) // 128
    a64 = a.double() * sfa.double().t()[:, blocks]
    b64 = bm.double() * sfb.double()[torch.arange(N, device=dev) // 128][:, blocks]
    return a, bm, sfa, sfb, a64 @ b64.t()


def blockwise_peer(torch, a, bm, sfa, sfb):
    """torch._scaled_mm with block-wise scales (torch's BlockWise1x128 for A, BlockWise128x128 for B):
    scale_a (m, kb) with strides (1, m), which SFA.t() is; scale_b (kb, nb) whose transpose (nb, kb)
    has rows round_up(kb, 4) apart and unit column stride (ScaledBlas.cpp's is_blockwise_128x128_scaling
    on b.t(); earlier torch takes kb apart, the same where kb is a multiple of 4)."""
    nb, kb = sfb.shape
    pad = torch.zeros(nb, (kb + 3) // 4 * 4, device=sfb.device, dtype=torch.float32)
    pad[:, :kb] = sfb
    scale_b = pad[:, :kb].t()
    return lambda: torch._scaled_mm(a, bm.t(), scale_a=sfa.t(), scale_b=scale_b, out_dtype=torch.bfloat16)


def run_blockwise(only_shape=None):
    """Block-wise scaled FP8 (`run --blockwise`, the docstring's last paragraph): per shape of
    BW_SHAPES, every ptxgen block-wise config and the peers in the same rounds."""
    import torch
    out_dir = os.environ.get("OUT", "/tmp")
    lib, cfgs = load_configs(torch)
    dev = torch.device("cuda")
    bound = 5e-3
    results, failed = [], 0
    for (M, N, K) in BW_SHAPES:
        if only_shape and "%dx%dx%d" % (M, N, K) != only_shape:
            continue
        mine = [c for c in cfgs if c.get("blockwise") and timed_on(c, [M, N, K], "e4m3")]
        if not mine:
            continue
        torch.manual_seed(M * 31 + N * 7 + K)
        a, bm, sfa, sfb, ref64 = blockwise_inputs(torch, M, N, K, dev)
        ref_norm = ref64.norm().item()

        def rel_err64(x):
            return ((x.double() - ref64).norm().item()) / ref_norm

        row = {"shape": [M, N, K], "dtype": "e4m3 block-wise", "ptxgen": {}, "peers": {}}
        stream = torch.cuda.current_stream().cuda_stream
        fns = {}
        for c in mine:
            d = torch.empty(M, N, device=dev, dtype=torch.bfloat16)
            call = lambda c=c, d=d: c["fn"](a.data_ptr(), bm.data_ptr(), d.data_ptr(), sfa.data_ptr(), sfb.data_ptr(), M, N, K,
                                            stream)
            if not launched(torch, lib, row, c, call):
                failed += 1
                continue
            err = rel_err64(d)
            ok = err < bound and not torch.isnan(d.float()).any().item()
            failed += not ok
            row["ptxgen"][c["name"]] = {"rel_err": err, "ok": ok}
            fns[("ptxgen", c["name"])] = call
        # The block-wise peer (checked as ptxgen is) and cuBLAS's per-tensor e4m3 GEMM, the ceiling
        # (checked against the float32 unscaled product).
        try:
            peer = blockwise_peer(torch, a, bm, sfa, sfb)
            out = peer()
            torch.cuda.synchronize()
            err = rel_err64(out)
            if err < bound and not torch.isnan(out.float()).any().item():
                fns[("peers", "torch_scaled_mm_blockwise")] = peer
            else:
                row["peers"]["torch_scaled_mm_blockwise"] = "wrong (rel err %.2g)" % err
        except Exception as ex:  # this torch or GPU refuses block-wise scales
            row["peers"]["torch_scaled_mm_blockwise"] = "error: " + repr(ex)[:300]
        one = torch.ones((), device=dev)
        ceiling = lambda: torch._scaled_mm(a, bm.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
        plain = a.float() @ bm.float().t()
        err = ((ceiling().float() - plain).norm() / plain.norm()).item()
        del plain
        if err < 1e-2:
            fns[("peers", "cublas_per_tensor")] = ceiling
        else:
            row["peers"]["cublas_per_tensor"] = "wrong (rel err %.2g)" % err
        for (kind, name), ms in bench_rounds(torch, fns).items():
            if kind == "ptxgen":
                row["ptxgen"][name]["tflops"] = round(tflops(M, N, K, ms), 1)
            else:
                row["peers"][name] = round(tflops(M, N, K, ms), 1)
        row["blockwise"] = blockwise_summary(row)
        results.append(row)
        print(blockwise_report(row), flush=True)
        del a, bm, sfa, sfb, ref64
        torch.cuda.empty_cache()
    with open(os.path.join(out_dir, "bench-blockwise.json"), "w") as f:
        json.dump(results, f, indent=1)
    print("%d block-wise shapes, %d wrong or failed ptxgen results" % (len(results), failed))
    return 1 if failed else 0


def launched(torch, lib, row, c, call):
    """The first launch of config c (its result then checked): False, with the header's words in the
    row, where the launch function refused it."""
    r = call()
    if r != 0:
        row["ptxgen"][c["name"]] = {"error": "CUresult %d: %s" % (r, lib.bench_error().decode())}
        return False
    torch.cuda.synchronize()
    return True


def grouped_tokens(G, cap, seed):
    """Uneven tokens per group: multiples of 128 from 128 to the capacity (so that the contiguous
    layout's segments, aligned to 128, hold exactly the tokens torch's grouped_mm packs), with one
    empty group where there are 32."""
    import random
    r = random.Random(seed)
    t = [r.randrange(128, cap + 1, 128) for _ in range(G)]
    if G >= 32:
        t[r.randrange(G)] = 0
    return t


def run_grouped():
    """Grouped GEMM, masked layout (`run --grouped`, the docstring's last paragraph): per shape of
    GROUPED_SHAPES, every ptxgen masked config and the peers in the same rounds."""
    import torch
    out_dir = os.environ.get("OUT", "/tmp")
    lib, cfgs = load_configs(torch)
    dev = torch.device("cuda")
    mine = [c for c in cfgs if c.get("grouped")]
    dense = [c for c in cfgs if c.get("grouped_dense")]
    results, failed = [], 0
    stream = torch.cuda.current_stream().cuda_stream
    for (G, cap, N, K) in GROUPED_SHAPES:
        torch.manual_seed(G * 7 + N + K)
        tokens = grouped_tokens(G, cap, G * 1000 + N + K)
        T = sum(tokens)
        a = (torch.randn(G, cap, K, device=dev) * 0.5).to(torch.bfloat16)
        bm = (torch.randn(G, N, K, device=dev) * 0.5).to(torch.bfloat16)
        masked = torch.tensor(tokens, device=dev, dtype=torch.int32)
        refs = [a[g, :t].float() @ bm[g].float().t() for g, t in enumerate(tokens)]
        row = {"shape": [G, cap, N, K], "tokens": tokens, "ptxgen": {}, "peers": {}}

        def check(outs):  # each group's valid rows against the float32 product
            num = sum(((o.float() - r).norm() ** 2).item() for o, r in zip(outs, refs))
            den = sum((r.norm() ** 2).item() for r in refs)
            nan = any(torch.isnan(o.float()).any().item() for o in outs)
            return (num / den) ** 0.5, nan

        # The contiguous layout: the tokens packed, group g's rows from ends[g - 1] (every size a
        # multiple of the segments' align: no padding), as torch's grouped_mm takes them.
        packed = torch.cat([a[g, :t] for g, t in enumerate(tokens)])
        ends = torch.tensor(list(__import__("itertools").accumulate(tokens)), device=dev, dtype=torch.int32)
        starts = [0] + ends.tolist()[:-1]
        fns = {}
        for c in mine:
            tm = c["gemm"].get("tile", {}).get("m", 128)
            if c["gemm"]["groups"]["layout"] == "contiguous":  # the packed tokens, ends; D [T, N]
                d = torch.full((T, N), float("nan"), device=dev, dtype=torch.bfloat16)
                args, rows = (packed, ends, T), [d[s0:s0 + t] for s0, t in zip(starts, tokens)]
                past = []  # tokens multiples of align: no padding rows
            else:  # the [G, cap] planes, masked_m; D [G, cap, N], untouched past each group's tiles
                d = torch.full((G, cap, N), float("nan"), device=dev, dtype=torch.bfloat16)
                args, rows = (a, masked, cap), [d[g, :t] for g, t in enumerate(tokens)]
                past = [d[g, (t + tm - 1) // tm * tm:] for g, t in enumerate(tokens)]
            call = lambda c=c, d=d, x=args: c["fn"](x[0].data_ptr(), bm.data_ptr(), d.data_ptr(), x[1].data_ptr(), x[2], N, K, G, stream)
            if not launched(torch, lib, row, c, call):
                failed += 1
                continue
            err, nan = check(rows)
            untouched = all(torch.isnan(x.float()).all().item() for x in past)
            ok = err < 1e-2 and not nan and untouched
            failed += not ok
            row["ptxgen"][c["name"]] = {"rel_err": err, "ok": ok, "past_tiles_untouched": untouched}
            fns[("ptxgen", c["name"])] = call

        def peer(name, fn, rows):
            """A peer timed in the rounds where its first call's valid rows (rows(its output)) are right."""
            try:
                out = fn()
                torch.cuda.synchronize()
                err, nan = check(rows(out))
                if err < 1e-2 and not nan:
                    fns[("peers", name)] = fn
                else:
                    row["peers"][name] = "wrong (rel err %.2g)" % err
            except Exception as ex:  # this torch or GPU refuses it, or a launch failed
                row["peers"][name] = "error: " + repr(ex)[:300]

        # One dense ptxgen launch per group (m = its tokens; an empty group launches nothing).
        el = K * 2  # bf16 bytes of a row of A
        for c in dense:
            d = torch.empty(G, cap, N, device=dev, dtype=torch.bfloat16)

            def per_group(c=c, d=d):
                for g, t in enumerate(tokens):
                    if t and c["fn"](a.data_ptr() + g * cap * el, bm.data_ptr() + g * N * el, d.data_ptr() + g * cap * N * 2, t, N, K, stream):
                        raise RuntimeError(lib.bench_error().decode())
                return d
            peer("ptxgen_dense_per_group", per_group, lambda out: [out[g, :t] for g, t in enumerate(tokens)])
        # torch's grouped GEMM on the tokens packed contiguously (its MoE path), and bmm over the capacity.
        peer("torch_grouped_mm", lambda: torch._grouped_mm(packed, bm.transpose(-2, -1), offs=ends, out_dtype=torch.bfloat16),
             lambda out: [out[s0:s0 + t] for s0, t in zip(starts, tokens)])
        peer("torch_bmm_capacity", lambda: torch.bmm(a, bm.transpose(1, 2)), lambda out: [out[g, :t] for g, t in enumerate(tokens)])
        for (kind, name), ms in bench_rounds(torch, fns).items():
            tf = round(2.0 * T * N * K / (ms * 1e-3) / 1e12, 1)
            if kind == "ptxgen":
                row["ptxgen"][name]["tflops"] = tf
            else:
                row["peers"][name] = tf
        ok = {k: v["tflops"] for k, v in row["ptxgen"].items() if v.get("ok") and "tflops" in v}
        best = max((v, k) for k, v in ok.items()) if ok else (float("nan"), "none")
        row["grouped"] = {"best": best[1], "tflops": best[0]}
        for peer in ("torch_grouped_mm", "ptxgen_dense_per_group", "torch_bmm_capacity"):
            v = row["peers"].get(peer)
            if isinstance(v, (int, float)) and v > 0:
                row["grouped"]["vs_" + peer] = round(best[0] / v, 3)
        results.append(row)
        print("grouped G=%d cap=%d N=%d K=%d tokens=%d: %s; peers %s; ptxgen %s" % (
            G, cap, N, K, T, json.dumps(row["grouped"]), json.dumps(row["peers"]),
            json.dumps({k: v.get("tflops", v.get("error")) for k, v in row["ptxgen"].items()})), flush=True)
        del a, bm, refs, packed
        torch.cuda.empty_cache()
    with open(os.path.join(out_dir, "bench-grouped.json"), "w") as f:
        json.dump(results, f, indent=1)
    print("%d grouped shapes, %d wrong or failed ptxgen results" % (len(results), failed))
    return 1 if failed else 0


def blockwise_summary(row):
    """ptxgen's best block-wise config against the block-wise peer and the per-tensor ceiling."""
    ok = {k: v["tflops"] for k, v in row["ptxgen"].items() if v.get("ok") and "tflops" in v}
    best = max((v, k) for k, v in ok.items()) if ok else (float("nan"), "none")
    out = {"ptxgen": best[1], "ptxgen_tflops": best[0]}
    for peer in ("torch_scaled_mm_blockwise", "cublas_per_tensor"):
        v = row["peers"].get(peer)
        if isinstance(v, float):
            out["vs_" + peer] = round(best[0] / v, 3)
    return out


def blockwise_report(row):
    M, N, K = row["shape"]
    lines = ["%dx%dx%d e4m3 block-wise (1x128, 128x128 f32 factors):" % (M, N, K)]
    for k, v in sorted(row["ptxgen"].items()):
        lines.append("  %-48s %s" % (k, "%7.1f TF/s  rel err %.2g%s" % (v["tflops"], v["rel_err"], "" if v["ok"] else "  WRONG")
                                     if "tflops" in v else json.dumps(v)))
    for k, v in sorted(row["peers"].items()):
        lines.append("  %-48s %s" % (k, "%7.1f TF/s" % v if isinstance(v, float) else v))
    lines.append("  blockwise: " + json.dumps(row["blockwise"]))
    return "\n".join(lines)


def fused_peers(torch, F, a, bm, bias, compile_peer):
    """The fused peers of D = gelu_tanh(A·B^T + bias) on the same bf16 inputs, each a callable:
    torch._addmm_activation (cuBLASLt's GELU_BIAS epilogue, one kernel; use_gelu=True is the tanh
    form: torch_gelu_form checks it), cuBLAS's GEMM with the bias in its epilogue then torch's gelu
    (two kernels), cuBLAS's plain GEMM then the bias and gelu (torch, eager), and torch.compile of the
    expression (mode max-autotune-no-cudagraphs; GEMM backends TRITON by default: Triton's GEMM
    template with the bias and gelu fused into its epilogue; $PTXGEN_BENCH_COMPILE_BACKENDS, e.g.
    ATEN,TRITON, lets autotuning pick cuBLAS + a separate kernel where faster)."""
    bt = bm.t()
    peers = {
        "addmm_activation_gelu": lambda: torch._addmm_activation(bias, a, bt, use_gelu=True),
        "cublas_addmm_then_gelu": lambda: F.gelu(torch.addmm(bias, a, bt), approximate="tanh"),
        "cublas_mm_then_bias_gelu": lambda: F.gelu(a @ bt + bias, approximate="tanh"),
    }
    if compile_peer:
        import torch._inductor.config as ic
        ic.max_autotune_gemm_backends = os.environ.get("PTXGEN_BENCH_COMPILE_BACKENDS", "TRITON")
        compiled = torch.compile(lambda x, w, b: F.gelu(x @ w.t() + b, approximate="tanh"),
                                 mode="max-autotune-no-cudagraphs", dynamic=False)
        peers["torch_compile_%s" % ic.max_autotune_gemm_backends.lower().replace(",", "_")] = lambda: compiled(a, bm, bias)
    return peers


def glu_peers(torch, F, a, bm, compile_peer):
    """GEMM + SwiGLU's peers on the same bf16 inputs (B stacked [W_gate; W_up], 2 d rows): torch's mm
    (cuBLAS) then F.silu(x[:, :d]) * x[:, d:] (vLLM's SiluAndMul in eager torch: two more kernels),
    and torch.compile of that expression in the gelu peers' mode and GEMM backends (Triton's GEMM
    template; the silu and product fused where inductor can)."""
    def silu_and_mul(x):
        d = x.shape[-1] // 2
        return F.silu(x[:, :d]) * x[:, d:]
    peers = {"cublas_mm_then_silu_mul": lambda: silu_and_mul(a @ bm.t())}
    if compile_peer:
        import torch._inductor.config as ic
        ic.max_autotune_gemm_backends = os.environ.get("PTXGEN_BENCH_COMPILE_BACKENDS", "TRITON")
        compiled = torch.compile(lambda x, w: silu_and_mul(x @ w.t()), mode="max-autotune-no-cudagraphs", dynamic=False)
        peers["torch_compile_%s" % ic.max_autotune_gemm_backends.lower().replace(",", "_")] = lambda: compiled(a, bm)
    return peers


def torch_gelu_form(torch):
    """Which GELU torch._addmm_activation(use_gelu=True) computes on this GPU (cuBLASLt's GELU_BIAS
    epilogue where torch takes the Lt path, as a 1-D bias and contiguous tensors make it; its fallback
    is at::gelu_(result, "tanh")): f32 (TF32 off), A·B = x exactly (A's first column ones, B's first
    row x, the rest zeros) for x in [-4, 4], against both forms in float64."""
    import math
    n, k = 4096, 16
    x = torch.linspace(-4, 4, n, dtype=torch.float32, device="cuda")
    a = torch.zeros(64, k, dtype=torch.float32, device="cuda")
    a[:, 0] = 1
    b = torch.zeros(k, n, dtype=torch.float32, device="cuda")
    b[0] = x
    try:
        out = torch._addmm_activation(torch.zeros(n, device="cuda"), a, b, use_gelu=True)[0].double()
    except Exception as ex:
        return {"verdict": "unknown (%s)" % repr(ex)[:120]}
    xs = x.double()
    tanh_form = 0.5 * xs * (1 + torch.tanh(math.sqrt(2 / math.pi) * (xs + 0.044715 * xs ** 3)))
    erf_form = 0.5 * xs * (1 + torch.erf(xs / math.sqrt(2)))
    et, ee = (out - tanh_form).abs().max().item(), (out - erf_form).abs().max().item()
    form = "tanh" if et < ee else "erf"
    return {"verdict": "%s form (max |diff| %.2g from the tanh form, %.2g from erf)" % (form, et, ee), "form": form}


def fused_summary(row, twins, best_plain, peers_key="fused_peers", only=None):
    """The fused ratios of one shape: ptxgen's best fused config against ptxgen's best plain GEMM
    (target >= 0.97) and against the best fused peer (target >= 1.05), and each fused config against
    its plain twin. `only`: the fused configs of that epilogue ("swiglu": GEMM + SwiGLU, its peers
    under `peers_key`)."""
    fused = {k: v for k, v in row["ptxgen"].items() if "fused" in v and "tflops" in v and v.get("ok") and
             (only is None or v["fused"] == only) and (only is not None or v["fused"] != "swiglu")}
    peers = {k: v for k, v in row.get(peers_key, {}).items() if isinstance(v, float)}
    return ratios(row, fused, peers, twins, best_plain)


def ratios(row, mine, peers, twins, best_plain):
    """Each of `mine` (ptxgen's configs of one kind) against its plain twin, and the best of them
    against ptxgen's best plain GEMM and against the best of `peers`."""
    out = {"twins": {}}
    for k, v in mine.items():
        tw = row["ptxgen"].get(twins.get(k, ""), {})
        if "tflops" in tw:
            out["twins"][k] = {"twin": twins[k], "vs_twin": round(v["tflops"] / tw["tflops"], 3)}
    if not mine:
        return out
    best = max((v["tflops"], k) for k, v in mine.items())
    out.update({"ptxgen": best[1], "ptxgen_tflops": best[0], "plain": best_plain[1], "plain_tflops": best_plain[0],
                "vs_plain": round(best[0] / best_plain[0], 3)})
    if peers:
        bp = max((v, k) for k, v in peers.items())
        out.update({"peer": bp[1], "peer_tflops": bp[0], "vs_best_peer": round(best[0] / bp[0], 3)})
    return out


def quant_summary(row, kind, twins, best_plain):
    """A quantized D's ratios at one shape: ptxgen's best config of that kind against ptxgen's best
    plain (bf16-output) GEMM (issue 28's target for e4m3 with the amax: >= 0.95) and against the best
    peer of that kind, the GEMM followed by a separate quantization (target >= 1.3), and each config
    against its plain twin."""
    mine = {k: v for k, v in row["ptxgen"].items() if v.get("quant") == kind and "tflops" in v and v.get("ok")}
    peers = {k: v for k, v in row.get("quant_peers", {}).items() if k.startswith(kind + ":") and isinstance(v, float)}
    return ratios(row, mine, peers, twins, best_plain)


QUANT_WORDS = {"e4m3_amax": "e4m3 D (scale given) + amax", "mxfp8": "MXFP8 D (e4m3, ue8m0 per 32)"}


def report(row):
    M, N, K = row["shape"]
    lines = ["%s %dx%dx%d: ptxgen best %s %.1f TF/s = %.3fx cuBLAS, %.3fx the best peer (%s %.1f); ptxgen's default %s TF/s" % (
        row["dtype"], M, N, K, row["best"]["ptxgen"], row["best"]["ptxgen_tflops"], row["best"]["vs_cublas"],
        row["best"]["vs_best_peer"], row["best"]["peer"], row["best"]["peer_tflops"], row.get("default_tflops"))]
    fu = row.get("fused")
    if fu and "ptxgen" in fu:
        lines.append("  fused bias + gelu_tanh: ptxgen best %s %.1f TF/s = %.3fx ptxgen's plain best (%s %.1f; target 0.97), %s" % (
            fu["ptxgen"], fu["ptxgen_tflops"], fu["vs_plain"], fu["plain"], fu["plain_tflops"],
            "%.3fx the best fused peer (%s %.1f; target 1.05)" % (fu["vs_best_peer"], fu["peer"], fu["peer_tflops"])
            if "peer" in fu else "no fused peer ran"))
        for k, v in sorted(fu["twins"].items()):
            lines.append("   fused  %-44s %.3fx its plain twin %s" % (k, v["vs_twin"], v["twin"]))
    gl = row.get("glu")
    if gl and "ptxgen" in gl:
        lines.append("  GEMM + SwiGLU (D %dx%d): ptxgen best %s %.1f TF/s = %.3fx ptxgen's plain best (%s %.1f; target 0.97), %s" % (
            M, N // 2, gl["ptxgen"], gl["ptxgen_tflops"], gl["vs_plain"], gl["plain"], gl["plain_tflops"],
            "%.3fx the best peer (%s %.1f; target 1.05)" % (gl["vs_best_peer"], gl["peer"], gl["peer_tflops"])
            if "peer" in gl else "no peer ran"))
        for k, v in sorted(gl["twins"].items()):
            lines.append("   swiglu %-44s %.3fx its plain twin %s" % (k, v["vs_twin"], v["twin"]))
    for kind, q in sorted(row.get("quant", {}).items()):
        if "ptxgen" not in q:
            lines.append("  %s: no ptxgen config ran right" % QUANT_WORDS[kind])
            continue
        lines.append("  %s: ptxgen best %s %.1f TF/s = %.3fx ptxgen's bf16-output best (%s %.1f; target 0.95), %s" % (
            QUANT_WORDS[kind], q["ptxgen"], q["ptxgen_tflops"], q["vs_plain"], q["plain"], q["plain_tflops"],
            "%.3fx the best GEMM-then-quantize peer (%s %.1f; target 1.3)" % (q["vs_best_peer"], q["peer"], q["peer_tflops"])
            if "peer" in q else "no peer ran"))
        for k, v in sorted(q["twins"].items()):
            lines.append("   quant  %-44s %.3fx its plain twin %s" % (k, v["vs_twin"], v["twin"]))
    for k, v in sorted(row["ptxgen"].items()):
        lines.append("   ptxgen %-28s %s" % (k, "%.1f TF/s  err %.1e%s" % (v["tflops"], v["rel_err"], "" if v["ok"] else "  WRONG")
                                             if "tflops" in v else v.get("error", "not timed")))
    for k, v in sorted(row["peers"].items()):
        lines.append("   peer   %-28s %s" % (k, v))
    for k, v in sorted(row.get("fused_peers", {}).items()):
        lines.append("   fused peer %-24s %s" % (k, v))
    for k, v in sorted(row.get("glu_peers", {}).items()):
        lines.append("   swiglu peer %-23s %s" % (k, v))
    for k, v in sorted(row.get("quant_peers", {}).items()):
        lines.append("   quant peer %-24s %s" % (k, v))
    return "\n".join(lines)


def triton_kernel():
    """Triton's grouped-order matmul (the tutorial's schedule), D = A . B^T with B stored N x K."""
    try:
        import triton
        import triton.language as tl
    except Exception:
        return None

    @triton.jit
    def mm(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbn, sbk, scm, scn,
           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GM: tl.constexpr):
        pid = tl.program_id(0)
        npm = tl.cdiv(M, BM)
        npn = tl.cdiv(N, BN)
        npg = GM * npn
        gid = pid // npg
        fm = gid * GM
        gs = min(npm - fm, GM)
        pm = fm + ((pid % npg) % gs)
        pn = (pid % npg) // gs
        rm = (pm * BM + tl.arange(0, BM)) % M
        rn = (pn * BN + tl.arange(0, BN)) % N
        rk = tl.arange(0, BK)
        ap = a_ptr + rm[:, None] * sam + rk[None, :] * sak
        bp = b_ptr + rk[:, None] * sbk + rn[None, :] * sbn
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BK)):
            acc += tl.dot(tl.load(ap, mask=rk[None, :] < K - k * BK, other=0.0),
                          tl.load(bp, mask=rk[:, None] < K - k * BK, other=0.0))
            ap += BK * sak
            bp += BK * sbk
        cm = pm * BM + tl.arange(0, BM)
        cn = pn * BN + tl.arange(0, BN)
        tl.store(c_ptr + cm[:, None] * scm + cn[None, :] * scn, acc.to(c_ptr.dtype.element_ty),
                 mask=(cm[:, None] < M) & (cn[None, :] < N))

    def make(a, b, c, BM, BN, BK, st, nw):
        M, K = a.shape
        N = b.shape[0]
        grid = (triton.cdiv(M, BM) * triton.cdiv(N, BN),)
        return lambda: mm[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                                c.stride(1), BM=BM, BN=BN, BK=BK, GM=8, num_stages=st, num_warps=nw)
    return make


def mosaic(M, N, K):
    """JAX Pallas's Hopper matmul on Mosaic GPU (bf16), at the tile configs that fit the shape."""
    out = {}
    try:
        import functools
        import statistics
        import jax
        import jax.numpy as jnp
        from jax.experimental.pallas.ops.gpu import hopper_matmul_mgpu as hm
        from jax.experimental.mosaic.gpu import profiler
    except Exception as ex:
        return {"mosaic_error": repr(ex)[:160]}
    ja = jax.random.normal(jax.random.key(0), (M, K), jnp.bfloat16)
    jb = jax.random.normal(jax.random.key(1), (K, N), jnp.bfloat16)
    for tm, tn, st in ((128, 128, 4), (128, 256, 3)):
        if M % tm or N % tn:
            continue
        cfg = hm.TuningConfig(tile_m=tm, tile_n=tn, tile_k=64, max_concurrent_steps=st, epi_tile_n=64, epi_tile_m=64,
                              grid_minor_dim=hm.MatmulDimension.N, grid_tile_width=8,
                              wg_dimension=hm.MatmulDimension.N if tm == 128 else hm.MatmulDimension.M)
        try:
            _, rts = profiler.measure(functools.partial(hm.matmul, config=cfg), iterations=30)(ja, jb, None)
            out["mosaic_%dx%d_s%d" % (tm, tn, st)] = round(tflops(M, N, K, statistics.median(rts)), 1)
        except Exception as ex:
            out["mosaic_%dx%d_s%d_error" % (tm, tn, st)] = repr(ex)[:160]
    return out


def profile(name, M, N, K):
    """Launches one prepared config a few times, for a profiler to wrap:
    ncu --clock-control none -k regex:b_NAME --launch-skip 2 --launch-count 1 --section ... \
        python3 tools/bench-h200.py profile NAME M N K
    A block-wise config (f32 factors) launches torch's block-wise _scaled_mm five times after it on the
    same inputs, so that one ncu run (without -k) profiles both kernels."""
    import ctypes
    import torch
    lib = shim_library("/tmp/ptxgen-bench-profile.so")
    cfg = [c for c in json.load(open(os.path.join(BENCH, "configs.json"))) if c["name"] == name]
    if not cfg:
        sys.exit("no prepared config " + name)
    f = getattr(lib, "b_" + name)
    if cfg[0].get("blockwise"):  # f32 factors after D (run --blockwise's call)
        a, bm, sfa, sfb, _ = blockwise_inputs(torch, M, N, K, "cuda")
        d = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
        f.argtypes = [ctypes.c_uint64] * 5 + [ctypes.c_int64] * 3 + [ctypes.c_uint64]
        for _ in range(5):
            if f(a.data_ptr(), bm.data_ptr(), d.data_ptr(), sfa.data_ptr(), sfb.data_ptr(), M, N, K,
                 torch.cuda.current_stream().cuda_stream) != 0:
                sys.exit("launch failed")
        peer = blockwise_peer(torch, a, bm, sfa, sfb)  # torch's block-wise kernel, for ncu beside ours
        for _ in range(5):
            peer()
        torch.cuda.synchronize()
        return 0
    args = cfg[0].get("args", [])
    f.argtypes = [ctypes.c_uint64] * (3 + len(args)) + [ctypes.c_int64] * 3 + [ctypes.c_uint64]
    tdt = {"bf16": torch.bfloat16, "f16": torch.float16, "e4m3": torch.float8_e4m3fn}[cfg[0]["dtype"]]
    a = (torch.randn(M, K, device="cuda") * 0.5).to(tdt)
    bm = (torch.randn(N, K, device="cuda") * 0.5).to(tdt)
    out_t = {"bf16": torch.bfloat16, "f16": torch.float16, "e4m3": torch.float8_e4m3fn}[cfg[0].get("d", "bf16")]
    d = torch.empty(M, N // 2 if cfg[0].get("glu") else N, device="cuda", dtype=out_t)
    # The epilogue's pointers after D: a bias row of N, D's scale (1), a zeroed amax, SFD.
    extra = {"bias": lambda: (torch.randn(N, device="cuda") * 0.5).to(torch.bfloat16),
             "d_scale": lambda: torch.ones(1, device="cuda"), "amax": lambda: torch.zeros(1, device="cuda"),
             "sfd": lambda: torch.zeros(sfd_bytes(M, N), device="cuda", dtype=torch.uint8)}
    keep = [extra[x]() for x in args]
    bias = [t.data_ptr() for t in keep]
    for _ in range(5):
        if f(a.data_ptr(), bm.data_ptr(), d.data_ptr(), *bias, M, N, K, torch.cuda.current_stream().cuda_stream) != 0:
            sys.exit("launch failed")
    torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "prepare":
        prepare(sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == "--only" else None)
    elif len(sys.argv) >= 2 and sys.argv[1] == "run":
        shape = sys.argv[sys.argv.index("--shape") + 1] if "--shape" in sys.argv[:-1] else None
        if "--blockwise" in sys.argv:
            sys.exit(run_blockwise(shape))
        if "--grouped" in sys.argv:
            sys.exit(run_grouped())
        sys.exit(run("--quick" in sys.argv, "--fused" in sys.argv, "--no-compile" not in sys.argv, shape))
    elif len(sys.argv) >= 2 and sys.argv[1] == "check":
        sys.exit(check())
    elif len(sys.argv) == 6 and sys.argv[1] == "profile":
        sys.exit(profile(sys.argv[2], *map(int, sys.argv[3:6])))
    else:
        sys.exit(__doc__)
