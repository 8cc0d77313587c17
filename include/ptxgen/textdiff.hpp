// ptxgen/textdiff.hpp — a unified diff of two texts, for `--check GOLDEN` and the tests.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ptxgen {

// `diff -u` between two texts: a "--- before_name" / "+++ after_name" header, then hunks with three
// lines of context (lines lacking a final newline get the usual "\ No newline at end of file").
// Only the first differences are shown: hunks stop after `max_lines` lines of hunk body (a hunk cut
// short gets a header counting the lines it shows, so the text is still a valid patch), followed
// by "... N more changed lines not shown". Empty when the texts are equal.
std::string unified_diff(std::string_view before, std::string_view after, std::string_view before_name,
                         std::string_view after_name, size_t max_lines = 60);

// Lines of `after` that are not in `before` plus lines of `before` not in `after`, as counted by
// the same diff (0 when equal).
size_t changed_lines(std::string_view before, std::string_view after);

}  // namespace ptxgen
