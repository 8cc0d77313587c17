"""What tools/h200-grid.py and tools/bench-h200.py share: the sm_90a gemm spec their cases patch, and
ptxas's spill report of the kernels they build."""
import copy


def base(m=4096, n=4096, k=4096):
    """The sm_90a bf16 gemm spec (128 x 256 x 64, 4 stages, 128-byte swizzles) for m x n x k."""
    return {
        "ptxgen": 1, "name": "", "target": "sm_90a",
        "gemm": {"m": m, "n": n, "k": k,
                 "a": {"dtype": "bf16", "major": "k"}, "b": {"dtype": "bf16", "major": "k"},
                 "d": {"dtype": "bf16"}, "accumulator": "f32",
                 "tile": {"m": 128, "n": 256, "k": 64}, "stages": 4, "swizzle": {"a": 128, "b": 128}},
    }


def merge(a, p, keep_none=False):
    """Patches dict a with p in place, objects member by member; None removes the member (or, with
    keep_none, is kept: a patch built from patches still removes it from the spec)."""
    for key, v in p.items():
        if v is None and keep_none:
            a[key] = None
        elif v is None:
            a.pop(key, None)
        elif isinstance(v, dict) and isinstance(a.get(key), dict):
            merge(a[key], v, keep_none)
        else:
            a[key] = copy.deepcopy(v)


def write_specs(directory, prefix, cases, spec_base):
    """Writes one spec per (name, gemm patch) under directory/specs: spec_base patched, named
    prefix + name. Returns [(name, spec, path)]."""
    import json
    import os
    os.makedirs(os.path.join(directory, "specs"), exist_ok=True)
    out = []
    for name, patch in cases:
        spec = copy.deepcopy(spec_base)
        spec["name"] = prefix + name
        merge(spec["gemm"], patch)
        path = os.path.join(directory, "specs", name + ".json")
        with open(path, "w") as f:
            json.dump(spec, f, indent=1)
        out.append((name, spec, path))
    return out


def spills(ptxgen, paths):
    """Builds each spec alone (ptxas's resource report) and returns 'NAME: N bytes' for those whose
    kernel spills registers (a fused epilogue's registers compete with the accumulator's), and
    'NAME: wgmma serialized' for those where ptxas serializes the wgmmas (its C7514: registers of
    a wgmma in flight read or written on some path)."""
    import os
    import re
    import subprocess
    import sys
    import tempfile
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for path in paths:
            name = os.path.splitext(os.path.basename(path))[0]
            cubin = os.path.join(tmp, name + ".cubin")
            r = subprocess.run([ptxgen, "build", path, "-o", cubin, "-q"], capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit("ptxgen build %s failed:\n%s%s" % (path, r.stdout, r.stderr))
            report = open(os.path.join(tmp, name + ".ptxas.txt")).read()
            stores = [int(x) for x in re.findall(r"(\d+) bytes spill stores", report)]
            if any(stores):
                out.append("%s: %d bytes" % (name, max(stores)))
            if "C7514" in report:
                out.append("%s: wgmma serialized" % name)
    return out
