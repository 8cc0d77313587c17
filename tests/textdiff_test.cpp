// The unified diff `--check` prints: exact hunks as `diff -u` writes them, truncation, line endings.
#include <doctest/doctest.h>

#include <string>

#include "ptxgen/textdiff.hpp"

using ptxgen::changed_lines;
using ptxgen::unified_diff;

namespace {
std::string numbered(int from, int to) {
  std::string s;
  for (int i = from; i <= to; ++i) s += std::to_string(i) + "\n";
  return s;
}
}  // namespace

TEST_SUITE("textdiff") {
TEST_CASE("equal texts: no diff, no changed lines") {
  CHECK(unified_diff("a\nb\n", "a\nb\n", "x", "y") == "");
  CHECK(unified_diff("", "", "x", "y") == "");
  CHECK(changed_lines("a\n", "a\n") == 0);
}

TEST_CASE("one changed line: three lines of context each side, as diff -u") {
  const std::string before = numbered(1, 10);
  std::string after = before;
  after.replace(after.find("5\n"), 2, "five\n");
  CHECK(unified_diff(before, after, "golden.ptx", "new") ==
        "--- golden.ptx\n+++ new\n"
        "@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n");
  CHECK(changed_lines(before, after) == 2);
}

TEST_CASE("insertions at the start and deletions at the end; one-line ranges drop the count") {
  CHECK(unified_diff("b\n", "a\nb\n", "x", "y") == "--- x\n+++ y\n@@ -1 +1,2 @@\n+a\n b\n");
  CHECK(unified_diff("a\nb\n", "a\n", "x", "y") == "--- x\n+++ y\n@@ -1,2 +1 @@\n a\n-b\n");
  // An empty side: the range starts at line 0.
  CHECK(unified_diff("", "a\n", "x", "y") == "--- x\n+++ y\n@@ -0,0 +1 @@\n+a\n");
}

TEST_CASE("changes more than six lines apart are separate hunks; closer ones share one") {
  const std::string before = numbered(1, 20);
  std::string far = before;
  far.replace(far.find("\n2\n") + 1, 2, "two\n");
  far.replace(far.find("\n18\n") + 1, 3, "eighteen\n");
  CHECK(unified_diff(before, far, "x", "y") ==
        "--- x\n+++ y\n"
        "@@ -1,5 +1,5 @@\n 1\n-2\n+two\n 3\n 4\n 5\n"
        "@@ -15,6 +15,6 @@\n 15\n 16\n 17\n-18\n+eighteen\n 19\n 20\n");
  std::string near = before;
  near.replace(near.find("\n2\n") + 1, 2, "two\n");
  near.replace(near.find("\n9\n") + 1, 2, "nine\n");
  CHECK(unified_diff(before, near, "x", "y") ==
        "--- x\n+++ y\n"
        "@@ -1,12 +1,12 @@\n 1\n-2\n+two\n 3\n 4\n 5\n 6\n 7\n 8\n-9\n+nine\n 10\n 11\n 12\n");
}

TEST_CASE("a missing final newline is a difference and is marked") {
  CHECK(unified_diff("a\nb", "a\nb\n", "x", "y") ==
        "--- x\n+++ y\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n");
  CHECK(changed_lines("a\nb", "a\nb\n") == 2);
}

TEST_CASE("only the first differences: hunks stop at max_lines, cut hunks count what they show") {
  const std::string before = numbered(1, 100);
  const std::string after = numbered(1001, 1100);
  const std::string d = unified_diff(before, after, "x", "y", 4);
  CHECK(d == "--- x\n+++ y\n@@ -1,4 +0,0 @@\n-1\n-2\n-3\n-4\n... 196 more changed lines not shown\n");
  CHECK(changed_lines(before, after) == 200);
  // A later hunk past the budget is left out whole.
  std::string two = numbered(1, 40);
  two.replace(two.find("\n2\n") + 1, 2, "two\n");
  two.replace(two.find("\n30\n") + 1, 3, "thirty\n");
  const std::string d2 = unified_diff(numbered(1, 40), two, "x", "y", 6);
  CHECK(d2 == "--- x\n+++ y\n@@ -1,5 +1,5 @@\n 1\n-2\n+two\n 3\n 4\n 5\n... 2 more changed lines not shown\n");
}

TEST_CASE("texts too different for the edit limit become one replacement, still a valid diff") {
  std::string before, after;
  for (int i = 0; i < 3000; ++i) {
    before += "a" + std::to_string(i) + "\n";
    after += "b" + std::to_string(i) + "\n";
  }
  const std::string d = unified_diff(before, after, "x", "y", 3);
  CHECK(d == "--- x\n+++ y\n@@ -1,3 +0,0 @@\n-a0\n-a1\n-a2\n... 5997 more changed lines not shown\n");
  CHECK(changed_lines(before, after) == 6000);
}
}
