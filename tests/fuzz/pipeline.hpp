// The pipeline the fuzzer drives, and the properties every input must keep. Shared by the libFuzzer
// target (fuzz_spec.cpp) and the regression suite (tests/fuzz_test.cpp), so an input the fuzzer
// once broke is replayed through exactly the same code in every build, sanitized or not.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ptxgen::fuzz {

// Runs read -> parse -> check -> plan -> emit (and the printers) over `input`. Returns a description
// of the first broken property, or nullopt. Crashes, hangs and sanitizer reports are the fuzzer's
// to catch; exceptions are caught here and reported as broken properties.
std::optional<std::string> run_pipeline(std::string_view input);

}  // namespace ptxgen::fuzz
