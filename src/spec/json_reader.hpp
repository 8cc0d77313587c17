// A strict JSON reader: RFC 8259 syntax, UTF-8 checked, duplicate keys and the input limits
// reported as diagnostics, and the source position of every value kept for messages.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "ptxgen/diag.hpp"
#include "ptxgen/spec.hpp"

namespace ptxgen::spec {

struct JsonRead {
  std::optional<nlohmann::json> value;  // empty on any error
  SourceMap positions;                  // pointer -> where its value (or member key) starts
};

JsonRead read_json(std::string_view text, const Limits& limits, Diagnostics& diags);

}  // namespace ptxgen::spec
