// Replays, through the fuzzer's own pipeline and properties (tests/fuzz/pipeline.cpp), every input
// the fuzzer ever broke (tests/fuzz/regressions/) and every seed it starts from (specs/ and the rule
// table's examples), so each finding stays fixed in every build, sanitized or not.
#include <doctest/doctest.h>

#include <filesystem>

#include "fuzz/pipeline.hpp"
#include "support.hpp"

using namespace ptxgen;

TEST_SUITE("fuzz") {
TEST_CASE("every fuzzer finding in tests/fuzz/regressions keeps every property") {
  int n = 0;
  const std::string dir = support::source_root() + "/tests/fuzz/regressions";
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename() != "README.md") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    CAPTURE(f);
    const auto bad = fuzz::run_pipeline(support::slurp(f));
    CHECK_MESSAGE(!bad, *bad);
    ++n;
  }
  CHECK(n >= 1);
}

TEST_CASE("the seeds keep every property: specs/ and each rule's failing and fixed example") {
  for (const auto& f : support::spec_files()) {
    CAPTURE(f);
    const auto bad = fuzz::run_pipeline(support::slurp(f));
    CHECK_MESSAGE(!bad, *bad);
  }
  for (const auto& r : rules::table()) {
    CAPTURE(r.id);
    for (const std::string& doc : {rules::bad_document(r), rules::good_document(r)}) {
      const auto bad = fuzz::run_pipeline(doc);
      CHECK_MESSAGE(!bad, *bad);
    }
  }
}
}
