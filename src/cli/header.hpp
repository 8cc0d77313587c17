// `ptxgen build SPEC... --header FILE.h`: one self-contained C++17 header holding every kernel's
// cubins and a typed launch function per kernel (docs/build.md, "The launch header").
//
// The generator reads only what a host program reads: each target's launch manifest (the JSON of
// `ptxgen manifest`) and its cubin, plus which tensors the kernel writes. It knows nothing of the
// planner, so the header follows the manifest wherever the planner goes.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace ptxgen::cli {

struct HeaderImage {
  std::string manifest;  // the target's launch manifest (JSON text)
  std::string cubin;     // its cubin
};

struct HeaderKernel {
  std::string spec;                  // the spec's path, for the header's comments
  std::vector<std::string> written;  // the tensors the kernel writes (the others are const)
  std::vector<HeaderImage> images;   // one per target, in --target order
};

// A kernel the header cannot hold as asked: a name C++ or the header itself already uses, two
// kernels of one name. The message says which and what to change.
struct HeaderError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The header text. `stem` names its macros (PTXGEN_<STEM>_GEMMS, PTXGEN_<STEM>_PROGRAMS);
// `producer` is the command that made it, for the first line. Throws HeaderError (the user's to
// fix) or std::logic_error (a manifest the header does not understand: ptxgen's bug).
std::string launch_header(const std::vector<HeaderKernel>& kernels, const std::string& stem,
                          const std::string& producer);

// Why `name` cannot be an identifier of the header ("" if it can): a C++ keyword, a name the header
// uses, a reserved identifier, a macro of the header's includes or a compiler's predefined one.
std::string name_problem(const std::string& name);

// "kernels.hpp" -> "KERNELS": the header's file name as a macro-name part.
std::string header_stem(const std::string& path);

}  // namespace ptxgen::cli
