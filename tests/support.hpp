// Helpers shared by the tests.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ptxgen/emit.hpp"
#include "ptxgen/lower.hpp"
#include "ptxgen/plan.hpp"
#include "ptxgen/rules.hpp"

namespace support {

// Whether this build runs under AddressSanitizer (tools/sanitize: clang's __has_feature, g++'s macro).
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

// The combinatorial sweeps (plan_test's kinds x majors x swizzles x tiles, program_sweep_test's
// types x majors x swizzles x splits) are about combinations, and the plain build runs each whole.
// Under the sanitizers they run every 7th combination (7 divides no dimension of either, so every
// value of every dimension still comes up): memory checks on the same code for a seventh of the
// time (whole, the two took about four minutes of the sanitized suites' CPU).
constexpr int kSweepStride = kSanitized ? 7 : 1;

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

// How many times `what` occurs in `text` (overlapping occurrences too): instructions of a kernel.
inline size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
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

// The plan of a checked spec (lowered into the kernel IR, then planned), with the spec it came
// from: the reference models evaluate what the spec says, independently of the lowering.
struct Planned : ptxgen::plan::Plan {
  ptxgen::spec::Spec spec;
};
inline Planned plan_of(const ptxgen::spec::Spec& s) {
  Planned p;
  static_cast<ptxgen::plan::Plan&>(p) = ptxgen::plan::make_plan(ptxgen::lower::lower(s));
  p.spec = s;
  return p;
}

// The PTX ISA version (major * 10 + minor) the emitted module declares.
inline int ptx_version(const ptxgen::plan::Plan& p) {
  const auto v = ptxgen::emit::ptx_version(p);
  return v.major * 10 + v.minor;
}

// Every step of every role, loop bodies included, in order.
inline std::vector<const ptxgen::plan::Step*> all_steps(const ptxgen::plan::Plan& p) {
  std::vector<const ptxgen::plan::Step*> out;
  auto walk = [&](auto&& self, const std::vector<ptxgen::plan::Step>& ss) -> void {
    for (const auto& s : ss) {
      out.push_back(&s);
      self(self, s.body);
    }
  };
  for (const auto& r : p.roles) walk(walk, r.steps);
  return out;
}

}  // namespace support
