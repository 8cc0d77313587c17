#!/usr/bin/env python3
"""Proof on hardware for the program level's TMA loads ("via": "tma"), on an H200.

No sm_100a machine is at hand, but the tensor memory accelerator and cuTensorMapEncodeTiled are the
same on sm_90a. This runs each TMA load ptxgen plans for a program -- the tensor map exactly as the
manifest describes it, the boxes at the shared-memory offsets and coordinates the plan gives -- on
the H200 through a small sm_90a probe kernel, and checks the shared-memory image byte for byte
against the tile's canonical arrangement (§9.7.16.3.3) swizzled as the PTX ISA's §5.5.7 tables say.
That is what the sm_100a kernels' tcgen05 descriptors read. The probe kernel is this script's, not
ptxgen's output: what is under test is the plan, the manifest and our reading of the swizzle.

  tools/h200-tma.py prepare   # here: every shipped program spec with all loads by TMA, plus tall
                              # and odd tiles; writes .device/tma/ (ignored by git, carried)
  tools/h200-tma.py run       # on the GPU machine: encode, launch, compare; $OUT/tma-results.jsonl
"""
import ctypes
import json
import os
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


def run_ptxgen(*args):
    r = subprocess.run([PTXGEN, *args], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"ptxgen {' '.join(args)} failed:\n{r.stdout}{r.stderr}")
    return r.stdout


def programs():
    for f in sorted(os.listdir(os.path.join(ROOT, "specs"))):
        if f.startswith("prog_") and f.endswith(".json"):
            with open(os.path.join(ROOT, "specs", f)) as h:
                yield f[:-5], json.load(h)
    for name, gshape, tshape, major, sw, at in EXTRA:
        j = json.loads(json.dumps(EXAMPLE))
        j["program"]["globals"]["X"] = {"dtype": "bf16", "shape": gshape}
        j["program"]["smem"]["x"] = {"dtype": "bf16", "shape": tshape, "major": major, "swizzle": sw}
        j["program"]["ops"].insert(0, {"op": "load", "src": "X", "dst": "x", "at": at})
        yield "extra_" + name, j


def prepare():
    os.makedirs(DIR, exist_ok=True)
    cases = []
    for name, j in programs():
        j["name"] = name
        for o in j["program"]["ops"]:
            if o["op"] == "load":
                o["via"] = "tma"
        spec = os.path.join(DIR, name + ".json")
        with open(spec, "w") as h:
            json.dump(j, h, indent=1)
        manifest = json.loads(run_ptxgen("manifest", spec, "-o", "-"))
        plan = json.loads(run_ptxgen("plan", "--json", spec))
        maps = {m["param"]: m for m in manifest["tensor_maps"]}
        ranks = manifest["cluster"][0]
        for st in plan["roles"][0]["steps"]:
            if st["step"] != "load":
                continue
            ld = st["load"]
            tma = ld["tma"]
            t = manifest["tensors"][ld["global"]]
            row_bytes = (t["shape"][1] * t["storage_bits"] + 7) // 8
            for rank in range(ranks):
                cc = tma.get("cta_coords", [0, 0])
                cases.append({
                    "case": f"{name}/op{st['op']}/cta{rank}", "map": maps[tma["tensor_map"]],
                    "global_rows": t["shape"][0], "global_row_bytes": row_bytes,
                    "boxes": [[b["smem"], b["coords"][0] + rank * cc[0], b["coords"][1] + rank * cc[1]] for b in tma["boxes"]],
                    "arrangement": ld["arrangement"], "row0": ld["row0"], "cta_bytes": rank * ld.get("cta_bytes", 0),
                })
    with open(os.path.join(DIR, "cases.json"), "w") as h:
        json.dump(cases, h)
    with open(os.path.join(DIR, "probe.ptx"), "w") as h:
        h.write(PROBE)
    subprocess.run(["ptxas", "-arch=sm_90a", os.path.join(DIR, "probe.ptx"), "-o", os.path.join(DIR, "probe.cubin")],
                   check=True)
    print(f"{len(cases)} TMA loads in {DIR}")


# The probe: thread 0 arms an mbarrier with `tx` bytes and issues one cp.async.bulk.tensor.2d per
# box (shared offset, coordinate 0, coordinate 1 from a global array) into a 1024-byte-aligned
# base; everyone waits for the phase and copies `dump` bytes of shared memory out.
PROBE = r"""
.version 8.6
.target sm_90a
.address_size 64
.extern .shared .align 16 .b8 smem[];
.visible .entry tma_probe(.param .align 64 .b8 tmap[128], .param .u64 out, .param .u64 boxes,
                          .param .u32 nboxes, .param .u32 tx, .param .u32 dump)
.reqntid 128, 1, 1
{
  .reg .pred %p<4>;
  .reg .b32 %r<24>;
  .reg .b64 %rd<12>;
  mov.u32 %r0, %tid.x;
  mov.u32 %r1, smem;
  add.u32 %r2, %r1, 1023;
  and.b32 %r2, %r2, -1024;
  ld.param.u32 %r3, [dump];
  add.u32 %r4, %r2, %r3;
  add.u32 %r4, %r4, 7;
  and.b32 %r4, %r4, -8;
  setp.ne.u32 %p0, %r0, 0;
  @%p0 bra ISSUED;
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
  mov.u32 %r7, 0;
LOOP:
  setp.ge.u32 %p1, %r7, %r6;
  @%p1 bra ISSUED;
  mul.wide.u32 %rd3, %r7, 12;
  add.u64 %rd4, %rd2, %rd3;
  ld.global.u32 %r8, [%rd4];
  ld.global.u32 %r9, [%rd4+4];
  ld.global.u32 %r10, [%rd4+8];
  add.u32 %r11, %r2, %r8;
  cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r11], [%rd1, {%r9, %r10}], [%r4];
  add.u32 %r7, %r7, 1;
  bra LOOP;
ISSUED:
  bar.sync 0;
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r4], 0;
  @!%p2 bra WAIT;
  ld.param.u64 %rd5, [out];
  cvta.to.global.u64 %rd5, %rd5;
  shl.b32 %r12, %r0, 4;
COPY:
  setp.ge.u32 %p3, %r12, %r3;
  @%p3 bra DONE;
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

SWIZZLE_ENUM = {"CU_TENSOR_MAP_SWIZZLE_NONE": 0, "CU_TENSOR_MAP_SWIZZLE_32B": 1, "CU_TENSOR_MAP_SWIZZLE_64B": 2,
                "CU_TENSOR_MAP_SWIZZLE_128B": 3, "CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B": 4}
DTYPE_ENUM = {"CU_TENSOR_MAP_DATA_TYPE_UINT8": 0, "CU_TENSOR_MAP_DATA_TYPE_UINT32": 2}
L2_ENUM = {"CU_TENSOR_MAP_L2_PROMOTION_L2_256B": 3}


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


def expected_chunks(c):
    """(shared offset, global offset) of each 16-byte chunk: the canonical arrangement."""
    a = c["arrangement"]
    rows, rb, bb = a["rows"], a["row_bytes"], a["box_bytes"]
    for r in range(rows):
        for b in range(0, rb, 16):
            off = a["tile_offset"] + (b // bb) * rows * bb + r * bb + b % bb
            src = (c["row0"] + r) * a["global_row_bytes"] + a["col0_bytes"] + b + c["cta_bytes"]
            yield swizzled(off, a["swizzle"]), src


def run():
    out_dir = os.environ.get("OUT", DIR)
    with open(os.path.join(DIR, "cases.json")) as h:
        cases = json.load(h)
    cu = ctypes.CDLL("libcuda.so.1")

    def ck(what, r):
        if r != 0:
            raise RuntimeError(f"{what}: CUresult {r}")

    ck("cuInit", cu.cuInit(0))
    dev = ctypes.c_int()
    ck("cuDeviceGet", cu.cuDeviceGet(ctypes.byref(dev), 0))
    ctx = ctypes.c_void_p()
    ck("cuDevicePrimaryCtxRetain", cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev))
    ck("cuCtxSetCurrent", cu.cuCtxSetCurrent(ctx))
    mod = ctypes.c_void_p()
    with open(os.path.join(DIR, "probe.cubin"), "rb") as h:
        image = h.read()
    ck("cuModuleLoadData", cu.cuModuleLoadData(ctypes.byref(mod), image))
    fn = ctypes.c_void_p()
    ck("cuModuleGetFunction", cu.cuModuleGetFunction(ctypes.byref(fn), mod, b"tma_probe"))
    ck("cuFuncSetAttribute", cu.cuFuncSetAttribute(fn, 8, 232448))  # MAX_DYNAMIC_SHARED_SIZE_BYTES

    def alloc(n):
        p = ctypes.c_uint64()
        ck("cuMemAlloc", cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(max(n, 16))))
        return p

    results, failed, controlled, control = [], 0, False, None
    for c in cases:
        m = c["map"]
        gbytes = c["global_rows"] * c["global_row_bytes"]
        host = os.urandom(gbytes)  # fresh random bytes each run
        g = alloc(gbytes)
        ck("HtoD", cu.cuMemcpyHtoD_v2(g, host, ctypes.c_size_t(gbytes)))
        tmap = (ctypes.c_uint8 * 128)()
        dims = (ctypes.c_uint64 * 2)(*m["global_dims"])
        strides = (ctypes.c_uint64 * 1)(*m["global_strides_bytes"])
        box = (ctypes.c_uint32 * 2)(*m["box_dims"])
        estr = (ctypes.c_uint32 * 2)(1, 1)
        r = cu.cuTensorMapEncodeTiled(tmap, DTYPE_ENUM[m["data_type"]], 2, ctypes.c_void_p(g.value), dims, strides,
                                      box, estr, 0, SWIZZLE_ENUM[m["swizzle"]], L2_ENUM[m["l2_promotion"]], 0)
        rec = {"case": c["case"], "swizzle": m["swizzle"], "data_type": m["data_type"], "box": m["box_dims"],
               "boxes": len(c["boxes"])}
        if r != 0:
            rec.update(ok=False, error=f"cuTensorMapEncodeTiled: CUresult {r}")
            # Is it the swizzle mode alone? The same map with the 16-byte-atom 128B mode and with
            # each 4-byte data type, to tell a device without the mode from a bad map.
            other = (ctypes.c_uint8 * 128)()
            plain = cu.cuTensorMapEncodeTiled(other, DTYPE_ENUM[m["data_type"]], 2, ctypes.c_void_p(g.value), dims, strides,
                                              box, estr, 0, 3, L2_ENUM[m["l2_promotion"]], 0)
            alt = {t: cu.cuTensorMapEncodeTiled(other, t, 2, ctypes.c_void_p(g.value), dims, strides, box, estr, 0,
                                                SWIZZLE_ENUM[m["swizzle"]], L2_ENUM[m["l2_promotion"]], 0)
                   for t in (2, 3, 7, 11)}  # UINT32, INT32, FLOAT32, TFLOAT32
            if plain == 0 and m["swizzle"] != "CU_TENSOR_MAP_SWIZZLE_128B" and all(v != 0 for v in alt.values()):
                rec["unsupported_here"] = f"{m['swizzle']} is refused for every 4-byte type while the same map encodes with CU_TENSOR_MAP_SWIZZLE_128B: this device lacks the mode"
        else:
            # Shared memory from the 1024-byte line below the tile (every swizzle pattern repeats
            # within 1024 bytes, so the image is the same there).
            skip = min(b[0] for b in c["boxes"]) // 1024 * 1024
            chunks = [(s - skip, o) for s, o in expected_chunks(c)]
            dump = max(s for s, _ in chunks) + 16
            tx = 16 * len(chunks)

            def launch(boxes):
                """The chunks that differ from the expectation after the probe writes `boxes`."""
                bx = (ctypes.c_uint32 * (3 * len(boxes)))(*[v for b in boxes for v in (b[0] - skip, b[1], b[2])])
                dbox = alloc(ctypes.sizeof(bx))
                ck("HtoD", cu.cuMemcpyHtoD_v2(dbox, bx, ctypes.c_size_t(ctypes.sizeof(bx))))
                dout = alloc(dump)
                ck("memset", cu.cuMemsetD8_v2(dout, 0, ctypes.c_size_t(dump)))
                outp, bp = ctypes.c_uint64(dout.value), ctypes.c_uint64(dbox.value)
                nb, txv, dv = ctypes.c_uint32(len(boxes)), ctypes.c_uint32(tx), ctypes.c_uint32(dump)
                params = (ctypes.c_void_p * 6)(*[ctypes.cast(ctypes.byref(x), ctypes.c_void_p) for x in (tmap, outp, bp, nb, txv, dv)])
                ck("cuLaunchKernel", cu.cuLaunchKernel(fn, 1, 1, 1, 128, 1, 1, dump + 1024 + 16, None, params, None))
                ck("cuCtxSynchronize", cu.cuCtxSynchronize())
                got = (ctypes.c_uint8 * dump)()
                ck("DtoH", cu.cuMemcpyDtoH_v2(got, dout, ctypes.c_size_t(dump)))
                for p in (dbox, dout):
                    cu.cuMemFree_v2(p)
                got = bytes(got)
                return [(s, o) for s, o in chunks if got[s:s + 16] != host[o:o + 16]]

            bad = launch(c["boxes"])
            rec.update(ok=not bad, chunks=len(chunks), wrong_chunks=len(bad), tx_bytes=tx)
            if bad:
                rec["first_wrong"] = {"smem": bad[0][0], "global": bad[0][1]}
            # A control, once: the same boxes one row further on must be caught.
            if not controlled and not bad:
                shifted = launch([[b[0], b[1], b[2] + 1] for b in c["boxes"]])
                controlled = True
                control = {"case": c["case"] + " (control: every box one row further on)", "ok": len(shifted) > 0,
                           "wrong_chunks": len(shifted), "chunks": len(chunks)}
        cu.cuMemFree_v2(g)
        failed += 0 if rec["ok"] or "unsupported_here" in rec else 1
        results.append(rec)
        print(("ok   " if rec["ok"] else "N/A  " if "unsupported_here" in rec else "FAIL ") + json.dumps(rec))
    ok = sum(1 for r in results if r["ok"])
    lacking = sum(1 for r in results if "unsupported_here" in r)
    print(f"{ok}/{len(results)} TMA loads land where the canonical layout wants every chunk; "
          f"{lacking} use a swizzle mode this device lacks; {failed} failed")
    if not control or not control["ok"]:
        failed += 1
        print("FAIL the control (boxes one row off) was not run or not caught")
    else:
        print(f"control: boxes one row off leave {control['wrong_chunks']}/{control['chunks']} chunks wrong, as they must")
        results.append(control)
    with open(os.path.join(out_dir, "tma-results.jsonl"), "w") as h:
        for rec in results:
            h.write(json.dumps(rec) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in ("prepare", "run"):
        sys.exit(__doc__)
    sys.exit(prepare() if sys.argv[1] == "prepare" else run())
