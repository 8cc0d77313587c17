// ptxgen/io.hpp — files and the CUDA toolchain, for the CLI and the tests.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ptxgen::io {

// Reads a whole file ("-" reads standard input). On failure `error` names the OS error. Reading
// stops after max_bytes + 1 bytes (`truncated`), so /dev/zero or a huge file costs no more than a
// file one byte over the limit; the caller reports the limit.
struct Read {
  bool ok = false;
  bool truncated = false;
  std::string data;
  std::string error;
};
Read read_file(const std::string& path, size_t max_bytes = 16u << 20);

// $TMPDIR, else /tmp: where outputs that go to standard output are staged for ptxas.
std::string temp_dir();

// Writes `data` to `path` atomically: a temporary file in the destination directory, then renamed
// over the destination, so readers never see half a file. "-" writes standard output. Returns the
// error message on failure (the destination is then untouched). There is no fsync: outputs are
// build products a build regenerates, as compilers' are, and an fsync per file cost more than
// generating the PTX (see tools/bench-build).
std::optional<std::string> write_file_atomic(const std::string& path, std::string_view data);

// A temporary file beside `destination` that is removed unless committed (renamed onto the
// destination). It fails up front when the destination is a directory or its directory cannot
// take a new file, so a command can reserve every output before it writes any.
class TempFile {
 public:
  explicit TempFile(const std::string& destination);
  ~TempFile();
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }
  const std::string& error() const { return error_; }
  bool ok() const { return error_.empty(); }
  const std::string& destination() const { return dest_; }
  std::optional<std::string> write(std::string_view data);  // appends to the temporary file
  std::optional<std::string> commit();  // rename to the destination

 private:
  std::string dest_, path_, error_;
  bool committed_ = false;
};

// Runs a program (no shell), capturing stdout and stderr together. With timeout_s > 0 the program
// is killed (SIGKILL) once that many seconds have passed, and `timed_out` is set.
struct Run {
  bool launched = false;
  bool timed_out = false;
  int exit_code = -1;  // 128 + signal when killed
  std::string output;
  std::string error;  // why it could not be launched
};
Run run(const std::vector<std::string>& argv, int timeout_s = 0);

// A CUDA toolkit program: $`env` if set (and only it), else PATH, then $CUDA_HOME/bin, then
// /usr/local/cuda/bin.
std::optional<std::string> find_cuda_tool(const std::string& program, const char* env);
// ptxas: $PTXGEN_PTXAS, else as above.
std::optional<std::string> find_ptxas();
// fatbinary: $PTXGEN_FATBINARY, else the directory of `ptxas` (one toolkit), else as above.
std::optional<std::string> find_fatbinary(const std::string& ptxas);
// "release 13.0" from `ptxas --version`.
struct ToolVersion {
  int major = 0, minor = 0;
  std::string text;
};
std::optional<ToolVersion> ptxas_version(const std::string& ptxas);
// The release in `ptxas --version` output; nullopt when there is none (or it does not fit an int).
std::optional<ToolVersion> parse_ptxas_version(std::string_view output);

// A ptxas able to assemble for a target: found, answering --version, and of at least the CUDA
// release that first knows the target. Otherwise `error` is the whole message for the user: what
// was looked for or found, what to install, and ptxas's own output (the CLI exits 3).
struct Ptxas {
  std::string path;
  ToolVersion version;
  std::string error;
};
Ptxas ptxas_for(std::string_view target, int min_major, int min_minor);
// Seconds one ptxas run may take before it is killed: $PTXGEN_PTXAS_TIMEOUT, default 600.
int ptxas_timeout_s();

}  // namespace ptxgen::io
