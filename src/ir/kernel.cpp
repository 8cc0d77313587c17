// The geometry of the kernel IR's buffers that is not a view's (src/ir/views.cpp).
#include "ptxgen/ir.hpp"

namespace ptxgen::ir {

isa::TileLayout tile_layout(const Tile& t) {
  isa::TileLayout l;
  l.major = t.major;
  l.swizzle = t.swizzle;
  l.bits = isa::storage_bits(t.dtype, t.format);
  l.mn = t.rows;
  l.k = t.cols;
  return l;
}

uint64_t global_bytes(const Global& g) {
  if (!g.rows_param.empty() || !g.cols_param.empty()) return 0;  // run-time extents: the template's ranges bound them
  // Rows and columns are below 2^31 and elements at most 32 bits, so the product fits 64 bits.
  const uint64_t row_bytes = (static_cast<uint64_t>(g.cols) * static_cast<uint64_t>(g.bits ? g.bits : isa::storage_bits(g.dtype, g.format)) + 7) / 8;
  return static_cast<uint64_t>(g.rows) * row_bytes;
}

}  // namespace ptxgen::ir
