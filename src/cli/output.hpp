// Where a command's outputs go: files written all together or not at all, --depfile, and
// --check GOLDEN [--update], which compares generated text with a file instead of writing it.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ptxgen/io.hpp"

namespace ptxgen::cli {

// The files one command writes. Each is staged in a temporary file beside its destination and
// all are renamed into place by commit(), the depfile last, so a command that fails before
// commit() writes none of them and a build system never sees a depfile for outputs that are not
// there. "-" is standard output, written at commit().
class Outputs {
 public:
  // Stages `data` for `dest`. Returns the error (the destination is unwritable).
  std::optional<std::string> add(const std::string& dest, std::string_view data);
  // A temporary file beside `dest` for a tool to write (ptxas -o), renamed at commit().
  // nullptr when it cannot be created; `error` says why.
  io::TempFile* reserve(const std::string& dest, std::string& error);
  // Stages the depfile (Makefile syntax): `target` depends on `inputs`. Returns the error.
  std::optional<std::string> set_depfile(const std::string& path, const std::string& target,
                                         const std::vector<std::string>& inputs);
  std::optional<std::string> commit();

 private:
  std::vector<std::unique_ptr<io::TempFile>> files_;
  std::unique_ptr<io::TempFile> depfile_;
  std::string stdout_;
};

// "target: input input" in the spelling GNU Make and Ninja both read: spaces, '#' and ':' escaped
// with '\\', '$' doubled. Empty, with the reason in `why`, when a path has a character the two
// cannot both read (a newline, '*', '=', ... : output.cpp lists them).
std::optional<std::string> depfile_text(const std::string& target, const std::vector<std::string>& inputs, std::string& why);

// An error when one of `outputs` ("-" and empty ones aside) is one of `inputs` (the spec, through
// links): `-o SPEC` would replace the spec with its own PTX. The CLI exits 1 before writing.
std::optional<std::string> overwrites_input(const std::vector<std::string>& outputs, const std::vector<std::string>& inputs);

// The options every text-producing command shares.
struct TextOutput {
  std::string golden;    // --check GOLDEN: compare, write nothing
  bool update = false;   // --update: rewrite GOLDEN when it differs (or is missing)
  std::string depfile;   // --depfile FILE
};

// Why `--depfile` cannot be used with these options (writing to `dest`), if it cannot.
std::optional<std::string> depfile_usage_problem(const TextOutput& o, const std::string& dest);

// Writes `text` to `dest` (with the depfile), or compares it with the golden. `producer` names what
// generated it for the diff header (e.g. "ptxgen emit specs/k.json"); `inputs` are the files read.
// Returns the exit code, having printed what happened.
int deliver(const TextOutput& o, const std::string& dest, const std::string& text, const std::string& producer,
            const std::vector<std::string>& inputs);

}  // namespace ptxgen::cli
