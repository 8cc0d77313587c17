// The checks of the rule table for structured-sparse A in the gemm template ("sparse", docs/spec.md
// "Sparse A"). Each reports under its own rule id with the pointer of the field to change.
#include <string>

#include "context.hpp"

namespace ptxgen::rules {

namespace {

std::string num(int64_t v) { return std::to_string(v); }

// The sparse kinds the template plans: every tcgen05 kind. .kind::f16 and .kind::tf32 read one
// metadata column per instruction, picked by the sparsity selector; .kind::f8f6f4, .kind::i8 and
// the block-scaled kinds two, selector 0 (§9.7.16.10.8.4). Each kind's metadata comes in CUTLASS's
// atoms of 128 rows by isa::sparse_atom_k elements of K (docs/spec.md, "Sparse A"). A spec without
// a kind is MMA-KIND's or SCALE-KIND's.
bool planned_kind(const Context& c) { return c.kind && c.gemm; }

const spec::Gemm* sparse(const Context& c) {
  const spec::Gemm* g = c.gemm;
  return g && g->sparse && c.target.tcgen05 ? g : nullptr;
}

}  // namespace

void check_sparse_target(const Context& c, Diagnostics& d) {
  if (!c.gemm || !c.gemm->sparse || c.target.tcgen05) return;
  d.error("SPARSE-TARGET", "/gemm/sparse",
          "sparse A is planned for tcgen05.mma.sp (metadata in tensor memory); on " + std::string(c.target.name) +
              " ptxgen plans no wgmma.sp")
      .help = {"target sm_100a, sm_100f, sm_103a or sm_110a", "or drop \"sparse\" and store A dense"};
}

// A sparse block-scaled MMA computes twice the K of the dense one with as many factors (Table 56), so
// each factor covers twice the elements of K: 64 for MXFP8 (not the 32 of the dense kind), 32 or 64
// for the e2m1 kinds. A scale type the kind never takes is SCALE-TYPE's.
void check_sparse_kind(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = sparse(c);
  if (!g || !g->scale || g->scale->blockwise() || !c.kind) return;
  const isa::DType t = g->scale->dtype;
  if (isa::scale_factors_per_instr(*c.kind, t, isa::stored_scale_vec(g->scale->vec, true))) return;
  if (!isa::scale_factors_per_instr(*c.kind, t, 16) && !isa::scale_factors_per_instr(*c.kind, t, 32)) return;
  std::string fix;
  for (int v : {32, 64})
    if (isa::scale_factors_per_instr(*c.kind, t, v / 2))
      fix += std::string(fix.empty() ? "use " : " or ") + "\"vec\": " + num(v);
  d.error("SPARSE-KIND", "/gemm/scale/vec",
          "a sparse .kind::" + std::string(isa::name(*c.kind)) + " MMA has no block size " + num(g->scale->vec) + " with " +
              std::string(isa::name(t)) + " scale factors: it computes twice the K of the dense instruction with as many "
              "factors (Table 56), so it takes " + isa::scale_combinations_text(*c.kind, true) +
              ", each factor over the elements of K that hold 16 or 32 of A's stored ones")
      .help = {fix + " (factor tensors in the 128x4 layout over that block, as CUTLASS's sparse block-scaled kernels take)",
               "or drop \"sparse\" (block-scaled dense A at the dense block sizes)"};
}

void check_sparse_tile(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = sparse(c);
  if (!g || !planned_kind(c)) return;
  if (g->a.major != isa::Major::k) {
    d.error("SPARSE-TILE", "/gemm/a/major",
            "sparse A is stored K-major: each row keeps " +
                std::string(*c.kind == isa::Kind::tf32 ? "one of every two" : "two of every four") +
                " of its elements along K, and its metadata follows the rows (§9.7.16.10.8)")
        .help = {"store the compressed A as M x K/2 with K contiguous (\"major\": \"k\")"};
  } else if (g->a_source != spec::ASource::smem) {
    d.error("SPARSE-TILE", "/gemm/a_source", "sparse A is read from shared memory; ptxgen does not copy it into tensor memory")
        .help = {"use \"a_source\": \"smem\""};
  } else if (const int ak = isa::sparse_atom_k(*c.kind); g->tile.k % ak != 0) {
    d.error("SPARSE-TILE", "/gemm/tile/k",
            "tile.k = " + num(g->tile.k) + " is not whole metadata atoms: the metadata of .kind::" + std::string(isa::name(*c.kind)) +
                " comes in atoms of 128 rows by " + num(ak) + " elements of K (16 bytes a row: 4 bits per chunk of " +
                num(ak / 32) + "), one tcgen05.cp.128x128b each")
        .help = {"use a tile.k that is a multiple of " + num(ak)};
  }
}

void check_sparse_k(const Context& c, Diagnostics& d) {
  const spec::Gemm* g = sparse(c);
  if (!g || !planned_kind(c) || g->tile.k % isa::sparse_atom_k(*c.kind) != 0 || g->k % g->tile.k == 0) return;
  d.error("SPARSE-K", "/gemm/k",
          "k = " + num(g->k) + " is not a multiple of tile.k = " + num(g->tile.k) + ": the MMAs read every K block's metadata "
          "whole, and the zero fill TMA gives past k is no valid metadata (" +
              (*c.kind == isa::Kind::tf32 ? "each 4-bit index is 0b0100 or 0b1110, §9.7.16.10.8.1)"
                                          : "each 4-bit index pair is one of seven values, §9.7.16.10.8.2)"))
      .help = {"pad K to a multiple of " + num(g->tile.k) + " (zero values of A and B, valid metadata)",
               "or use a tile.k that divides k"};
}

}  // namespace ptxgen::rules
