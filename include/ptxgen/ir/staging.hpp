// How a wgmma kernel's TMA epilogue writes D into shared memory before the TMA store: the one
// place that decides it, asked by the gemm stage chooser (src/spec/defaults.cpp), the lowering
// (the staging tile's size, src/lower/gemm.cpp) and the planner (plan::StoreStep, which the
// emitter only reads).
#pragma once

#include <cstdint>
#include <string>

namespace ptxgen::ir {

struct DStaging {
  bool stmatrix = false;  // stmatrix.sync.aligned.m8n8.x4.shared.b16, else st.shared per pair of columns
  bool subtiles = false;  // two buffers of one 128-byte box of each row, box j through buffer j % 2
  std::string why;        // for `ptxgen plan`
};

// D of `d_bits`-bit elements, `d_cols` columns wide, whose wgmma N groups are all whole 16-column
// steps (`groups16`), and whose fused epilogue reads a tensor element by element (`cell_reads`: C,
// a residual) or not.
DStaging d_staging(int d_bits, bool groups16, bool cell_reads, int64_t d_cols);

}  // namespace ptxgen::ir
