#include "ptxgen/ir/staging.hpp"

namespace ptxgen::ir {

// stmatrix.sync.aligned.m8n8.x4.shared.b16 (PTX ISA 9.1 §9.7.14.5.16) writes four 8x8 matrices of
// 16-bit elements: the wgmma accumulator's fragment of a warp's 16 rows by 8 columns
// (§9.7.15.5.1.1) is two of them, so a D of 16-bit elements whose N groups are whole 16-column
// steps goes out by x4s. Not where the fused epilogue reads a tensor element by element (C, a
// residual): stmatrix synchronizes the warp, and ptxas (13.x) then computes every fused value before
// the first one, where past st.shared it sinks later elements' loads and math: at 168 registers the
// 128x128 alpha/beta/C/residual kernel spilled 128 bytes (measured with ptxas -v).
//
// With stmatrix, a D wider than two 128-byte boxes goes through two buffers of one box of each row
// instead of the whole tile (issue 33: 128x256 bf16 stages 32 KB, not 64 KB, which leaves room for a
// fourth mainloop stage); the warps wait for a buffer's previous box only, which the bulk group per
// box allows. st.shared's pairs keep the whole tile: its element-wise reads are what the registers
// are short of, not shared memory.
DStaging d_staging(int d_bits, bool groups16, bool cell_reads, int64_t d_cols) {
  DStaging r;
  if (d_bits != 16) {
    r.why = "D's elements are not 16-bit (stmatrix moves .b16)";
  } else if (!groups16) {
    r.why = "a wgmma N group is not a whole 16-column step";
  } else if (cell_reads) {
    r.why = "the epilogue reads C or a residual element by element (registers)";
  } else {
    r.stmatrix = true;
    const int64_t box = 128 * 8 / d_bits;  // a 128-byte box's columns
    r.subtiles = d_cols % box == 0 && d_cols > 2 * box;
    r.why = "a 16-bit D in whole 16-column steps, no element-wise reads";
  }
  return r;
}

}  // namespace ptxgen::ir
