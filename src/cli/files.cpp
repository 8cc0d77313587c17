// Reading and atomically writing files.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "ptxgen/io.hpp"

namespace ptxgen::io {

namespace {
std::string os_error(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

std::string dir_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

bool write_all(int fd, std::string_view data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}
}  // namespace

Read read_file(const std::string& path, size_t max_bytes) {
  Read r;
  int fd = 0;
  if (path != "-") {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      r.error = os_error("cannot open", path);
      return r;
    }
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
      ::close(fd);
      r.error = "cannot read " + path + ": it is a directory";
      return r;
    }
  }
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      r.error = os_error("cannot read", path);
      if (fd) ::close(fd);
      return r;
    }
    if (n == 0) break;
    r.data.append(buf, static_cast<size_t>(n));
    if (r.data.size() > max_bytes) {
      r.data.resize(max_bytes + 1);
      r.truncated = true;
      break;
    }
  }
  if (fd) ::close(fd);
  r.ok = true;
  return r;
}

std::string temp_dir() {
  const char* t = std::getenv("TMPDIR");
  return t && *t ? std::string(t) : std::string("/tmp");
}

TempFile::TempFile(const std::string& destination) : dest_(destination) {
  struct stat st {};
  if (::stat(destination.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    error_ = "cannot write " + destination + ": it is a directory";
    return;
  }
  std::string tmpl = dir_of(destination) + "/.ptxgen-XXXXXX";
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0) {
    error_ = os_error("cannot create a file in", dir_of(destination));
    return;
  }
  ::close(fd);
  path_ = name.data();
}

TempFile::~TempFile() {
  if (!path_.empty() && !committed_) ::unlink(path_.c_str());
}

std::optional<std::string> TempFile::commit() {
  if (!ok()) return error_;
  // mkstemp creates 0600; give the file the usual permissions of a build product.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::chmod(path_.c_str(), 0666 & ~mask);
  if (::rename(path_.c_str(), dest_.c_str()) != 0) return os_error("cannot write", dest_);
  committed_ = true;
  return std::nullopt;
}

std::optional<std::string> TempFile::write(std::string_view data) {
  if (!ok()) return error_;
  // No O_TRUNC: the file is new and empty, and ext4 flushes a truncated file to disk on close
  // (auto_da_alloc), which made every write wait milliseconds.
  const int fd = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) return os_error("cannot write", path_);
  const bool written = write_all(fd, data);
  const int saved = errno;
  ::close(fd);
  if (!written) {
    errno = saved;
    return os_error("cannot write", dest_);
  }
  return std::nullopt;
}

std::optional<std::string> write_file_atomic(const std::string& path, std::string_view data) {
  if (path == "-") {
    // Straight to the descriptor, so a full or closed standard output reports its OS error.
    std::cout.flush();
    if (!write_all(1, data)) return os_error("cannot write", "standard output");
    return std::nullopt;
  }
  TempFile tmp(path);
  if (auto err = tmp.write(data)) return err;
  return tmp.commit();
}

}  // namespace ptxgen::io
