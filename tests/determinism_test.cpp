// Determinism: the same spec gives byte-identical outputs across runs, working directories,
// locales, and key orders (and layouts) of the JSON. Every output in kOutputs is compared for
// every spec in specs/ again, under key orders and from a relative path, and for a sixth of them
// under every working directory, locale and environment too; a new output (the launch manifest,
// say) is one more line in kOutputs.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"

using namespace support;
using ptxgen::io::Run;

namespace {

// One output of ptxgen for a spec: the arguments, with "{spec}" standing for the spec's path.
struct Output {
  std::string name;
  std::vector<std::string> args;
};
const std::vector<Output> kOutputs = {
    {"ptx", {"emit", "{spec}", "-o", "-"}},
    {"plan --json", {"plan", "{spec}", "--json"}},
    {"plan", {"plan", "{spec}"}},
    {"manifest", {"manifest", "{spec}", "-o", "-"}},
};

// A way of running ptxgen: environment assignments for /usr/bin/env and a working directory.
struct Setting {
  std::string name;
  std::vector<std::string> env;
  std::string cwd;  // empty: the test's own
};

std::string command(const Setting& s, const Output& o, const std::string& spec) {
  std::string cmd = s.cwd.empty() ? "" : "cd " + sh_quote(s.cwd) + " && ";
  cmd += "/usr/bin/env";
  for (const auto& e : s.env) cmd += " " + sh_quote(e);
  cmd += " " + sh_quote(bin());
  for (const auto& a : o.args) cmd += " " + sh_quote(a == "{spec}" ? spec : a);
  return cmd + " 2>/dev/null";  // standard output only: stderr names the spec's path
}

std::string run_output(const Setting& s, const Output& o, const std::string& spec) {
  Run r = shell(command(s, o, spec));
  REQUIRE_MESSAGE(r.exit_code == 0, command(s, o, spec));
  return r.output;
}

// The same JSON with every object's members in another order, and laid out differently.
nlohmann::ordered_json reorder(const nlohmann::ordered_json& j, int how) {
  if (j.is_array()) {
    nlohmann::ordered_json a = nlohmann::ordered_json::array();
    for (const auto& e : j) a.push_back(reorder(e, how));
    return a;
  }
  if (!j.is_object()) return j;
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  if (how == 0) std::reverse(keys.begin(), keys.end());
  if (how == 1 && !keys.empty()) std::rotate(keys.begin(), keys.begin() + 1, keys.end());
  if (how == 2) std::sort(keys.begin(), keys.end(), std::greater<>());
  nlohmann::ordered_json o = nlohmann::ordered_json::object();
  for (const auto& k : keys) o[k] = reorder(j[k], how);
  return o;
}

// A de_DE.UTF-8 locale compiled into a private directory (LOCPATH), so the test needs no system
// configuration, only the `locales` sources (tools/setup-deps installs them).
struct GermanLocale {
  TempDir dir;
  std::vector<std::string> env;
  GermanLocale() {
    Run r = ptxgen::io::run({"/usr/bin/localedef", "-i", "de_DE", "-f", "UTF-8", dir / "de_DE.UTF-8"});
    REQUIRE_MESSAGE(r.exit_code == 0, "localedef de_DE.UTF-8 failed (apt-get install locales):\n" << r.output);
    env = {"LOCPATH=" + dir.path.string(), "LC_ALL=de_DE.UTF-8"};
    // The locale is real: its decimal point is a comma.
    Run check = shell("/usr/bin/env " + sh_quote(env[0]) + " " + sh_quote(env[1]) + " locale -k decimal_point");
    REQUIRE_MESSAGE(check.output.find("decimal_point=\",\"") != std::string::npos, check.output);
  }
};

}  // namespace

TEST_SUITE("determinism") {
TEST_CASE("every spec: the same bytes across runs, working directories, locales and key orders") {
  TempDir work;
  GermanLocale german;
  const std::string root = source_root();
  const std::vector<Setting> settings = {
      {"again", {}, ""},
      {"cwd /", {}, "/"},
      {"cwd temp", {}, work.path.string()},
      {"LC_ALL=C", {"LC_ALL=C"}, ""},
      {"LC_ALL=POSIX", {"LC_ALL=POSIX"}, ""},
      {"LC_ALL=C.UTF-8", {"LC_ALL=C.UTF-8"}, ""},
      {"de_DE.UTF-8", german.env, ""},
      {"LANG, LC_NUMERIC de_DE", {"-u", "LC_ALL", german.env[0], "LANG=de_DE.UTF-8", "LC_NUMERIC=de_DE.UTF-8"},
       work.path.string()},
      {"empty environment, TZ", {"-i", "TZ=Pacific/Chatham"}, ""},
  };
  int compared = 0, everywhere = 0;
  const std::vector<std::string> files = spec_files();
  for (size_t index = 0; index < files.size(); ++index) {
    const std::string& file = files[index];
    CAPTURE(file);
    // The working directories, locales and environments change nothing a spec decides, so every
    // sixth spec in name order (gemm and program specs of every family, about 30) meets them all;
    // every spec runs again and under the key orders and the relative path, which go through its
    // own parsing (the golden test compares each one's PTX too).
    const bool all_settings = index % 6 == 0;
    everywhere += all_settings;
    const std::string text = slurp(file);
    // The spec under other key orders and layouts, and under a relative path from another directory.
    const auto j = nlohmann::ordered_json::parse(text);
    std::vector<std::pair<std::string, std::string>> copies;  // (what, path)
    for (int how = 0; how < 3; ++how) {
      const std::string p = work / ("order" + std::to_string(how) + ".json");
      write(p, reorder(j, how).dump(how == 1 ? -1 : 4 * how));
      copies.emplace_back("key order " + std::to_string(how), p);
    }
    for (const auto& out : kOutputs) {
      CAPTURE(out.name);
      const std::string base = run_output({"base", {}, root}, out, file);
      REQUIRE(!base.empty());
      for (const auto& s : settings) {
        if (!all_settings && s.name != "again") continue;
        CAPTURE(s.name);
        CHECK(run_output(s, out, file) == base);
        ++compared;
      }
      for (const auto& copy : copies) {
        CAPTURE(copy.first);
        CHECK(run_output({"", {}, ""}, out, copy.second) == base);
        ++compared;
      }
      write(work / "relative.json", text);
      CHECK(run_output({"relative path", {}, work.path.string()}, out, "relative.json") == base);
      ++compared;
    }
  }
  CHECK(everywhere >= 25);
  CHECK(compared == static_cast<int>(kOutputs.size()) *
                        (everywhere * static_cast<int>(settings.size() + 4) + static_cast<int>(files.size() - everywhere) * 5));
}

TEST_CASE("emit without -o writes NAME.ptx in the working directory: the same bytes from any") {
  TempDir a, b;
  const std::string spec = spec_path("gemm_bf16_a_tmem_m256");
  REQUIRE(shell("cd " + sh_quote(a.path.string()) + " && " + sh_quote(bin()) + " emit " + sh_quote(spec)).exit_code == 0);
  REQUIRE(shell("cd " + sh_quote(b.path.string()) + " && LC_ALL=C.UTF-8 " + sh_quote(bin()) + " emit " + sh_quote(spec))
              .exit_code == 0);
  CHECK(a.entries() == std::vector<std::string>{"gemm_bf16_a_tmem_m256.ptx"});
  CHECK(slurp(a / "gemm_bf16_a_tmem_m256.ptx") == slurp(b / "gemm_bf16_a_tmem_m256.ptx"));
  CHECK(slurp(a / "gemm_bf16_a_tmem_m256.ptx") == slurp(source_root() + "/golden/gemm_bf16_a_tmem_m256.ptx"));
}
}
