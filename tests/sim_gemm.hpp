// A GEMM kernel (the gemm template) run by the simulator from its launch manifest, checked
// against a float64 product.
#pragma once

#include <array>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/sim.hpp"

namespace simtest {

struct GemmResult {
  std::string error;   // the simulator's Error, if it failed
  long checked = 0;    // elements of D compared
  double max_err = 0;  // max |D - reference|
  double worst = 0;    // max |D - reference| / bound (<= 1 passes)
  std::string where;   // the element at `worst`
  uint64_t ctas = 0;
  ksim::Stats stats;
};

// Problem sizes for a kernel with the manifest's tile and `stages` pipeline stages: two tiles in M
// and N with ragged edges (odd n: the one-element stores) and two K blocks, the second partial; then
// one tile, short of the edge in M and N (even n: the paired stores), with more K blocks than
// stages (the ring wraps, every barrier changes phase; k's tail partial).
// D reached through a tensor map (the TMA epilogue) needs rows 16 bytes apart: n is then rounded
// down to a multiple of 16 bytes of D (still short of the tile's edge).
std::vector<std::array<int64_t, 3>> gemm_sizes(const nlohmann::json& manifest, int stages);
// Elements of D in 16 bytes when a tensor map reaches D, else 1: n must be a multiple of it.
int64_t d_row_unit(const nlohmann::json& manifest);

// `multiprocessors`: a persistent kernel's grid is the launcher's, min(tiles, multiprocessors /
// cta_group) * cta_group CTAs, each walking several tiles when there are more; 0: one CTA (pair) per
// tile. A data-parallel kernel ignores it. `n` is D's width: a gated kernel's (swiglu, geglu; the
// manifest's derived size d) B then has 2 n rows, the gate's and up's.
GemmResult run_gemm(const ksim::Kernel& k, const nlohmann::json& manifest, int64_t m, int64_t n, int64_t kk, unsigned seed,
                    const ksim::Options& o = {}, int multiprocessors = 0);

}  // namespace simtest
