#!/usr/bin/env python3
"""Proof on hardware for the TMA loads ptxgen plans, on an H200.

No sm_100a machine is at hand, but the tensor memory accelerator and cuTensorMapEncodeTiled are the
same on sm_90a. This runs TMA loads ptxgen plans -- the tensor map exactly as the manifest describes
it, the boxes at the shared-memory offsets and coordinates the plan gives, evaluated at concrete
tiles, K blocks, ring stages and CTA ranks -- on the H200 through a small sm_90a probe kernel, and
checks the shared-memory image against an expectation computed without the map:

  rows   (2-D maps: operands, program tiles) the tile's canonical arrangement (§9.7.16.3.3: the
         plan's `arrangement`) swizzled as the PTX ISA's §5.5.7 tables say, each 16-byte chunk from
         the global row and column the load's `origin` gives (zero past the tensor's extents; the
         4- and 6-bit types unpacked into 16-byte containers compare their 8 or 12 data bytes);
  scale  (rank-3 maps of block-scale factors) each 16-byte line of the factor tile holds rows r,
         r + 32, r + 64, r + 96 by 4 factors of the 128x4 layout: its bytes from docs/spec.md "Block
         scaling"'s byte formula for the tile's rows (m_tile or n_tile, the CTA's rank) and the K
         block's factors;
  meta   (rank-3 maps of sparse metadata) each line one row of a 128x128 atom: its bytes from
         docs/spec.md "Sparse A"'s atom formula for the tile's rows and the K block's atoms.

That is what the sm_100a kernels' descriptors and tcgen05.cp read. The probe kernel is this script's,
not ptxgen's output: what is under test is the plan, the manifest and our reading of the layouts.

Cases: every program spec (specs/prog_*.json, every load switched to TMA; every role's steps and
the loops' bodies, so the pipelined and warp-specialized kernels too), six tall or odd tiles, and
gemm-template specs (all block-scaled and sparse ones, six plain tcgen05 ones) at a small problem
with partial last tiles, each load at several (m_tile, n_tile, k_block) with its ring stage, on each
CTA of a pair. Controls: a few cases run again with every box one row (rank 3: one plane) further
on, which must be caught. The H200 lacks the sub-byte TMA types and the 32-byte swizzle atomicity
(sm_100 features): those cases come out N/A, with the reason, not as failures.

  tools/h200-tma.py prepare     # here: writes .device/tma/ (ignored by git; carry it)
  tools/h200-tma.py selfcheck   # here: TMA simulated from each map (box, strides, swizzle, zero
                                # fill, sub-byte unpacking, the driver's and the ISA's checks): every
                                # case must pass, every shifted box be caught, mutant maps fail, the
                                # H200's missing features come out N/A; then `run` itself through a
                                # stand-in libcuda (C, built with cc) that runs the probe's contract
  tools/h200-tma.py run         # on the GPU machine: encode, launch, compare; $OUT/tma-results.jsonl
  tools/h200-tma.py run --sim   # the same runner over the simulator (--sim-h200: H200 refusals)

`run` prints one line per case and a summary and exits nonzero on any failure; a case that kills
the CUDA context costs only itself (the cases run in a worker process, restarted after it).
"""
import ctypes
import glob
import json
import os
import random
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIR = os.path.join(ROOT, ".device", "tma")
PTXGEN = os.environ.get("PTXGEN_BIN", os.path.join(ROOT, "build", "ptxgen"))

# Extra programs: a tile of rows not a power of two, taller than one box, in each swizzle, K- and
# MN-major, at an offset in the global tensor. Each is a load of X into x beside the example's MMA.
EXAMPLE = {
    "ptxgen": 1, "name": "", "target": "sm_100a",
    "program": {
        "globals": {"A": {"dtype": "bf16", "shape": [128, 64]}, "B": {"dtype": "bf16", "shape": [128, 64]},
                    "D": {"dtype": "f32", "shape": [128, 128]}},
        "smem": {"a": {"dtype": "bf16", "shape": [128, 64], "major": "k", "swizzle": 128},
                 "b": {"dtype": "bf16", "shape": [128, 64], "major": "k", "swizzle": 128}},
        "tmem": {"t": {"columns": 128}, "acc": {"slice": {"of": "t", "columns": [0, 128]}}},
        "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"},
                {"op": "mma", "a": "a", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"},
                {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"},
                {"op": "store", "regs": "r", "dst": "D"}],
    },
}

EXTRA = [
    # name, global shape, tile shape, major, swizzle, at
    ("tall_k_sw128", [600, 96], [264, 64], "k", 128, [17, 32]),
    ("tall_k_sw64", [300, 64], [264, 32], "k", 64, [8, 0]),
    ("tall_k_sw32", [264, 16], [264, 16], "k", 32, [0, 0]),
    ("tall_k_none", [400, 40], [264, 8], "k", 0, [3, 16]),
    ("mn_sw128_k72", [72, 200], [128, 72], "mn", 128, [0, 64]),
    ("mn_sw32_k24", [40, 96], [32, 24], "mn", 32, [8, 16]),
]

# Gemm-template specs: every block-scaled and every sparse one (rank-3 factor and metadata maps,
# the 4- and 6-bit operand types), and plain tcgen05 ones: K- and MN-major, a pair, persistent,
# 64-byte swizzle, the 32-byte-atom swizzle.
GEMMS = ["gemm_mxf8f6f4_*", "gemm_mxf4*", "gemm_sparse_*", "gemm_bf16_tn_128x256x64", "gemm_bf16_cta2_m256",
         "gemm_bf16_mn_major_128x256x64", "gemm_bf16_persistent_tma_128x256x64", "gemm_e4m3_mn_major_sw64",
         "gemm_tf32_mn_base32b"]

# CUtensorMapDataType (cuda.h): enumerator, bits of one element in global memory, elements moved as
# one group, and the shared-memory bytes of a group (16 elements of 4 or 6 bits: 8 or 12 data bytes
# packed, then padding to 16 bytes for the ALIGN16B types, §5.5.1.1.1 .b4x16_p64 / .b6x16_p32).
DTYPES = {
    "CU_TENSOR_MAP_DATA_TYPE_UINT8": (0, 8, 1, 1),
    "CU_TENSOR_MAP_DATA_TYPE_UINT16": (1, 16, 1, 2),
    "CU_TENSOR_MAP_DATA_TYPE_UINT32": (2, 32, 1, 4),
    "CU_TENSOR_MAP_DATA_TYPE_INT32": (3, 32, 1, 4),
    "CU_TENSOR_MAP_DATA_TYPE_UINT64": (4, 64, 1, 8),
    "CU_TENSOR_MAP_DATA_TYPE_INT64": (5, 64, 1, 8),
    "CU_TENSOR_MAP_DATA_TYPE_FLOAT16": (6, 16, 1, 2),
    "CU_TENSOR_MAP_DATA_TYPE_FLOAT32": (7, 32, 1, 4),
    "CU_TENSOR_MAP_DATA_TYPE_FLOAT64": (8, 64, 1, 8),
    "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16": (9, 16, 1, 2),
    "CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ": (10, 32, 1, 4),
    "CU_TENSOR_MAP_DATA_TYPE_TFLOAT32": (11, 32, 1, 4),
    "CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ": (12, 32, 1, 4),
    "CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B": (13, 4, 16, 8),
    "CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B": (14, 4, 16, 16),
    "CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B": (15, 6, 16, 16),
}
SUB_BYTE = {"CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B", "CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B",
            "CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B"}
PADDED = {"CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B", "CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B"}
# CUtensorMapSwizzle: enumerator, span in bytes (0: none).
SWIZZLES = {"CU_TENSOR_MAP_SWIZZLE_NONE": (0, 0), "CU_TENSOR_MAP_SWIZZLE_32B": (1, 32),
            "CU_TENSOR_MAP_SWIZZLE_64B": (2, 64), "CU_TENSOR_MAP_SWIZZLE_128B": (3, 128),
            "CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B": (4, 128)}
SWIZZLE_NAME = {"CU_TENSOR_MAP_SWIZZLE_NONE": "none", "CU_TENSOR_MAP_SWIZZLE_32B": "32B",
                "CU_TENSOR_MAP_SWIZZLE_64B": "64B", "CU_TENSOR_MAP_SWIZZLE_128B": "128B",
                "CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B": "128B_base32b"}
L2_ENUM = {"CU_TENSOR_MAP_L2_PROMOTION_NONE": 0, "CU_TENSOR_MAP_L2_PROMOTION_L2_256B": 3}
MAX_SMEM = 232448  # the H200's opt-in dynamic shared memory per block
TIMEOUT_STATUS = 2


def ceil_div(a, b):
    return -(-a // b)


# ---- prepare ---------------------------------------------------------------------------------------

def run_ptxgen(*args):
    r = subprocess.run([PTXGEN, *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"ptxgen {' '.join(args)} failed:\n{r.stdout}{r.stderr}")
    return r.stdout


def walk_ops(ops):
    for o in ops:
        yield o
        yield from walk_ops(o.get("ops", []))


def programs():
    """(name, spec): every program spec with every load (loops' bodies too) by TMA, and the extras."""
    for path in sorted(glob.glob(os.path.join(ROOT, "specs", "prog_*.json"))):
        with open(path) as h:
            j = json.load(h)
        for o in walk_ops(j["program"]["ops"]):
            if o["op"] == "load":
                o["via"] = "tma"
        yield os.path.basename(path)[:-5], j
    for name, gshape, tshape, major, sw, at in EXTRA:
        j = json.loads(json.dumps(EXAMPLE))
        j["program"]["globals"]["X"] = {"dtype": "bf16", "shape": gshape}
        j["program"]["smem"]["x"] = {"dtype": "bf16", "shape": tshape, "major": major, "swizzle": sw}
        j["program"]["ops"].insert(0, {"op": "load", "src": "X", "dst": "x", "at": at, "via": "tma"})
        yield "extra_" + name, j


def gemm_specs():
    seen = set()
    for pat in GEMMS:
        for path in sorted(glob.glob(os.path.join(ROOT, "specs", pat + ".json"))):
            if path not in seen:
                seen.add(path)
                with open(path) as h:
                    yield os.path.basename(path)[:-5], json.load(h)


def small_gemm(j, plan0, manifest0):
    """The spec at a small problem with its tile and stages pinned: two M and N tiles, the second
    partial (so the zero fill is exercised), three K blocks (the last half full where the types
    allow: sparse A and the 16-byte-aligned 4- and 6-bit maps need k a multiple of tile.k or 128)."""
    g = j["gemm"]
    t = plan0["tiles"]
    g["tile"] = {"m": t["m"], "n": t["n"], "k": t["k"]}
    stages = {s["stages"] for s in plan0["smem"]}
    if "stages" not in g:
        g["stages"] = max(stages)
    padded = any(m["data_type"] in PADDED for m in manifest0.get("tensor_maps", []))
    half = t["k"] // 2
    whole_k = g.get("sparse") or (padded and half % 128)
    g["m"] = t["m"] + 3 * t["m"] // 4
    g["n"] = t["n"] + 3 * t["n"] // 4
    g["k"] = 3 * t["k"] if whole_k else 2 * t["k"] + half
    return j


def strip_ld(x):
    if isinstance(x, dict):
        return {k: strip_ld(v) for k, v in x.items() if k != "global_row_bytes"}
    return [strip_ld(v) for v in x] if isinstance(x, list) else x


def plan_loads(plan):
    """(role, load step, enclosing loop or None) for every TMA load, roles and loop bodies walked."""
    def walk(role, steps, loop):
        for st in steps:
            if st["step"] == "loop":
                yield from walk(role, st["body"], st["loop"])
            elif st["step"] == "load" and "tma" in st["load"]:
                yield role, st, loop
    for role in plan["roles"]:
        yield from walk(role, role["steps"], None)


def rt(a, mt, nt, kb):
    """An affine form's run-time part (the plan's c0_rt, c1_rt, c2_rt: no base, no rank)."""
    if "size" in a:  # a gated epilogue's up half (d = n / 2 rows on): not among the specs walked here
        raise RuntimeError("an origin with a run-time size term (%s) is not evaluated here" % a["size"]["name"])
    return a["m_tile"] * mt + a["n_tile"] * nt + a["k_block"] * kb


def full(a, mt, nt, kb, rank):
    return a["base"] + rt(a, mt, nt, kb) + a["rank"] * rank


def iterations(plan, loop):
    """(m_tile, n_tile, k_block) to evaluate at: 0 and 1 of the tiles, K blocks 0, 1 and the last."""
    sizes = {s["name"]: s["value"] for s in plan["sizes"]}
    tiles = plan.get("tiles")
    tm = ceil_div(sizes[tiles["m_param"]], tiles["m"]) if tiles else 1
    tn = ceil_div(sizes[tiles["n_param"]], tiles["n"]) if tiles else 1
    if loop is None:
        kbs = 1
    elif loop["k_param"]:
        kbs = ceil_div(sizes[loop["k_param"]], loop["block"])
    else:
        kbs = loop["trips"]
    m1, n1, k1, kl = min(1, tm - 1), min(1, tn - 1), min(1, kbs - 1), kbs - 1
    out = []
    for c in [(0, 0, 0), (0, n1, k1), (m1, 0, kl), (m1, n1, kl)]:
        if c not in out:
            out.append(c)
    return out


def cases_of(name, family, plan, manifest):
    maps = {m["param"]: m for m in manifest.get("tensor_maps", [])}
    params = {p["name"]: p for p in plan["params"]}
    smem = {s["name"]: s for s in plan["smem"]}
    sizes = {s["name"]: s["value"] for s in plan["sizes"]}
    tiles = plan.get("tiles") or {}
    ctas = plan["cta_group"]
    out, seen, idx = [], set(), {}
    for role, st, loop in plan_loads(plan):
        ld = st["load"]
        tma, a = ld["tma"], ld["arrangement"]
        m = maps[tma["tensor_map"]]
        g = params[ld["global"]]
        tile = smem[ld["tile"]]
        gbits = a["global_row_bytes"] * 8 // g["ld"]
        map_bits = DTYPES[m["data_type"]][1]
        # The plan's c0_rt: the column origin's run-time part in map elements (a byte map counts
        # bytes or 4-byte words, a typed map the tensor's elements): src/plan/ops.cpp plan_tma_load.
        c0_scale = (gbits, map_bits)
        kind = "scale" if "scale" in g else "meta" if "metadata" in g else "rows"
        if (m["rank"] == 3) != (kind != "rows"):
            raise RuntimeError(f"{name}: {ld['global']} is a rank-{m['rank']} map of kind {kind}")
        key = f"{role['name']}/op{st['op']}"
        idx[key] = idx.get(key, -1) + 1
        where = key + (f"#{idx[key]}" if idx[key] else "")
        for mt, nt, kb in iterations(plan, loop):
            if loop is None and any(o["k_block"] for o in ld["origin"]):
                raise RuntimeError(f"{name}: a load outside a loop with a K-block term")
            stage = kb % tile["stages"] if loop is not None else 0
            soff = stage * tile["stage_bytes"]
            for rank in range(ctas):
                cc = tma.get("cta_coords", [0, 0])
                c0_rt = rt(ld["origin"][1], mt, nt, kb) * c0_scale[0]
                if c0_rt % c0_scale[1]:
                    raise RuntimeError(f"{name}: a column step of no whole map element")
                c0_rt //= c0_scale[1]
                c1_rt = rt(ld["origin"][0], mt, nt, kb)
                plane = 0
                if "plane" in tma:
                    pl = tma["plane"]
                    plane = pl["base"] + rt(pl["origin"], mt, nt, kb) + rank * pl["cta"]
                boxes = [[b["smem"] + soff, b["coords"][0] + c0_rt + rank * cc[0],
                          b["coords"][1] + c1_rt + rank * cc[1], plane] for b in tma["boxes"]]
                e = {"kind": kind, "tile_offset": a["tile_offset"] + soff}
                if kind == "rows":
                    row0 = full(ld["origin"][0], mt, nt, kb, rank)
                    col0 = full(ld["origin"][1], mt, nt, kb, rank)
                    if col0 * gbits % 8 or ld["origin"][0]["base"] != ld["row0"] or \
                            ld["origin"][1]["base"] * gbits // 8 != a["col0_bytes"]:
                        raise RuntimeError(f"{name}: origin and row0/col0 disagree")
                    # The shared-memory bits of an element: a typed map of a 4- or 6-bit type
                    # may unpack into 8-bit containers (16 elements to 16 bytes).
                    tbits = a["box_bytes"] * 8 // m["box_dims"][0] if m["data_type"] in SUB_BYTE else gbits
                    e.update(arrangement=a, row0=row0, col0_bytes=col0 * gbits // 8, ld_bytes=a["global_row_bytes"],
                             rows_valid=g["rows"], row_valid_bytes=g["cols"] * gbits // 8, gchunk=16 * gbits // tbits)
                    doc_bytes = g["rows"] * a["global_row_bytes"]
                elif kind == "scale":
                    of, vec = g["scale"]["of"], g["scale"]["vec"]
                    R = sizes[tiles["m_param"]] if of == "A" else sizes[tiles["n_param"]]
                    K = sizes["k"]
                    F = tiles["k"] // vec
                    r0 = mt * tiles["m"] + rank * (tiles["m"] // ctas) if of == "A" else nt * tiles["n"]
                    e.update(tile_base=tile["offset"] + soff, lines=a["rows"], r0=r0, c0=kb * F, F=F,
                             Rp=128 * ceil_div(R, 128), Cp=4 * ceil_div(ceil_div(K, vec), 4))
                    doc_bytes = e["Rp"] * e["Cp"]
                else:
                    M, K = sizes[tiles["m_param"]], sizes["k"]
                    # An atom covers 128 elements of K ("128x128 atoms"; 64 for tf32's 1:2 atoms, 256
                    # for the e2m1 kinds' 4:8 pairs).
                    AK = int(g["metadata"]["layout"].split()[0].split("x")[1])
                    A = tiles["k"] // AK
                    # The box's first row and its atom: its lines are consecutive rows of the atom,
                    # wherever in the tile they land (layout F places 16-row boxes 32 lines apart).
                    e.update(tile_base=tile["offset"] + soff, lines=a["rows"], row_first=full(ld["origin"][0], mt, nt, kb, rank),
                             J=plane, A=A, AK=AK, Mp=ceil_div(M, 128), Kp=ceil_div(K, AK))
                    if not 0 <= e["J"] - kb * A < A:
                        raise RuntimeError(f"{name}: a metadata box outside its K block's atoms")
                    doc_bytes = e["Mp"] * 2048 * e["Kp"]
                d = m["global_dims"]
                map_bytes = d[1] * m["global_strides_bytes"][0] if m["rank"] == 2 else d[2] * m["global_strides_bytes"][1]
                sig = json.dumps([m["param"], boxes, e], sort_keys=True)
                if sig in seen:
                    continue
                seen.add(sig)
                c = {"case": f"{name}/{where}/{ld['global']}/mt{mt}.nt{nt}.kb{kb}" + (f"/cta{rank}" if ctas > 1 else ""),
                     "family": family, "spec": name, "tensor": ld["global"], "map": m, "boxes": boxes, "expect": e,
                     "in_loop": loop is not None, "role": role["name"],
                     "at": {"m_tile": mt, "n_tile": nt, "k_block": kb, "stage": stage, "rank": rank},
                     "buffer_bytes": max(doc_bytes, map_bytes)}
                if map_bytes > doc_bytes:
                    c["problem"] = f"the map reaches {map_bytes} bytes, past the tensor's {doc_bytes}"
                out.append(c)
    return out


def prepare():
    os.makedirs(DIR, exist_ok=True)
    cases, refused = [], []

    def plan_and_manifest(name, j):
        spec = os.path.join(DIR, name + ".json")
        with open(spec, "w") as h:
            json.dump(j, h, indent=1)
        return json.loads(run_ptxgen("plan", "--json", spec)), json.loads(run_ptxgen("manifest", spec, "-o", "-"))

    for name, j in programs():
        j["name"] = name
        try:
            plan, manifest = plan_and_manifest(name, j)
            cases += cases_of(name, "extra" if name.startswith("extra_") else "program", plan, manifest)
        except RuntimeError as e:
            refused.append(f"{name}: {e}")
    for name, j in gemm_specs():
        try:
            plan0, manifest0 = plan_and_manifest(name + ".orig", j)
            small = small_gemm(json.loads(json.dumps(j)), plan0, manifest0)
            plan, manifest = plan_and_manifest(name, small)
            # The plan under test is the shipped spec's: the small problem must plan the same steps
            # (but for the global row strides, the problem's k).
            if strip_ld(plan["roles"]) != strip_ld(plan0["roles"]) or plan["smem"] != plan0["smem"]:
                raise RuntimeError("the small problem plans other steps than the spec's")
            cases += cases_of(name, "gemm", plan, manifest)
        except RuntimeError as e:
            refused.append(f"{name}: {e}")
    # Control candidates, one of each sort (2-D: extra, program, pipelined program, gemm; 3-D: factors
    # and metadata, CTA 0 and 1 of a pair), without zero fill so that a shifted box reads other bytes.
    sorts = set()
    for c in cases:
        m = c["map"]
        if any(o is None for _, o, _ in expected_chunks(c)) or m["data_type"] in SUB_BYTE or \
                m["swizzle"] == "CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B":
            continue
        if m["rank"] == 3 and max(b[3] for b in c["boxes"]) + 1 >= m["global_dims"][2]:
            continue
        sort = (c["family"], c["in_loop"]) if m["rank"] == 2 else (c["expect"]["kind"], c["at"]["rank"])
        if sort not in sorts:
            sorts.add(sort)
            c["control"] = "row" if m["rank"] == 2 else "plane"
    with open(os.path.join(DIR, "cases.json"), "w") as h:
        json.dump(cases, h)
    with open(os.path.join(DIR, "probe.ptx"), "w") as h:
        h.write(PROBE)
    subprocess.run(["ptxas", "-arch=sm_90a", os.path.join(DIR, "probe.ptx"), "-o", os.path.join(DIR, "probe.cubin")],
                   check=True)
    for r in refused:
        print("REFUSED " + r)
    print(f"{len(cases)} TMA load cases in {DIR}: {summary_counts(cases)}")
    problems = [c for c in cases if "problem" in c]
    for c in problems:
        print(f"PROBLEM {c['case']}: {c['problem']}")
    return 1 if refused or problems else 0


def summary_counts(cases):
    kinds = {}
    for c in cases:
        k = f"{c['family']} {c['expect']['kind']}" + (" (in a K loop)" if c["in_loop"] else "")
        kinds[k] = kinds.get(k, 0) + 1
    specs = len({c["spec"] for c in cases})
    return ", ".join(f"{v} {k}" for k, v in sorted(kinds.items())) + f"; {specs} specs"


# ---- the expectation (run and selfcheck) -------------------------------------------------------------

def swizzled(addr, mode):
    """§5.5.7, from a 1024-byte-aligned base: the 16-byte cell c of 128-byte line l moves to
    c ^ (l mod period) (period 2, 4, 8 lines for 32, 64, 128 bytes); with 32-byte atomicity
    (128-byte span) 32-byte pairs move: pair p to p ^ (l mod 4)."""
    line, within = divmod(addr, 128)
    if mode == "none":
        return addr
    if mode in ("32B", "64B", "128B"):
        period = {"32B": 2, "64B": 4, "128B": 8}[mode]
        cell, byte = divmod(within, 16)
        return line * 128 + (cell ^ (line % period)) * 16 + byte
    pair, byte = divmod(within, 32)  # 128B with 32-byte atoms
    return line * 128 + (pair ^ (line % 4)) * 32 + byte


def sf_byte(r, c, Cp):
    """docs/spec.md "Block scaling": factor S[r][c] of the 128x4 layout."""
    return ((r // 128) * (Cp // 4) + c // 4) * 512 + (r % 32) * 16 + ((r % 128) // 32) * 4 + c % 4


def meta_byte(r, x, Mp, AK):
    """docs/spec.md "Sparse A": the metadata byte of element x of K of row r in the row-major atoms of
    AK elements (the 8-bit kinds' 128: a bit per element; the e2m1 kinds' 256: half a bit)."""
    i, j = r // 128, x // AK
    return (j * Mp + i) * 2048 + 16 * (r % 128) + (x % AK) * 16 // AK


def expected_chunks(c):
    """(shared offset, global offset or None for zero fill, data bytes) of each 16-byte chunk."""
    e = c["expect"]
    out = []
    if e["kind"] == "rows":
        a = e["arrangement"]
        rows, rb, bb, col = a["rows"], a["row_bytes"], a["box_bytes"], a["column_bytes"]
        for r in range(rows):
            R = e["row0"] + r
            for b in range(0, rb, 16):
                off = e["tile_offset"] + (b // bb) * col + r * bb + b % bb
                gb = e["col0_bytes"] + (b // 16) * e["gchunk"]
                valid = 0 <= R < e["rows_valid"] and gb + e["gchunk"] <= e["row_valid_bytes"]
                out.append((swizzled(off, a["swizzle"]), R * e["ld_bytes"] + gb if valid else None, e["gchunk"]))
        return out
    if e["kind"] == "scale":
        stripe = 128 * e["F"]
        for L in range(e["lines"]):
            pos = e["tile_offset"] - e["tile_base"] + 16 * L
            s, q, l = pos // stripe, (pos % stripe) // 512, (pos % 512) // 16
            r, f = e["r0"] + 128 * s + l, e["c0"] + 4 * q  # line l: rows r + 32 w, factors f + b
            src = [sf_byte(r + 32 * w, f + b, e["Cp"]) for w in range(4) for b in range(4)]
            if src != list(range(src[0], src[0] + 16)):
                raise RuntimeError(f"{c['case']}: a line of factors that is not 16 consecutive bytes")
            valid = r < e["Rp"] and f < e["Cp"]
            out.append((e["tile_offset"] + 16 * L, src[0] if valid else None, 16))
        return out
    if e["lines"] == 128 and (e["tile_offset"] - e["tile_base"]) % 2048:  # a whole atom lands on an atom of the tile
        raise RuntimeError(f"{c['case']}: a whole metadata atom off the tile's atom boundary")
    for L in range(e["lines"]):  # meta
        r, J = e["row_first"] + L, e["J"]
        # docs/spec.md "Sparse A": atom (i, j) at byte (j ceil(m / 128) + i) x 2048, 16-byte lines;
        # the 8-bit and e2m1 kinds' line is row r's chunks in order (meta_byte), the f16/tf32 atoms
        # permute rows and chunks inside the atom, which TMA copies line by line all the same.
        src = [(J * e["Mp"] + r // 128) * 2048 + 16 * (r % 128) + q for q in range(16)]
        if e["AK"] in (128, 256):  # the line's first byte is its row's first chunk of the atom
            if src[0] != meta_byte(r, e["AK"] * J, e["Mp"], e["AK"]):
                raise RuntimeError(f"{c['case']}: the atom's line and the row-major atoms' byte formula disagree")
        valid = r < 128 * e["Mp"] and J < e["Kp"]
        out.append((e["tile_offset"] + 16 * L, src[0] if valid else None, 16))
    return out


def box_bytes(m):
    """Shared-memory bytes one box writes (what it completes on the mbarrier)."""
    _, _, group, sbytes = DTYPES[m["data_type"]]
    n = 1
    for d in m["box_dims"][1:]:
        n *= d
    return m["box_dims"][0] // group * sbytes * n


def layout(c, chunks):
    """The probe's window: shared memory from the 1024-byte line below the first box (every swizzle
    pattern repeats within 1024 bytes, so the image is the same there), through every box."""
    skip = min(b[0] for b in c["boxes"]) // 1024 * 1024
    end = max(s + 16 for s, _, _ in chunks)
    end = max(end, max(b[0] for b in c["boxes"]) + box_bytes(c["map"]))
    return skip, (end - skip + 127) // 128 * 128


def tf32_equal(got, want):
    """A TFLOAT32 map's load converts each f32 to tf32 (10 mantissa bits) on the way in: a 4-byte
    word matches if it is the word itself, the word truncated or rounded to nearest (even) at bit 13,
    any NaN for a NaN, or zero for a subnormal (which the conversion may flush)."""
    for i in range(0, len(want), 4):
        w = int.from_bytes(want[i:i + 4], "little")
        g = int.from_bytes(got[i:i + 4], "little")
        if g == w:
            continue
        exp, man = (w >> 23) & 0xFF, w & 0x7FFFFF
        if exp == 0xFF and man:  # NaN in, NaN out
            if (g >> 23) & 0xFF == 0xFF and g & 0x7FFFFF:
                continue
            return False
        trunc = w & ~0x1FFF
        rne = (w + 0xFFF + ((w >> 13) & 1)) & ~0x1FFF
        if g in (trunc, rne & 0xFFFFFFFF) or (exp == 0 and g & 0x7FFFFFFF == 0):
            continue
        return False
    return True


def wrong_chunks(chunks, skip, got, host, tf32=False):
    bad = []
    for s, o, n in chunks:
        want = host[o:o + n] if o is not None else bytes(n)
        have = got[s - skip:s - skip + n]
        if have != want and not (tf32 and o is not None and tf32_equal(have, want)):
            bad.append((s, o))
    return bad


# ---- the probe -----------------------------------------------------------------------------------

# Every thread fills the window with 0xA5 (so a chunk TMA never wrote cannot pass for its zero fill);
# thread 0 arms an mbarrier with `tx` bytes and issues one cp.async.bulk.tensor.2d or .3d (`rank`)
# per box (shared offset, coordinates 0, 1, 2 from a global array) into a 1024-byte-aligned base;
# everyone waits for the phase (2 s at most: thread 0 writes status 1, or 2 on a timeout, after the
# `dump` bytes) and copies the window out.
PROBE = r"""
.version 8.6
.target sm_90a
.address_size 64
.extern .shared .align 16 .b8 smem[];
.visible .entry tma_probe(.param .align 64 .b8 tmap[128], .param .u64 out, .param .u64 boxes,
                          .param .u32 nboxes, .param .u32 tx, .param .u32 dump, .param .u32 rank)
.reqntid 128, 1, 1
{
  .reg .pred %p<8>;
  .reg .b32 %r<32>;
  .reg .b64 %rd<16>;
  mov.u32 %r0, %tid.x;
  mov.u32 %r1, smem;
  add.u32 %r2, %r1, 1023;
  and.b32 %r2, %r2, -1024;
  ld.param.u32 %r3, [dump];
  add.u32 %r4, %r2, %r3;
  add.u32 %r4, %r4, 7;
  and.b32 %r4, %r4, -8;
  mov.b32 %r20, 0xA5A5A5A5;
  shl.b32 %r12, %r0, 4;
FILL:
  setp.ge.u32 %p0, %r12, %r3;
  @%p0 bra FILLED;
  add.u32 %r13, %r2, %r12;
  st.shared.v4.b32 [%r13], {%r20, %r20, %r20, %r20};
  add.u32 %r12, %r12, 2048;
  bra FILL;
FILLED:
  fence.proxy.async.shared::cta;
  bar.sync 0;
  setp.ne.u32 %p1, %r0, 0;
  @%p1 bra ISSUED;
  mbarrier.init.shared::cta.b64 [%r4], 1;
  fence.mbarrier_init.release.cluster;
  fence.proxy.async.shared::cta;
  ld.param.u32 %r5, [tx];
  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r4], %r5;
  mov.b64 %rd1, tmap;
  cvta.param.u64 %rd1, %rd1;
  ld.param.u64 %rd2, [boxes];
  cvta.to.global.u64 %rd2, %rd2;
  ld.param.u32 %r6, [nboxes];
  ld.param.u32 %r21, [rank];
  setp.eq.u32 %p2, %r21, 3;
  mov.u32 %r7, 0;
LOOP:
  setp.ge.u32 %p3, %r7, %r6;
  @%p3 bra ISSUED;
  mul.wide.u32 %rd3, %r7, 16;
  add.u64 %rd4, %rd2, %rd3;
  ld.global.v4.u32 {%r8, %r9, %r10, %r11}, [%rd4];
  add.u32 %r14, %r2, %r8;
  @%p2 bra THREE;
  cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r14], [%rd1, {%r9, %r10}], [%r4];
  bra NEXT;
THREE:
  cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%r14], [%rd1, {%r9, %r10, %r11}], [%r4];
NEXT:
  add.u32 %r7, %r7, 1;
  bra LOOP;
ISSUED:
  bar.sync 0;
  mov.u32 %r22, 1;
  mov.u64 %rd8, %globaltimer;
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p4, [%r4], 0;
  @%p4 bra WAITED;
  mov.u64 %rd9, %globaltimer;
  sub.u64 %rd10, %rd9, %rd8;
  setp.lt.u64 %p5, %rd10, 2000000000;
  @%p5 bra WAIT;
  mov.u32 %r22, 2;
WAITED:
  ld.param.u64 %rd5, [out];
  cvta.to.global.u64 %rd5, %rd5;
  setp.ne.u32 %p6, %r0, 0;
  @%p6 bra COPYING;
  cvt.u64.u32 %rd11, %r3;
  add.u64 %rd12, %rd5, %rd11;
  st.global.u32 [%rd12], %r22;
COPYING:
  shl.b32 %r12, %r0, 4;
COPY:
  setp.ge.u32 %p7, %r12, %r3;
  @%p7 bra DONE;
  add.u32 %r13, %r2, %r12;
  ld.shared.v4.u32 {%r14, %r15, %r16, %r17}, [%r13];
  cvt.u64.u32 %rd6, %r12;
  add.u64 %rd7, %rd5, %rd6;
  st.global.v4.u32 [%rd7], {%r14, %r15, %r16, %r17};
  add.u32 %r12, %r12, 2048;
  bra COPY;
DONE:
  ret;
}
"""


# ---- back ends: the H200, or TMA simulated ------------------------------------------------------------

class LaunchError(Exception):
    """The launch or the copy back failed: the CUDA context may be lost."""


def encode_args(m):
    """cuTensorMapEncodeTiled's arguments as the manifest gives them."""
    return (DTYPES[m["data_type"]][0], m["rank"], m["global_dims"], m["global_strides_bytes"], m["box_dims"],
            m["element_strides"], SWIZZLES[m["swizzle"]][0], L2_ENUM[m["l2_promotion"]])


def driver_check(dtype, rank, dims, strides, box, estr, swizzle, address):
    """cuTensorMapEncodeTiled's documented requirements (cuda.h); None when the map is valid."""
    name = next(k for k, v in DTYPES.items() if v[0] == dtype)
    _, bits, group, sbytes = DTYPES[name]
    span = {v[0]: v[1] for v in SWIZZLES.values()}.get(swizzle)
    if span is None:
        return "swizzle enumerator"
    if not 1 <= rank <= 5 or len(dims) != rank or len(strides) != rank - 1 or len(box) != rank or len(estr) != rank:
        return "rank"
    if address % (32 if name in PADDED else 16):
        return "global address alignment"
    if any(not 1 <= d <= 2 ** 32 for d in dims):
        return "globalDim range"
    if name in PADDED and dims[0] % 128:
        return "globalDim[0] of a 16-byte-aligned sub-byte type: a multiple of 128"
    if name == "CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B" and dims[0] % 2:
        return "globalDim[0] of 16U4_ALIGN8B: even"
    if any(s % (32 if name in PADDED else 16) or s >= 2 ** 40 for s in strides):
        return "globalStrides multiple of 16 (32) and below 2^40"
    if strides and strides[0] < dims[0] * bits // 8:
        return "globalStrides[0] below a row"
    if any(not 1 <= b <= 256 for b in box):
        return "boxDim range"
    inner = box[0] * bits // 8 if name not in PADDED else box[0] // group * sbytes
    if name in PADDED and box[0] != 128:
        return "boxDim[0] of a 16-byte-aligned sub-byte type: 128"
    if box[0] * bits % 128:
        return "boxDim[0] bytes a multiple of 16"
    if span and inner > span:
        return "box inner dimension wider than the swizzle span"
    if any(not 1 <= s <= 8 for s in estr) or any(s != 1 for s in estr):
        return "elementStrides (this script uses 1)"
    return None


def swizzle_bits(addr, mode):
    """The swizzle as bit operations on the shared address (CUTLASS's Swizzle<B, M, S>: the B bits
    from bit M + S are XORed into the B bits from bit M), written apart from `swizzled` so that the
    simulator does not share the expectation's reading: 32B <1,4,3>, 64B <2,4,3>, 128B <3,4,3>, and
    the 32-byte-atom 128B mode <2,5,2>."""
    b, m, sh = {"none": (0, 4, 3), "32B": (1, 4, 3), "64B": (2, 4, 3), "128B": (3, 4, 3), "128B_base32b": (2, 5, 2)}[mode]
    mask = ((1 << b) - 1) << m
    return addr ^ ((addr >> sh) & mask)


class SimBackend:
    """TMA simulated from the map: each box row by row, element groups in bounds copied (a group
    past any extent zero-filled), the 4- and 6-bit types' padding left random (uninitialized), each
    16-byte chunk of a box row placed at its swizzled shared address. `h200`: refuse what the H200's
    driver refuses (the 32-byte-atom swizzle, the sub-byte types), to check the N/A paths."""

    def __init__(self, h200=False, seed=1, refuse=True):
        self.h200 = h200 and refuse
        self.rng = random.Random(seed)
        self.buffers = {}
        self.cc = (9, 0) if h200 else (10, 0)  # `h200`, `refuse` False: a driver that encodes all

    def buffer(self, key, n):
        if key not in self.buffers or len(self.buffers[key]) < n:
            self.buffers[key] = self.rng.randbytes(n)
        return key, self.buffers[key]

    def encode(self, handle, args):
        dtype, rank, dims, strides, box, estr, swizzle, l2 = args
        if self.h200 and (swizzle == 4 or dtype in (13, 14, 15)):
            return 1, None  # CUDA_ERROR_INVALID_VALUE
        if driver_check(dtype, rank, dims, strides, box, estr, swizzle, 256) is not None:
            return 1, None
        return 0, (handle, args)

    def launch(self, tmap, boxes, tx, dump, rank):
        handle, (dtype, mrank, dims, strides, box, _, swizzle, _) = tmap
        if mrank != rank:
            raise LaunchError("the probe's rank differs from the map's")
        host = self.buffers[handle]
        name = next(k for k, v in DTYPES.items() if v[0] == dtype)
        _, bits, group, sbytes = DTYPES[name]
        gbytes = group * bits // 8
        mode = {0: "none", 1: "32B", 2: "64B", 3: "128B", 4: "128B_base32b"}[swizzle]
        img = bytearray(b"\xa5" * dump)
        row_smem = box[0] // group * sbytes
        depth = box[2] if rank == 3 else 1
        written = 0
        for smem, c0, c1, c2 in boxes:
            if smem % 128:
                raise LaunchError("a box destination off a 128-byte boundary")
            if name in PADDED and c0 % 128:
                raise LaunchError("the first coordinate of a 16-byte-aligned sub-byte type: a multiple of 128 (§9.7.9.27.1.1)")
            for z in range(depth):
                Z = c2 + z
                for y in range(box[1]):
                    Y = c1 + y
                    line = bytearray(row_smem)
                    in_rows = 0 <= Y < dims[1] and (rank == 2 or 0 <= Z < dims[2])
                    base = Y * strides[0] + (Z * strides[1] if rank == 3 else 0)
                    for gi in range(box[0] // group) if group > 1 else [None]:
                        if gi is None:  # one element a group: the in-bounds run at once
                            lo, hi = max(c0, 0), min(c0 + box[0], dims[0])
                            if in_rows and lo < hi:
                                eb = bits // 8
                                line[(lo - c0) * eb:(hi - c0) * eb] = host[base + lo * eb:base + hi * eb]
                            continue
                        x = c0 + gi * group
                        if sbytes > gbytes:
                            line[gi * sbytes + gbytes:(gi + 1) * sbytes] = self.rng.randbytes(sbytes - gbytes)
                        if in_rows and 0 <= x and x + group <= dims[0]:
                            src = base + x * bits // 8
                            line[gi * sbytes:gi * sbytes + gbytes] = host[src:src + gbytes]
                    at = smem + (z * box[1] + y) * row_smem
                    for k in range(0, row_smem, 16):
                        s = swizzle_bits(at + k, mode)
                        if s + 16 > dump:
                            raise LaunchError("a box past the probe's window")
                        img[s:s + 16] = line[k:k + 16]
                    written += row_smem
        status = 1 if written == tx else TIMEOUT_STATUS
        return bytes(img), status


class CudaBackend:
    def __init__(self):
        self.cu = cu = ctypes.CDLL(os.environ.get("TMA_LIBCUDA", "libcuda.so.1"))  # selfcheck: a stand-in
        self.ck("cuInit", cu.cuInit(0))
        dev = ctypes.c_int()
        self.ck("cuDeviceGet", cu.cuDeviceGet(ctypes.byref(dev), 0))
        major, minor = ctypes.c_int(), ctypes.c_int()
        cu.cuDeviceGetAttribute(ctypes.byref(major), 75, dev)  # COMPUTE_CAPABILITY_MAJOR
        cu.cuDeviceGetAttribute(ctypes.byref(minor), 76, dev)
        self.cc = (major.value, minor.value)
        ctx = ctypes.c_void_p()
        self.ck("cuDevicePrimaryCtxRetain", cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev))
        self.ck("cuCtxSetCurrent", cu.cuCtxSetCurrent(ctx))
        mod = ctypes.c_void_p()
        with open(os.path.join(DIR, "probe.cubin"), "rb") as h:
            image = h.read()
        self.ck("cuModuleLoadData", cu.cuModuleLoadData(ctypes.byref(mod), image))
        self.fn = ctypes.c_void_p()
        self.ck("cuModuleGetFunction", cu.cuModuleGetFunction(ctypes.byref(self.fn), mod, b"tma_probe"))
        self.ck("cuFuncSetAttribute", cu.cuFuncSetAttribute(self.fn, 8, MAX_SMEM))  # MAX_DYNAMIC_SHARED_SIZE_BYTES
        self.buffers = {}
        # 64-byte-aligned storage for the maps (cuTensorMapEncodeTiled's requirement).
        self.store = ctypes.create_string_buffer(256)
        self.tmap_addr = (ctypes.addressof(self.store) + 63) // 64 * 64

    @staticmethod
    def ck(what, r):
        if r != 0:
            raise LaunchError(f"{what}: CUresult {r}")

    def alloc(self, n):
        p = ctypes.c_uint64()
        self.ck("cuMemAlloc", self.cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(max(n, 16))))
        return p

    def buffer(self, key, n):
        if key in self.buffers and len(self.buffers[key][1]) >= n:
            return self.buffers[key]
        if key in self.buffers:
            self.cu.cuMemFree_v2(self.buffers[key][0])
        host = os.urandom(n)  # fresh random bytes each run
        g = self.alloc(n)
        self.ck("HtoD", self.cu.cuMemcpyHtoD_v2(g, host, ctypes.c_size_t(n)))
        self.buffers[key] = (g, host)
        return g, host

    def encode(self, handle, args):
        dtype, rank, dims, strides, box, estr, swizzle, l2 = args
        tmap = ctypes.c_void_p(self.tmap_addr)
        r = self.cu.cuTensorMapEncodeTiled(
            tmap, dtype, rank, ctypes.c_void_p(handle.value), (ctypes.c_uint64 * rank)(*dims),
            (ctypes.c_uint64 * max(rank - 1, 1))(*strides), (ctypes.c_uint32 * rank)(*box),
            (ctypes.c_uint32 * rank)(*estr), 0, swizzle, l2, 0)
        return r, (ctypes.c_uint8 * 128).from_buffer_copy(ctypes.string_at(self.tmap_addr, 128)) if r == 0 else None

    def launch(self, tmap, boxes, tx, dump, rank):
        cu = self.cu
        bx = (ctypes.c_uint32 * (4 * len(boxes)))(*[v & 0xFFFFFFFF for b in boxes for v in b])
        dbox = self.alloc(ctypes.sizeof(bx))
        dout = self.alloc(dump + 16)
        try:
            self.ck("HtoD", cu.cuMemcpyHtoD_v2(dbox, bx, ctypes.c_size_t(ctypes.sizeof(bx))))
            self.ck("memset", cu.cuMemsetD8_v2(dout, 0, ctypes.c_size_t(dump + 16)))
            outp, bp = ctypes.c_uint64(dout.value), ctypes.c_uint64(dbox.value)
            vals = [ctypes.c_uint32(v) for v in (len(boxes), tx, dump, rank)]
            ptrs = [tmap, outp, bp] + vals
            params = (ctypes.c_void_p * 7)(*[ctypes.cast(ctypes.byref(x), ctypes.c_void_p) for x in ptrs])
            self.ck("cuLaunchKernel", cu.cuLaunchKernel(self.fn, 1, 1, 1, 128, 1, 1, dump + 1024 + 16, None, params, None))
            self.ck("cuCtxSynchronize", cu.cuCtxSynchronize())
            got = (ctypes.c_uint8 * (dump + 16))()
            self.ck("DtoH", cu.cuMemcpyDtoH_v2(got, dout, ctypes.c_size_t(dump + 16)))
        finally:
            cu.cuMemFree_v2(dbox)
            cu.cuMemFree_v2(dout)
        got = bytes(got)
        return got[:dump], int.from_bytes(got[dump:dump + 4], "little")



# A stand-in for libcuda.so.1 (selfcheck builds it with cc): the entry points CudaBackend calls, with
# their C signatures, "device" memory in host memory, an H200-like cuTensorMapEncodeTiled (checks
# the documented requirements, refuses the sub-byte types and the 32-byte-atom swizzle) and a
# cuLaunchKernel that runs the probe's contract (fill with 0xA5, each box through the map with
# zero fill and the swizzle as address bits, status after the window). So the ctypes marshalling
# (arguments, kernel parameters in the probe's order, the map's alignment) is exercised through a
# real C ABI, and the TMA a third time, apart from both Python readings.
FAKE_CUDA = r"""
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
typedef struct { uint32_t magic, dtype, rank, swizzle; uint64_t addr, dims[3], strides[2]; uint32_t box[3]; } Map;
static int max_smem = 48 * 1024, loaded = 0;
static const char* fn_name = "tma_probe";
int cuInit(unsigned f) { return f ? 1 : 0; }
int cuDeviceGet(int* d, int o) { *d = o; return o ? 101 : 0; }
int cuDeviceGetAttribute(int* v, int a, int d) { *v = a == 75 ? 9 : a == 76 ? 0 : 0; return d ? 101 : 0; }
int cuDevicePrimaryCtxRetain(void** c, int d) { *c = (void*)0x1234; return d ? 101 : 0; }
int cuCtxSetCurrent(void* c) { return c == (void*)0x1234 ? 0 : 201; }
int cuModuleLoadData(void** m, const void* image) { if (!image || memcmp(image, "\x7f" "ELF", 4)) return 200; loaded = 1; *m = (void*)0x5678; return 0; }
int cuModuleGetFunction(void** f, void* m, const char* n) { if (m != (void*)0x5678 || strcmp(n, fn_name)) return 500; *f = (void*)0x9abc; return 0; }
int cuFuncSetAttribute(void* f, int a, int v) { if (f != (void*)0x9abc || a != 8 || v > 232448) return 1; max_smem = v; return 0; }
int cuMemAlloc_v2(uint64_t* p, size_t n) { void* q = aligned_alloc(256, (n + 255) / 256 * 256); if (!q) return 2; memset(q, 0x5a, n); *p = (uint64_t)(uintptr_t)q; return 0; }
int cuMemFree_v2(uint64_t p) { free((void*)(uintptr_t)p); return 0; }
int cuMemcpyHtoD_v2(uint64_t d, const void* s, size_t n) { memcpy((void*)(uintptr_t)d, s, n); return 0; }
int cuMemcpyDtoH_v2(void* d, uint64_t s, size_t n) { memcpy(d, (void*)(uintptr_t)s, n); return 0; }
int cuMemsetD8_v2(uint64_t d, unsigned char v, size_t n) { memset((void*)(uintptr_t)d, v, n); return 0; }
int cuCtxSynchronize(void) { return 0; }
static const int esize[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};
int cuTensorMapEncodeTiled(void* t, int dtype, unsigned rank, void* addr, const uint64_t* dims, const uint64_t* strides,
                           const unsigned* box, const unsigned* estr, int il, int sw, int l2, int oob) {
  if ((uintptr_t)t % 64 || (uintptr_t)addr % 16 || rank < 2 || rank > 3 || il || oob || l2 < 0 || l2 > 3) return 1;
  if (dtype < 0 || dtype > 12 || sw < 0 || sw > 3) return 1; /* an H200: no sub-byte types, no 32-byte atoms */
  uint64_t es = esize[dtype], span = sw ? 16u << sw : 0;
  for (unsigned i = 0; i < rank; ++i) {
    if (!dims[i] || dims[i] > (1ull << 32) || !box[i] || box[i] > 256 || estr[i] != 1) return 1;
    if (i + 1 < rank && (strides[i] % 16 || strides[i] >= (1ull << 40))) return 1;
  }
  if (box[0] * es % 16 || (span && box[0] * es > span) || strides[0] < dims[0] * es) return 1;
  Map m = {0x7a3a, (uint32_t)dtype, rank, (uint32_t)sw, (uint64_t)(uintptr_t)addr, {dims[0], dims[1], rank == 3 ? dims[2] : 1},
           {strides[0], rank == 3 ? strides[1] : 0}, {box[0], box[1], rank == 3 ? box[2] : 1}};
  memset(t, 0, 128);
  memcpy(t, &m, sizeof m);
  return 0;
}
static uint32_t swz(uint32_t a, int sw) { return sw ? a ^ ((a >> 3) & (((1u << sw) - 1) << 4)) : a; }
int cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                   unsigned smem_bytes, void* stream, void** params, void** extra) {
  if (f != (void*)0x9abc || !loaded || gx != 1 || gy != 1 || gz != 1 || bx != 128 || by != 1 || bz != 1 || stream || extra)
    return 1;
  const Map* m = (const Map*)params[0];
  uint64_t out = *(uint64_t*)params[1], boxes = *(uint64_t*)params[2];
  uint32_t nboxes = *(uint32_t*)params[3], tx = *(uint32_t*)params[4], dump = *(uint32_t*)params[5], rank = *(uint32_t*)params[6];
  if (m->magic != 0x7a3a || rank != m->rank || dump % 16 || smem_bytes < dump + 1024 + 16 || (int)smem_bytes > max_smem) return 1;
  uint8_t* sm = malloc(dump);
  memset(sm, 0xa5, dump);
  uint64_t written = 0, es = esize[m->dtype], row = m->box[0] * es;
  uint8_t* line = malloc(row);
  for (uint32_t b = 0; b < nboxes; ++b) {
    const int32_t* bx4 = (const int32_t*)(uintptr_t)(boxes + 16 * b);
    if (bx4[0] % 128) { free(sm); free(line); return 716; } /* misaligned address */
    for (uint32_t z = 0; z < m->box[2]; ++z)
      for (uint32_t y = 0; y < m->box[1]; ++y) {
        int64_t Y = (int64_t)bx4[2] + y, Z = (int64_t)bx4[3] + z;
        for (uint32_t x = 0; x < m->box[0]; ++x) {
          int64_t X = (int64_t)bx4[1] + x;
          int in = X >= 0 && X < (int64_t)m->dims[0] && Y >= 0 && Y < (int64_t)m->dims[1] && Z >= 0 && Z < (int64_t)m->dims[2];
          const uint8_t* src = (const uint8_t*)(uintptr_t)(m->addr + Z * m->strides[1] + Y * m->strides[0] + X * es);
          for (uint64_t k = 0; k < es; ++k) line[x * es + k] = in ? src[k] : 0;
        }
        uint32_t at = (uint32_t)bx4[0] + (z * m->box[1] + y) * (uint32_t)row;
        for (uint32_t k = 0; k < row; k += 16) {
          uint32_t s = swz(at + k, (int)m->swizzle);
          if (s + 16 > dump) { free(sm); free(line); return 700; } /* an illegal address */
          memcpy(sm + s, line + k, 16);
        }
        written += row;
      }
  }
  memcpy((void*)(uintptr_t)out, sm, dump);
  uint32_t status = written == tx ? 1 : 2;
  memcpy((void*)(uintptr_t)(out + dump), &status, 4);
  free(sm);
  free(line);
  return 0;
}
"""

# ---- one case -------------------------------------------------------------------------------------

def why_refused(backend, handle, m, args):
    """An encode the device refused: the mode or data type it lacks, or None for a bad map."""
    _, rank, dims, strides, box, estr, swizzle, l2 = args
    name = m["data_type"]
    if name in SUB_BYTE:
        # The same bytes as UINT8: a device without the type encodes that.
        bits = DTYPES[name][1]
        as_bytes = (0, rank, [dims[0] * bits // 8] + list(dims[1:]), strides, [box[0] * bits // 8] + list(box[1:]),
                    estr, swizzle, l2)
        if backend.encode(handle, as_bytes)[0] == 0:
            return (f"{name} is refused while the same bytes encode as CU_TENSOR_MAP_DATA_TYPE_UINT8: this device "
                    f"(compute capability {backend.cc[0]}.{backend.cc[1]}) lacks the sub-byte TMA types")
    if m["swizzle"] not in ("CU_TENSOR_MAP_SWIZZLE_NONE", "CU_TENSOR_MAP_SWIZZLE_32B", "CU_TENSOR_MAP_SWIZZLE_64B",
                            "CU_TENSOR_MAP_SWIZZLE_128B"):
        # Is it the swizzle mode alone? The same map with the 16-byte-atom 128B mode, and with each
        # 4-byte data type, to tell a device without the mode from a bad map.
        plain = backend.encode(handle, args[:6] + (3, l2))[0]
        alt = [backend.encode(handle, (t,) + args[1:])[0] for t in (2, 3, 7, 11)]  # UINT32, INT32, FLOAT32, TFLOAT32
        if plain == 0 and all(v != 0 for v in alt):
            return (f"{m['swizzle']} is refused for every 4-byte type while the same map encodes with "
                    f"CU_TENSOR_MAP_SWIZZLE_128B: this device lacks the mode")
    return None


def lacks_here(m, cc):
    """What a device before sm_100 lacks for this map (PTX ISA 9.1 §9.7.9.28, tensormap.replace's
    target notes: the element types 13-15 and the swizzle atomicity are sm_100a/sm_100f and later),
    or None."""
    if cc[0] >= 10:
        return None
    if m["data_type"] in SUB_BYTE:
        return (f"{m['data_type']} (.b4x16, .b4x16_p64, .b6x16_p32) is a TMA element type of sm_100a/sm_100f and "
                f"later, and this device is compute capability {cc[0]}.{cc[1]}")
    if m["swizzle"] == "CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B":
        return (f"the 32-byte swizzle atomicity is an sm_100a/sm_100f feature, and this device is compute capability "
                f"{cc[0]}.{cc[1]}")
    return None


def run_case(c, backend):
    """The case's record: ok, or unsupported_here, or what went wrong; controls where asked."""
    m = c["map"]
    rec = {"case": c["case"], "kind": c["expect"]["kind"], "family": c["family"], "swizzle": m["swizzle"],
           "data_type": m["data_type"], "rank": m["rank"], "box": m["box_dims"], "boxes": len(c["boxes"]), "ok": False}
    if "problem" in c:
        rec["error"] = c["problem"]
        return rec
    chunks = expected_chunks(c)
    skip, dump = layout(c, chunks)
    if dump + 1024 + 16 > MAX_SMEM:
        rec["error"] = f"the window of {dump} bytes does not fit in shared memory"
        return rec
    tx = box_bytes(m) * len(c["boxes"])
    handle, host = backend.buffer(c["spec"] + "/" + c["tensor"], c["buffer_bytes"])
    args = encode_args(m)
    r, tmap = backend.encode(handle, args)
    lacking = lacks_here(m, backend.cc)
    if r != 0:
        rec["error"] = f"cuTensorMapEncodeTiled: CUresult {r}"
        why = why_refused(backend, handle, m, args)
        if why or lacking:
            rec["unsupported_here"] = why or f"refused (CUresult {r}): {lacking}"
        return rec
    if lacking and not os.environ.get("TMA_TRY_UNSUPPORTED"):
        rec["unsupported_here"] = f"not run: {lacking} (the driver encodes the map; TMA_TRY_UNSUPPORTED=1 runs it)"
        return rec

    def launch(boxes):
        got, status = backend.launch(tmap, [[b[0] - skip, b[1], b[2], b[3]] for b in boxes], tx, dump, m["rank"])
        return wrong_chunks(chunks, skip, got, host, m["data_type"] == "CU_TENSOR_MAP_DATA_TYPE_TFLOAT32"), status

    bad, status = launch(c["boxes"])
    rec.update(chunks=len(chunks), wrong_chunks=len(bad), tx_bytes=tx,
               zero_filled=sum(1 for _, o, _ in chunks if o is None))
    problems = []
    if tx != 16 * len(chunks):
        problems.append(f"the boxes write {tx} bytes, the arrangement has {16 * len(chunks)}")
    if status != 1:
        problems.append("the mbarrier phase did not complete in 2 s" if status == TIMEOUT_STATUS else f"probe status {status}")
    if bad:
        problems.append(f"{len(bad)} of {len(chunks)} chunks wrong, the first at shared +{bad[0][0]} "
                        f"(global {'zero fill' if bad[0][1] is None else '+' + str(bad[0][1])})")
    if problems:
        rec["error"] = "; ".join(problems)
    rec["ok"] = not problems
    if rec["ok"] and c.get("control"):
        d = 2 if c["control"] == "row" else 3
        shifted, _ = launch([[v + (1 if i == d else 0) for i, v in enumerate(b)] for b in c["boxes"]])
        rec["control"] = {"kind": c["control"], "wrong_chunks": len(shifted), "caught": len(shifted) > 0}
    return rec


def verdict(rec):
    return "ok  " if rec["ok"] else "N/A " if "unsupported_here" in rec else "FAIL"


def summarize(cases, results):
    by = {}
    for c, r in zip(cases, results):
        k = f"{c['family']} {c['expect']['kind']}"
        by.setdefault(k, [0, 0, 0])[0 if r["ok"] else 1 if "unsupported_here" in r else 2] += 1
    for k, (ok, na, bad) in sorted(by.items()):
        print(f"  {k:16s} {ok:5d} ok {na:5d} N/A {bad:5d} failed")
    failed = sum(v[2] for v in by.values())
    controls = {}
    for r in results:
        if "control" in r:
            controls.setdefault(r["control"]["kind"], []).append(r)
    for kind, what in (("row", "every box one row further on"), ("plane", "every box one plane further on")):
        runs = controls.get(kind, [])
        if not runs or not all(r["control"]["caught"] for r in runs):
            failed += 1
            print(f"FAIL control ({what}): " + ("not run" if not runs else "not caught in " + ", ".join(
                r["case"] for r in runs if not r["control"]["caught"])))
        else:
            print(f"control ({what}): caught in {len(runs)} case(s), "
                  + ", ".join(f"{r['control']['wrong_chunks']}/{r['chunks']} chunks wrong" for r in runs))
    ok = sum(1 for r in results if r["ok"])
    na = sum(1 for r in results if "unsupported_here" in r)
    print(f"{ok}/{len(results)} TMA loads land where the layouts want every chunk; {na} N/A here "
          f"(a mode or type this device lacks); {failed} failed")
    return failed


# ---- run: worker processes -------------------------------------------------------------------------

def make_backend():
    kind = os.environ.get("TMA_BACKEND", "cuda")
    if kind == "cuda":
        return CudaBackend()
    return SimBackend(h200=kind.startswith("sim-h200"), refuse=kind != "sim-h200-encodes")


def worker(start):
    """Runs cases from `start`, one "R <json>" line each; exits 3 after a launch error (the context
    may be lost: the parent starts a fresh worker after that case), 4 when CUDA does not start."""
    with open(os.path.join(DIR, "cases.json")) as h:
        cases = json.load(h)
    crash = int(os.environ.get("TMA_SIM_CRASH", "-1"))  # testing the runner: die at this case
    fault = int(os.environ.get("TMA_SIM_FAULT", "-1"))  # testing the runner: a launch error at this case
    try:
        backend = make_backend()
    except (LaunchError, OSError) as e:
        print(f"the device does not start: {e}", flush=True)
        return 4
    for i in range(start, len(cases)):
        if i == crash:
            os._exit(7)
        try:
            if i == fault:
                raise LaunchError("cuCtxSynchronize: CUresult 700 (simulated)")
            rec = run_case(cases[i], backend)
        except LaunchError as e:
            rec = {"case": cases[i]["case"], "ok": False, "error": f"launch: {e}"}
            print("R " + json.dumps({"index": i, **rec}), flush=True)
            return 3
        except Exception as e:  # a bug in this script for one case: report it, go on
            rec = {"case": cases[i]["case"], "ok": False, "error": f"{type(e).__name__}: {e}"}
        print("R " + json.dumps({"index": i, **rec}), flush=True)
    return 0


def run(sim=None):
    out_dir = os.environ.get("OUT", DIR)
    with open(os.path.join(DIR, "cases.json")) as h:
        cases = json.load(h)
    env = dict(os.environ)
    if sim:
        env["TMA_BACKEND"] = sim
    results = [None] * len(cases)
    start, restarts, dead = 0, 0, 0
    while start < len(cases):
        p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "worker", str(start)], stdout=subprocess.PIPE,
                             text=True, env=env)
        last = start - 1
        for line in p.stdout:
            if not line.startswith("R "):
                sys.stdout.write(line)
                continue
            rec = json.loads(line[2:])
            i = rec.pop("index")
            results[i] = rec
            last = i
            print(f"{verdict(rec)} {json.dumps(rec)}", flush=True)
        rc = p.wait()
        if last + 1 >= len(cases):
            break
        if rc == 4 or (rc == 0 and last + 1 < len(cases)):
            print(f"FAIL the worker stopped (exit status {rc}) before case {last + 1}: not run from there", flush=True)
            break
        if rc != 3:
            # The worker died (no record) on the case after its last record: that case killed it.
            results[last + 1] = {"case": cases[last + 1]["case"], "ok": False,
                                 "error": f"the worker died (exit status {rc}) on this case"}
            print(f"FAIL {json.dumps(results[last + 1])}", flush=True)
            last += 1
        dead = dead + 1 if last == start else 0
        if dead >= 10:
            print("FAIL ten workers in a row died on their first case: giving up", flush=True)
            break
        start = last + 1
        restarts += 1
        if start < len(cases):
            print(f"(worker exit status {rc}: a fresh worker from case {start})", flush=True)
    for i, c in enumerate(cases):
        if results[i] is None:
            results[i] = {"case": c["case"], "ok": False, "error": "not run"}
    failed = summarize(cases, results)
    if restarts:
        print(f"{restarts} worker restart(s)")
    with open(os.path.join(out_dir, "tma-results.jsonl"), "w") as h:
        for rec in results:
            h.write(json.dumps(rec) + "\n")
    return 1 if failed else 0


# ---- selfcheck -------------------------------------------------------------------------------------

def selfcheck():
    """Every case through the simulator: the expectation must agree with TMA as the map describes it,
    and every box moved one row (and, rank 3, one plane) must be caught unless it only moves zero
    fill; maps with their swizzle dropped or their plane stride off must fail; the H200's missing
    modes and types must come out N/A with their reasons, and nothing else; and the runner with its
    CUDA back end, through a stand-in driver, must agree."""
    with open(os.path.join(DIR, "cases.json")) as h:
        cases = json.load(h)
    sim = SimBackend()
    bad, failed, weak, caught = set(), [], 0, 0

    def fail(case, why):
        if case:
            bad.add(case)
        failed.append(f"{case + ': ' if case else ''}{why}")

    # docs/spec.md's own examples of the factor formula.
    if (sf_byte(130, 5, 16), sf_byte(100, 6, 16)) != (2593, 590):
        fail(None, "the 128x4 byte formula disagrees with docs/spec.md's examples")

    for c in cases:
        m = c["map"]
        err = driver_check(*encode_args(m)[:7], 256)
        rec = run_case(dict(c, control=None), sim)
        if err or not rec["ok"]:
            fail(c["case"], err or rec.get("error"))
            continue
        chunks = expected_chunks(c)
        skip, dump = layout(c, chunks)
        _, host = sim.buffer(c["spec"] + "/" + c["tensor"], c["buffer_bytes"])
        _, tmap = sim.encode(c["spec"] + "/" + c["tensor"], encode_args(m))
        for d in ([2, 3] if m["rank"] == 3 else [2]):
            boxes = [[b[0] - skip] + [v + (1 if i == d else 0) for i, v in enumerate(b) if i] for b in c["boxes"]]
            got, _ = sim.launch(tmap, boxes, box_bytes(m) * len(boxes), dump, m["rank"])
            if wrong_chunks(chunks, skip, got, host):
                caught += 1
            elif all(o is None for _, o, _ in chunks) or (d == 3 and max(b[3] for b in c["boxes"]) + 1 >= m["global_dims"][2]):
                weak += 1  # only zero fill moves: nothing to see
            else:
                fail(c["case"], f"boxes one {'row' if d == 2 else 'plane'} off are not caught")
    # Maps the expectation must refute: the first 128B-swizzled case without its swizzle, and the
    # first scale and metadata cases past plane 0 with their plane stride 16 bytes off.
    mutants = []
    for c in cases:
        m = c["map"]
        if m["swizzle"] == "CU_TENSOR_MAP_SWIZZLE_128B" and m["data_type"] not in SUB_BYTE and not mutants:
            mutants.append(("without its swizzle", dict(c, map=dict(m, swizzle="CU_TENSOR_MAP_SWIZZLE_NONE"))))
    for kind in ("scale", "meta"):
        for c in cases:
            m = c["map"]
            if c["expect"]["kind"] == kind and min(b[3] for b in c["boxes"]) > 0:
                s = m["global_strides_bytes"]
                mutants.append((f"with its plane stride 16 bytes off", dict(c, map=dict(m, global_strides_bytes=[s[0], s[1] + 16]),
                                                                            buffer_bytes=c["buffer_bytes"] * 2)))
                break
    if len(mutants) != 3:
        fail(None, f"{len(mutants)} of the 3 mutant maps found")
    for what, c in mutants:
        if run_case(dict(c, control=None), SimBackend())["ok"]:
            fail(c["case"], f"the map {what} passes")
    # The H200 lacks the 32-byte-atom swizzle and the sub-byte types: N/A with a reason whether its
    # driver refuses the map or encodes it, and nothing else N/A.
    na = 0
    for h200 in (SimBackend(h200=True), SimBackend(h200=True, refuse=False)):
        for c in cases:
            rec = run_case(dict(c, control=None), h200)
            lacks = lacks_here(c["map"], (9, 0)) is not None
            if lacks != ("unsupported_here" in rec) or (not lacks and not rec["ok"]):
                fail(c["case"], f"on the simulated H200: {rec}")
            na += "unsupported_here" in rec and h200.h200
    # The whole runner (workers, CudaBackend's ctypes calls, the probe's parameters) against the
    # stand-in driver: H200-like, so the sub-byte and 32-byte-atom cases must come out N/A.
    fake, src, out = (os.path.join(DIR, x) for x in ("fakecuda.so", "fakecuda.c", "selfcheck-run"))
    with open(src, "w") as h:
        h.write(FAKE_CUDA)
    built = subprocess.run(["cc", "-std=c11", "-O2", "-Wall", "-Werror", "-shared", "-fPIC", src, "-o", fake],
                           capture_output=True, text=True)
    if built.returncode != 0:
        fail(None, f"the stand-in driver does not build:\n{built.stderr}")
    else:
        os.makedirs(out, exist_ok=True)
        results = os.path.join(out, "tma-results.jsonl")
        if os.path.exists(results):
            os.remove(results)
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "run"], capture_output=True, text=True,
                           env=dict(os.environ, TMA_LIBCUDA=fake, OUT=out))
        recs = [json.loads(x) for x in open(results)] if os.path.exists(results) else []
        expect_na = sum(1 for c in cases if lacks_here(c["map"], (9, 0)))
        got_na = sum(1 for x in recs if "unsupported_here" in x)
        if r.returncode != 0 or got_na != expect_na or len(recs) != len(cases):
            fail(None, f"run through the stand-in driver: exit status {r.returncode}, {len(recs)} records, {got_na} N/A "
                       f"(want {expect_na}):\n" + "\n".join(r.stdout.splitlines()[-12:]) + r.stderr[-2000:])
        else:
            print("run through the stand-in driver: " + r.stdout.splitlines()[-1])
    for f in failed:
        print("FAIL " + f)
    print(f"selfcheck: {len(cases) - len(bad)}/{len(cases)} cases agree with TMA simulated from their maps "
          f"({summary_counts(cases)}); {caught} shifted boxes caught, {weak} move only zero fill; "
          f"{len(mutants)} mutant maps refuted; {na} N/A on the simulated H200; {len(failed)} failures")
    return 1 if failed else 0


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["worker"] and len(args) == 2:
        sys.exit(worker(int(args[1])))
    if args == ["prepare"]:
        sys.exit(prepare())
    if args == ["selfcheck"]:
        sys.exit(selfcheck())
    if args[:1] == ["run"] and args[1:] in ([], ["--sim"], ["--sim-h200"], ["--sim-h200-encodes"]):
        sys.exit(run(args[1][2:] if len(args) > 1 else None))
    sys.exit(__doc__)
