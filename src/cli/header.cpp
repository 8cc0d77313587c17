// The launch header: the runtime (launch_runtime.inc, the same in every header), then per kernel
// its cubins, tables read off its launch manifests, and typed functions over them.
#include "header.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

namespace ptxgen::cli {

namespace {

const char kRuntime[] =
#include "launch_runtime.inc"
    ;

using ojson = nlohmann::ordered_json;

// Names a kernel cannot take: C++'s keywords and alternative tokens, and what the header's
// namespace already holds.
const std::set<std::string>& reserved() {
  static const std::set<std::string> r = {
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch", "char",
      "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr", "constinit",
      "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete", "do", "double",
      "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto", "if",
      "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr", "operator", "or",
      "or_eq", "private", "protected", "public", "register", "reinterpret_cast", "requires", "return", "short",
      "signed", "sizeof", "static", "static_assert", "static_cast", "struct", "switch", "template", "this",
      "thread_local", "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual",
      "void", "volatile", "wchar_t", "while", "xor", "xor_eq",
      // the header's own names in namespace ptxgen
      "f16", "bf16", "e4m3", "e5m2", "ue8m0", "ue4m3", "e2m1x2", "e2m3x16", "e3m2x16", "e2m1x16_padded",
      "e2m3x16_padded", "e3m2x16_padded", "device_pointer", "TensorInfo", "KernelInfo", "last_error", "detail",
      "Launch", "launch", "launch1", "std", "stream", "size"};
  return r;
}

// Macros under names a spec may write: those of the header's includes (cuda.h, the C and C++
// library, cuda_fp16/bf16/fp8.h) as g++ and clang++ define them in -std=c++17 and -std=gnu++17
// (tools/update-cpp-macros, which tests/header_test.cpp holds to account), and the compilers'
// predefined ones of other hosts and of headers a user's file commonly includes first.
const std::set<std::string>& macros() {
  static const std::set<std::string> m = {
#include "cpp_macros.inc"
      // gnu++ modes on other hosts (GCC's and clang's target macros without underscores)
      "i386", "sun", "sparc", "mips", "vax", "m68k", "mc68000", "hppa", "ns32000", "pyr", "sequent", "nvptx",
      // <cassert>, <csetjmp>, <cmath>, <cerrno>, <csignal>, <clocale>, <ccomplex>
      "setjmp", "math_errhandling", "complex", "imaginary", "NDEBUG", "I"};
  return m;
}

}  // namespace

// Why `name` cannot name a C++ entity of the header (a function, a type, a parameter), if it
// cannot: every identifier the header makes of a spec's name passes through here.
std::string name_problem(const std::string& name) {
  if (reserved().count(name)) return "is a C++ keyword or a name the header itself uses";
  if (name.find("__") != std::string::npos || (name.size() > 1 && name[0] == '_' && std::isupper(name[1])))
    return "is reserved to the C++ implementation (a double underscore, or an underscore and a capital)";
  for (const char* p : {"CU_", "CUDA_", "PTXGEN_"})
    if (name.rfind(p, 0) == 0)
      return std::string("begins with ") + p + ", the prefix of cuda.h's and the header's macros";
  if (name.size() > 2 && name.rfind("cu", 0) == 0 && std::isupper(static_cast<unsigned char>(name[2])))
    return "begins like cuda.h's driver functions (cu and a capital), many of which are macros";
  if (macros().count(name))
    return "is a macro of the C and C++ library or cuda.h, which the header includes, or one g++ or clang predefines "
           "(-std=gnu++17): the header's code would not compile";
  return "";
}

namespace {

// Storage bits of one element in global memory. Gemm tensors are packed (4- and 6-bit types
// too: the 16U4/16U6 tensor-map types read packed global memory); program tensors say theirs.
int gemm_bits(const std::string& dtype) {
  static const std::map<std::string, int> bits = {{"f16", 16}, {"bf16", 16}, {"tf32", 32}, {"f32", 32},
                                                  {"s32", 32}, {"e4m3", 8},  {"e5m2", 8},  {"s8", 8},
                                                  {"u8", 8},   {"e2m3", 6},  {"e3m2", 6},  {"e2m1", 4}};
  const auto it = bits.find(dtype);
  if (it == bits.end()) throw std::logic_error("launch header: no storage size for gemm dtype " + dtype);
  return it->second;
}

// The C++ type a tensor argument points to (the runtime's element types).
std::string cpp_type(const std::string& dtype, int bits) {
  static const std::map<std::string, std::string> whole = {
      {"f16", "f16"},          {"bf16", "bf16"},      {"tf32", "float"},      {"f32", "float"},
      {"s32", "std::int32_t"}, {"s8", "std::int8_t"}, {"u8", "std::uint8_t"}, {"b8", "std::uint8_t"},
      {"e4m3", "e4m3"},        {"e5m2", "e5m2"},      {"ue8m0", "ue8m0"},     {"ue4m3", "ue4m3"}};
  if (auto it = whole.find(dtype); it != whole.end()) return it->second;
  if (dtype == "e2m1" && bits == 4) return "e2m1x2";
  if ((dtype == "e2m3" || dtype == "e3m2") && bits == 6) return dtype + "x16";
  if ((dtype == "e2m1" || dtype == "e2m3" || dtype == "e3m2") && bits == 8) return dtype + "x16_padded";
  throw std::logic_error("launch header: no C++ type for dtype " + dtype + " at " + std::to_string(bits) + " bits");
}

// The same, as the X-macro lists name it (outside namespace ptxgen).
std::string qualified(const std::string& t) {
  if (t == "float") return t;
  if (t.rfind("std::", 0) == 0) return "::" + t;
  return "::ptxgen::" + t;
}

int unit_bits(const std::string& map_type) {
  static const std::map<std::string, int> bits = {
      {"UINT8", 8},         {"UINT16", 16},      {"UINT32", 32},       {"INT32", 32},
      {"UINT64", 64},       {"INT64", 64},       {"FLOAT16", 16},      {"FLOAT32", 32},
      {"FLOAT64", 64},      {"BFLOAT16", 16},    {"FLOAT32_FTZ", 32},  {"TFLOAT32", 32},
      {"TFLOAT32_FTZ", 32}, {"16U4_ALIGN8B", 4}, {"16U4_ALIGN16B", 4}, {"16U6_ALIGN16B", 6}};
  const std::string prefix = "CU_TENSOR_MAP_DATA_TYPE_";
  const auto it = map_type.rfind(prefix, 0) == 0 ? bits.find(map_type.substr(prefix.size())) : bits.end();
  if (it == bits.end()) throw std::logic_error("launch header: unknown tensor-map data type " + map_type);
  return it->second;
}

// The compute capabilities (10 major + minor) a target's code runs on, and whether it is an 'a'
// target of exactly one.
struct RunsOn {
  int cc[2];
  bool exact;
};
RunsOn runs_on(const std::string& target) {
  static const std::map<std::string, RunsOn> t = {{"sm_90a", {{90, 0}, true}},
                                                  {"sm_100a", {{100, 0}, true}},
                                                  {"sm_100f", {{100, 103}, false}},
                                                  {"sm_103a", {{103, 0}, true}},
                                                  {"sm_110a", {{110, 0}, true}}};
  const auto it = t.find(target);
  if (it == t.end()) throw std::logic_error("launch header: no compute capability known for " + target);
  return it->second;
}

std::string quote(const std::string& s) { return "\"" + s + "\""; }

// A path or other text in a // comment: printable ASCII only.
std::string comment_text(const std::string& s) {
  std::string out;
  for (unsigned char c : s) out += c >= 32 && c < 127 ? static_cast<char>(c) : '?';
  return out;
}

// The bytes as a string literal, 100 source characters a line: printable ASCII as itself (but
// '"', '\\' and '?'), the rest as three-digit octal escapes, which cannot run into the next byte.
// A string literal compiles many times faster than a brace list of numbers.
std::string literal(const std::string& bytes) {
  std::string out = "\"";
  size_t line = 0;
  for (unsigned char c : bytes) {
    char buf[5];
    if (c >= 32 && c < 127 && c != '"' && c != '\\' && c != '?') {
      buf[0] = static_cast<char>(c);
      buf[1] = 0;
    } else {
      std::snprintf(buf, sizeof buf, "\\%03o", c);
    }
    out += buf;
    line += std::char_traits<char>::length(buf);
    if (line >= 100) {
      out += "\"\n\"";
      line = 0;
    }
  }
  return out + "\"";
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// One tensor argument, from the manifest's "tensors".
struct Tensor {
  std::string name, arg, dtype, format, type, ld_arg, contiguous_name;
  int bits = 0;
  int scale_vec = 0;  // block-scale factors in the 128x4 layout (gemm "scale"): one per scale_vec of k
  int k_div = 1;      // sparse A: its k extent holds k / 2 elements
  std::string sparsity;  // sparse A: "2:4", "1:2" (tf32) or "4:8" (the e2m1 kinds, in pairs)
  int metadata_k = 0; // sparsity metadata in atoms of 128 rows, read tile.k of k at a time
  int metadata_atom = 0;  // elements of k of one metadata atom: 128, or 64 for tf32, 256 for the e2m1 kinds
  std::string metadata_kind;  // the MMA kind whose atom order the metadata follows: "f16"
  int rows_size = -1, cols_size = -1;  // the kernel's size giving the extent (gemm: 0 m, 1 n, 2 k), -1 fixed
  int planes_size = -1;  // grouped GEMM: the size giving its planes, one per group (3 "groups"); -1: none
  int64_t rows = 0, cols = 0, ld = 0;
  bool cols_contiguous = true, written = false, mapped = false;
};

struct Map {
  int tensor = 0;
  int rank = 2;
  std::string type, interleave, swizzle, l2, oob;
  int64_t box[3] = {0, 0, 1}, element_strides[3] = {1, 1, 1};
  bool optional = false;  // read by the kernel only where the rows are 16-byte multiples apart
};

struct Param {
  std::string kind;  // "tensor_map", "global_pointer", "u32"
  int index = 0;
  int offset = 0;
};

struct Entry {
  std::string target, image;
  int64_t block[3] = {1, 1, 1}, cluster[3] = {1, 1, 1}, grid[3] = {1, 1, 1};
  int64_t shared = 0, tile_m = 0, tile_n = 0, cta_group = 0;
  int grid_m = 0, grid_n = 0;  // a grid of tiles: the sizes it walks (indices of Kernel::sizes)
  int grid_z = -1;             // grouped GEMM: the size the grid's z walks (the groups); -1: the cluster's z
  bool persistent = false;  // gemm: one CTA per multiprocessor, each walking tiles
  int64_t cluster_tiles[2] = {1, 1};  // the block of tiles a cluster covers (multicast clusters; a pair counts once)
  std::vector<Map> maps;
};

struct Kernel {
  std::string name, spec, level, accumulator;
  bool gemm = false;
  int64_t problem[3] = {0, 0, 0};  // gemm: m, n, k at the spec's sizes
  // The sizes the kernel takes at run time (gemm: m, n, k; a program its own, in name order) and
  // their values in the spec; the launch functions take them after the tensors, each as its own
  // type, ptxgen::size::NAME (`size_types`, "" for a derived size).
  std::vector<std::string> sizes;
  std::vector<std::string> size_types;
  std::vector<int64_t> size_values;
  // Sizes the kernel derives from others (after the parameters in `sizes`): ceil(of / div) * mul.
  struct Derived {
    int of = 0;
    int64_t div = 1, mul = 1;
    bool exact = false;  // `of` must be a multiple of `div` (a gated activation's n: even)
  };
  std::map<size_t, Derived> derived;  // index in `sizes` -> rule
  bool parameter(size_t size) const { return !derived.count(size); }
  std::vector<Tensor> tensors;
  std::vector<Param> params;
  int param_bytes = 0;
  std::vector<Entry> entries;
};

int size_index(const Kernel& k, const std::string& dim) {
  for (size_t i = 0; i < k.sizes.size(); ++i)
    if (k.sizes[i] == dim) return static_cast<int>(i);
  return -1;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

void need(bool ok, const Kernel& k, const std::string& what) {
  if (!ok) throw std::logic_error("launch header: " + k.name + ": " + what);
}

// A program's parameter name (a global tensor's or a size's): its own, unless C++, a macro or the
// header takes it; then the name without leading, trailing or doubled underscores (a__b -> a_b),
// alone or followed by "_" (int -> int_, EOF -> EOF_), "_2", "_3" ... until it is free, an x before
// a prefix no suffix frees (cuMemAlloc -> xcuMemAlloc). Such a name is a parameter
// only, which callers do not spell.
// `keep`: the names other parameters keep, which a renamed one does not take.
std::string arg_name(const std::string& name, std::set<std::string>& used, const std::set<std::string>& keep) {
  if (name_problem(name).empty() && !used.count(name)) {
    used.insert(name);
    return name;
  }
  std::string base;
  for (char c : name)
    if (c != '_' || (!base.empty() && base.back() != '_')) base += c;
  while (!base.empty() && base.back() == '_') base.pop_back();
  // A prefix C++ or cuda.h takes (cu and a capital, CU_, CUDA_, PTXGEN_) stays with any suffix: an x before it.
  if (base.empty() || !name_problem(base + "_").empty()) base = "x" + base;
  std::string a = base;
  for (int i = 1; !name_problem(a).empty() || used.count(a) || keep.count(a); ++i) a = base + "_" + (i == 1 ? "" : std::to_string(i));
  used.insert(a);
  return a;
}

Kernel read_kernel(const HeaderKernel& hk) {
  Kernel k;
  k.spec = hk.spec;
  if (hk.images.empty()) throw std::logic_error("launch header: a kernel without images");
  const ojson j0 = ojson::parse(hk.images.front().manifest);
  k.name = j0.at("entry").get<std::string>();
  k.level = j0.value("level", std::string("gemm"));
  k.gemm = k.level == "gemm";
  need(k.gemm || k.level == "program", k, "unknown level " + k.level);
  if (k.gemm) {
    k.accumulator = j0.at("accumulator").get<std::string>();
    for (int i = 0; i < 3; ++i) {
      k.problem[i] = j0.at("problem").at(std::string(1, "mnk"[i])).get<int64_t>();
      k.sizes.push_back(std::string(1, "mnk"[i]));
      k.size_types.push_back(k.sizes.back());
      k.size_values.push_back(k.problem[i]);
    }
    // Grouped GEMM (docs/spec.md, "Grouped GEMM"): G, the groups, after k.
    if (j0.contains("groups")) {
      const std::string g = j0.at("groups").at("count").get<std::string>();
      need(g == "groups" && j0.at("problem").contains(g), k, "groups counted by a size the kernel does not take");
      k.sizes.push_back(g);
      k.size_types.push_back(g);
      k.size_values.push_back(j0.at("problem").at(g).get<int64_t>());
    }
  } else {
    const ojson problem = j0.value("problem", ojson::object());
    for (const auto& [name, v] : problem.items()) {
      k.sizes.push_back(name);
      k.size_values.push_back(v.get<int64_t>());
    }
  }
  {
    // Sizes the kernel derives (a program's; a gated gemm's d = n / 2, D's columns), after the
    // parameters: no parameter, no type of their own.
    const ojson derived = j0.value("derived_sizes", ojson::object());
    for (const auto& [name, v] : derived.items()) {
      Kernel::Derived d;
      d.of = size_index(k, v.at("of").get<std::string>());
      need(d.of >= 0 && k.parameter(static_cast<size_t>(d.of)), k, "derived size " + name + " of a size that is no parameter");
      d.div = v.at("div").get<int64_t>();
      d.mul = v.at("mul").get<int64_t>();
      need(d.div >= 1 && d.mul >= 1 && d.mul <= d.div, k, "derived size " + name + " with a rule the header cannot take");
      d.exact = v.value("exact", false);
      k.derived[k.sizes.size()] = d;
      k.sizes.push_back(name);
      if (k.gemm) k.size_types.push_back("");
      k.size_values.push_back(v.at("value").get<int64_t>());
    }
  }
  // Tensors, in the manifest's order (gemm: A, B, D; programs: the globals in name order). A
  // parameter may not take a name the launch functions' bodies use (the kernel's own names).
  std::set<std::string> used;
  for (const char* suffix : {"_check", "_prepare", "_launch"}) used.insert(k.name + suffix);
  std::set<std::string> keep;  // a program's parameters that keep their names
  if (!k.gemm) {
    for (const auto& [name, t] : j0.at("tensors").items())
      if (name_problem(name).empty() && !used.count(name)) keep.insert(name);
    for (size_t i = 0; i < k.sizes.size(); ++i)
      if (k.parameter(i) && name_problem(k.sizes[i]).empty() && !used.count(k.sizes[i])) keep.insert(k.sizes[i]);
  }
  for (const auto& [name, t] : j0.at("tensors").items()) {
    Tensor x;
    x.name = name;
    x.dtype = t.at("dtype").get<std::string>();
    if (t.value("layout", std::string()) == "128x4") {
      // Block-scale factors (docs/spec.md, "Block scaling"): bytes, their extents the sizes'.
      need(k.gemm, k, "block-scale factors " + name + " outside a gemm kernel");
      const auto dims = t.at("dims").get<std::vector<std::string>>();
      // An operand's factors run along k; D's (a quantized D, written by the kernel) along D's columns.
      const bool of_d = t.value("scales", std::string()) == "D";
      need(dims.size() == 2 && size_index(k, dims[0]) >= 0 && (of_d ? size_index(k, dims[1]) >= 0 : dims[1] == "k"), k,
           "block-scale factors " + name + (of_d ? " not over D's rows and columns" : " not over k"));
      x.format = "128x4";
      x.bits = 8;
      x.type = cpp_type(x.dtype, 8);
      x.scale_vec = t.at("vec").get<int>();
      need(x.scale_vec > 0, k, "block-scale factors " + name + " without a vector size");
      x.rows = t.at("shape").at(0).get<int64_t>();
      x.cols = t.at("shape").at(1).get<int64_t>();
      x.rows_size = size_index(k, dims[0]);
      x.cols_size = size_index(k, dims[1]);
      x.contiguous_name = dims[1];
      x.arg = lower(name);
      need(used.insert(x.arg).second, k, "two tensors named " + x.arg);
      x.written = of_d;
      need(!of_d || std::find(hk.written.begin(), hk.written.end(), name) != hk.written.end(), k, "D's block-scale factors " + name + " not written");
      k.tensors.push_back(x);
      continue;
    }
    if (const std::string lay = t.value("layout", std::string()); lay == "128x128 atoms" || lay == "128x64 atoms" || lay == "128x256 atoms") {
      // Sparsity metadata of sparse A (docs/spec.md, "Sparse A"): bytes, their extents the sizes';
      // atoms of 128 rows by 128 elements of k (64 for .kind::tf32's 1:2, 256 for the e2m1 kinds' 4:8).
      need(k.gemm && t.at("dims") == ojson{"m", "k"}, k, "sparsity metadata " + name + " not over m and k");
      x.format = lay;
      x.metadata_atom = lay == "128x64 atoms" ? 64 : lay == "128x256 atoms" ? 256 : 128;
      x.sparsity = t.at("sparsity").get<std::string>();
      x.metadata_kind = t.at("kind").get<std::string>();
      x.bits = 8;
      x.type = cpp_type(x.dtype, 8);
      x.metadata_k = j0.at("tile").at("k").get<int>();
      x.rows = t.at("shape").at(0).get<int64_t>();
      x.cols = t.at("shape").at(1).get<int64_t>();
      x.rows_size = 0;
      x.cols_size = 2;
      x.contiguous_name = "k";
      x.arg = lower(name);
      need(used.insert(x.arg).second, k, "two tensors named " + x.arg);
      k.tensors.push_back(x);
      continue;
    }
    x.format = t.value("format", std::string());
    x.sparsity = t.value("sparse", std::string());
    if (x.sparsity == "2:4" || x.sparsity == "1:2" || x.sparsity == "4:8") x.k_div = 2;  // sparse A: M x K/2
    x.bits = k.gemm ? gemm_bits(x.dtype) : t.at("storage_bits").get<int>();
    x.type = cpp_type(x.dtype, x.bits);
    const auto dims = t.at("dims").get<std::vector<std::string>>();
    need(dims.size() == 2, k, "tensor " + name + " is not two-dimensional");
    x.rows = t.at("shape").at(0).get<int64_t>();
    x.cols = t.at("shape").at(1).get<int64_t>();
    x.cols_contiguous = t.at("contiguous").get<std::string>() == dims[1];
    x.contiguous_name = x.cols_contiguous ? dims[1] : dims[0];
    if (x.k_div > 1) x.contiguous_name += "/" + std::to_string(x.k_div);  // "k/2": a C++ expression too (short forms)
    x.ld = t.at("leading_dimension").get<int64_t>();
    x.rows_size = size_index(k, dims[0]);
    x.cols_size = size_index(k, dims[1]);
    if (t.contains("groups")) {
      x.planes_size = size_index(k, t.at("groups").get<std::string>());
      need(k.gemm && x.planes_size >= 0, k, "tensor " + name + " in groups the kernel does not take");
    }
    if (k.gemm) {
      // A fused epilogue's bias is one row of n or one column of m (its other dim "1", fixed).
      need((x.rows_size >= 0 || dims[0] == "1") && (x.cols_size >= 0 || dims[1] == "1"), k,
           "tensor " + name + " has dims other than m, n, k");
      x.arg = lower(name);
      need(used.insert(x.arg).second, k, "two tensors named " + x.arg);
    } else {
      x.arg = arg_name(name, used, keep);
    }
    x.written = std::find(hk.written.begin(), hk.written.end(), name) != hk.written.end();
    k.tensors.push_back(x);
  }
  auto tensor_index = [&](const std::string& name) {
    for (size_t i = 0; i < k.tensors.size(); ++i)
      if (k.tensors[i].name == name) return static_cast<int>(i);
    throw std::logic_error("launch header: " + k.name + ": a parameter names tensor " + name + ", which is not listed");
  };
  // The .param list: tensor maps (128 bytes, 64-byte aligned), addresses (u64), sizes (u32).
  const ojson& params = j0.at("params");
  for (const auto& p : params) {
    Param x;
    x.kind = p.at("kind").get<std::string>();
    int align = 0, size = 0;
    if (x.kind == "tensor_map") {
      align = 64, size = 128;
      k.tensors[static_cast<size_t>(tensor_index(p.at("tensor").get<std::string>()))].mapped = true;
    } else if (x.kind == "global_pointer") {
      align = 8, size = 8;
      x.index = tensor_index(p.at("tensor").get<std::string>());
    } else if (x.kind == "u32") {
      align = 4, size = 4;
      x.index = size_index(k, p.at("name").get<std::string>());
      need(x.index >= 0, k, "a u32 parameter that is not one of the kernel's sizes");
    } else {
      need(false, k, "unknown parameter kind " + x.kind);
    }
    x.offset = static_cast<int>(round_up(k.param_bytes, align));
    k.param_bytes = x.offset + size;
    k.params.push_back(x);
  }
  need(!k.params.empty() && k.param_bytes < 65536, k, "a parameter list the header cannot lay out");
  // A gemm's inputs take a leading dimension (their tensor maps carry it); D is m x n with rows n
  // apart whichever epilogue stores it, so one spec's launch function does not change with it.
  if (k.gemm)
    for (auto& t : k.tensors)
      if (t.mapped && !t.written && !t.scale_vec && !t.metadata_k) t.ld_arg = "ld" + t.arg;
  // One entry per target; each must have the same parameters (the launch functions are shared).
  for (const HeaderImage& im : hk.images) {
    const ojson j = ojson::parse(im.manifest);
    need(j.at("entry") == k.name && j.at("params") == params && j.value("level", std::string("gemm")) == k.level, k,
         "the targets' manifests differ in entry, level or parameters");
    Entry e;
    e.target = j.at("target").get<std::string>();
    e.image = im.cubin;
    for (int i = 0; i < 3; ++i) {
      e.block[i] = j.at("block").at(i).get<int64_t>();
      e.cluster[i] = j.at("cluster").at(i).get<int64_t>();
      e.grid[i] = j.at("grid").at(i).get<int64_t>();
    }
    e.shared = j.at("dynamic_shared_memory_bytes").get<int64_t>();
    if (j.contains("tile")) {
      e.tile_m = j.at("tile").at("m").get<int64_t>();
      e.tile_n = j.at("tile").at("n").get<int64_t>();
      e.cta_group = j.at("cta_group").get<int64_t>();
      e.persistent = j.value("schedule", std::string("data_parallel")) == "persistent";
      if (j.contains("cluster_tiles")) {
        e.cluster_tiles[0] = j.at("cluster_tiles").at("m").get<int64_t>();
        e.cluster_tiles[1] = j.at("cluster_tiles").at("n").get<int64_t>();
      }
      // The sizes the grid walks: a gemm's m and n, a program's its grid names.
      const ojson gs = j.value("grid_sizes", ojson{"m", "n"});
      e.grid_m = size_index(k, gs.at(0).get<std::string>());
      e.grid_n = size_index(k, gs.at(1).get<std::string>());
      if (j.contains("groups") && j.at("groups").at("layout") == "masked") e.grid_z = size_index(k, j.at("groups").at("count").get<std::string>());
      need(e.grid_m >= 0 && e.grid_n >= 0, k, "a grid over sizes the kernel does not take");
      // The run-time grid rule (the manifest's grid_rule) must give the manifest's grid (a
      // persistent grid: its most CTAs, one per tile; the launch takes at most one per multiprocessor).
      const int64_t tiles_n = ceil_div(k.size_values[static_cast<size_t>(e.grid_n)], e.tile_n),
                    tiles_m = ceil_div(k.size_values[static_cast<size_t>(e.grid_m)], e.tile_m);
      const int64_t blocks = ceil_div(tiles_n, e.cluster_tiles[1]) * ceil_div(tiles_m, e.cluster_tiles[0]);
      // A persistent masked grouped grid: the tiles of every group's capacity (grid_z, as in gemm_grid).
      const int64_t planes = e.persistent && e.grid_z >= 0 ? k.size_values[static_cast<size_t>(e.grid_z)] : 1;
      const int64_t g[3] = {e.persistent ? blocks * e.cluster[0] * e.cluster[1] * e.cluster[2] * planes : round_up(tiles_n * e.cta_group, e.cluster[0]),
                            e.persistent ? 1 : round_up(tiles_m, e.cluster[1]),
                            e.persistent ? 1 : e.grid_z >= 0 ? k.size_values[static_cast<size_t>(e.grid_z)] : e.cluster[2]};
      need(g[0] == e.grid[0] && g[1] == e.grid[1] && g[2] == e.grid[2], k,
           "the manifest's grid is not its grid_rule at the spec's sizes");
    }
    for (const auto& m : j.value("tensor_maps", ojson::array())) {
      Map x;
      const std::string tname = m.at("tensor").get<std::string>();
      x.tensor = tensor_index(tname);
      x.type = m.at("data_type").get<std::string>();
      x.interleave = m.at("interleave").get<std::string>();
      x.swizzle = m.at("swizzle").get<std::string>();
      x.l2 = m.at("l2_promotion").get<std::string>();
      x.oob = m.at("oob_fill").get<std::string>();
      x.optional = m.value("optional", false);
      const Tensor& t = k.tensors[static_cast<size_t>(x.tensor)];
      x.rank = m.at("rank").get<int>();
      need(x.rank == (t.scale_vec || t.metadata_k || t.planes_size >= 0 ? 3 : 2), k, "a tensor map of rank " + std::to_string(x.rank) + " for " + tname);
      for (int i = 0; i < x.rank; ++i) {
        x.box[i] = m.at("box_dims").at(i).get<int64_t>();
        x.element_strides[i] = m.at("element_strides").at(i).get<int64_t>();
      }
      if (t.metadata_k) {
        // Planes of one atom column (128 of k, tf32 64), each m padded to 128 rows of 16 bytes (the runtime's rule).
        const int64_t rows = round_up(k.problem[0], 128);
        need(m.at("global_dims") == ojson{16, rows, ceil_div(k.problem[2], t.metadata_atom)} && m.at("global_strides_bytes") == ojson{16, rows * 16} &&
                 x.box[2] == 1,
             k, "tensor map of " + tname + " is not its sparsity metadata's planes");
        e.maps.push_back(x);
        continue;
      }
      if (t.scale_vec) {
        // Planes of 128 rows, each 32 lines of 16 bytes per 4 factors of a row (the runtime's rule).
        const int64_t lines = ceil_div(ceil_div(k.problem[2], t.scale_vec), 4) * 32;
        need(m.at("global_dims") == ojson{16, lines, ceil_div(k.problem[t.rows_size], 128)} &&
                 m.at("global_strides_bytes") == ojson{16, lines * 16} && x.box[2] == 1,
             k, "tensor map of " + tname + " is not its block-scale factors' planes");
        e.maps.push_back(x);
        continue;
      }
      // What the header encodes at run time must be the manifest's map at the spec's sizes.
      const int64_t contiguous = t.cols_contiguous ? t.cols : t.rows, other = t.cols_contiguous ? t.rows : t.cols;
      need(m.at("global_dims").at(0).get<int64_t>() * unit_bits(x.type) == contiguous * t.bits &&
               m.at("global_dims").at(1).get<int64_t>() == other &&
               m.at("global_strides_bytes").at(0).get<int64_t>() * 8 == t.ld * t.bits,
           k, "tensor map of " + tname + " is not its tensor's extents and leading dimension");
      // A grouped tensor's planes: one per group, rows x ld elements apart (the runtime's rule).
      need(t.planes_size < 0 || (m.at("global_dims").at(2).get<int64_t>() == k.size_values[static_cast<size_t>(t.planes_size)] &&
                                 m.at("global_strides_bytes").at(1).get<int64_t>() * 8 == other * t.ld * t.bits && x.box[2] == 1),
           k, "tensor map of " + tname + " is not its groups' planes");
      e.maps.push_back(x);
    }
    k.entries.push_back(e);
  }
  // Tensor-map parameters index the entry's maps by position; check every entry has them in order.
  int map_i = 0;
  for (size_t i = 0; i < k.params.size(); ++i)
    if (k.params[i].kind == "tensor_map") {
      const std::string pname = params.at(i).at("name").get<std::string>();
      for (size_t e = 0; e < hk.images.size(); ++e) {
        const ojson j = ojson::parse(hk.images[e].manifest);
        const ojson& maps = j.at("tensor_maps");
        need(static_cast<size_t>(map_i) < maps.size() && maps.at(static_cast<size_t>(map_i)).at("param") == pname, k,
             "tensor maps not in parameter order");
      }
      k.params[i].index = map_i++;
    }
  for (const Entry& e : k.entries) need(static_cast<int>(e.maps.size()) == map_i, k, "tensor maps without a parameter");
  // A program's sizes are parameters after its tensors: renamed as they are where C++, a macro or
  // a tensor takes the name (the header then speaks of the parameter's name throughout).
  if (!k.gemm) {
    // Each size's type, ptxgen::size::NAME, is named after the size alone (the same in every
    // kernel that takes a size of that name): the name where a struct can take it, else renamed
    // as a parameter is (a struct named `value` would hide its member; a leading underscore would
    // make its guard macro, PTXGEN_size_<NAME>, a reserved name).
    std::set<std::string> taken = {"value"}, kept;
    for (size_t i = 0; i < k.sizes.size(); ++i)
      if (k.parameter(i) && name_problem(k.sizes[i]).empty() && !taken.count(k.sizes[i]) && k.sizes[i][0] != '_')
        kept.insert(k.sizes[i]);
    k.size_types.assign(k.sizes.size(), "");
    for (size_t i = 0; i < k.sizes.size(); ++i)
      if (k.parameter(i)) {
        if (k.sizes[i][0] == '_') taken.insert(k.sizes[i]);
        k.size_types[i] = arg_name(k.sizes[i], taken, kept);
      }
    std::map<std::string, std::string> renamed;
    for (size_t i = 0; i < k.sizes.size(); ++i)
      if (k.parameter(i)) {
        const std::string a = arg_name(k.sizes[i], used, keep);
        if (a != k.sizes[i]) renamed[k.sizes[i]] = a, k.sizes[i] = a;
      }
    for (Tensor& t : k.tensors)
      if (auto it = renamed.find(t.contiguous_name); it != renamed.end()) t.contiguous_name = it->second;
  }
  return k;
}

// "const bf16* a, std::int64_t lda, ..." or the argument names alone.
std::string signature(const Kernel& k, bool with_ld, bool names_only) {
  std::vector<std::string> parts;
  for (const Tensor& t : k.tensors) {
    parts.push_back(names_only ? t.arg : (t.written ? "" : "const ") + t.type + "* " + t.arg);
    if (with_ld && !t.ld_arg.empty()) parts.push_back(names_only ? t.ld_arg : "::std::int64_t " + t.ld_arg);
  }
  for (size_t i = 0; i < k.sizes.size(); ++i)
    if (k.parameter(i)) parts.push_back(names_only ? k.sizes[i] : "size::" + k.size_types[i] + " " + k.sizes[i]);
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

// The tightly packed leading dimension of a gemm tensor: its contiguous extent (k.value / 2 for
// "k/2"), from the short form's size parameters.
std::string tight_ld(const Tensor& t) {
  const size_t slash = t.contiguous_name.find('/');
  return slash == std::string::npos
             ? t.contiguous_name + ".value"
             : t.contiguous_name.substr(0, slash) + ".value / " + t.contiguous_name.substr(slash + 1);
}

std::string shape_words(const Kernel& k, const Tensor& t) {
  if (!k.gemm) {
    auto extent = [&](int size, int64_t fixed) { return size < 0 ? std::to_string(fixed) : k.sizes[static_cast<size_t>(size)]; };
    return extent(t.rows_size, t.rows) + " x " + extent(t.cols_size, t.cols);
  }
  auto dim = [&](int i) {
    return i < 0 ? std::string("1") : k.sizes[static_cast<size_t>(i)] + (i == 2 && t.k_div > 1 ? "/" + std::to_string(t.k_div) : "");
  };
  return (t.planes_size >= 0 ? k.sizes[static_cast<size_t>(t.planes_size)] + " x " : std::string()) + dim(t.rows_size) + " x " + dim(t.cols_size) +
         (t.k_div > 1 ? " (" + t.sparsity + " sparse: " + (t.sparsity == "1:2" ? "one of every two" : t.sparsity == "4:8" ? "two pairs of every eight" : "two of every four") +
                              " elements of k)"
                      : "");
}

void write_doc(std::ostream& o, const Kernel& k) {
  std::string targets;
  for (const Entry& e : k.entries) targets += (targets.empty() ? "" : ", ") + e.target;
  o << "// ---- " << k.name << " ";
  o << std::string(k.name.size() < 88 ? 88 - k.name.size() : 2, '-') << "\n";
  // A gated gemm derives D's columns d = n / 2 (docs/spec.md, "Epilogues").
  const bool gated = k.gemm && !k.derived.empty();
  const bool grouped = k.gemm && k.sizes.size() > 3 && k.sizes[3] == "groups";
  const bool contiguous = grouped && k.tensors.back().name == "ends";  // the last tensor (after a bias)
  o << "// " << (gated     ? "D[m x d] = act(P[:, :d]) * P[:, d:], P = A[m x k] . B[k x n], d = n / 2"
                 : contiguous ? "D[i] = A[i] . B[g][k x n] for each row i of group g's segment of A's m rows, [align_up(ends[g - 1]), ends[g])\n"
                                "// (the padding rows after ends[g] in a tile that holds some of the group's are written with unspecified values,\n"
                                "// tiles of padding and past the last segment are not touched)"
                 : grouped ? "D[g][m x n] = A[g][m x k] . B[g][k x n] for each group g < groups, its rows below masked_m[g] (the rest of a tile\n"
                             "// that holds some is written with unspecified values, tiles past them are not touched)"
                 : k.gemm  ? "D[m x n] = A[m x k] . B[k x n]"
                           : "the program")
    << " of " << comment_text(k.spec)
    << ", for " << targets << ".\n";
  for (const Entry& e : k.entries) {
    o << "//   " << e.target << ": " << e.block[0] << " threads a CTA, cluster " << e.cluster[0] << "x" << e.cluster[1]
      << "x" << e.cluster[2] << ", " << e.shared << " bytes of dynamic shared memory";
    if (k.gemm && e.persistent && e.cluster_tiles[0] * e.cluster_tiles[1] > 1)
      o << ", grid min(ceil(ceil(" << k.sizes[static_cast<size_t>(e.grid_n)] << "/" << e.tile_n << ")/" << e.cluster_tiles[1] << ") * ceil(ceil(m/" << e.tile_m << ")/"
        << e.cluster_tiles[0] << "), the clusters the device holds at once)*" << e.cluster[0]
        << ", each cluster walking blocks of " << e.cluster_tiles[0] << " x " << e.cluster_tiles[1] << " tiles";
    else if (k.gemm && e.persistent && e.cta_group > 1)
      o << ", grid min(ceil(" << k.sizes[static_cast<size_t>(e.grid_n)] << "/" << e.tile_n << ") * ceil(m/" << e.tile_m << "), multiprocessors/" << e.cta_group << ")*" << e.cta_group
        << ", each CTA pair walking tiles";
    else if (k.gemm && e.persistent)
      o << ", grid min(ceil(" << k.sizes[static_cast<size_t>(e.grid_n)] << "/" << e.tile_n << ") * ceil(m/" << e.tile_m << "), multiprocessors), each CTA walking tiles";
    else if (e.tile_m)
      o << ", grid ceil(" << k.sizes[static_cast<size_t>(e.grid_n)] << "/" << e.tile_n << ")"
        << (e.cta_group > 1 ? "*" + std::to_string(e.cta_group) : "") << " x ceil(" << k.sizes[static_cast<size_t>(e.grid_m)]
        << "/" << e.tile_m << ")";
    else
      o << ", grid " << e.grid[0] << "x" << e.grid[1] << "x" << e.grid[2];
    o << "\n";
  }
  for (const Tensor& t : k.tensors) {
    if (t.metadata_k) {
      const std::string ka = std::to_string(t.metadata_atom);
      o << "//   " << t.arg << ": " << t.name << ", the sparsity metadata of A (" << t.sparsity << "): per row 4 bits per "
        << (t.sparsity == "1:2" ? 2 : t.sparsity == "4:8" ? 8 : 4) << " elements of k, in CUTLASS's sm_100 atoms for .kind::" << t.metadata_kind
        << " of 128 rows x " << ka << " of k (16 bytes a row), ceil(m/128) * ceil(k/" << ka << ") of 2048 bytes; k a multiple of "
        << t.metadata_k << "\n";
      continue;
    }
    if (t.scale_vec && t.written) {  // a quantized D's factors
      const std::string& cols = k.sizes[static_cast<size_t>(t.cols_size)];
      o << "//   " << t.arg << ": " << t.name << ", D's " << t.dtype << " block-scale factors (written), one per " << t.scale_vec
        << " elements of each of D's m rows, in the 128x4 layout: ceil(m/128) * ceil(" << cols << "/" << 4 * t.scale_vec
        << ") blocks of 512 bytes, " << cols << " a multiple of " << t.scale_vec << "; the kernel writes the factors of D's blocks and"
        << " leaves the padding as it finds it (zero it once)\n";
      continue;
    }
    if (t.scale_vec) {
      const char mn = "mnk"[t.rows_size];
      o << "//   " << t.arg << ": " << t.name << ", " << t.dtype << " block-scale factors, one per " << t.scale_vec
        << " elements of k of each of the " << mn << " " << (mn == 'm' ? "rows of A" : "columns of B") << ", in the 128x4 layout: "
        << "ceil(" << mn << "/128) * ceil(k/" << 4 * t.scale_vec << ") blocks of 512 bytes; k a multiple of " << t.scale_vec << "\n";
      continue;
    }
    o << "//   " << t.arg << ": " << t.name << ", " << t.dtype << (t.format.empty() ? "" : " (" + t.format + ")")
      << ", " << shape_words(k, t) << ", " << t.contiguous_name << " contiguous";
    if (!t.ld_arg.empty())
      o << ", leading dimension " << t.ld_arg << " >= " << t.contiguous_name << " elements";
    else if (k.gemm)
      o << ", leading dimension " << t.contiguous_name;
    else
      o << ", rows tightly packed";
    o << (t.written ? "; written" : "") << "\n";
  }
  o << "//   every pointer 16-byte aligned (32 for 16U4_ALIGN16B/16U6 tensor maps); a tensor map's row stride a\n"
       "//   multiple of 16 bytes";
  if (k.gemm) {
    o << ";\n//   m, n, k" << (grouped ? ", groups" : "") << " as ptxgen::size::m{...}, size::n{...}, size::k{...}" << (grouped ? ", size::groups{...}" : "")
      << ", in that order, from 1 to 2^31-1\n"
      << "//   (the spec's: " << k.problem[0] << " x " << k.problem[1] << " x " << k.problem[2]
      << (contiguous ? ", " + std::to_string(k.size_values[3]) + " groups; m the rows of A and D, the groups' segments and their padding"
          : grouped  ? ", " + std::to_string(k.size_values[3]) + " groups of at most 65535: the grid's z; m is a group's capacity"
                     : std::string())
      << "); the short forms take the leading dimensions tightly packed";
    if (contiguous)
      o << ";\n//   ends: the groups' ends in A's rows, groups int32 on the device, ascending (read by the kernel: an entry past m counts\n"
           "//   as m, a negative one as 0), group g's segment starting at align_up(ends[g - 1], align) (align: the manifest's groups.align);\n"
           "//   each group's plane of B below 2^40 bytes (the tensor map's group stride)";
    else if (grouped)
      o << ";\n//   masked_m: the groups' valid rows, groups int32 on the device (read by the kernel: an entry past m counts as m,\n"
           "//   a negative one as 0); each group's plane of A, B and D below 2^40 bytes (the tensor maps' group stride)";
    for (const auto& [i, d] : k.derived)
      o << ";\n//   the kernel derives " << k.sizes[i] << " = " << k.sizes[static_cast<size_t>(d.of)] << " / " << d.div
        << (d.exact ? " (" + k.sizes[static_cast<size_t>(d.of)] + " a multiple of " + std::to_string(d.div) + ": a gated activation's B holds two halves)" : std::string());
  } else if (!k.sizes.empty()) {
    std::string spec, types;
    std::string derived;
    for (size_t i = 0; i < k.sizes.size(); ++i) {
      if (!k.parameter(i)) {
        const Kernel::Derived& d = k.derived.at(i);
        derived += (derived.empty() ? "" : ", ") + k.sizes[i] + " = ceil(" + k.sizes[static_cast<size_t>(d.of)] + " / " +
                   std::to_string(d.div) + ") * " + std::to_string(d.mul);
        continue;
      }
      spec += (spec.empty() ? "" : ", ") + k.sizes[i] + " = " + std::to_string(k.size_values[i]);
      types += (types.empty() ? "" : ", ") + ("size::" + k.size_types[i]) + "{...}";
    }
    o << ";\n//   sizes as ptxgen::" << types << ", in that order, from 1 to 2^31-1 (the spec's: " << spec << ")";
    if (!derived.empty()) o << ";\n//   the kernel derives " << derived;
  }
  o << ".\n";
}

// The sizes' types, ptxgen::size::NAME: one per size name of the header's kernels, each defined
// once in a translation unit of several headers (the guard, PTXGEN_size_NAME: lower case after
// PTXGEN_, so no PTXGEN_<STEM>_GEMMS list of any header's stem can take its name), the same text
// in every header.
void write_size_types(std::ostream& o, const std::vector<Kernel>& ks) {
  std::set<std::string> types;
  for (const Kernel& k : ks)
    for (const std::string& t : k.size_types)
      if (!t.empty()) types.insert(t);
  if (types.empty()) return;
  o << "\n// The sizes the launch functions take, a type each: ptxgen::size::m{4096}. A size passed in another\n"
       "// position than its own, or a bare integer, does not compile; any integer type converts explicitly.\n"
       "namespace size {\n";
  for (const std::string& t : types)
    o << "#ifndef PTXGEN_size_" << t << "\n#define PTXGEN_size_" << t << "\nstruct " << t << " {\n"
      << "  ::std::int64_t value;\n"
      << "  template <class ptxgen_I, detail::if_integer<ptxgen_I> = 0>\n"
      << "  constexpr explicit " << t << "(ptxgen_I ptxgen_v) noexcept : value(static_cast<::std::int64_t>(ptxgen_v)) {}\n"
      << "};\n#endif\n";
  o << "}  // namespace size\n";
}

void write_kernel(std::ostream& o, const Kernel& k) {
  const std::string ns = "detail::k_" + k.name;
  o << "\n";
  write_doc(o, k);
  o << "namespace detail {\nnamespace k_" << k.name << " {\n";
  for (size_t e = 0; e < k.entries.size(); ++e) {
    const Entry& x = k.entries[e];
    o << "// " << x.target << " (" << x.image.size() << " bytes)\n";
    o << "alignas(8) inline constexpr unsigned char image_" << e << "[] =\n" << literal(x.image) << ";\n";
    if (!x.maps.empty()) {
      o << "inline constexpr MapDesc maps_" << e << "[] = {\n";
      for (const Map& m : x.maps)
        o << "    {" << m.tensor << ", " << m.type << ", " << unit_bits(m.type) << ", {" << m.box[0] << ", " << m.box[1]
          << ", " << m.box[2] << "}, {" << m.element_strides[0] << ", " << m.element_strides[1] << ", "
          << m.element_strides[2] << "}, " << m.interleave << ", " << m.swizzle << ", " << m.l2 << ", " << m.oob << ", "
          << quote(m.type) << ", " << m.rank << (m.optional ? ", true" : "") << "},\n";
      o << "};\n";
    }
  }
  o << "inline constexpr EntryDesc entries[] = {\n";
  for (size_t e = 0; e < k.entries.size(); ++e) {
    const Entry& x = k.entries[e];
    const RunsOn r = runs_on(x.target);
    o << "    {" << quote(x.target) << ", {" << r.cc[0] << ", " << r.cc[1] << "}, " << (r.exact ? "true" : "false")
      << ", image_" << e << ", sizeof image_" << e << " - 1, {" << x.block[0] << ", " << x.block[1] << ", "
      << x.block[2] << "}, {" << x.cluster[0] << ", " << x.cluster[1] << ", " << x.cluster[2] << "}, " << x.shared
      << ", " << x.tile_m << ", " << x.tile_n << ", " << x.cta_group << ", " << x.grid_m << ", " << x.grid_n << ", "
      << (x.persistent ? "true" : "false") << ", {" << x.cluster_tiles[0] << ", " << x.cluster_tiles[1] << "}, {" << x.grid[0] << ", " << x.grid[1] << ", "
      << x.grid[2] << "}, " << (x.maps.empty() ? "nullptr" : "maps_" + std::to_string(e)) << ", " << x.maps.size() << ", " << x.grid_z
      << "},\n";
  }
  o << "};\ninline constexpr TensorDesc tensors[] = {\n";
  for (const Tensor& t : k.tensors)
    o << "    {" << quote(t.arg) << ", " << quote(t.name) << ", " << quote(t.dtype) << ", " << t.bits << ", "
      << t.rows_size << ", " << t.cols_size << ", " << t.rows << ", " << t.cols << ", "
      << (t.cols_contiguous ? "true" : "false") << ", " << (t.ld_arg.empty() ? "nullptr" : quote(t.ld_arg)) << ", "
      << quote(t.contiguous_name) << ", " << t.scale_vec << ", " << t.k_div << ", " << t.metadata_k << ", " << t.metadata_atom << ", "
      << t.planes_size << "},\n";
  o << "};\ninline constexpr ParamDesc params[] = {\n";
  for (const Param& p : k.params)
    o << "    {"
      << (p.kind == "tensor_map" ? "param_tensor_map"
          : p.kind == "u32"      ? "param_u32"
                                 : "param_pointer")
      << ", " << p.index << ", " << p.offset << "},\n";
  o << "};\n";
  const bool own_sizes = !k.sizes.empty() && (!k.gemm || k.sizes.size() > 3);  // a gemm's derived d, a grouped one's groups too
  if (own_sizes) {
    o << "inline constexpr const char* sizes[] = {";
    for (size_t i = 0; i < k.sizes.size(); ++i) o << (i ? ", " : "") << quote(k.sizes[i]);
    o << "};\n";
  }
  // Derived sizes whose base must be a multiple (a gated activation's n: even): the check refuses others.
  std::string multiples;
  int multiple_count = 0;
  for (const auto& [i, d] : k.derived)
    if (d.exact) {
      multiples += std::string(multiples.empty() ? "" : ", ") + "{" + std::to_string(d.of) + ", " + std::to_string(d.div) + ", " + quote(k.sizes[i]) + "}";
      ++multiple_count;
    }
  if (multiple_count) o << "inline constexpr MultipleDesc multiples[] = {" << multiples << "};\n";
  o << "inline constexpr KernelDesc kernel = {" << quote(k.name) << ", tensors, " << k.tensors.size() << ", "
    << (own_sizes ? "sizes, " + std::to_string(k.sizes.size()) : k.gemm ? "gemm_sizes, 3" : "nullptr, 0") << ", params, "
    << k.params.size() << ", entries, " << k.entries.size() << ", " << (multiple_count ? "multiples, " + std::to_string(multiple_count) : "nullptr, 0")
    << "};\n";
  o << "inline ModuleCache& cache() {\n  static ModuleCache c;\n  return c;\n}\n";
  o << "}  // namespace k_" << k.name << "\n}  // namespace detail\n\n";

  // The public face: info, the launch type, check / prepare / launch.
  std::string targets;
  for (const Entry& e : k.entries) targets += (targets.empty() ? "" : ", ") + e.target;
  o << "inline constexpr TensorInfo " << k.name << "_tensors[] = {\n";
  for (const Tensor& t : k.tensors)
    o << "    {" << quote(t.name) << ", " << quote(t.dtype) << ", " << quote(t.format) << ", " << t.rows << ", "
      << t.cols << ", " << (t.cols_contiguous ? "true" : "false") << ", " << t.ld << ", "
      << (t.written ? "true" : "false") << "},\n";
  o << "};\n";
  o << "inline constexpr KernelInfo " << k.name << "_info = {" << quote(k.name) << ", " << quote(k.level) << ", "
    << quote(targets) << ", " << k.problem[0] << ", " << k.problem[1] << ", " << k.problem[2] << ", "
    << quote(k.accumulator) << ", " << k.name << "_tensors, " << k.tensors.size() << "};\n";
  o << "using " << k.name << "_launch = Launch<" << k.param_bytes << ", " << k.params.size() << ">;\n";

  auto arrays = [&](bool with_ld) {
    std::string s = "  const ::std::uint64_t ptxgen_p[] = {";
    for (size_t i = 0; i < k.tensors.size(); ++i)
      s += (i ? ", " : "") + std::string("detail::address(") + k.tensors[i].arg + ")";
    s += "};\n  const ::std::int64_t ptxgen_ld[] = {";
    for (size_t i = 0; i < k.tensors.size(); ++i)
      s += (i ? ", " : "") + (with_ld && !k.tensors[i].ld_arg.empty() ? k.tensors[i].ld_arg : std::string("0"));
    s += "};\n";
    if (!k.sizes.empty()) {
      // The parameters, then the sizes the kernel derives from them (as it does).
      s += "  const ::std::int64_t ptxgen_s[] = {";
      for (size_t i = 0; i < k.sizes.size(); ++i) {
        s += i ? ", " : "";
        if (k.parameter(i)) {
          s += k.sizes[i] + ".value";
          continue;
        }
        const Kernel::Derived& d = k.derived.at(i);
        s += "(" + k.sizes[static_cast<size_t>(d.of)] + ".value + " + std::to_string(d.div - 1) + ") / " +
             std::to_string(d.div) + " * " + std::to_string(d.mul);
      }
      s += "};\n";
    }
    s += "  const detail::Args ptxgen_args{ptxgen_p, ptxgen_ld, " + std::string(!k.sizes.empty() ? "ptxgen_s" : "nullptr") +
         "};\n";
    return s;
  };
  const std::string full = signature(k, true, false), names = signature(k, true, true);
  const std::string sep = full.empty() ? "" : ", ";
  o << "// The checks alone (no CUDA call): CUDA_SUCCESS, or CUDA_ERROR_INVALID_VALUE and last_error().\n";
  o << "inline ::CUresult " << k.name << "_check(" << full << ") {\n"
    << arrays(true) << "  const ::CUresult ptxgen_r = detail::check(" << ns << "::kernel, ptxgen_args);\n"
    << "  return ptxgen_r != CUDA_SUCCESS ? ptxgen_r : detail::ok();\n}\n";
  o << "// Check, load the module for the current context, encode the tensor maps, lay out the parameters.\n";
  o << "inline ::CUresult " << k.name << "_prepare(" << full << sep << k.name << "_launch& ptxgen_launch) {\n"
    << arrays(true) << "  return detail::prepare(" << ns << "::kernel, " << ns
    << "::cache(), ptxgen_args, ptxgen_launch, ptxgen_launch.params, ptxgen_launch.offsets);\n}\n";
  o << "// Prepare and launch on `stream` (the current context's).\n";
  o << "inline ::CUresult " << k.name << "(" << full << sep << "::CUstream stream) {\n"
    << "  " << k.name << "_launch ptxgen_l;\n"
    << "  const ::CUresult ptxgen_r = " << k.name << "_prepare(" << names << (names.empty() ? "" : ", ")
    << "ptxgen_l);\n"
    << "  return ptxgen_r != CUDA_SUCCESS ? ptxgen_r : launch(ptxgen_l, stream);\n}\n";
  bool has_ld = false;
  for (const Tensor& t : k.tensors) has_ld |= !t.ld_arg.empty();
  if (has_ld) {
    // The short forms: leading dimensions tightly packed.
    std::string tight;
    for (const Tensor& t : k.tensors) {
      tight += (tight.empty() ? "" : ", ") + t.arg;
      if (!t.ld_arg.empty()) tight += ", " + tight_ld(t);
    }
    for (size_t i = 0; i < k.sizes.size(); ++i)  // m, n, k (and a grouped gemm's groups)
      if (k.parameter(i)) tight += ", " + k.sizes[i];
    const std::string shrt = signature(k, false, false);
    std::string lds;
    for (const Tensor& t : k.tensors)
      if (!t.ld_arg.empty()) lds += (lds.empty() ? "" : ", ") + t.ld_arg + " = " + t.contiguous_name;
    o << "// The same with every leading dimension tightly packed (" << lds << ").\n";
    o << "inline ::CUresult " << k.name << "_check(" << shrt << ") {\n  return " << k.name << "_check(" << tight
      << ");\n}\n";
    o << "inline ::CUresult " << k.name << "_prepare(" << shrt << ", " << k.name
      << "_launch& ptxgen_launch) {\n  return " << k.name << "_prepare(" << tight << ", ptxgen_launch);\n}\n";
    o << "inline ::CUresult " << k.name << "(" << shrt << ", ::CUstream stream) {\n  return " << k.name << "(" << tight
      << ", stream);\n}\n";
  }
}

}  // namespace

std::string header_stem(const std::string& path) {
  std::string base = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  if (base == "-" || base.empty()) return "HEADER";
  if (const auto dot = base.find('.'); dot != std::string::npos && dot > 0) base = base.substr(0, dot);
  // PTXGEN_<STEM>_GEMMS: no leading, trailing or doubled underscore, which would make the macro
  // names reserved ones (a double underscore).
  std::string out;
  for (unsigned char c : base) {
    const char x = std::isalnum(c) ? static_cast<char>(std::toupper(c)) : '_';
    if (x != '_' || (!out.empty() && out.back() != '_')) out += x;
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out.empty() ? "HEADER" : out;
}

std::string launch_header(const std::vector<HeaderKernel>& hks, const std::string& stem, const std::string& producer) {
  std::vector<Kernel> ks;
  std::map<std::string, std::string> names;  // every name the header defines -> its kernel
  for (const HeaderKernel& hk : hks) {
    Kernel k = read_kernel(hk);
    if (const std::string why = name_problem(k.name); !why.empty())
      throw HeaderError("spec " + hk.spec + " is named \"" + k.name + "\", which " + why +
                        ": the launch function cannot take that name; rename the spec");
    for (const char* suffix : {"", "_check", "_prepare", "_launch", "_info", "_tensors"}) {
      const std::string n = k.name + suffix;
      if (const std::string why = name_problem(n); !why.empty() && *suffix)
        throw HeaderError("spec " + hk.spec + " is named \"" + k.name + "\": the header would define " + n + ", which " + why +
                          "; rename the spec");
      if (auto it = names.find(n); it != names.end())
        throw HeaderError(it->second == k.name ? "two specs are named \"" + k.name + "\" (" + hk.spec +
                                                     " and another): one header holds one launch function per name"
                                               : "kernels \"" + it->second + "\" and \"" + k.name +
                                                     "\" would both define " + n + " in the header; rename one spec");
      names[n] = k.name;
    }
    ks.push_back(std::move(k));
  }

  std::ostringstream o;
  o << "// Generated by " << comment_text(producer) << ". Do not edit.\n"
    << "//\n"
    << "// Typed launch functions for ptxgen kernels, their cubins embedded: C++17, cuda.h and libcuda only.\n"
    << "// Per kernel NAME (namespace ptxgen):\n"
    << "//   CUresult NAME(tensors..., [leading dimensions], [sizes], CUstream);  check, load, encode, launch\n"
    << "//   CUresult NAME_check(...);                     the argument checks alone, no CUDA call\n"
    << "//   CUresult NAME_prepare(..., NAME_launch& l);   a launch to run with ptxgen::launch(l, stream)\n"
    << "//   NAME_info                                     the manifest: tensors, dtypes, sizes, targets\n"
    << "// Each size is its own type (ptxgen::size::m{4096}, size::n, size::k, a program's by their names):\n"
    << "// sizes in another order than the function's, or bare integers, do not compile.\n"
    << "// A failing call returns its CUresult and ptxgen::last_error() says in words what was wrong.\n"
    << "// Modules load lazily, once per CUDA context (thread-safe); the image for the context's device is\n"
    << "// chosen by compute capability. docs/build.md (\"The launch header\") has the whole API.\n"
    << "#pragma once\n"
    << kRuntime;
  o << "\n#if defined(__GNUC__)\n#pragma GCC diagnostic push\n#pragma GCC diagnostic ignored \"-Woverlength-strings\"\n"
       "#endif\n";
  o << "namespace ptxgen {\ninline namespace launch1 {\n";
  write_size_types(o, ks);
  for (const Kernel& k : ks) write_kernel(o, k);
  o << "\n}  // namespace launch1\n}  // namespace ptxgen\n";
  o << "#if defined(__GNUC__)\n#pragma GCC diagnostic pop\n#endif\n\n";
  // X-macro lists, for code that does the same for every kernel of the header.
  // Block-scaled gemm kernels take the factors after D, sparse ones the metadata, sparse block-scaled
  // ones the factors and then the metadata: each their own list.
  auto scaled = [](const Kernel& k) { return k.tensors.size() == 5 && k.tensors[3].scale_vec && k.tensors[4].scale_vec; };
  auto sparse = [](const Kernel& k) { return k.tensors.size() == 4 && k.tensors[3].metadata_k; };
  auto sparse_scaled = [](const Kernel& k) {
    return k.tensors.size() == 6 && k.tensors[3].scale_vec && k.tensors[4].scale_vec && k.tensors[5].metadata_k;
  };
  // A fused epilogue's bias comes after D (docs/spec.md, "Epilogues"): the gemms with one, their own list.
  auto biased = [](const Kernel& k) { return k.tensors.size() == 4 && k.tensors[3].name == "bias"; };
  // Grouped GEMM (docs/spec.md, "Grouped GEMM"): masked_m or ends last (after a bias, one per
  // group), groups after k; their own list, whatever their epilogue.
  auto grouped = [](const Kernel& k) {
    return !k.tensors.empty() && (k.tensors.back().name == "masked_m" || k.tensors.back().name == "ends");
  };
  o << "// X(NAME, A type, B type, D type) for each gemm kernel; X(NAME, A type, B type, D type, factor type) for each\n"
       "// block-scaled gemm kernel; X(NAME, A type, B type, D type) for each gemm kernel of sparse A; X(NAME, A type,\n"
       "// B type, D type, factor type) for each block-scaled gemm kernel of sparse A; X(NAME, A type, B type, D type,\n"
       "// bias type) for each gemm kernel with a fused bias (and no other input); X(NAME, A type, B type, D type, C type,\n"
       "// bias type, residual type, alpha type, beta type, d_scale type, amax type, SFD type) for each gemm kernel with\n"
       "// fused epilogue inputs or\n"
       "// outputs (an amax, a quantized D's factors SFD),\n"
       "// void for those it does not take (its launch function takes the others after D, in that order); the same row for\n"
       "// each gemm kernel with block-wise f32 factors (BLOCKWISE_GEMMS: const float* sfa, sfb after those); X(NAME, A type,\n"
       "// B type, D type, bias type) for each grouped gemm kernel (GROUPED_GEMMS: the bias, one per group, after D\n"
       "// where the kernel takes one, else void; then const std::int32_t* masked_m or ends; size::groups after k);\n"
       "// X(NAME) for each program.\n";
  o << "#define PTXGEN_" << stem << "_GEMMS(X)";
  for (const Kernel& k : ks)
    if (k.gemm && k.tensors.size() == 3)
      o << " \\\n  X(" << k.name << ", " << qualified(k.tensors[0].type) << ", " << qualified(k.tensors[1].type) << ", "
        << qualified(k.tensors[2].type) << ")";
  o << "\n#define PTXGEN_" << stem << "_SCALED_GEMMS(X)";
  for (const Kernel& k : ks)
    if (k.gemm && scaled(k))
      o << " \\\n  X(" << k.name << ", " << qualified(k.tensors[0].type) << ", " << qualified(k.tensors[1].type) << ", "
        << qualified(k.tensors[2].type) << ", " << qualified(k.tensors[3].type) << ")";
  o << "\n#define PTXGEN_" << stem << "_SPARSE_GEMMS(X)";
  for (const Kernel& k : ks)
    if (k.gemm && sparse(k))
      o << " \\\n  X(" << k.name << ", " << qualified(k.tensors[0].type) << ", " << qualified(k.tensors[1].type) << ", "
        << qualified(k.tensors[2].type) << ")";
  o << "\n#define PTXGEN_" << stem << "_SPARSE_SCALED_GEMMS(X)";
  for (const Kernel& k : ks)
    if (k.gemm && sparse_scaled(k))
      o << " \\\n  X(" << k.name << ", " << qualified(k.tensors[0].type) << ", " << qualified(k.tensors[1].type) << ", "
        << qualified(k.tensors[2].type) << ", " << qualified(k.tensors[3].type) << ")";
  o << "\n#define PTXGEN_" << stem << "_BIASED_GEMMS(X)";
  for (const Kernel& k : ks)
    if (k.gemm && biased(k))
      o << " \\\n  X(" << k.name << ", " << qualified(k.tensors[0].type) << ", " << qualified(k.tensors[1].type) << ", "
        << qualified(k.tensors[2].type) << ", " << qualified(k.tensors[3].type) << ")";
  // Every gemm with fused epilogue inputs or outputs (the amax, a quantized D's factors SFD; docs/spec.md,
  // "Epilogues"), one shape of row for all: X(NAME, A, B, D, C, bias, residual, alpha, beta, d_scale,
  // amax, SFD types; alpha and beta: their input form, one f32), `void` for one the kernel does not
  // take; its launch function takes the others after D in that order.
  auto input_type = [](const Kernel& k, const char* name) {
    for (size_t i = 3; i < k.tensors.size(); ++i)
      if (k.tensors[i].name == name) return qualified(k.tensors[i].type);
    return std::string("void");
  };
  // Block-wise f32 factors (docs/spec.md, "Block-wise f32 factors"): SFA and SFB after D and the
  // fused epilogue's tensors, their own list (rows as EPILOGUE_GEMMS's).
  auto blockwise = [](const Kernel& k) {
    for (const Tensor& t : k.tensors)
      if (t.name == "SFA" && t.dtype == "f32") return true;
    return false;
  };
  // The fused epilogue's tensor types of a gemm kernel in the row's order ("void" where it takes
  // none), and its X(...) row: the same row in EPILOGUE_GEMMS and BLOCKWISE_GEMMS.
  static const char* const kEpilogueInputs[] = {"C", "bias", "residual", "alpha", "beta", "d_scale", "amax", "SFD"};
  auto takes_inputs = [&](const Kernel& k) {
    for (const char* name : kEpilogueInputs)
      if (input_type(k, name) != "void") return true;
    return false;
  };
  auto row = [&](const Kernel& k) {
    o << " \\\n  X(" << k.name << ", " << qualified(k.tensors[0].type) << ", " << qualified(k.tensors[1].type) << ", "
      << qualified(k.tensors[2].type);
    for (const char* name : kEpilogueInputs) o << ", " << input_type(k, name);
    o << ")";
  };
  o << "\n#define PTXGEN_" << stem << "_EPILOGUE_GEMMS(X)";
  for (const Kernel& k : ks)
    if (k.gemm && !blockwise(k) && !grouped(k) && takes_inputs(k)) row(k);
  o << "\n#define PTXGEN_" << stem << "_BLOCKWISE_GEMMS(X)";
  for (const Kernel& k : ks)
    if (k.gemm && blockwise(k)) row(k);
  o << "\n#define PTXGEN_" << stem << "_GROUPED_GEMMS(X)";
  for (const Kernel& k : ks)
    if (k.gemm && grouped(k))
      o << " \\\n  X(" << k.name << ", " << qualified(k.tensors[0].type) << ", " << qualified(k.tensors[1].type) << ", "
        << qualified(k.tensors[2].type) << ", " << input_type(k, "bias") << ")";
  o << "\n#define PTXGEN_" << stem << "_PROGRAMS(X)";
  for (const Kernel& k : ks)
    if (!k.gemm) o << " \\\n  X(" << k.name << ")";
  o << "\n";
  return o.str();
}

}  // namespace ptxgen::cli
