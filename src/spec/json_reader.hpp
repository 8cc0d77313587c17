// A strict JSON reader: RFC 8259 syntax, UTF-8 checked, duplicate keys and the input limits
// reported as diagnostics, and the source position of every value kept for messages.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "ptxgen/diag.hpp"
#include "ptxgen/spec.hpp"

namespace ptxgen::spec {

// Number literals as written, by JSON pointer, for the numbers the reader could not keep exactly:
// every one that is not an integer of 64 bits ("128.0", "64.5", "1e400", "1e-400",
// "99999999999999999999"), so that messages show what the spec says rather than a double.
using Literals = std::map<std::string, std::string>;

struct JsonRead {
  std::optional<nlohmann::json> value;  // empty on any error
  SourceMap positions;                  // pointer -> where its value (or member key) starts
  Literals literals;
};

JsonRead read_json(std::string_view text, const Limits& limits, Diagnostics& diags);

}  // namespace ptxgen::spec
