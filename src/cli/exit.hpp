// The exit codes of the ptxgen command line. README.md, docs/ptxgen.1 and docs/build.md list
// them; tests/cli_test.cpp checks every one.
#pragma once

namespace ptxgen::cli {

enum Exit : int {
  kOk = 0,
  kInvalid = 1,           // the spec is invalid, or an output cannot be written (nothing written)
  kUsage = 2,             // the command line is wrong
  kToolchain = 3,         // ptxas or fatbinary missing, too old for the target, or failing
  kMismatch = 4,          // --check: the generated text differs from the golden (diff printed)
  kGoldenUnreadable = 5,  // --check: the golden is missing or cannot be read
  kDepfile = 6,           // --depfile: the depfile cannot be written (nothing written)
  kUnknownTarget = 7,     // --target names a target ptxgen does not know
  kInternal = 70,         // a bug in ptxgen (EX_SOFTWARE)
};

}  // namespace ptxgen::cli
