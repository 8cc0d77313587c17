// Helpers shared by the tests.
#pragma once

#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ptxgen/io.hpp"
#include "ptxgen/plan.hpp"
#include "ptxgen/rules.hpp"

namespace support {

inline std::string source_root() {
  const char* r = std::getenv("PTXGEN_SOURCE_ROOT");
  REQUIRE_MESSAGE(r, "PTXGEN_SOURCE_ROOT must name the source tree (meson test sets it)");
  return r;
}

inline std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  REQUIRE_MESSAGE(f.good(), "cannot read " << path);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// specs/*.json, sorted.
inline std::vector<std::string> spec_files() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(source_root() + "/specs"))
    if (e.path().extension() == ".json") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

inline std::string stem(const std::string& path) { return std::filesystem::path(path).stem().string(); }

// Parses and checks; REQUIREs success.
inline ptxgen::spec::Spec checked_spec(const std::string& text) {
  ptxgen::Diagnostics d;
  auto c = ptxgen::rules::parse_and_check(text, d);
  std::string msgs;
  for (const auto& x : d.list()) msgs += ptxgen::format_text(x, "spec", nullptr);
  REQUIRE_MESSAGE(c.ok, msgs);
  return *c.parsed.spec;
}

// The ptxgen executable under test (meson test sets PTXGEN_BIN).
inline std::string bin() {
  const char* b = std::getenv("PTXGEN_BIN");
  REQUIRE_MESSAGE(b, "PTXGEN_BIN must name the ptxgen executable (meson test sets it)");
  return b;
}

// Runs ptxgen with `args` (stdout and stderr together).
inline ptxgen::io::Run ptxgen_run(std::vector<std::string> args) {
  args.insert(args.begin(), bin());
  return ptxgen::io::run(args);
}

// Runs ptxgen with extra environment variables (via /usr/bin/env).
inline ptxgen::io::Run ptxgen_env(const std::vector<std::string>& env, std::vector<std::string> args) {
  std::vector<std::string> argv{"/usr/bin/env"};
  argv.insert(argv.end(), env.begin(), env.end());
  argv.push_back(bin());
  argv.insert(argv.end(), args.begin(), args.end());
  return ptxgen::io::run(argv);
}

// A fresh directory, removed with everything in it at the end of the scope.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    static int counter = 0;
    path = std::filesystem::temp_directory_path() /
           ("ptxgen-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string operator/(const std::string& f) const { return (path / f).string(); }
};

inline void write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

}  // namespace support
