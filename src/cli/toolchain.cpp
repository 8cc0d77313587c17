// Finding and running ptxas.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "ptxgen/io.hpp"

extern char** environ;

namespace ptxgen::io {

namespace {

// The process group of the program `run` is waiting for, so that a signal that ends ptxgen ends it
// too: in a group of its own it no longer receives the terminal's SIGINT.
volatile sig_atomic_t running_group = 0;

extern "C" void end_group_and_exit(int sig) {
  if (running_group > 0) ::kill(-static_cast<pid_t>(running_group), SIGKILL);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

// Installs the handlers for the lifetime of one run (restoring the ones before).
struct GroupGuard {
  static constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
  struct sigaction old[3] {};
  explicit GroupGuard(pid_t pgid) {
    running_group = pgid;
    struct sigaction sa {};
    sa.sa_handler = end_group_and_exit;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 3; ++i) ::sigaction(kSignals[i], &sa, &old[i]);
  }
  ~GroupGuard() {
    for (int i = 0; i < 3; ++i) ::sigaction(kSignals[i], &old[i], nullptr);
    running_group = 0;
  }
  GroupGuard(const GroupGuard&) = delete;
  GroupGuard& operator=(const GroupGuard&) = delete;
};

}  // namespace

Run run(const std::vector<std::string>& argv, int timeout_s) {
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
  // A process group of its own (pgid = its pid): a timeout kills everything it started, not only
  // the direct child (a wrapper script's ptxas would otherwise run on, reparented to init).
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0].c_str(), &fa, &attr, args.data(), environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&fa);
  ::close(pipefd[1]);
  if (rc != 0) {
    ::close(pipefd[0]);
    r.error = "cannot run " + argv[0] + ": " + std::strerror(rc);
    return r;
  }
  const GroupGuard guard(pid);
  // Read until end of file or the deadline; a program that hangs is killed rather than waited for.
  // End of file comes when every process holding the pipe is gone, grandchildren too.
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + std::chrono::seconds(timeout_s);
  char buf[4096];
  for (;;) {
    if (timeout_s > 0) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
      pollfd pfd{pipefd[0], POLLIN, 0};
      const int ready = left > 0 ? ::poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left, 1 << 30))) : 0;
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0) {
        ::kill(-pid, SIGKILL);
        r.timed_out = true;
        break;
      }
    }
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

std::optional<ToolVersion> parse_ptxas_version(std::string_view output) {
  // "Cuda compilation tools, release 13.0, V13.0.88". from_chars, not stoi: a tool printing
  // "release 99999999999.0" must give "no release", not an exception.
  constexpr std::string_view key = "release ";
  for (size_t at = output.find(key); at != std::string_view::npos; at = output.find(key, at + 1)) {
    const char* p = output.data() + at + key.size();
    const char* end = output.data() + output.size();
    ToolVersion v;
    auto [q, ec] = std::from_chars(p, end, v.major);
    if (ec != std::errc() || q == p || q == end || *q != '.') continue;
    auto [q2, ec2] = std::from_chars(q + 1, end, v.minor);
    if (ec2 != std::errc() || q2 == q + 1) continue;
    v.text = std::string(output.substr(at, static_cast<size_t>(q2 - (output.data() + at))));
    return v;
  }
  return std::nullopt;
}

std::optional<ToolVersion> ptxas_version(const std::string& ptxas) {
  Run r = run({ptxas, "--version"}, 60);
  if (!r.launched || r.exit_code != 0) return std::nullopt;
  return parse_ptxas_version(r.output);
}

std::optional<int> ptxas_timeout_s(std::string& error) {
  const char* t = std::getenv("PTXGEN_PTXAS_TIMEOUT");
  if (!t) return 600;
  int v = 0;
  const char* end = t + std::strlen(t);
  const auto r = std::from_chars(t, end, v);
  if (*t != '\0' && r.ec == std::errc() && r.ptr == end && v > 0) return v;
  std::string shown;
  for (const char* c = t; *c && shown.size() < 40; ++c) shown += (*c >= 0x20 && *c < 0x7f) ? *c : '?';
  error = "PTXGEN_PTXAS_TIMEOUT=\"" + shown + "\" is not a number of seconds: give a whole number from 1 to 2147483647 "
          "(or unset it for the default, 600)";
  return std::nullopt;
}

Ptxas ptxas_for(std::string_view target, int min_major, int min_minor) {
  Ptxas p;
  const std::string need = "CUDA " + std::to_string(min_major) + "." + std::to_string(min_minor);
  const std::string install = "  = help: install the CUDA toolkit " + std::to_string(min_major) + "." +
                              std::to_string(min_minor) + " or newer (https://developer.nvidia.com/cuda-downloads; "
                              "ptxas is in its bin/), or name a ptxas with PTXGEN_PTXAS or CUDA_HOME\n";
  if (const char* forced = std::getenv("PTXGEN_PTXAS"); forced && !executable(forced)) {
    p.error = "error: PTXGEN_PTXAS=" + std::string(forced) + " is not an executable file\n" + install;
    return p;
  }
  auto found = find_ptxas();
  if (!found) {
    p.error = "error: ptxas not found (looked in PATH, $CUDA_HOME/bin, /usr/local/cuda/bin); " +
              std::string(target) + " needs " + need + " or newer\n" + install;
    return p;
  }
  p.path = *found;
  std::string bad;
  const Run r = run({p.path, "--version"}, std::min(60, ptxas_timeout_s(bad).value_or(600)));
  const auto shown = [&] { return r.output.empty() ? std::string() : "ptxas said:\n" + r.output + (r.output.back() == '\n' ? "" : "\n"); };
  if (!r.launched) {
    p.error = "error: " + r.error + "\n" + install;
    return p;
  }
  auto v = r.timed_out || r.exit_code != 0 ? std::nullopt : parse_ptxas_version(r.output);
  if (!v) {
    p.error = "error: " + p.path + " --version " +
              (r.timed_out ? "did not answer in time" : r.exit_code != 0 ? "failed (exit " + std::to_string(r.exit_code) + ")"
                                                                        : "did not report a CUDA release") +
              "\n" + shown() + install;
    return p;
  }
  p.version = *v;
  if (v->major < min_major || (v->major == min_major && v->minor < min_minor)) {
    p.error = "error: " + p.path + " is CUDA " + std::to_string(v->major) + "." + std::to_string(v->minor) + "; " +
              std::string(target) + " needs " + need + " or newer\n" + install;
    return p;
  }
  return p;
}

}  // namespace ptxgen::io
