// Writes the negative tests as fuzzing seeds: for every rule of the table its failing and its fixed
// example, plus the example bases (gemm and program), one file each in DIR. tools/fuzz adds specs/
// and the regressions.
#include <cstdio>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "ptxgen/rules.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  auto put = [&](const std::string& name, const std::string& text) {
    std::ofstream f(dir + "/" + name, std::ios::binary);
    f << text;
    if (!f) {
      std::fprintf(stderr, "cannot write %s/%s\n", dir.c_str(), name.c_str());
      std::exit(1);
    }
  };
  put("example_base.json", std::string(ptxgen::rules::example_base()));
  put("example_program_base.json", std::string(ptxgen::rules::example_program_base()));
  // The shapes hostile input took (issue: linear views and op lists): a deep view chain, a long
  // list of tmem_store ops, numbers written as floats and beyond double, each within the
  // fuzzer's 16 KB inputs.
  {
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(ptxgen::rules::example_program_base());
    auto& tmem = j["program"]["tmem"];
    std::string prev = "t";
    for (int i = 0; i < 120; ++i) {
      const std::string n = "v" + std::to_string(i);
      tmem[n] = {{"slice", {{"of", prev}, {"columns", {0, 128}}}}};
      prev = n;
    }
    put("hostile_deep_chain.json", j.dump());
  }
  {
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(ptxgen::rules::example_program_base());
    auto& ops = j["program"]["ops"];
    for (int i = 0; i < 150; ++i) ops.push_back({{"op", "store"}, {"regs", "r"}, {"dst", "D"}});
    put("hostile_long_op_list.json", j.dump());
  }
  {
    std::string base(ptxgen::rules::example_base());
    auto replace = [&](const std::string& from, const std::string& to) {
      std::string s = base;
      const size_t at = s.find(from);
      if (at != std::string::npos) s.replace(at, from.size(), to);
      return s;
    };
    put("hostile_number_1e400.json", replace("\"m\": 4096", "\"m\": 1e400"));
    put("hostile_number_tiny.json", replace("\"m\": 4096", "\"m\": 1e-400"));
    put("hostile_number_integral_float.json", replace("\"m\": 128", "\"m\": 128.0"));
    put("hostile_number_fraction.json", replace("\"m\": 128", "\"m\": 64.5"));
  }
  for (const auto& r : ptxgen::rules::table()) {
    put("rule_" + std::string(r.id) + "_bad.json", ptxgen::rules::bad_document(r));
    put("rule_" + std::string(r.id) + "_good.json", ptxgen::rules::good_document(r));
  }
  return 0;
}
