// The program level of the spec (docs/spec.md): JSON -> spec::Program, and back.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

#include "json_reader.hpp"
#include "ptxgen/diag.hpp"
#include "ptxgen/program.hpp"

namespace ptxgen::spec {

// Reports SPEC-* diagnostics (types, ranges, unknown members, names of choices); empty on error.
std::optional<Program> parse_program(const nlohmann::json& program, Diagnostics& d, const Literals* literals = nullptr);
// Canonical JSON of a parsed program (sorted names, defaults explicit).
std::string program_to_json(const Program& p);

}  // namespace ptxgen::spec
