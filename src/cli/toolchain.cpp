// Finding and running ptxas.
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <regex>

#include "ptxgen/io.hpp"

extern char** environ;

namespace ptxgen::io {

Run run(const std::vector<std::string>& argv) {
  Run r;
  if (argv.empty()) {
    r.error = "no program";
    return r;
  }
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0) {
    r.error = std::string("pipe: ") + std::strerror(errno);
    return r;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
  posix_spawn_file_actions_adddup2(&fa, pipefd[1], 2);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0].c_str(), &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(pipefd[1]);
  if (rc != 0) {
    ::close(pipefd[0]);
    r.error = "cannot run " + argv[0] + ": " + std::strerror(rc);
    return r;
  }
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(pipefd[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    r.output.append(buf, static_cast<size_t>(n));
  }
  ::close(pipefd[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.launched = true;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

namespace {
bool executable(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
}
}  // namespace

std::optional<std::string> find_cuda_tool(const std::string& program, const char* env) {
  // The variable names the program explicitly (build systems that pin a toolkit, and the tests).
  if (const char* forced = std::getenv(env)) {
    if (executable(forced)) return std::string(forced);
    return std::nullopt;
  }
  if (const char* path = std::getenv("PATH")) {
    std::string p(path);
    size_t start = 0;
    while (start <= p.size()) {
      const size_t end = p.find(':', start);
      std::string dir = p.substr(start, end == std::string::npos ? std::string::npos : end - start);
      if (!dir.empty() && executable(dir + "/" + program)) return dir + "/" + program;
      if (end == std::string::npos) break;
      start = end + 1;
    }
  }
  if (const char* cuda = std::getenv("CUDA_HOME"))
    if (executable(std::string(cuda) + "/bin/" + program)) return std::string(cuda) + "/bin/" + program;
  if (executable("/usr/local/cuda/bin/" + program)) return "/usr/local/cuda/bin/" + program;
  return std::nullopt;
}

std::optional<std::string> find_ptxas() { return find_cuda_tool("ptxas", "PTXGEN_PTXAS"); }

std::optional<std::string> find_fatbinary(const std::string& ptxas) {
  // fatbinary from the toolkit whose ptxas made the cubins, unless one is named explicitly.
  if (!std::getenv("PTXGEN_FATBINARY")) {
    const auto slash = ptxas.rfind('/');
    const std::string beside = (slash == std::string::npos ? std::string(".") : ptxas.substr(0, slash)) + "/fatbinary";
    if (executable(beside)) return beside;
  }
  return find_cuda_tool("fatbinary", "PTXGEN_FATBINARY");
}

std::optional<ToolVersion> ptxas_version(const std::string& ptxas) {
  Run r = run({ptxas, "--version"});
  if (!r.launched || r.exit_code != 0) return std::nullopt;
  std::smatch m;
  static const std::regex re("release ([0-9]+)\\.([0-9]+)");
  if (!std::regex_search(r.output, m, re)) return std::nullopt;
  ToolVersion v;
  v.major = std::stoi(m[1]);
  v.minor = std::stoi(m[2]);
  v.text = m[0];
  return v;
}

}  // namespace ptxgen::io
