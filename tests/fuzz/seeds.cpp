// Writes the negative tests as fuzzing seeds: for every rule of the table its failing and its fixed
// example, plus the example bases (gemm and program), one file each in DIR. tools/fuzz adds specs/
// and the regressions.
#include <cstdio>
#include <fstream>
#include <string>

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
  for (const auto& r : ptxgen::rules::table()) {
    put("rule_" + std::string(r.id) + "_bad.json", ptxgen::rules::bad_document(r));
    put("rule_" + std::string(r.id) + "_good.json", ptxgen::rules::good_document(r));
  }
  return 0;
}
