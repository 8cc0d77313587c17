// ptxgen/ref.hpp — a name as the spec wrote it, and where: the vocabulary the spec and the kernel
// IR share, so that every IR node can point at the field it came from.
#pragma once

#include <string>

namespace ptxgen {

struct Ref {
  std::string name;
  std::string ptr;  // the JSON pointer of the field that wrote it
  explicit operator bool() const { return !name.empty(); }
};

}  // namespace ptxgen
