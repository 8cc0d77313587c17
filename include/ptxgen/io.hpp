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
// generating the PTX (see tools/bench-build). Destinations are those of TempFile below.
std::optional<std::string> write_file_atomic(const std::string& path, std::string_view data);

// Where a write to `path` lands: a symbolic link is followed to its target (the link stays, the
// target is replaced; a dangling link's target is created), as `cmd > link` writes. The error when
// the links loop.
struct Destination {
  std::string path;   // `path` with every link followed
  std::string error;  // non-empty: the links loop (or are too deep)
};
Destination destination(const std::string& path);

// True when `a` and `b` name the same existing file (through links), e.g. an output and the spec.
bool same_file(const std::string& a, const std::string& b);

// A temporary file for `destination` that is removed unless committed. A regular (or new) file is
// staged beside the destination (its link target, see above) and renamed onto it, so readers never
// see half a file. A device, FIFO or socket is never replaced: the data is staged in temp_dir()
// and written into it in place at commit(), where a write error (ENOSPC on /dev/full) is reported.
// It fails up front when the destination is a directory or its directory cannot take a new file,
// so a command can reserve every output before it writes any.
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
  std::optional<std::string> commit();  // rename to the destination (or write into it in place)

 private:
  std::string shown_, dest_, path_, error_;
  bool in_place_ = false;
  bool committed_ = false;
};

// Runs a program (no shell), capturing stdout and stderr together. The program runs in a process
// group of its own: with timeout_s > 0 the whole group (a wrapper script and what it started) is
// killed (SIGKILL) once that many seconds have passed, and `timed_out` is set; so it is when
// ptxgen itself is interrupted (SIGINT, SIGTERM, SIGHUP) while the program runs.
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
// Seconds one ptxas run may take before it is killed: $PTXGEN_PTXAS_TIMEOUT, default 600 when
// unset. A value that is not a whole number of seconds from 1 to 2^31-1 (empty, "abc", "0", "-1")
// is refused: nullopt, with the message in `error` (the CLI exits 2).
std::optional<int> ptxas_timeout_s(std::string& error);

}  // namespace ptxgen::io
