// Staged outputs, depfiles and golden checks.
#include "output.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <iostream>

#include "exit.hpp"
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
  const auto text = depfile_text(target, inputs);
  if (!text) return "cannot write depfile " + path + ": a path in it contains a newline";
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
// GCC's escaping (what Ninja's and Make's depfile readers undo): a space or '#' gets a backslash,
// and the backslashes right before it are doubled; '$' is doubled.
std::optional<std::string> escape(const std::string& path) {
  std::string out;
  size_t backslashes = 0;
  for (char c : path) {
    if (c == '\n' || c == '\r') return std::nullopt;
    if (c == ' ' || c == '\t' || c == '#') {
      out.append(backslashes + 1, '\\');
      backslashes = 0;
    } else if (c == '$') {
      out += '$';
    }
    backslashes = c == '\\' ? backslashes + 1 : 0;
    out += c;
  }
  return out;
}
}  // namespace

std::optional<std::string> depfile_text(const std::string& target, const std::vector<std::string>& inputs) {
  auto t = escape(target);
  if (!t) return std::nullopt;
  std::string out = *t + ":";
  for (const auto& in : inputs) {
    auto e = escape(in);
    if (!e) return std::nullopt;
    out += " " + *e;
  }
  return out + "\n";
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

int check_golden(const TextOutput& o, const std::string& text, const std::string& producer) {
  const std::string& g = o.golden;
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
  if (!o.golden.empty()) return check_golden(o, text, producer);
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
