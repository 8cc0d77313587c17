// ptxgen/tmem_view.hpp — one link of a tensor-memory view chain (an allocation, a slice, a cast or
// an alias) as a spec writes it: the vocabulary the program level's parser fills and the kernel IR
// keeps (the gemm template writes the same links, and rings of them). Resolving a chain is the
// IR's (ptxgen/ir/views.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "ptxgen/isa.hpp"
#include "ptxgen/ref.hpp"

namespace ptxgen {

struct TmemView {
  enum class Kind : uint8_t { alloc, slice, cast, alias };
  Kind kind = Kind::alloc;
  std::string name;  // "" for an inline view
  std::string ptr;   // the view's object
  // alloc
  int columns = 0;
  std::string columns_ptr;
  // slice / cast / alias: what it derives from: a name, or an inline view (index into views)
  Ref of;
  int of_inline = -1;
  // slice
  std::optional<std::array<int64_t, 2>> lanes, cols;
  std::string lanes_ptr, cols_ptr;
  // alloc (element type of the whole allocation) and cast
  std::optional<isa::DType> dtype;
  std::optional<int> packing;  // elements per 32-bit column
  std::optional<isa::TmemLayout> layout;
  std::optional<int> rows;
  std::string dtype_ptr, packing_ptr, layout_ptr, rows_ptr;
  // slice, made by the gemm lowering only (the program format has no ring): a ring of `stages`
  // copies of the slice, copy s `stage_columns` columns after copy 0. An op in a K loop uses the copy
  // of its iteration's ring stage, as it does with a ring of shared-memory tiles (Tile::stages).
  int stages = 1;
  int stage_columns = 0;
};

}  // namespace ptxgen
