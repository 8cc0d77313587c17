// Staged outputs, depfiles and golden checks.
#include "output.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <iostream>

#include "exit.hpp"
#include "ptxgen/diag.hpp"
#include "ptxgen/textdiff.hpp"

namespace ptxgen::cli {

std::optional<std::string> Outputs::add(const std::string& dest, std::string_view data) {
  if (dest == "-") {
    stdout_.append(data);
    return std::nullopt;
  }
  std::string error;
  io::TempFile* t = reserve(dest, error);
  if (!t) return error;
  return t->write(data);
}

io::TempFile* Outputs::reserve(const std::string& dest, std::string& error) {
  auto t = std::make_unique<io::TempFile>(dest);
  if (!t->ok()) {
    error = t->error();
    return nullptr;
  }
  files_.push_back(std::move(t));
  return files_.back().get();
}

std::optional<std::string> Outputs::set_depfile(const std::string& path, const std::string& target,
                                                const std::vector<std::string>& inputs) {
  std::string why;
  const auto text = depfile_text(target, inputs, why);
  if (!text) return "cannot write depfile " + path + ": " + why;
  depfile_ = std::make_unique<io::TempFile>(path);
  if (!depfile_->ok()) return depfile_->error();
  return depfile_->write(*text);
}

std::optional<std::string> Outputs::commit() {
  for (auto& f : files_)
    if (auto err = f->commit()) return err;
  if (depfile_)
    if (auto err = depfile_->commit()) return err;
  if (!stdout_.empty()) return io::write_file_atomic("-", stdout_);
  return std::nullopt;
}

namespace {
// Make and Ninja undo a depfile's escapes differently, so a path is written only in a spelling both
// read back as the same path (tests/integration_test.cpp runs both): a space gets a backslash,
// with the backslashes right before it doubled (both tools' 2N+1 rule); '#' and ':' a backslash;
// '$' is doubled. Other paths are refused with the reason (`why`): control characters (a newline
// ends the rule), characters Ninja's depfile lexer ends a path at (" & ' * ; < > ? ^ ` |) or that
// Make gives a meaning (= an assignment, [ ] a glob, % a pattern in the target, ~ at the start a
// home directory, a trailing ')' an archive member), a backslash before '#' or ':' or at the end
// (the tools disagree on those runs), and ':' before a space or at the end (Ninja's target
// separator).
std::optional<std::string> escape(const std::string& path, bool target, std::string& why) {
  auto refuse = [&](const std::string& what) -> std::optional<std::string> {
    why = "the path " + printable(path) + " has " + what + ", which Make and Ninja cannot both read in a depfile";
    return std::nullopt;
  };
  std::string out;
  size_t backslashes = 0;
  for (size_t i = 0; i < path.size(); ++i) {
    const char c = path[i];
    const auto u = static_cast<unsigned char>(c);
    const char next = i + 1 < path.size() ? path[i + 1] : '\0';
    if (u < 0x20 || u == 0x7f) return refuse(c == '\n' ? "a newline" : c == '\t' ? "a tab" : "a control character");
    if (std::string_view("\"&'*;<>?^`|=[]").find(c) != std::string_view::npos) return refuse(std::string("'") + c + "'");
    if (c == '%' && target) return refuse("'%' (Make would read the rule as a pattern rule)");
    if (c == '~' && i == 0) return refuse("'~' at the start");
    if (c == '\\' && (next == '#' || next == ':' || next == '\0')) return refuse(next ? std::string("'\\' before '") + next + "'" : "'\\' at the end");
    if (c == ':' && (next == ' ' || next == '\0')) return refuse(next ? "':' before a space" : "':' at the end");
    if (c == ' ') {
      out.append(backslashes + 1, '\\');
    } else if (c == '#' || c == ':') {
      out += '\\';
    } else if (c == '$') {
      out += '$';
    }
    backslashes = c == '\\' ? backslashes + 1 : 0;
    out += c;
  }
  if (!path.empty() && path.back() == ')' && path.find('(') != std::string::npos)
    return refuse("'(' and a final ')' (Make would read an archive member)");
  return out;
}
}  // namespace

std::optional<std::string> depfile_text(const std::string& target, const std::vector<std::string>& inputs, std::string& why) {
  auto t = escape(target, true, why);
  if (!t) return std::nullopt;
  std::string out = *t + ":";
  for (const auto& in : inputs) {
    auto e = escape(in, false, why);
    if (!e) return std::nullopt;
    out += " " + *e;
  }
  return out + "\n";
}

std::optional<std::string> overwrites_input(const std::vector<std::string>& outputs, const std::vector<std::string>& inputs) {
  for (const auto& o : outputs) {
    if (o.empty() || o == "-") continue;
    for (const auto& in : inputs)
      if (io::same_file(o, in))
        return "refusing to write " + printable(o) + ": it is the spec " + printable(in) +
               ", which the output would replace; nothing written";
  }
  return std::nullopt;
}

std::optional<std::string> depfile_usage_problem(const TextOutput& o, const std::string& dest) {
  if (o.depfile.empty()) return std::nullopt;
  if (!o.golden.empty()) return "--depfile: --check writes no output for a depfile to describe";
  if (dest == "-") return "--depfile needs an output file (-o FILE), not standard output";
  return std::nullopt;
}

namespace {

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 || errno != ENOENT;
}

int check_golden(const TextOutput& o, const std::string& text, const std::string& producer,
                 const std::vector<std::string>& inputs) {
  const std::string& g = o.golden;
  if (o.update)
    if (auto err = overwrites_input({g}, inputs)) {
      std::cerr << "error: --update: " << *err << "\n";
      return kInvalid;
    }
  if (o.update && !exists(g)) {
    if (auto err = io::write_file_atomic(g, text)) {
      std::cerr << "error: " << *err << "\n";
      return kInvalid;
    }
    std::cerr << "created " << g << "\n";
    return kOk;
  }
  const io::Read r = io::read_file(g);
  if (!r.ok) {
    std::cerr << "error: golden: " << r.error << "\n";
    if (!exists(g)) std::cerr << "  = help: create it from the current output with --update\n";
    return kGoldenUnreadable;
  }
  if (r.data == text) {
    std::cerr << g << ": matches\n";
    return kOk;
  }
  const size_t changed = changed_lines(r.data, text);
  if (o.update) {
    if (auto err = io::write_file_atomic(g, text)) {
      std::cerr << "error: " << *err << "\n";
      return kInvalid;
    }
    std::cerr << "updated " << g << " (" << changed << " changed lines)\n";
    return kOk;
  }
  std::cout << unified_diff(r.data, text, g, g + "\t(" + producer + ")");
  std::cout.flush();
  std::cerr << "error: " << g << " differs from the output of " << producer << " (" << changed
            << " changed lines)\n";
  if (r.data.find("\r\n") != std::string::npos && text.find("\r\n") == std::string::npos)
    std::cerr << "  = note: the golden has CRLF line endings (a checkout with core.autocrlf?); "
                 "ptxgen writes LF\n";
  std::cerr << "  = help: if the new output is right, rewrite the golden with --update\n";
  return kMismatch;
}

}  // namespace

int deliver(const TextOutput& o, const std::string& dest, const std::string& text, const std::string& producer,
            const std::vector<std::string>& inputs) {
  if (!o.golden.empty()) return check_golden(o, text, producer, inputs);
  if (auto err = overwrites_input({dest, o.depfile}, inputs)) {
    std::cerr << "error: " << *err << "\n";
    return kInvalid;
  }
  Outputs outs;
  if (!o.depfile.empty())
    if (auto err = outs.set_depfile(o.depfile, dest, inputs)) {
      std::cerr << "error: " << *err << "; nothing written\n";
      return kDepfile;
    }
  auto err = outs.add(dest, text);
  if (!err) err = outs.commit();
  if (err) {
    std::cerr << "error: " << *err << "\n";
    return kInvalid;
  }
  return kOk;
}

}  // namespace ptxgen::cli
