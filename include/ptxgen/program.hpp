// ptxgen/program.hpp — the program level of the spec (docs/spec.md, "The program level").
//
// Plain structs as parsed: global tensors, shared-memory tiles, tensor-memory allocations and
// views (links of a chain: slice, cast, alias, each naming or holding the view it derives from),
// and the ordered op list. Every field remembers the JSON pointer it came from, so the rule
// checks and the planner can point at it. Nothing here is resolved: lower/program.cpp lowers it into
// the kernel IR (ptxgen/ir.hpp), ir/views.cpp resolves views.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ptxgen/isa.hpp"
#include "ptxgen/math_fn.hpp"
#include "ptxgen/ref.hpp"
#include "ptxgen/tmem_view.hpp"

namespace ptxgen::spec {

// The storage of sub-byte elements and tensor memory's row layouts are ISA facts (ptxgen/isa.hpp);
// a name as written is the common vocabulary of spec and IR (ptxgen/ref.hpp).
using isa::SubByte;
using isa::storage_bits;
using isa::TmemLayout;
using isa::layout_f_alignment;
using ptxgen::Ref;
using ptxgen::TmemView;  // one link of a view chain (ptxgen/tmem_view.hpp)

// A problem size the kernel takes at run time (a .u32 parameter), and the spec's value of it,
// which the rules and the plan check against ("sizes": {"m": 4096}).
struct Size {
  std::string name, ptr;
  int64_t value = 0;
  // A size derived from another one ({"of": "k", "div": 2, "mul": 1}): ceil(of / div) * mul, which
  // the kernel computes from its parameter (no parameter of its own): the extents of scale-factor
  // and sparsity-metadata tensors, a compressed A, rows padded to whole tiles.
  Ref of;
  int64_t div = 1, mul = 1;
  // "exact": true -- `of` must be a multiple of `div`: the spec's value (PROGRAM-SIZE), and at run
  // time the launch header and `ptxgen simulate` refuse others (a loop whose last block would be
  // partial where the program cannot mask it: attention's keys).
  bool exact = false;
  std::string exact_ptr;
};

struct GlobalTensor {  // a kernel parameter: a row-major 2-D array
  std::string name, ptr, format_ptr;
  isa::DType dtype = isa::DType::bf16;
  SubByte format = SubByte::padded;
  int64_t rows = 0, cols = 0;  // the spec's extents (a named size's value)
  // Extents named by a size ("shape": ["m", "k"]): the kernel's at run time; "" static.
  std::string rows_size, cols_size;
};

struct SmemTile {  // a shared-memory tile: an M (or N) by K operand, or rows of bytes
  std::string name, ptr;
  isa::DType dtype = isa::DType::bf16;
  SubByte format = SubByte::padded;
  int rows = 0, cols = 0;  // "shape": [rows, cols]: rows along M/N, cols along K
  isa::Major major = isa::Major::k;
  isa::Swizzle swizzle = isa::Swizzle::none;
  uint32_t align = 0;      // bytes; 0 = derived (the swizzle pattern, at least 16)
  // A ring of `stages` copies: an op in a loop uses copy kb % stages in iteration kb, so loads of
  // the next blocks run ahead while the MMAs read this one.
  int stages = 1;
  std::string align_ptr, swizzle_ptr, major_ptr, format_ptr, stages_ptr;
};

// The gated activations ("activation": "swiglu" | "geglu" of the gemm template, docs/spec.md
// "Epilogues"; the ops "swiglu", "geglu" of a program, "Activations"): act(gate) * up.
enum class Glu : uint8_t { swiglu, geglu };
// A block-quantized format (docs/spec.md, "Block-quantized D"): MXFP8 (e4m3 or e5m2 elements) or
// MXFP4 (e2m1) with one ue8m0 factor per 32 consecutive elements of a row, or NVFP4 (e2m1) with
// one ue4m3 factor per 16, the factors in the 128x4 layout.
enum class Quantize : uint8_t { mxfp8, mxfp4, nvfp4 };

// The gated activations' names as the spec writes them, and the activation of each one's gate half.
inline std::string_view name(Glu g) { return g == Glu::swiglu ? "swiglu" : "geglu"; }
inline std::string_view name(Quantize q) { return q == Quantize::mxfp8 ? "mxfp8" : q == Quantize::mxfp4 ? "mxfp4" : "nvfp4"; }
// Elements per factor: 32 for the MX formats (OCP MX v1.0), 16 for NVFP4; and the factors' type.
inline int quantize_vec(Quantize q) { return q == Quantize::nvfp4 ? 16 : 32; }
inline isa::DType quantize_scale(Quantize q) { return q == Quantize::nvfp4 ? isa::DType::ue4m3 : isa::DType::ue8m0; }
inline Activation glu_gate(Glu g) { return g == Glu::swiglu ? Activation::silu : Activation::gelu_tanh; }

enum class OpKind : uint8_t { load, copy, mma, tmem_load, tmem_store, store, commit, wait, math, read, reduce, amax, quantize, fill, loop };
std::string_view name(OpKind k);

// Where a load puts the rows it reads in its tile (docs/spec.md, "M = 64"): in order, or in the
// lanes of data-path layout F (§9.7.16.10.5.6) that a 128-row copy of the tile gives them, so that
// a layout-F view of the copy reads them in order: row r of one M = 64 group at tile row
// 128 (r / 64) + 32 (r % 64 / 16) + r % 16 + the alignment (0 or 16), or (`layout_f`) two groups
// per 128-row slab, the first at alignment 0 and the second at 16 -- the gemm template's placement.
enum class Place : uint8_t { rows, layout_f_0, layout_f_16, layout_f };

// The run-time part of a load's or store's position along one dimension: multiples of the CTA's
// output tile row and column (a grid) and of the loop's iteration (a K loop), added to `at`.
struct AtStep {
  int64_t m_tile = 0, n_tile = 0, k_block = 0;
  bool any() const { return m_tile || n_tile || k_block; }
};

struct Op {
  OpKind kind = OpKind::load;
  std::string ptr;  // "/program/ops/3"
  Ref src, dst;     // load, copy, tmem_load (src), tmem_store (dst), store (dst)
  Ref regs;         // tmem_load, tmem_store, store, math, read
  // fill (docs/spec.md, "Register sets carried across the loop"): `regs` holds the elements a
  // tmem_load of the view `like` (with this op's shape, num and warps) would give it, each the
  // constant value[0]; no tensor memory is read.
  // read (docs/spec.md, "Arithmetic"): the register set whose elements `regs` takes, each read from
  // the global tensor `src` at `at` (+ per_cta) plus the element's row and column (an extent of 1
  // broadcasts).
  Ref like;
  // amax (docs/spec.md, "Arithmetic"): the one-element f32 tensor `dst` raised to the largest
  // |element| of the register set `a` that lies inside the global `of` where a store at `at`
  // (+ per_cta) would write it. quantize: regs = `a` over its blocks' factors (the format
  // `quantize`), the factors of the blocks inside `of` to `dst` in the 128x4 layout.
  Ref of;
  std::optional<Quantize> quantize;
  std::string quantize_ptr;
  // reduce: regs = the reduction `reduce_fn` of each row of `a`, in every element of the row.
  ReduceFn reduce_fn = ReduceFn::max;
  std::string reduce_fn_ptr;
  Ref barrier;      // commit, wait
  std::array<int64_t, 2> at{0, 0};  // load / store: first row and column in the global tensor
  std::array<AtStep, 2> at_step{};  // ... plus these multiples of the tile and the iteration
  std::string at_ptr;
  bool has_at = false;  // the spec writes "at" (at_ptr names a member that exists)
  // load / store in a CTA pair: CTA r of the pair starts at `at` + r * per_cta (rows, columns).
  std::array<int64_t, 2> per_cta{0, 0};
  std::string per_cta_ptr;
  bool has_per_cta = false;
  // load: "via": "tma" -- one thread issues cp.async.bulk.tensor boxes and all threads wait on an
  // mbarrier the planner adds; "ld" (the default) -- every thread moves 16-byte chunks.
  // store: "via": "tma" -- the registers (one 128-byte box of each of their rows) go through a
  // stage of the shared-memory tile `stage` (128-byte swizzled, the global's dtype) and one thread
  // of the role writes the box with cp.async.bulk.tensor, which clips it to the global's extents.
  bool tma = false;
  std::string via_ptr;
  Ref stage;
  // load: "place": where the rows it reads go in the tile; place_ptr "" when the spec is silent.
  Place place = Place::rows;
  std::string place_ptr;
  std::optional<std::array<int64_t, 2>> rows, cols;  // copy: source rows / columns (K elements)
  std::string rows_ptr, cols_ptr;
  // mma
  Ref a, b, d;
  bool accumulate = false;
  // In a loop: D = A x B in the first iteration, D += A x B after ("accumulate": "after_first").
  bool accumulate_after_first = false;
  std::string accumulate_ptr;
  Ref scale_a, scale_b, metadata;
  int vec = 32;
  std::string vec_ptr, scale_ptr, sparse_ptr;
  std::optional<isa::Kind> kind_override;
  std::string kind_ptr;
  // tmem_load / tmem_store
  std::optional<isa::LdShape> shape;
  std::optional<int> num;
  bool pack = false;  // .pack::16b (load) / .unpack::16b (store)
  std::vector<int> warps;
  std::string shape_ptr, num_ptr, pack_ptr, warps_ptr;
  // math (docs/spec.md, "Arithmetic"): regs = fn(a[, b[, c]]) element by element, over register
  // sets `a`, `b`, `c` (the mma fields a, b name register sets here); "approx": the .approx form.
  MathFn fn = MathFn::add;
  Ref c;
  // A constant operand ("b": 0.5) instead of a register set, for a, b, c in that order; its Ref
  // keeps the pointer only.
  std::array<std::optional<double>, 3> value;
  bool approx = false;
  std::string approx_ptr;
  // convert ({"op": "convert", "regs": h, "a": x, "dtype": "bf16x2"}, docs/spec.md, "Packed
  // half-precision arithmetic"): the 16-bit float of the pairs the result holds (bf16 or f16).
  isa::DType convert_to = isa::DType::bf16;
  std::string dtype_ptr;
  // An activation ({"op": "gelu_tanh", "regs": y, "a": x, "approx": true}, docs/spec.md,
  // "Activations"): regs = act(a) element by element, a named composition of the functions above
  // (activations(), ptxgen/math_fn.hpp) that the lowering expands step by step; `fn` is unused.
  std::optional<Activation> activation;
  // A gated activation ({"op": "swiglu", "regs": y, "a": gate, "b": up, "approx": true}): regs =
  // act(a) * b, `activation` the gate's (glu_gate).
  std::optional<Glu> glu;
  // The warp role that runs the op (a program with "roles"; "" otherwise).
  Ref role;
  // loop: `body` once per K block of the size `over` (max(1, ceil(over / block)) iterations), or
  // `trips` times; the iteration is each body op's k_block.
  Ref over;
  int64_t block = 0, trips = 0;
  std::string block_ptr, trips_ptr, body_ptr;
  std::vector<Op> body;
};

// The name an elementwise op is written with: its function's ("exp2") or its activation's ("gelu_tanh").
inline std::string_view math_name(const Op& o) {
  return o.glu ? name(*o.glu) : o.activation ? info(*o.activation).name : info(o.fn).name;
}

// A set of warps running the ops that name it, at the same time as the other roles. ptxgen plans
// the mbarriers between the roles (docs/spec.md, "Loops and roles").
struct Role {
  std::string name, ptr;
  std::vector<int> warps;  // consecutive warps (rule PROGRAM-ROLE)
  std::string warps_ptr;
};

// One CTA (pair) per output tile of an M x N problem: tile rows walk the size `m`, columns `n`.
struct Grid {
  std::string ptr;
  int64_t tile_m = 0, tile_n = 0;
  Ref m, n;  // sizes (default "m" and "n")
  int raster = 1;
  std::string tile_ptr, raster_ptr;
};

struct Program {
  int threads = 128;
  std::string threads_ptr;
  // 1: one CTA. 2: a CTA pair (§9.7.16.5), one cluster of two CTAs running the same ops on their own
  // shared and tensor memory; CTA 0 issues tcgen05.cp/mma/commit with .cta_group::2 for both.
  int cta_group = 1;
  std::string cta_group_ptr;
  std::vector<Size> sizes;             // .u32 parameters after the tensors, in name order
  std::string sizes_ptr;
  std::optional<Grid> grid;
  std::vector<GlobalTensor> globals;  // kernel parameters, in name order
  std::vector<SmemTile> smem;
  std::vector<TmemView> views;        // named views (in name order) and inline views
  std::vector<Role> roles;            // in name order
  std::string roles_ptr;
  std::vector<Op> ops;
};

}  // namespace ptxgen::spec
