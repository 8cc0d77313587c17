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

Destination destination(const std::string& path) {
  Destination d{path, ""};
  // At most 40 links, as the kernel follows (ELOOP beyond).
  for (int hops = 0; hops <= 40; ++hops) {
    struct stat st {};
    if (::lstat(d.path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return d;
    std::vector<char> buf(static_cast<size_t>(st.st_size > 0 ? st.st_size : 255) + 1);
    const ssize_t n = ::readlink(d.path.c_str(), buf.data(), buf.size());
    if (n < 0 || static_cast<size_t>(n) >= buf.size()) {
      d.error = os_error("cannot follow the link", path);
      return d;
    }
    const std::string target(buf.data(), static_cast<size_t>(n));
    d.path = target.front() == '/' ? target : dir_of(d.path) + "/" + target;
  }
  d.error = "cannot write " + path + ": too many levels of symbolic links";
  return d;
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat x {}, y {};
  return ::stat(a.c_str(), &x) == 0 && ::stat(b.c_str(), &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

TempFile::TempFile(const std::string& destination) : shown_(destination), dest_(destination) {
  struct stat st {};
  if (::stat(destination.c_str(), &st) == 0) {  // through links
    if (S_ISDIR(st.st_mode)) {
      error_ = "cannot write " + shown_ + ": it is a directory";
      return;
    }
    // A device, FIFO or socket (/dev/null, /dev/stdout, a named pipe): renaming a file over it
    // would replace the node (as root, /dev/null itself). It is written in place at commit, opened
    // by the name given, from a file staged in temp_dir().
    in_place_ = !S_ISREG(st.st_mode);
  }
  if (!in_place_) {
    const Destination d = io::destination(destination);
    if (!d.error.empty()) {
      error_ = d.error;
      return;
    }
    dest_ = d.path;
  }
  const std::string dir = in_place_ ? temp_dir() : dir_of(dest_);
  std::string tmpl = dir + "/.ptxgen-XXXXXX";
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0) {
    error_ = os_error("cannot create a file in", dir);
    return;
  }
  ::close(fd);
  path_ = name.data();
}

TempFile::~TempFile() {
  if (!path_.empty() && (!committed_ || in_place_)) ::unlink(path_.c_str());
}

std::optional<std::string> TempFile::commit() {
  if (!ok()) return error_;
  if (in_place_) {
    // Into the node itself, as `cmd > /dev/null` writes: no O_TRUNC, O_CREAT or rename.
    const Read staged = read_file(path_, size_t{1} << 34);
    if (!staged.ok) return staged.error;
    const int fd = ::open(dest_.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return os_error("cannot write", shown_);
    const bool written = write_all(fd, staged.data);
    const int saved = errno;
    const bool closed = ::close(fd) == 0;
    if (!written || !closed) {
      errno = written ? errno : saved;
      return os_error("cannot write", shown_);
    }
    committed_ = true;
    return std::nullopt;
  }
  // mkstemp creates 0600; give the file the usual permissions of a build product.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::chmod(path_.c_str(), 0666 & ~mask);
  if (::rename(path_.c_str(), dest_.c_str()) != 0) return os_error("cannot write", shown_);
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
  const bool closed = ::close(fd) == 0;  // a full disk may only show here (NFS, quotas)
  if (!written || !closed) {
    errno = written ? errno : saved;
    return os_error("cannot write", shown_);
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
