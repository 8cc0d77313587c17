#!/usr/bin/env python3
"""Proof on hardware: a grid of sm_90a GEMM specs, run on an H200 through the generated launch header.

  tools/h200-grid.py prepare [--only SUBSTR[,SUBSTR...]]   # here: write the specs and build one launch header for all
                                               # of them, .device/grid/kernels.hpp (ignored by git, carried),
                                               # and epilogues.hpp beside it (each kernel's fused epilogue,
                                               # from its manifest); report the fused kernels that spill
  tools/h200-grid.py check                     # here (nvcc, no GPU): build the launcher against that header
                                               # with the toolkit's stub libcuda, run its --list and
                                               # --selfcheck (the fused reference and bound, emulated)
  tools/h200-grid.py run                       # on the GPU machine: build tools/launcher with nvcc against
                                               # that header, run every case, then the header's refusals
                                               # (--bad-input); write $OUT/results.jsonl, print a table

Each case is a spec (a patch of the base below) and a problem size; the launcher calls the header's
typed function for it (ptxgen::g_NAME: checks, module, tensor maps, cuLaunchKernelEx), fills fresh
random inputs, checks every element against a float64 or cuBLAS reference, and times the kernel
(a prepared launch, ptxgen::launch) and cuBLAS (median of 30 launches after warm-up).

The epi_ cases fuse an epilogue (docs/spec.md "Epilogues": D = activation(A·B + bias)): a bias along
N or M of each dtype, each activation, both, each output type, odd sizes, every schedule and epilogue
(data-parallel, persistent, ping-pong, clusters, TMA and direct stores, "auto", the planner's defaults);
alpha, beta with C (constants, or kernel inputs: a random f32 each), a residual, the amax and D's
scale; and the gated activations (swiglu, geglu: D =
act(P[:, :n/2]) * P[:, n/2:], P = A·B + bias, D m x n/2). The launcher passes them a random bias, C
and residual, D's scale 0.75 and a zeroed amax (EPILOGUE_GEMMS kernels: ptxgen::NAME(a, lda, b, ldb,
d, [c,] [bias,] [residual,] [alpha,] [beta,] [d_scale,] [amax,] sizes, stream)) and checks every element of D against
the float64 evaluation of the same formulas
within a bound per element that carries the accumulator's error and each approximate instruction's
documented one (ex2.approx 2 ulp, rcp.approx 1 ulp, tanh.approx 2^-11) through, plus D's rounding
(tools/launcher/launcher.cu says how); the row shows the largest error / bound ("worst"). The cuBLAS
column of a fused case times a plain GEMM (bench-h200.py times the fused peers).

The bw_ cases scale e4m3 A and B block-wise ("scale": {"dtype": "f32"}: DeepSeek-V3's recipe, A's
factors per row and 128 of K, B's per 128 x 128): the launcher passes random positive f32 factors
SFA [ceil(k/128)][m] and SFB [ceil(n/128)][ceil(k/128)] (BLOCKWISE_GEMMS kernels: the factors after D)
and compares D with the float64 product of A and B each scaled by its factors.

The grp_ cases are grouped (docs/spec.md "Grouped GEMM"; GROUPED_GEMMS kernels: ptxgen::NAME(a, lda,
b, ldb, d, masked_m or ends, m, n, k, groups, stream)), 8 groups. Masked: capacity m, masked_m drawn
full, empty, past the capacity, negative, then at random in [0, m]. Contiguous: A's m rows in
segments aligned to 128, the ends drawn as a tile partly valid then padding, an empty group, two
tiles, three rows, then at random. The launcher fills each group's operands afresh, compares every
valid row with the float64 product of its row of A and its group's B, and checks that no byte of
the tiles past a group's valid rows (or past the last segment) was written.

The mx_ cases store D as MXFP8 ("quantize": "mxfp8", docs/spec.md "Block-quantized D"): e4m3 or e5m2
elements, each block of 32 columns of a row over its ue8m0 factor, the factors in the kernel output
SFD (128x4 layout). The launcher fills SFD with 0xA5 (ceil(m/128) ceil(n/128) 512 bytes and a guard),
passes it after the amax, and checks each factor byte against the float64 block amax's range
(each element's value -/+ its bound), each element against its value over the factor the kernel
chose, and that no padding or guard byte was written (tools/launcher/launcher.cu, check_mxfp8).
"""
import copy
import json
import os
import subprocess
import sys

import h200_specs  # tools/, beside this script

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GRID = os.path.join(ROOT, ".device", "grid")

BASE = h200_specs.base()


merge = h200_specs.merge


def T(m, n, k):
    return {"tile": {"m": m, "n": n, "k": k}}


def P(m, n, k):
    return {"m": m, "n": n, "k": k}


def cases():
    """(name, gemm patch) pairs: dtypes, majors, swizzles, tiles, odd sizes."""
    out = []
    bf16, f16 = {}, {"a": {"dtype": "f16"}, "b": {"dtype": "f16"}}
    f16acc = {"a": {"dtype": "f16"}, "b": {"dtype": "f16"}, "accumulator": "f16", "d": {"dtype": "f16"}}
    tf32 = {"a": {"dtype": "tf32"}, "b": {"dtype": "tf32"}, "d": {"dtype": "f32"}}
    e4m3 = {"a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}}
    e5e4 = {"a": {"dtype": "e5m2"}, "b": {"dtype": "e4m3"}}
    s8 = {"a": {"dtype": "s8"}, "b": {"dtype": "s8"}, "accumulator": "s32", "d": {"dtype": "s32"}}
    u8 = {"a": {"dtype": "u8"}, "b": {"dtype": "u8"}, "accumulator": "s32", "d": {"dtype": "s32"}}

    def add(name, *patches):
        g = {}
        for p in patches:
            merge(g, copy.deepcopy(p), keep_none=True)
        out.append((name, g))

    # Performance shapes (4096^3), bf16 and f16.
    add("bf16_tn_128x256_4096", bf16, T(128, 256, 64))
    add("bf16_tn_128x128_4096", bf16, T(128, 128, 64))
    add("bf16_tn_256x128_4096", bf16, T(256, 128, 64), {"stages": 4})
    add("f16_tn_128x256_4096", f16, T(128, 256, 64))
    add("bf16_tn_128x256_8192", bf16, T(128, 256, 64), P(8192, 8192, 8192))
    # Majors (16-bit types transpose).
    add("bf16_nt_128x256", bf16, {"a": {"major": "m"}}, T(128, 256, 64))
    add("bf16_tt_128x256", bf16, {"b": {"major": "n"}}, T(128, 256, 64))
    add("bf16_nn_128x128", bf16, {"a": {"major": "m"}, "b": {"major": "n"}}, T(128, 128, 64))
    add("f16_nn_128x256", f16, {"a": {"major": "m"}, "b": {"major": "n"}}, T(128, 256, 64))
    # Swizzles (K-major and MN-major).
    add("bf16_sw64_128x128", bf16, T(128, 128, 32), {"swizzle": {"a": 64, "b": 64}})
    add("bf16_sw32_128x128", bf16, T(128, 128, 16), {"swizzle": {"a": 32, "b": 32}, "stages": 6})
    add("bf16_sw0_128x128", bf16, T(128, 128, 32), {"swizzle": {"a": 0, "b": 0}})
    add("bf16_nn_sw64_128x128", bf16, {"a": {"major": "m"}, "b": {"major": "n"}}, T(128, 128, 64),
        {"swizzle": {"a": 64, "b": 64}})
    add("bf16_nn_sw32_128x128", bf16, {"a": {"major": "m"}, "b": {"major": "n"}}, T(128, 128, 64),
        {"swizzle": {"a": 32, "b": 32}})
    add("bf16_nn_sw0_128x64", bf16, {"a": {"major": "m"}, "b": {"major": "n"}}, T(128, 64, 64),
        {"swizzle": {"a": 0, "b": 0}})
    add("bf16_mixed_sw_128x128", bf16, {"b": {"major": "n"}}, T(128, 128, 64), {"swizzle": {"a": 128, "b": 32}})
    # Tiles from 64 to 256, N not a power of two, several N groups.
    add("bf16_64x64", bf16, T(64, 64, 64), {"stages": 4})
    add("bf16_64x256", bf16, T(64, 256, 64))
    add("bf16_192x128", bf16, T(192, 128, 64), {"stages": 3})
    add("bf16_128x200", bf16, T(128, 200, 64))
    add("bf16_128x96_n", bf16, {"b": {"major": "n"}}, T(128, 96, 64), {"swizzle": {"b": 64}})
    add("bf16_64x264_split", bf16, T(64, 264, 64), {"stages": 3})
    add("bf16_64x8", bf16, T(64, 8, 64))
    add("bf16_1stage", bf16, T(128, 128, 64), {"stages": 1})
    # Odd sizes: edges are zero-filled by TMA and clipped by the epilogue.
    add("bf16_odd_1000", bf16, T(128, 256, 64), P(1000, 1000, 1000))
    add("bf16_odd_4099", bf16, T(128, 256, 64), P(4099, 4097, 4099))
    add("bf16_odd_nn_1001", bf16, {"a": {"major": "m"}, "b": {"major": "n"}}, T(128, 128, 64), P(1001, 999, 1003))
    add("bf16_small_77", bf16, T(64, 64, 64), P(77, 33, 50))
    add("f16_odd_4099", f16, T(128, 128, 64), P(4099, 3001, 2047))
    add("bf16_out_f32", bf16, {"d": {"dtype": "f32"}}, T(128, 128, 64), P(2048, 2048, 2048))
    # f16 accumulators.
    add("f16acc_128x256", f16acc, T(128, 256, 64), P(2048, 2048, 1024))
    add("f16acc_nn_128x128", f16acc, {"a": {"major": "m"}, "b": {"major": "n"}}, T(128, 128, 64), P(1024, 1024, 512))
    # tf32.
    add("tf32_128x128", tf32, T(128, 128, 32), P(2048, 2048, 2048))
    add("tf32_128x256_4096", tf32, T(128, 256, 32), P(4096, 4096, 4096))
    add("tf32_odd", tf32, T(64, 128, 16), {"swizzle": {"a": 64, "b": 64}}, P(1000, 1001, 999))
    # fp8 (wgmma: K-major only).
    add("e4m3_128x256_4096", e4m3, T(128, 256, 128))
    add("e5m2_e4m3_128x128", e5e4, T(128, 128, 128), P(2048, 2048, 2048))
    add("e4m3_f16acc", e4m3, {"accumulator": "f16", "d": {"dtype": "f16"}}, T(128, 128, 128), P(1024, 1024, 1024))
    add("e4m3_sw64_odd", e4m3, T(128, 128, 64), {"swizzle": {"a": 64, "b": 64}}, P(999, 1001, 1000))
    add("e4m3_out_f32", e4m3, {"d": {"dtype": "f32"}}, T(64, 128, 128), P(4096, 4096, 4096))
    # 8-bit integers.
    add("s8_128x256_4096", s8, T(128, 256, 128))
    add("s8_128x48", s8, T(128, 48, 128), P(1024, 1000, 1024))
    add("u8_64x128_odd", u8, T(64, 128, 64), {"swizzle": {"a": 64, "b": 64}}, P(1000, 1000, 1000))
    add("s8_out_f32", s8, {"d": {"dtype": "f32"}}, T(128, 128, 128), P(1024, 1024, 2048))
    # A from registers (fragments loaded from the swizzled shared-memory tile).
    regs = {"a_source": "registers"}
    add("regs_bf16_128x256", bf16, regs, T(128, 256, 64))
    add("regs_bf16_sw32", bf16, regs, T(128, 128, 32), {"swizzle": {"a": 32, "b": 32}}, P(2048, 2048, 2048))
    add("regs_bf16_sw0", bf16, regs, T(64, 128, 32), {"swizzle": {"a": 0, "b": 0}}, P(1000, 1000, 1000))
    add("regs_f16_mmajor_sw64", f16, regs, {"a": {"major": "m"}}, T(128, 128, 64), {"swizzle": {"a": 64}}, P(2048, 2048, 1024))
    add("regs_f16_mmajor_sw0", f16, regs, {"a": {"major": "m"}}, T(64, 64, 32), {"swizzle": {"a": 0, "b": 64}}, P(1024, 1024, 512))
    add("regs_tf32", tf32, regs, T(128, 128, 32), P(2048, 2048, 2048))
    add("regs_e4m3", e4m3, regs, T(128, 128, 128), P(2048, 2048, 2048))
    add("regs_s8", s8, regs, T(128, 128, 128), P(2048, 2048, 2048))
    # Persistent CTAs (one per multiprocessor) walking the tiles: ring and phases across tiles, odd
    # edges, fewer tiles than CTAs, the serial release (one stage; A in registers), other types.
    pers = {"schedule": "persistent"}
    add("pers_bf16_128x256_4096", bf16, pers, T(128, 256, 64))
    add("pers_bf16_odd_4099", bf16, pers, T(128, 256, 64), P(4099, 4097, 4099))
    add("pers_bf16_small_77", bf16, pers, T(64, 64, 64), P(77, 33, 50))
    add("pers_bf16_row_raster", bf16, pers, {"raster": 1}, T(128, 128, 64), P(3000, 5000, 1000))
    add("pers_bf16_1stage", bf16, pers, T(128, 128, 64), {"stages": 1}, P(2048, 2048, 512))
    add("pers_regs_bf16", bf16, pers, regs, T(128, 128, 64), P(2048, 2048, 1024))
    add("pers_f16_nn_128x128", f16, pers, {"a": {"major": "m"}, "b": {"major": "n"}}, T(128, 128, 64), P(2048, 3000, 1024))
    add("pers_e4m3_128x256", e4m3, pers, T(128, 256, 128))
    add("pers_s8_out_f32", s8, pers, {"d": {"dtype": "f32"}}, T(128, 128, 128), P(1024, 1024, 2048))
    # D through shared memory and TMA stores (edges clipped by TMA), over the ring or its own tile.
    tma = {"epilogue": "tma"}
    add("tma_bf16_128x256_4096", bf16, tma, T(128, 256, 64))
    add("tma_bf16_odd_4099", bf16, tma, T(128, 256, 64), P(4099, 4104, 4099))
    add("tma_bf16_small_77", bf16, tma, T(64, 64, 64), P(77, 40, 50))
    add("tma_bf16_1stage_own_tile", bf16, tma, T(128, 256, 64), {"stages": 1}, P(1000, 1024, 300))
    add("tma_f16_nn_128x128", f16, tma, {"a": {"major": "m"}, "b": {"major": "n"}}, T(128, 128, 64), P(2048, 3000, 1024))
    add("tma_out_f32", bf16, tma, {"d": {"dtype": "f32"}}, T(128, 128, 64), P(2048, 2048, 2048))
    add("tma_f16acc", f16acc, tma, T(128, 256, 64), P(2048, 2048, 1024))
    add("tma_e4m3_128x256", e4m3, tma, T(128, 256, 128))
    add("tma_s8_out_s32", s8, tma, T(128, 128, 128), P(1024, 1000, 2048))
    add("tma_regs_bf16", bf16, tma, regs, T(128, 128, 64), P(2048, 2048, 1024))
    add("tma_256x128", bf16, tma, T(256, 128, 64), {"stages": 4})
    add("tma_pers_bf16_128x256", bf16, tma, pers, T(128, 256, 64), {"stages": 3})
    add("tma_pers_bf16_odd", bf16, tma, pers, T(128, 128, 64), P(3001, 4992, 999))
    add("tma_pers_e4m3_out_f32", e4m3, tma, pers, {"d": {"dtype": "f32"}}, T(128, 128, 128), {"stages": 3}, P(2048, 4096, 2048))
    # Clusters multicast the operand their CTAs share: along N ([2, 1, 1]) A, along M ([1, 2, 1]) B.
    # Odd sizes leave a cluster's second tile outside the problem (its loads zero-filled, stores clipped).
    add("mc_a_bf16_2x1", bf16, T(128, 256, 64), {"cluster": [2, 1, 1]})
    add("mc_b_bf16_1x2", bf16, T(128, 256, 64), {"cluster": [1, 2, 1]})
    add("mc_b_bf16_1x2_odd", bf16, T(128, 256, 64), {"cluster": [1, 2, 1]}, P(4099, 4104, 1003))
    add("mc_b_nmajor_1x2", bf16, {"b": {"major": "n"}}, T(128, 256, 64), {"cluster": [1, 2, 1]}, P(2048, 2048, 1024))
    add("mc_b_bf16_1x16", bf16, T(128, 256, 64), {"cluster": [1, 16, 1]}, P(2048, 2048, 1024))  # past the portable 8
    add("mc_a_mmajor_4x1", f16, {"a": {"major": "m"}}, T(128, 128, 64), {"cluster": [4, 1, 1]}, P(2048, 2048, 1024))
    add("mc_b_e4m3_1x2", e4m3, T(128, 256, 128), {"cluster": [1, 2, 1]}, P(2048, 4096, 2048))
    mcp = {"schedule": "persistent", "epilogue": "tma", "stages": 3}
    add("mc_pers_b_bf16_1x2", bf16, mcp, T(128, 256, 64), {"cluster": [1, 2, 1]})
    add("mc_pers_a_bf16_2x1", bf16, mcp, T(128, 256, 64), {"cluster": [2, 1, 1]})
    add("mc_pers_b_odd", bf16, mcp, T(128, 256, 64), {"cluster": [1, 2, 1]}, P(3001, 4992, 999))
    add("mc_pers_b_raster1_odd", bf16, mcp, {"raster": 1}, T(128, 128, 64), {"cluster": [1, 2, 1]}, P(1155, 2000, 512))
    # 2-D clusters share A along the block's rows and B along its columns at once; each consumer
    # warpgroup releases a stage in the CTAs of its row and column (lane r where the mask has bit r).
    add("mc2d_bf16_2x2", bf16, T(128, 256, 64), {"cluster": [2, 2, 1]})
    add("mc2d_bf16_2x2_odd", bf16, T(128, 256, 64), {"cluster": [2, 2, 1]}, P(4099, 4104, 1003))
    add("mc2d_f16_mmajor_4x2", f16, {"a": {"major": "m"}}, T(128, 128, 64), {"cluster": [4, 2, 1]}, P(2048, 2048, 1024))
    add("mc2d_pers_bf16_2x2", bf16, mcp, T(128, 256, 64), {"cluster": [2, 2, 1]})
    add("mc2d_pers_bf16_2x2_odd", bf16, mcp, {"registers": {"producer": 40, "consumer": 232}}, T(128, 256, 64),
        {"cluster": [2, 2, 1]}, P(3001, 4992, 999))
    add("mc2d_pers_e4m3_2x4", e4m3, mcp, T(128, 128, 128), {"cluster": [2, 4, 1]}, P(2048, 4096, 2048))
    add("mc2d_pp_bf16_2x2_odd", bf16, {"consumers": "pingpong", "schedule": "persistent", "epilogue": "tma", "stages": 4}, T(128, 128, 64),
        {"cluster": [2, 2, 1]}, P(4099, 4104, 1003))
    # Register budgets: a producer warpgroup of 40, consumers raised to 232 (alone and with multicast).
    rb = {"registers": {"producer": 40, "consumer": 232}}
    add("regbud_bf16_128x256", bf16, rb, T(128, 256, 64))
    add("regbud_pers_tma_bf16", bf16, rb, mcp, T(128, 256, 64))
    add("regbud_mc_pers_bf16_odd", bf16, rb, mcp, T(128, 256, 64), {"cluster": [1, 2, 1]}, P(4099, 4104, 1003))
    add("regbud_mc_e4m3", e4m3, rb, mcp, T(128, 256, 128), {"cluster": [1, 2, 1]}, P(4096, 8192, 4096))
    # Ping-pong consumers: two warpgroups take alternate tiles of a persistent CTA, each the whole
    # tile (stacked m64 wgmmas); odd sizes and tile counts give the last CTAs one turn's tile only,
    # and k = 1 block, or fewer tiles than CTAs, test the rings' skip over the other turn's blocks.
    pp = {"consumers": "pingpong", "schedule": "persistent"}
    add("pp_bf16_128x128_tma", bf16, pp, rb, {"epilogue": "tma", "stages": 4}, T(128, 128, 64), P(4096, 8192, 4096))
    add("pp_bf16_128x128_odd", bf16, pp, {"epilogue": "tma", "stages": 4}, T(128, 128, 64), P(3001, 4992, 999))
    add("pp_bf16_128x128_direct_odd", bf16, pp, T(128, 128, 64), {"stages": 4}, P(1155, 2000, 520))
    add("pp_bf16_64x256_tma", bf16, pp, rb, {"epilogue": "tma", "stages": 4}, T(64, 256, 64), P(2048, 4096, 2048))
    add("pp_bf16_one_kblock", bf16, pp, {"epilogue": "tma", "stages": 3}, T(128, 128, 64), P(4096, 4096, 64))
    add("pp_few_tiles", bf16, pp, {"epilogue": "tma", "stages": 4}, T(128, 128, 64), P(384, 640, 4096))
    add("pp_f16acc_nn", f16acc, pp, {"a": {"major": "m"}, "b": {"major": "n"}}, {"epilogue": "tma", "stages": 4}, T(128, 128, 64),
        P(2048, 2048, 1024))
    add("pp_e4m3_128x128", e4m3, pp, rb, {"epilogue": "tma", "stages": 4}, T(128, 128, 128), P(4096, 8192, 4096))
    add("pp_mc_b_bf16_odd", bf16, pp, {"epilogue": "tma", "stages": 4}, T(128, 128, 64), {"cluster": [1, 2, 1]}, P(4099, 4104, 1003))
    add("pp_tf32_out_f32", tf32, pp, {"epilogue": "tma", "stages": 2}, T(128, 128, 32), P(1024, 1024, 1000))
    add("pp_s8_direct", s8, pp, T(128, 128, 128), {"stages": 4}, P(1024, 1000, 2048))
    # "epilogue": "auto": the TMA store where D's rows are 16-byte multiples apart at run time, the
    # direct store otherwise (n = 1001 bf16: 2002 bytes; the launcher passes a zeroed map).
    auto = {"epilogue": "auto"}
    add("auto_pers_aligned", bf16, auto, pers, rb, T(128, 256, 64), {"stages": 3}, P(4096, 4096, 1024))
    add("auto_pers_n_odd", bf16, auto, pers, rb, T(128, 256, 64), {"stages": 3}, P(1000, 1001, 520))
    add("auto_dp_n_odd", bf16, auto, T(128, 256, 64), P(999, 1003, 300))
    add("auto_dp_aligned_overlay", bf16, auto, T(128, 256, 64), P(1000, 1024, 300))
    add("auto_pp_n_odd", bf16, auto, pp, T(128, 128, 64), {"stages": 4}, P(2000, 2052, 1000))
    add("auto_out_f32_n_odd", bf16, auto, pers, {"d": {"dtype": "f32"}}, T(128, 128, 64), {"stages": 3}, P(512, 1001, 256))
    # What the planner chooses with the tile and stages left out (persistent, auto, registers; ping-pong
    # where tile.n 128 is chosen), at an aligned and an unaligned n.
    dflt = {"tile": None, "stages": None}
    add("default_4096x8192", bf16, dflt, P(4096, 8192, 4096))
    add("default_skinny_n_odd", bf16, dflt, P(128, 16383, 2048))
    add("default_m256_one_wave", bf16, dflt, P(256, 16384, 2048))
    add("default_e4m3_odd", e4m3, dflt, P(3001, 4999, 999))
    # Fused epilogues (docs/spec.md "Epilogues": D = activation(A·B + bias)), checked element by element
    # against the float64 formulas within each element's bound: each feature alone (a bias along N,
    # along M, each activation) and together, each bias dtype and output type, at odd sizes (the bias
    # read as 0 past m or n, the stores clipped), on every schedule and epilogue; large ones take the
    # cuBLAS f32 product as the reference's A·B, 8-bit inputs the float64 GPU kernel's.
    def bias(dtype, along="n"):
        return {"bias": {"dtype": dtype, "along": along}}

    def act(a):
        return {"activation": a}
    f16out, f32out = {"d": {"dtype": "f16"}}, {"d": {"dtype": "f32"}}
    add("epi_bias_n_bf16_odd", bf16, bias("bf16"), T(128, 128, 64), P(1000, 1001, 999))
    add("epi_bias_m_f32_odd", bf16, bias("f32", "m"), T(128, 128, 64), P(999, 1003, 1001))
    add("epi_bias_n_f16_f16out", f16, f16out, bias("f16"), T(128, 128, 64), P(1001, 1000, 1003))
    add("epi_relu_f16out", bf16, f16out, act("relu"), T(128, 128, 64), P(1001, 999, 777))
    add("epi_sigmoid_f32out", bf16, f32out, act("sigmoid"), T(128, 128, 64), P(1003, 1000, 500))
    add("epi_silu_f16", f16, f16out, act("silu"), T(64, 128, 64), {"stages": 4}, P(777, 1001, 1003))
    add("epi_gelu_bf16", bf16, act("gelu_tanh"), rb, T(128, 256, 64), P(1000, 1000, 1000))
    add("epi_bias_gelu_tma_odd", bf16, bias("bf16"), act("gelu_tanh"), tma, rb, T(128, 256, 64), P(1001, 1000, 999))
    # gelu's erf form (Abramowitz & Stegun 7.1.26's erf): an f32 D, where its error is not hidden by
    # D's rounding, and with a bias through the TMA store at odd sizes.
    add("epi_gelu_erf_f32out", bf16, f32out, act("gelu"), T(128, 128, 64), P(1003, 1000, 999))
    add("epi_bias_gelu_erf_tma_odd", bf16, bias("bf16"), act("gelu"), tma, rb, T(128, 256, 64), P(1001, 1000, 999))
    add("epi_bias_m_silu_pers_tma_f32out", bf16, f32out, bias("f32", "m"), act("silu"), tma, pers, T(128, 128, 64),
        {"stages": 3}, P(3001, 2000, 999))
    add("epi_bias_n_sigmoid_pers_f16", f16, f16out, bias("f16"), act("sigmoid"), pers, rb, T(128, 256, 64),
        P(2049, 3001, 1000))
    add("epi_bias_m_relu_pp_tma", bf16, pp, bias("bf16", "m"), act("relu"), {"epilogue": "tma", "stages": 4},
        T(128, 128, 64), P(3001, 4992, 999))
    add("epi_bias_gelu_pp_direct_odd", bf16, pp, bias("f32"), act("gelu_tanh"), rb, {"stages": 4}, T(128, 128, 64),
        P(1155, 2001, 520))
    add("epi_bias_m_gelu_dp_tma_f16out", bf16, f16out, bias("f16", "m"), act("gelu_tanh"), tma, T(128, 128, 64),
        P(1025, 1032, 1000))
    add("epi_mc2d_bias_m_silu_odd", bf16, mcp, rb, bias("bf16", "m"), act("silu"), T(128, 256, 64),
        {"cluster": [2, 2, 1]}, P(3001, 4992, 999))
    add("epi_mc_bias_gelu_1x2", bf16, rb, bias("bf16"), act("gelu_tanh"), T(128, 256, 64), {"cluster": [1, 2, 1]},
        P(2048, 4096, 1024))
    add("epi_regs_bias_gelu", bf16, regs, bias("bf16"), act("gelu_tanh"), T(128, 128, 64), P(1000, 1000, 1000))
    add("epi_m64_bias_m_relu", bf16, bias("f32", "m"), act("relu"), T(64, 256, 64), P(777, 1000, 300))
    add("epi_small_bias_m_sigmoid", bf16, bias("bf16", "m"), act("sigmoid"), T(64, 64, 64), {"stages": 4},
        P(77, 40, 50))
    add("epi_1stage_bias_relu", bf16, bias("bf16"), act("relu"), T(128, 128, 64), {"stages": 1}, P(1000, 1024, 300))
    add("epi_e4m3_bias_relu", e4m3, bias("bf16"), act("relu"), T(128, 128, 128), P(999, 1000, 1000))
    add("epi_e4m3_bias_gelu_pers_tma", e4m3, rb, bias("f32"), act("gelu_tanh"), tma, pers, T(128, 256, 128),
        {"stages": 3}, P(2048, 2048, 2048))
    add("epi_tf32_bias_m_silu", tf32, bias("f32", "m"), act("silu"), T(128, 128, 32), P(1000, 1001, 999))
    add("epi_auto_bias_gelu_n_odd", bf16, auto, pers, rb, bias("bf16"), act("gelu_tanh"), T(128, 256, 64),
        {"stages": 3}, P(1000, 1001, 520))
    add("epi_bias_gelu_128x256_tma_4096", bf16, rb, tma, bias("bf16"), act("gelu_tanh"), T(128, 256, 64))
    add("epi_default_bias_gelu_4096x8192", bf16, dflt, bias("bf16"), act("gelu_tanh"), P(4096, 8192, 4096))
    add("epi_default_bias_gelu_odd", bf16, dflt, bias("bf16"), act("gelu_tanh"), P(4099, 4104, 4099))
    # alpha, beta with C, a residual (D = act(alpha A·B + beta C + bias) + residual): each alone and all
    # together, each input dtype, odd sizes, data-parallel and persistent, TMA and direct stores.
    def c(dtype, beta=None):
        return dict({"c": {"dtype": dtype}}, **({"beta": beta} if beta is not None else {}))

    def res(dtype):
        return {"residual": {"dtype": dtype}}
    add("epi_alpha_odd", bf16, {"alpha": 0.375}, T(128, 128, 64), P(1001, 999, 1000))
    add("epi_c_bf16_odd", bf16, c("bf16"), T(128, 128, 64), P(999, 1001, 777))
    add("epi_beta_c_f32_pers_tma", bf16, c("f32", -0.5), tma, pers, T(128, 128, 64), P(1003, 1000, 999))
    add("epi_residual_f16_f16out", f16, f16out, res("f16"), T(128, 128, 64), P(1000, 1003, 1001))
    add("epi_all_pp_odd", bf16, pp, {"alpha": 0.5}, c("bf16", -1.5), bias("f32", "m"), act("silu"), res("f16"),
        {"stages": 4}, T(128, 128, 64), P(1001, 1003, 999))
    add("epi_all_dp_direct_f32out", bf16, f32out, {"alpha": 2.0}, c("f16", 0.25), bias("bf16"), act("gelu_tanh"),
        res("bf16"), {"epilogue": "direct"}, T(128, 128, 64), P(999, 1000, 1001))
    # alpha and beta as kernel inputs ("input": one f32 each through a device pointer, cuBLASLt's
    # device pointer mode; the launcher draws random ones): with everything else on ping-pong
    # consumers (direct store), and alone on a persistent TMA-store kernel.
    add("epi_alpha_beta_input_pp_odd", bf16, pp, {"alpha": "input"}, c("bf16", "input"), bias("f32", "m"), act("silu"),
        res("f16"), {"stages": 4}, T(128, 128, 64), P(1001, 1003, 999))
    add("epi_alpha_beta_input_sm90_tma", bf16, {"alpha": "input"}, c("f32", "input"), tma, pers, T(128, 128, 64),
        P(1003, 1000, 999))
    # The amax output (the largest |element| before D's scale and conversion, red.global.max): with an
    # e4m3 D and its per-tensor scale (direct stores), and with a bf16 D through the TMA store of a
    # persistent kernel, odd sizes.
    e4m3out = {"d": {"dtype": "e4m3", "scale": True}, "epilogue": "direct"}
    add("epi_amax_e4m3out_bias_odd", bf16, e4m3out, bias("bf16"), {"amax": True}, T(128, 128, 64), P(1001, 1002, 999))
    # (n = 1000: D's rows 2000 bytes apart, the 16-byte multiple a tensor map strides; m and k odd)
    add("epi_amax_gelu_pers_tma_odd", bf16, tma, pers, act("gelu_tanh"), {"amax": True}, T(128, 128, 64), P(999, 1000, 1001))
    # MXFP8 (docs/spec.md "Block-quantized D"): D e4m3 or e5m2, each block of 32 columns of a row over
    # its ue8m0 factor, the factors to SFD in the 128x4 layout. Direct stores (mx8tma_* below: TMA); n a multiple of
    # 32 but not of the tile (the last tile's blocks partly outside D), m odd and not a multiple of 128
    # (SFD's padding rows), n / 32 not a multiple of 4 (padding factors); with a bias and an activation,
    # the amax, alpha, C, a residual and D's scale before the quantization, A from registers, e4m3
    # inputs, a gated product, a B-multicast cluster, on data-parallel, persistent cooperative and
    # ping-pong kernels, tile.n 128 and 256, and one large case (4096 x 8192 x 4096: cuBLAS's f32
    # product as the reference). Register budgets where the epilogue's registers would spill without.
    mx = {"quantize": "mxfp8"}
    e4m3d, e5m2d = {"d": {"dtype": "e4m3"}}, {"d": {"dtype": "e5m2"}}
    add("mx_e4m3_bias_gelu_dp_odd", bf16, e4m3d, mx, bias("bf16"), act("gelu_tanh"), T(128, 128, 64), P(1001, 992, 999))
    add("mx_e5m2_silu_amax_dp_256", bf16, e5m2d, mx, act("silu"), {"amax": True}, rb, T(128, 256, 64), P(999, 1056, 1000))
    add("mx_e4m3_pers_bias_m_relu", bf16, e4m3d, mx, pers, rb, bias("f32", "m"), act("relu"), T(128, 256, 64), {"stages": 3},
        P(2049, 2080, 1001))
    add("mx_e4m3_pp_gelu_amax", bf16, e4m3d, mx, pp, rb, bias("bf16"), act("gelu_tanh"), {"amax": True}, T(128, 128, 64),
        {"stages": 4}, P(1155, 2016, 520))
    add("mx_e5m2_pp_regs_silu", bf16, e5m2d, mx, pp, rb, act("silu"), T(64, 256, 64), {"stages": 4}, P(777, 1120, 777))
    add("mx_e4m3_all_scale_dp", bf16, {"d": {"dtype": "e4m3", "scale": True}}, mx, rb, {"alpha": 0.5}, c("bf16", -1.5),
        bias("f32"), act("silu"), res("f16"), {"amax": True}, T(128, 128, 64), P(1003, 1024, 999))
    add("mx_e4m3_regs_a", bf16, e4m3d, mx, regs, bias("bf16"), act("gelu_tanh"), T(128, 128, 64), P(1000, 1056, 1000))
    add("mx_e4m3_in_e4m3_pers", e4m3, e4m3d, mx, pers, rb, bias("f32"), act("relu"), T(128, 256, 128), {"stages": 3},
        P(2048, 2016, 2048))
    add("mx_e4m3_swiglu_pers", bf16, e4m3d, mx, pers, rb, act("swiglu"), T(128, 256, 64), {"stages": 3}, P(1003, 2112, 999))
    add("mx_e4m3_mc_b_1x2", bf16, e4m3d, mx, bias("bf16"), act("gelu_tanh"), rb, T(128, 128, 64), {"cluster": [1, 2, 1]},
        P(2001, 2080, 1003))
    add("mx_e4m3_4096x8192", bf16, e4m3d, mx, pers, rb, {"amax": True}, T(128, 256, 64), {"stages": 3}, P(4096, 8192, 4096))
    # An 8-bit D through the TMA store (docs/spec.md "Epilogues": boxes of 128 one-byte columns, the
    # 128-byte swizzle): D's rows a 16-byte multiple apart (n a multiple of 16) but n not a multiple of
    # the tile (TMA clips the last tile's boxes), m odd; e4m3 with its scale and the amax, e5m2
    # data-parallel (the staging tile over the ring), MXFP8 persistent, ping-pong and with a
    # B-multicast cluster; "auto" with n not a multiple of 16 (1000: no tensor map strides its rows,
    # the direct store) and with one (1008: the TMA store); one large MXFP8 case (cuBLAS's reference).
    add("mx8tma_e4m3_amax_pers_odd", bf16, {"d": {"dtype": "e4m3", "scale": True}}, tma, pers, rb, bias("bf16"), {"amax": True},
        T(128, 256, 64), {"stages": 4}, P(1001, 1008, 999))
    add("mx8tma_e5m2_dp_silu", bf16, e5m2d, tma, act("silu"), T(128, 128, 64), P(1003, 1040, 999))
    add("mx8tma_mxfp8_pers_gelu", bf16, e4m3d, mx, tma, pers, rb, bias("bf16"), act("gelu_tanh"), T(128, 256, 64),
        {"stages": 4}, P(2049, 2080, 1001))
    add("mx8tma_mxfp8_pp_e5m2_amax", bf16, e5m2d, mx, tma, pp, rb, act("silu"), {"amax": True}, T(128, 128, 64),
        {"stages": 5}, P(1155, 2016, 520))
    add("mx8tma_mxfp8_mc_b_1x2", bf16, e4m3d, mx, tma, pers, rb, bias("bf16"), T(128, 128, 64), {"cluster": [1, 2, 1]},
        {"stages": 4}, P(2001, 2080, 1003))
    add("mx8tma_auto_e4m3_n1000", bf16, {"d": {"dtype": "e4m3", "scale": True}}, auto, pers, rb, {"amax": True},
        T(128, 256, 64), {"stages": 4}, P(999, 1000, 1001))
    add("mx8tma_auto_e4m3_n1008", bf16, {"d": {"dtype": "e4m3", "scale": True}}, auto, pers, rb, {"amax": True},
        T(128, 256, 64), {"stages": 4}, P(999, 1008, 1001))
    add("mx8tma_mxfp8_4096x8192", bf16, e4m3d, mx, tma, pers, rb, {"amax": True}, T(128, 256, 64), {"stages": 4},
        P(4096, 8192, 4096))
    # Gated activations (docs/spec.md "Epilogues": D[i][j] = act(P[i][j]) * P[i][j + n/2], P = A·B
    # (+ bias along N), swiglu: silu, geglu: gelu_tanh): n is B's rows, D is m x n/2. Odd m and k,
    # n/2 no multiple of D's tile (tile.n / 2), odd where the store allows it (direct, "auto"), with
    # a bias along N and without, on each schedule and epilogue.
    add("epi_swiglu_bias_tma_odd", bf16, bias("bf16"), act("swiglu"), tma, rb, T(128, 256, 64), P(1001, 2000, 999))
    add("epi_geglu_direct_odd", bf16, act("geglu"), T(128, 128, 64), P(999, 2006, 1001))
    add("epi_swiglu_pers_auto_odd", bf16, auto, pers, rb, bias("f32"), act("swiglu"), T(128, 256, 64), {"stages": 3},
        P(1003, 2002, 777))
    add("epi_geglu_pp_bias_tma", bf16, pp, bias("bf16"), act("geglu"), {"epilogue": "tma", "stages": 4}, T(128, 128, 64),
        P(1155, 4016, 520))
    # (d = 1504: the f16 D's rows 3008 bytes apart, which the TMA store's map can stride)
    add("epi_swiglu_mc_a_f16out", bf16, f16out, mcp, rb, act("swiglu"), T(128, 256, 64), {"cluster": [2, 1, 1]},
        P(2001, 3008, 999))
    add("epi_swiglu_bias_4096x8192", bf16, rb, tma, pers, bias("bf16"), act("swiglu"), T(128, 256, 64), {"stages": 3},
        P(4096, 16384, 4096))
    # Block-wise f32 scale factors (docs/spec.md "Block-wise f32 factors", issue 30; DeepSeek-V3's
    # recipe): A's per row and 128 of K, B's per 128 x 128; the launcher passes random positive
    # factors 2^e (1 + f), e in -8 .. 7, and its float64 reference scales A and B by them. A DeepSeek
    # shape (persistent, TMA store) and odd sizes (a partial last K block, ragged M and N: the
    # direct store of "auto").
    bw = {"scale": {"dtype": "f32"}, "registers": {"producer": 40, "consumer": 232}}
    add("bw_e4m3_pers_tma_4096x7168", e4m3, bw, pers, tma, T(128, 128, 128), {"stages": 4}, P(4096, 7168, 7168))
    add("bw_e4m3_odd", e4m3, bw, pers, {"epilogue": "auto"}, T(128, 128, 128), {"stages": 4}, P(1001, 2003, 1999))
    # Grouped GEMM, masked layout (docs/spec.md "Grouped GEMM", issue 30): 8 groups of capacity m;
    # the launcher draws masked_m full, empty, past the capacity, negative, then at random in [0, m],
    # and checks each group's valid rows and that the tiles past them are untouched.
    grp = {"groups": {"layout": "masked", "count": 8}}
    add("grp_masked_128x256_tma", bf16, grp, tma, T(128, 256, 64), P(520, 1000, 776))
    add("grp_masked_128x128_direct", bf16, grp, {"epilogue": "direct"}, T(128, 128, 64), {"stages": 5}, P(389, 1111, 517))
    add("grp_masked_auto_odd_n", bf16, grp, {"epilogue": "auto"}, T(128, 128, 64), P(300, 1001, 260))
    add("grp_masked_e4m3_128x128", e4m3, grp, tma, T(128, 128, 128), P(640, 768, 1024))
    add("grp_masked_default", bf16, grp, {"tile": None, "stages": None}, P(1024, 1024, 1024))
    # The contiguous layout: A's rows in segments aligned to 128 (the launcher's --align default).
    cont = {"groups": {"layout": "contiguous", "count": 8, "align": 128}}
    add("grp_contig_128x128_tma", bf16, cont, tma, T(128, 128, 64), {"stages": 5}, P(1500, 1000, 776))
    add("grp_contig_128x256_direct", bf16, cont, {"epilogue": "direct"}, T(128, 256, 64), P(1111, 1001, 520))
    # The persistent walk over (group, tile): cooperative and ping-pong consumers, both layouts (the
    # launch one CTA per multiprocessor, each crossing groups, empty ones and padding).
    add("grp_masked_pers_128x256_tma", bf16, grp, pers, tma, T(128, 256, 64), {"stages": 3}, P(520, 1000, 776))
    add("grp_masked_pp_128x128_direct", bf16, grp, pp, {"epilogue": "direct"}, T(128, 128, 64), {"stages": 4}, P(389, 1111, 517))
    add("grp_contig_pp_128x128_tma", bf16, cont, pp, tma, T(128, 128, 64), {"stages": 4}, P(1500, 1000, 776))
    add("grp_contig_pers_128x256_direct", bf16, cont, pers, {"epilogue": "direct"}, T(128, 256, 64), {"stages": 3}, P(1111, 1001, 520))
    # Fused epilogues per group: each group's own bias (a row of n; masked along M, a column of each
    # group's capacity; contiguous along M, one vector over A's rows) and the activations, SwiGLU's
    # halves from each group's B (the MoE up-projection).
    add("grp_contig_bias_swiglu", bf16, cont, tma, T(128, 128, 64), {"stages": 5, "bias": {"dtype": "bf16", "along": "n"}, "activation": "swiglu"},
        P(1500, 1008, 776))  # D's d = 504 columns: rows 1008 bytes apart, a multiple of 16 (the TMA store's stride)
    add("grp_masked_pers_bias_m_gelu", bf16, grp, pers, tma, T(128, 256, 64), {"stages": 3, "bias": {"dtype": "f32", "along": "m"}, "activation": "gelu"},
        P(520, 1000, 776))
    add("grp_contig_bias_m_silu_direct", bf16, cont, {"epilogue": "direct"}, T(128, 128, 64),
        {"stages": 5, "bias": {"dtype": "f32", "along": "m"}, "activation": "silu", "alpha": 0.5}, P(1111, 1001, 520))
    return out


# Specs for other targets in the same header: --bad-input checks that the header refuses them here.
FOREIGN = ["gemm_bf16_tn_128x256x64"]  # sm_100a


def prepare(only):
    ptxgen = os.environ.get("PTXGEN", os.path.join(ROOT, "build", "ptxgen"))
    # --only keeps the first case too: --bad-input takes the header's first plain bf16 kernel, and
    # its "m beyond the grid" needs a data-parallel one (a persistent grid has no y to overflow).
    # SUBSTR may list several, comma-separated: the cases whose names hold any of them.
    keys = only.split(",") if only else []
    chosen = [(name, patch) for i, (name, patch) in enumerate(cases()) if not keys or any(x in name for x in keys) or i == 0]
    listed, paths = [], []
    for name, _, path in h200_specs.write_specs(GRID, "g_", chosen, BASE):
        listed.append(name)
        paths.append(path)
    paths += [os.path.join(ROOT, "specs", f + ".json") for f in FOREIGN]
    header = os.path.join(GRID, "kernels.hpp")
    r = subprocess.run([ptxgen, "build", *paths, "--header", header], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("ptxgen build --header failed:\n%s%s" % (r.stdout, r.stderr))
    with open(os.path.join(GRID, "cases.json"), "w") as f:
        json.dump(listed, f, indent=1)
    fused = write_epilogues(ptxgen, paths)
    spills = h200_specs.spills(ptxgen, fused)
    print("prepared %d cases in %s (%s: %d bytes), %d with a fused epilogue (epilogues.hpp)%s" % (
        len(listed), GRID, header, os.path.getsize(header), len(fused),
        "; spills: " + ", ".join(spills) if spills else ", none spills"))


def write_epilogues(ptxgen, paths):
    """epilogues.hpp beside the header: each kernel's fused epilogue from its manifest ("epilogue_ops",
    the bias's dims), which the launcher needs and the header does not say (the activation). Returns
    the paths of the specs with one."""
    rows, fused = [], []
    for path in paths:
        r = subprocess.run([ptxgen, "manifest", path, "-o", "-"], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("ptxgen manifest %s failed:\n%s%s" % (path, r.stdout, r.stderr))
        m = json.loads(r.stdout)
        ops = m.get("epilogue_ops", [])
        along = ""
        if "bias" in ops:
            dims = m["tensors"]["bias"]["dims"]
            along = "n" if dims == ["1", "n"] else "m" if dims == ["m", "1"] else sys.exit("%s: bias dims %s" % (path, dims))
        consts = m.get("epilogue_constants", {})
        rows.append('  X(%s, "%s", "%s", %r, %r)' % (m["entry"], " ".join(ops), along, float(consts.get("alpha", 1.0)),
                                                   float(consts.get("beta", 1.0))))
        if ops:
            fused.append(path)
    with open(os.path.join(GRID, "epilogues.hpp"), "w") as f:
        f.write("// Generated by tools/h200-grid.py prepare from the manifests: each kernel's fused epilogue,\n"
                "// X(NAME, its \"epilogue_ops\" in order, the bias's axis or \"\", alpha, beta), for tools/launcher. Do not edit.\n"
                "#define PTXGEN_LAUNCH_EPILOGUES(X) \\\n" + " \\\n".join(rows) + "\n")
    return fused


def run():
    out_dir = os.environ.get("OUT", "/tmp")
    # $PTXGEN_LAUNCH: a launcher built elsewhere against the same header, used when it runs here.
    launcher = os.environ.get("PTXGEN_LAUNCH", "")
    if not launcher or subprocess.run([launcher, "--list"], capture_output=True).returncode != 0:
        launcher = "/tmp/ptxgen-launch"
        b = subprocess.run(["nvcc", "-std=c++17", "-O2", "-arch=sm_90", "-I" + GRID, "-I" + os.path.join(ROOT, "include"),
                            os.path.join(ROOT, "tools", "launcher", "launcher.cu"), "-o", launcher, "-lcuda",
                            "-lcublas"], capture_output=True, text=True)
        if b.returncode != 0:
            sys.exit("building the launcher failed:\n" + b.stdout + b.stderr)
    print("launcher: %s" % launcher, flush=True)
    names = json.load(open(os.path.join(GRID, "cases.json")))
    rows, failed = [], 0
    with open(os.path.join(out_dir, "results.jsonl"), "w") as log:
        for name in names:
            r = subprocess.run([launcher, "g_" + name], capture_output=True, text=True, timeout=300)
            line = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""
            try:
                res = json.loads(line)
            except ValueError:
                res = {"ok": False, "error": (r.stderr or r.stdout).strip()[-300:]}
            res["case"] = name
            res["exit"] = r.returncode
            log.write(json.dumps(res) + "\n")
            log.flush()
            failed += not res.get("ok")
            rows.append(res)
            print(fmt(res), flush=True)
        # What the header refuses on this GPU (null, misaligned, bad leading dimensions, sizes, no
        # context, another context's stream, code for another target), and that nothing faulted.
        r = subprocess.run([launcher, "--bad-input"], capture_output=True, text=True, timeout=300)
        checks = []
        for line in r.stdout.strip().splitlines():
            try:
                checks.append(json.loads(line))
            except ValueError:
                pass
        for c in checks:
            log.write(json.dumps(c) + "\n")
        bad = [c for c in checks if "check" in c and not c["ok"]]
        n = sum(1 for c in checks if "check" in c)
        print("bad input: %d checks, %d failed (exit %d)%s" % (n, len(bad), r.returncode,
                                                               "" if r.returncode == 0 else ": " + r.stderr.strip()[-300:]))
        for c in checks:
            if "check" in c:
                print("  %-4s %-50s %s" % ("ok" if c["ok"] else "FAIL", c["check"], c["message"][:110]))
        failed += r.returncode != 0 or n == 0
    print("%d cases, %d failed" % (len(rows), failed))
    return 1 if failed else 0


def fmt(r):
    if "rel_err" not in r:
        return "%-26s FAIL (exit %s) %s" % (r["case"], r.get("exit"), r.get("error", ""))
    blas = "%7.1f" % r["cublas_tflops"] if "cublas_tflops" in r else "    n/a"
    line = "%-26s %5s %6dx%-6dx%-6d err %.2e unwritten %d  %7.1f TF/s  cuBLAS %s TF/s  (%s)" % (
        r["case"], "ok" if r["ok"] else "FAIL", r["m"], r["n"], r["k"], r["rel_err"], r["unwritten"],
        r["tflops"], blas, r["reference"])
    if "epilogue" in r:  # fused: the largest error / bound of any element, and where (cuBLAS timed plain)
        line += "\n    %s: worst error/bound %.3f at %s" % (r["epilogue"], r["worst_ratio"], r["worst_at"])
    if "groups" in r:  # grouped: the groups' rows, and the tiles past them untouched
        line += "\n    %d groups, %s %s: %d bytes written in tiles past a group's rows" % (
            r["groups"], "masked_m" if "masked_m" in r else "ends", r.get("masked_m", r.get("ends")), r["past_rows_written"])
    if "sfd_blocks" in r:  # MXFP8: every factor within its range, the layout's padding untouched
        line += "\n    SFD: %d factors checked, %d outside their range, %d padding bytes written" % (
            r["sfd_blocks"], r["sfd_wrong"], r["sfd_padding_written"])
    return line


def check():
    """Here, without a GPU: builds the launcher with nvcc against the prepared header (linking the
    toolkit's stub libcuda and cuBLAS), then runs what needs no GPU: --list (every kernel and its
    epilogue, each epilogues.hpp row checked against the header) and --selfcheck (the fused reference
    and bound against an f32 emulation of the kernels' arithmetic, and its mutations)."""
    import shutil
    import tempfile
    cuda = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    nvcc = shutil.which("nvcc") or os.path.join(cuda, "bin", "nvcc")
    stubs = os.path.join(cuda, "lib64", "stubs")
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "ptxgen-launch")
        b = subprocess.run([nvcc, "-std=c++17", "-O2", "-arch=sm_90", "-I" + GRID, "-I" + os.path.join(ROOT, "include"),
                            os.path.join(ROOT, "tools", "launcher", "launcher.cu"), "-o", exe, "-L" + stubs, "-lcuda",
                            "-lcublas"], capture_output=True, text=True)
        if b.returncode != 0:
            sys.exit("building the launcher failed:\n" + b.stdout + b.stderr)
        # The stub is libcuda.so; the executable asks for libcuda.so.1 (the driver's name).
        os.symlink(os.path.join(stubs, "libcuda.so"), os.path.join(tmp, "libcuda.so.1"))
        env = dict(os.environ, LD_LIBRARY_PATH=tmp + ":" + os.path.join(cuda, "lib64"))
        listed = subprocess.run([exe, "--list"], capture_output=True, text=True, env=env)
        if listed.returncode != 0:
            sys.exit("ptxgen-launch --list failed:\n" + listed.stdout + listed.stderr)
        kernels = listed.stdout.strip().splitlines()
        fused = [k for k in kernels if len(k.split("\t")) > 2 and k.split("\t")[2]]
        sc = subprocess.run([exe, "--selfcheck"], capture_output=True, text=True, env=env)
        checks = [json.loads(x) for x in sc.stdout.strip().splitlines() if x.startswith("{")]
        bad = [c for c in checks if "selfcheck" in c and not c["ok"]]
        for c in bad:
            print("  FAIL %s: worst error/bound %.3g at %s" % (c["selfcheck"], c["worst_ratio"], c["worst_at"]))
        print("launcher built here against %s: %d kernels listed (%d fused); selfcheck %d checks, %d failed" % (
            os.path.join(GRID, "kernels.hpp"), len(kernels), len(fused), len(checks) - 1, len(bad)))
        return 1 if bad or sc.returncode != 0 else 0


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "prepare":
        only = sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == "--only" else None
        prepare(only)
    elif len(sys.argv) >= 2 and sys.argv[1] == "run":
        sys.exit(run())
    elif len(sys.argv) >= 2 and sys.argv[1] == "check":
        sys.exit(check())
    else:
        sys.exit(__doc__)
