// Helpers for the tests that run the ptxgen executable (cli, output, determinism suites).
#pragma once

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "ptxgen/io.hpp"
#include "support.hpp"

namespace support {

namespace fs = std::filesystem;

inline std::string bin() {
  const char* b = std::getenv("PTXGEN_BIN");
  REQUIRE_MESSAGE(b, "PTXGEN_BIN must name the ptxgen executable (meson test sets it)");
  return b;
}

inline ptxgen::io::Run ptxgen_run(std::vector<std::string> args) {
  args.insert(args.begin(), bin());
  return ptxgen::io::run(args);
}

// Runs with extra environment variables (via /usr/bin/env; "-u NAME" entries unset one).
inline ptxgen::io::Run ptxgen_env(const std::vector<std::string>& env, std::vector<std::string> args) {
  std::vector<std::string> argv{"/usr/bin/env"};
  argv.insert(argv.end(), env.begin(), env.end());
  argv.push_back(bin());
  argv.insert(argv.end(), args.begin(), args.end());
  return ptxgen::io::run(argv);
}

// Runs a shell command line (for cd, redirections).
inline ptxgen::io::Run shell(const std::string& command) { return ptxgen::io::run({"/bin/sh", "-c", command}); }

// Single-quotes a word for /bin/sh.
inline std::string sh_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("ptxgen-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::permissions(path, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  static int& counter() {
    static int c = 0;
    return c;
  }
  std::string operator/(const std::string& f) const { return (path / f).string(); }
  // Names of the entries, sorted.
  std::vector<std::string> entries() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(path)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
};

inline void write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

inline std::string spec_path(const std::string& name) { return source_root() + "/specs/" + name + ".json"; }

// An executable shell script (a stand-in ptxas).
inline std::string script(const TempDir& t, const std::string& name, const std::string& body) {
  const std::string p = t / name;
  write(p, "#!/bin/sh\n" + body);
  fs::permissions(p, fs::perms::owner_all);
  return p;
}

}  // namespace support
