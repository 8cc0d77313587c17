// NumPy's .npy files (format versions 1.0 to 3.0), read for `ptxgen simulate --inputs`: a 1- or
// 2-D array of floats or integers, its values as doubles in row-major order.
#pragma once

#include <string>

#include "ptxgen/sim.hpp"

namespace ptxgen::cli {

// The array in `bytes` (a whole .npy file); "" on success, else what is wrong, in words.
std::string read_npy(const std::string& bytes, sim::InputArray& out);

}  // namespace ptxgen::cli
