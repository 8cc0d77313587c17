// The rule table. One record per rule; checks, `ptxgen rules`, `ptxgen explain`, docs/rules.md
// and the negative tests all come from here.
#include <algorithm>
#include <cctype>
#include <set>
#include <nlohmann/json.hpp>

#include "context.hpp"
#include "verify.hpp"
#include "ptxgen/lower.hpp"
#include "ptxgen/rules.hpp"

namespace ptxgen::rules {

namespace {

constexpr std::string_view kExampleBase = R"({
  "ptxgen": 1,
  "name": "example",
  "target": "sm_100a",
  "gemm": {
    "m": 4096, "n": 4096, "k": 4096,
    "a": {"dtype": "bf16", "major": "k"},
    "b": {"dtype": "bf16", "major": "k"},
    "d": {"dtype": "bf16"},
    "accumulator": "f32",
    "tile": {"m": 128, "n": 256, "k": 64},
    "stages": 4,
    "swizzle": {"a": 128, "b": 128}
  }
})";

// The example the program-level rules patch (a patch with a "program" member patches this one).
constexpr std::string_view kProgramBase = R"({
  "ptxgen": 1,
  "name": "example",
  "target": "sm_100a",
  "program": {
    "globals": {
      "A": {"dtype": "bf16", "shape": [128, 64]},
      "B": {"dtype": "bf16", "shape": [128, 64]},
      "D": {"dtype": "f32", "shape": [128, 128]}
    },
    "smem": {
      "a": {"dtype": "bf16", "shape": [128, 64], "major": "k", "swizzle": 128},
      "b": {"dtype": "bf16", "shape": [128, 64], "major": "k", "swizzle": 128}
    },
    "tmem": {
      "t": {"columns": 256},
      "acc": {"slice": {"of": "t", "columns": [0, 128]}},
      "a_t": {"cast": {"of": {"slice": {"of": "t", "columns": [128, 160]}}, "dtype": "bf16", "packing": 2}}
    },
    "ops": [
      {"op": "load", "src": "A", "dst": "a"},
      {"op": "load", "src": "B", "dst": "b"},
      {"op": "copy", "src": "a", "dst": "a_t"},
      {"op": "mma", "a": "a_t", "b": "b", "d": "acc"},
      {"op": "commit", "barrier": "done"},
      {"op": "wait", "barrier": "done"},
      {"op": "tmem_load", "src": "acc", "regs": "r"},
      {"op": "store", "regs": "r", "dst": "D"}
    ]
  }
})";

bool program_patch(std::string_view patch) {
  auto j = nlohmann::ordered_json::parse(patch, nullptr, false);
  return j.is_object() && j.contains("program");
}

std::string patched(std::string_view patch) {
  nlohmann::ordered_json base = nlohmann::ordered_json::parse(program_patch(patch) ? kProgramBase : kExampleBase);
  base.merge_patch(nlohmann::ordered_json::parse(patch));
  return base.dump(2);
}

// The example spec with the text `from` replaced by `to` (for documents a merge patch cannot
// write: over-long literals, or too large to spell out in the table).
std::string replaced(std::string_view from, const std::string& to) {
  std::string s(kExampleBase);
  s.replace(s.find(from), from.size(), to);
  return s;
}

// Failing examples of the input limits (spec::Limits), built at their limit + 1.
std::string oversized_document() {
  std::string s(kExampleBase);
  s.append(spec::Limits{}.max_bytes + 1 - s.size(), ' ');
  return s;
}
std::string long_array_document() {
  std::string a = "[1";
  for (size_t i = 1; i <= spec::Limits{}.max_array; ++i) a += ", 1";
  return replaced(R"("swizzle": {"a": 128, "b": 128})", R"("swizzle": {"a": 128, "b": 128}, "cluster": )" + a + "]");
}
std::string wide_object_document() {
  std::string members = R"("m": 128, "n": 256, "k": 64)";
  for (size_t i = 3; i <= spec::Limits{}.max_members; ++i) members += ", \"x" + std::to_string(i) + "\": 0";
  return replaced(R"("m": 128, "n": 256, "k": 64)", members);
}
std::string long_string_document() {
  return replaced(R"("name": "example")", "\"name\": \"" + std::string(spec::Limits{}.max_string + 1, 'x') + "\"");
}
// A program whose stores make more PTX than OUTPUT-SIZE allows: the example program's epilogue,
// its store of 128 x 128 f32 registers repeated.
std::string many_stores_document() {
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(kProgramBase);
  auto& ops = j["program"]["ops"];
  for (int i = 0; i < 200; ++i) ops.push_back({{"op", "store"}, {"regs", "r"}, {"dst", "D"}});
  return j.dump(2);
}
std::string long_number_document() { return replaced(R"("m": 4096)", "\"m\": 1" + std::string(64, '0')); }

// clang-format off
const std::vector<Rule> kTable = {
// ---- The spec document itself (enforced by the parser) ------------------------------------------
{"SPEC-JSON", "the spec is not well-formed JSON", "(input format; RFC 8259)",
 "The file is not a JSON document: a syntax error, a stray character, an unterminated string, invalid UTF-8, or text after the document.",
 "Hand-edited specs (trailing commas, comments, single quotes) and truncated files written by another program.",
 {"fix the text at the line and column given; JSON has no comments and no trailing commas"},
 R"({"ptxgen": 1, "name": "x",)", "", true, "{}"},
{"SPEC-LIMIT-SIZE", "the spec is larger than 1 MiB", "(input format)",
 "ptxgen reads at most 1 MiB (1048576 bytes) of spec. Larger input is refused before it is parsed, so time and memory stay bounded whatever another program writes.",
 "A wrong file passed as the spec (a binary, a log, /dev/zero), or a generator gone wrong.",
 {"check that the right file is passed", "split very large programs into several specs"},
 "the example spec padded with spaces to 1 MiB + 1 byte", "", true, "{}", nullptr, oversized_document},
{"SPEC-LIMIT-DEPTH", "objects and arrays nested deeper than 32 levels", "(input format)",
 "ptxgen reads at most 32 levels of nested objects and arrays (a spec needs 4). Deeper input is refused where the 33rd level opens, before it is read, so the reader's recursion is bounded.",
 "Runaway nesting from a generator, or a wrong file passed as the spec.",
 {"check that the right file is passed", "flatten the structure that nests"},
 "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]", "/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0", true, "{}"},
{"SPEC-LIMIT-ARRAY", "an array has more than 4096 elements", "(input format)",
 "ptxgen reads at most 4096 elements per array; it stops at the 4097th.",
 "Unbounded lists from a generator, or data pasted into a spec.",
 {"check that the right file is passed", "split very large programs into several specs"},
 "the example spec with \"cluster\": [1, 1, ... 4097 elements]", "/gemm/cluster", true, "{}", nullptr, long_array_document},
{"SPEC-LIMIT-MEMBERS", "an object has more than 256 members", "(input format)",
 "ptxgen reads at most 256 members per object (the gemm template has 12); it stops at the 257th.",
 "Generated specs that put data into keys, or a wrong file passed as the spec.",
 {"check that the right file is passed", "remove the members docs/spec.md does not define"},
 "the example spec with 254 more members in \"tile\"", "/gemm/tile", true, "{}", nullptr, wide_object_document},
{"SPEC-LIMIT-STRING", "a string or member name longer than 256 bytes", "(input format)",
 "ptxgen reads strings and member names of at most 256 bytes (UTF-8); no name, dtype or target is longer.",
 "Data or file contents pasted into a string, or a wrong file passed as the spec.",
 {"shorten the string; names are at most 64 characters (SPEC-NAME-LENGTH)"},
 "the example spec with a 257-byte \"name\"", "/name", true, "{}", nullptr, long_string_document},
{"SPEC-LIMIT-NUMBER", "a number literal longer than 64 characters", "(input format)",
 "ptxgen converts number literals of at most 64 characters; no integer or float a spec needs is longer, and long digit strings are refused before any conversion.",
 "Numbers printed with excessive precision, or digits from another file.",
 {"write the integer in decimal without padding"},
 "the example spec with \"m\": 1 followed by 64 zeros", "/gemm/m", true, "{}", nullptr, long_number_document},
{"SPEC-DUPLICATE-KEY", "a member name appears twice in one object", "(input format)",
 "JSON parsers disagree on which of two equal keys wins; ptxgen refuses the ambiguity instead of silently taking one.",
 "Merged or templated specs where a field was added twice.",
 {"remove one of the two members"},
 R"({"ptxgen": 1, "name": "a", "name": "b", "target": "sm_100a", "gemm": {}})", "/name", true, "{}"},
{"SPEC-TYPE", "a member has the wrong JSON type", "(docs/spec.md)",
 "Every member has one JSON type: sizes are integers (not strings, not 64.0), dtypes are strings, tiles are objects.",
 "Numbers quoted as strings by a generator, floats where integers are meant, arrays of the wrong length.",
 {"write the value with the type docs/spec.md gives"},
 R"({"gemm": {"m": "4096"}})", "/gemm/m", false, "{}"},
{"SPEC-MISSING-KEY", "a required member is missing", "(docs/spec.md)",
 "The gemm template needs m, n, k, a, b, d and accumulator (tile and stages are chosen when left out); a spec needs ptxgen, name and target.",
 "A template written from memory, or a field renamed in an older draft of the format.",
 {"add the member; docs/spec.md lists each one with its meaning"},
 R"({"gemm": {"accumulator": null}})", "/gemm/accumulator", false, "{}"},
{"SPEC-UNKNOWN-KEY", "a member that the format does not define", "(docs/spec.md)",
 "Unknown members are errors, never ignored: a misspelt optional field would otherwise silently take its default.",
 "Typos (\"swizle\"), fields from another tool's format, or fields of a newer ptxgen.",
 {"use the suggested spelling", "remove the member"},
 R"({"gemm": {"swizle": {"a": 64}}})", "/gemm/swizle", false, "{}"},
{"SPEC-NOT-BUILT", "a feature users ask for that ptxgen does not build yet", "(docs/spec.md, \"Not built (yet)\")",
 "Grouped GEMM beyond the masked and contiguous layouts' kernels (specified: \"groups\"; the K-grouped layout refused at the layout, and with the others clusters, CTA pairs and the tensors whose per-group layout is not specified refused at their members), a \"batch\" member (batched GEMM is the masked layout with every group full), block-wise f32 scale factors on tcgen05 targets (built for sm_90a), and arithmetic on register sets at the program level beyond the elementwise f32 functions, activations and row reductions (select, gated activations, conversions, quantization, softmax) are the next steps of ptxgen's IR; until they are built, their members and ops are refused by this rule, which names the nearest thing that is built, rather than as unknown members or names.",
 "Asking a gemm spec for grouped GEMM, as cuBLASLt or CUTLASS users would (\"groups\", or a \"batch\" member); an \"op\": \"softmax\" in a program.",
 {"for batched GEMM, \"groups\": {\"layout\": \"masked\", ...} with every group full; for what grouped GEMM does not build, one launch per group (docs/spec.md, \"Grouped GEMM\", says what is specified and what is built)",
  "at the program level, build softmax from exp2, the row reductions and the elementwise functions (docs/spec.md, \"Arithmetic\")"},
 R"({"gemm": {"batch": 8}})", "/gemm/batch", false, "{}"},
{"SPEC-INT-RANGE", "an integer is outside its range", "(docs/spec.md)",
 "Integers are range-checked before any arithmetic uses them: problem sizes 1..2^31-1, tile extents 1..1024, stages 1..32, raster 1..64, cluster dimensions 1..16. Integers beyond 64 bits are out of range too.",
 "Zero or negative sizes, sizes in bytes where elements are meant, overflowing values written by other programs.",
 {"use a value inside the range given"},
 R"({"gemm": {"k": 0}})", "/gemm/k", false, "{}"},
{"SPEC-ENUM", "a name that is not one of the allowed values", "(docs/spec.md)",
 "dtypes, majors, swizzles, a_source, accumulator types are closed sets. The message lists them.",
 "Other tools' spellings (fp16, bfloat16, float8_e4m3fn, row/col).",
 {"use one of the listed names: f16 bf16 tf32 e4m3 e5m2 e2m3 e3m2 e2m1 s8 u8 for inputs"},
 R"({"gemm": {"a": {"dtype": "fp16"}}})", "/gemm/a/dtype", false, "{}"},
{"SPEC-TARGET", "an unknown or unsupported target", "PTX ISA 9.1 §11.1.2 (.target); §9.7.16 target notes",
 "ptxgen emits for sm_100a, sm_100f, sm_103a, sm_110a (tcgen05) and sm_90a (wgmma). tcgen05 needs an architecture-specific (a) or family (f) target; sm_120a/sm_121a (consumer Blackwell) have neither tcgen05 nor wgmma; sm_101a was renamed sm_110a in PTX ISA 9.0.",
 "Writing sm_100 without the suffix, or expecting a consumer Blackwell GPU to run datacenter tensor-core code.",
 {"use sm_100a (or sm_100f for family-portable code), sm_103a, sm_110a or sm_90a"},
 R"({"target": "sm_120a"})", "/target", false, "{}"},
{"SPEC-VERSION", "an unsupported spec format version", "(docs/spec.md)",
 "The member \"ptxgen\" states the version of the spec format; this ptxgen reads version 1.",
 "A spec written for a newer ptxgen.",
 {"write \"ptxgen\": 1 and follow docs/spec.md"},
 R"({"ptxgen": 2})", "/ptxgen", false, "{}"},
{"SPEC-NAME", "the name is not a PTX identifier", "PTX ISA 9.1 §4.4 (identifiers)",
 "The name becomes the .entry name: [A-Za-z_][A-Za-z0-9_]*, at most 64 characters (ptxgen keeps it portable to C and file names).",
 "Names with dashes, dots or a leading digit.",
 {"use letters, digits and underscores, starting with a letter or underscore"},
 R"({"name": "9lives"})", "/name", false, "{}"},
{"SPEC-NAME-LENGTH", "the name is longer than 64 characters", "(docs/spec.md); PTX ISA 9.1 §4.4 (identifiers)",
 "The name becomes the .entry name and the default output file name (NAME.ptx, NAME.cubin); ptxgen keeps it to 64 characters so that both stay portable.",
 "Names built by concatenating every parameter of a kernel.",
 {"shorten the name to at most 64 characters; the plan and the PTX header record the parameters"},
 R"({"name": "gemm_bf16_128x256x64_sm100a_four_stage_pipeline_with_tma_multica5"})", "/name", false, R"({"name": "gemm_bf16_128x256x64"})"},
{"SPEC-TEMPLATE", "a spec needs exactly one of gemm or program", "(docs/spec.md)",
 "A spec describes one kernel, either with the gemm template or at the program level.",
 "An empty spec, or both levels written into one file.",
 {"keep one of \"gemm\" and \"program\""},
 R"({"gemm": null})", "", false, "{}"},

// ---- Grouped GEMM (the gemm template's "groups") -----------------------------------------------
{"GROUPS-ALIGN", "the groups' segments of A do not start on whole tiles", "(docs/spec.md, \"Grouped GEMM\"); DeepGEMM's M-grouped contiguous layout",
 "In the contiguous layout A's rows are sorted by group, each group's segment starting on a multiple of \"align\" rows (DeepGEMM pads each group to 128). The kernel picks one group's B per output tile, so a tile of tile.m rows must lie in one segment: align must be a multiple of tile.m. The masked and K-grouped layouts have no segments, and no \"align\".",
 "An alignment of 64 rows with tile.m 128; \"align\" written for the masked layout.",
 {"use an align that is a multiple of tile.m (the diagnostic names the next one)", "or a tile.m of 128 or 64 that divides align (the diagnostic names it)", "or leave \"align\" out"},
 R"({"target": "sm_90a", "gemm": {"groups": {"layout": "contiguous", "count": 4, "align": 64}}})", "/gemm/groups/align", false, "{}", check_groups},
{"GROUPS-PLANE", "a group's plane of A, B or D is 2^40 bytes or more", "(docs/spec.md, \"Grouped GEMM\"); cuTensorMapEncodeTiled's globalStrides",
 "In the masked layout one tensor map addresses every group of A, B and D: the group is its third dimension, and the bytes from one group to the next (m x lda, n x ldb, m x n elements of D) are its stride, which a tensor map takes only below 2^40 bytes (cuTensorMapEncodeTiled).",
 "A capacity m and a k whose product of bytes reaches 1 TiB per group (at the spec's sizes; the launch header checks the run-time ones).",
 {"a smaller m (the capacity of a group) or k", "or launch per group"},
 R"({"target": "sm_90a", "gemm": {"m": 1024, "k": 1073741824, "groups": {"layout": "masked", "count": 2}}})", "/gemm/groups", false, R"({"target": "sm_90a", "gemm": {"groups": {"layout": "masked", "count": 2}}})", check_groups_plane},

// ---- Targets -----------------------------------------------------------------------------------
{"TARGET-A-TMEM", "A in tensor memory needs a tcgen05 target", "PTX ISA 9.1 §9.7.16.1 (Tensor Memory); §9.7.15 (wgmma)",
 "Tensor memory exists on the sm_100a family only. On sm_90a the wgmma A operand comes from shared memory or registers.",
 "Porting a Blackwell spec to Hopper.",
 {"use \"a_source\": \"smem\" or \"registers\" on sm_90a", "or target sm_100a"},
 R"({"target": "sm_90a", "gemm": {"a_source": "tmem"}})", "/gemm/a_source", false, R"({"gemm": {"a_source": "tmem"}})", check_target_a_tmem},
{"TARGET-CTA-PAIR", "cta_group 2 needs a tcgen05 target", "PTX ISA 9.1 §9.7.16.5.1 (CTA pair)",
 "A CTA pair issuing one MMA over both CTAs' tensor memory is a tcgen05 feature; sm_90a has none.",
 "Porting a Blackwell 2-CTA spec to Hopper.",
 {"use \"cta_group\": 1 on sm_90a"},
 R"({"target": "sm_90a", "gemm": {"cta_group": 2, "tile": {"m": 256}}})", "/gemm/cta_group", false, R"({"gemm": {"cta_group": 2, "tile": {"m": 256}, "cluster": [2, 1, 1]}})", check_target_cta_pair},
{"TARGET-A-REGISTERS", "tcgen05.mma does not read A from registers", "PTX ISA 9.1 §9.7.16.10 (A in tensor or shared memory)",
 "tcgen05.mma takes A from shared memory (a descriptor) or tensor memory ([a-tmem]); registers feed only wgmma (sm_90a).",
 "Porting a Hopper register-A spec to Blackwell.",
 {"use \"a_source\": \"tmem\" (A copied into tensor memory) or \"smem\""},
 R"({"gemm": {"a_source": "registers"}})", "/gemm/a_source", false, R"({"gemm": {"a_source": "tmem"}})", check_target_a_registers},
{"TARGET-KIND-I8", ".kind::i8 is only on sm_100a and sm_110a", "PTX ISA 9.1 §9.7.16.10.9.1 target notes; §13 feature table",
 "The integer MMA kind is architecture-specific: sm_100a and sm_110a have it; the family target sm_100f and sm_103a do not.",
 "Building integer GEMMs for family-portable code or for sm_103a.",
 {"target sm_100a or sm_110a", "or use 8-bit floats with .kind::f8f6f4"},
 R"({"target": "sm_100f", "gemm": {"a": {"dtype": "s8"}, "b": {"dtype": "s8"}, "accumulator": "s32", "d": {"dtype": "s32"}, "tile": {"k": 128}}})", "/target", false,
 R"({"gemm": {"a": {"dtype": "s8"}, "b": {"dtype": "s8"}, "accumulator": "s32", "d": {"dtype": "s32"}, "tile": {"k": 128}}})", check_target_kind_i8},


// ---- MMA types ----------------------------------------------------------------------------------
{"MMA-KIND", "A and B types form no MMA kind", "PTX ISA 9.1 §9.7.16.2.1 Table 39; §9.7.16.4.2 Table 42",
 "Each tcgen05.mma kind takes a family of input types: kind::f16 (f16 x f16 or bf16 x bf16), kind::tf32, kind::f8f6f4 (any mix of e4m3, e5m2, e2m3, e3m2, e2m1) and kind::i8 (any mix of s8, u8). Types from two kinds cannot meet in one instruction.",
 "Mixing precisions (bf16 activations with fp8 weights) without converting one side.",
 {"convert one operand so that both fall into one kind", "for fp8 x fp8 mixes (e4m3 x e5m2) no conversion is needed"},
 R"({"gemm": {"b": {"dtype": "e4m3"}}})", "/gemm/b/dtype", false, "{}", check_mma_kind},
{"MMA-ACCUM", "the accumulator type is not available for the inputs", "PTX ISA 9.1 §9.7.16.2.1 Table 39; Table 42 (dtype)",
 "D's type per kind: f16 inputs accumulate in f16 or f32, bf16 only in f32, tf32 in f32, the f8f6f4 kind in f32 or f16, i8 in s32.",
 "Asking for an f16 accumulator with bf16 inputs, or a float accumulator for integers.",
 {"use the accumulator type the message gives"},
 R"({"gemm": {"accumulator": "f16"}})", "/gemm/accumulator", false, "{}", check_mma_accumulator},
{"MMA-MAJOR", "4- and 6-bit operands cannot be transposed", "PTX ISA 9.1 §9.7.16.10.3 Table 54",
 "Only 8-, 16- and 32-bit operands may be MN-major (the transpose bits of the instruction descriptor); e2m1, e2m3 and e3m2 must be K-major.",
 "FP4/FP6 weights stored N-major as they come out of a framework.",
 {"store the operand with K contiguous (\"major\": \"k\")"},
 R"({"gemm": {"a": {"dtype": "e2m1", "major": "m"}, "b": {"dtype": "e2m1"}, "tile": {"k": 128}}})", "/gemm/a/major", false,
 R"({"gemm": {"a": {"dtype": "e2m1"}, "b": {"dtype": "e2m1"}, "tile": {"k": 128}}})", check_mma_major},
{"MMA-SWIZZLE-ATOMICITY", "128B swizzling with 32B atomicity is for transposed tf32 only", "PTX ISA 9.1 §9.7.16.10.1; Table 54; Table 55",
 "A transposed (MN-major) tf32 operand must use 128-byte swizzling with 32-byte atomicity (layout type 1); every other operand must not use that mode, and it has no K-major atom.",
 "tf32 GEMMs with N-major B (row-major K x N weights).",
 {"write \"128_base32b\" as the operand's swizzle for MN-major tf32", "or store tf32 operands K-major"},
 R"({"gemm": {"a": {"dtype": "tf32", "major": "m"}, "b": {"dtype": "tf32"}, "tile": {"k": 32}}})", "/gemm/swizzle/a", false,
 R"({"gemm": {"a": {"dtype": "tf32", "major": "m"}, "b": {"dtype": "tf32"}, "tile": {"k": 32}, "swizzle": {"a": "128_base32b"}}})", check_mma_swizzle_atomicity},
{"MMA-A-TMEM-MAJOR", "A in tensor memory must be K-major", "PTX ISA 9.1 §9.7.16.10.2 Table 53; §9.7.16.9.2 (tcgen05.cp)",
 "A in tensor memory is row-major: each lane holds one row of A with K along the columns. tcgen05.cp copies K-major core matrices and cannot transpose.",
 "Choosing a_source tmem for an M-major A.",
 {"store A K-major", "or keep A in shared memory, where M-major is allowed"},
 R"({"gemm": {"a_source": "tmem", "a": {"major": "m"}}})", "/gemm/a/major", false, R"({"gemm": {"a_source": "tmem"}})", check_mma_a_tmem_major},

// ---- Shapes -------------------------------------------------------------------------------------
{"MMA-M", "tile.m is not a multiple of a legal instruction M", "PTX ISA 9.1 §9.7.16.2.1 Table 39",
 "One tcgen05.mma has M = 64 or 128 (cta_group::1) or 128 or 256 (cta_group::2; block-scaled kinds 128 only at cta_group::1). The planner splits a larger tile into M groups, each with its own accumulator.",
 "Tiles sized for other hardware (96, 192 at cta_group::2).",
 {"use a tile.m that is a multiple of 64 (cta_group 1) or 128 (cta_group 2)"},
 R"({"gemm": {"tile": {"m": 96}}})", "/gemm/tile/m", false, "{}", check_mma_m},
{"MMA-N", "tile.n cannot be split into legal instruction widths", "PTX ISA 9.1 §9.7.16.2.1 Table 39; §9.7.16.10.1 Table 52",
 "N per instruction: 8..256 step 8 at cta_group::1 (16..256 step 16 at cta_group::2); kind::i8 takes 8, 16, 24, 32, then steps of 16 (steps of 32 for a pair); 8-bit N-major B needs steps of 16 (32 for a pair). The planner splits tile.n into groups of at most 256 whose starts fall on B's core matrices or swizzle atoms.",
 "Widths that are not multiples of 8, or integer and 8-bit transposed GEMMs at widths the finer float steps would allow.",
 {"use the tile.n the diagnostic names (the next width that splits)"},
 R"({"gemm": {"a": {"dtype": "s8"}, "b": {"dtype": "s8"}, "accumulator": "s32", "d": {"dtype": "s32"}, "cta_group": 2, "tile": {"m": 256, "n": 48, "k": 128}}})", "/gemm/tile/n", false,
 R"({"gemm": {"a": {"dtype": "s8"}, "b": {"dtype": "s8"}, "accumulator": "s32", "d": {"dtype": "s32"}, "cta_group": 2, "tile": {"m": 256, "n": 64, "k": 128}}})", check_mma_n},
{"MMA-K", "tile.k is not a multiple of the instruction K", "PTX ISA 9.1 §9.7.16.2.1 Table 39; §9.7.16.2.2",
 "K is fixed by the kind: 16 (f16), 8 (tf32), 32 (f8f6f4, i8); 256 bits of each row per instruction. A tile is a whole number of instructions along K.",
 "Porting tile sizes between element types of different widths.",
 {"use a tile.k that is a multiple of the instruction K"},
 R"({"gemm": {"tile": {"k": 8}, "swizzle": {"a": 0, "b": 0}}})", "/gemm/tile/k", false,
 R"({"gemm": {"tile": {"k": 16}, "swizzle": {"a": 0, "b": 0}}})", check_mma_k},
{"LAYOUT-ATOM", "an operand tile is not made of whole swizzle atoms", "PTX ISA 9.1 §9.7.16.3.3 (canonical layouts); §9.7.16.10.6 Table 55",
 "Shared-memory operands are built from swizzle atoms: 8 rows by the swizzle width (K-major) or the swizzle width of M/N by 8 K rows (MN-major). A K-major tile's K extent in bytes must be a multiple of the swizzle width (a 128B-swizzled bf16 tile needs tile.k = 64, 128, ...); an MN-major tile's M/N extent likewise, and each instruction's M group must start on an atom.",
 "Small tile.k with a wide swizzle, or narrow MN-major tiles (M=64 of fp8 with a 128B swizzle).",
 {"use the smaller swizzle the diagnostic names, the widest whose atoms the tile fills", "or grow the tile along the swizzled dimension"},
 R"({"gemm": {"tile": {"k": 32}}})", "/gemm/swizzle/a", false, R"({"gemm": {"tile": {"k": 32}, "swizzle": {"a": 64, "b": 64}}})", check_layout_atom},

// ---- Block scaling (the gemm template's "scale") ------------------------------------------------
{"SCALE-TARGET", "block scaling needs a tcgen05 target", "PTX ISA 9.1 §9.7.16.10.7; §9.7.16.10.9.1 (tcgen05.mma target notes)",
 "The block-scaled MMA kinds (.kind::mxf8f6f4, .kind::mxf4, .kind::mxf4nvf4) are tcgen05.mma kinds: the scale factors are read from tensor memory, which sm_90a does not have, and wgmma has no block scaling.",
 "Porting an MXFP8 or NVFP4 Blackwell spec to Hopper.",
 {"target sm_100a, sm_100f, sm_103a or sm_110a", "or drop \"scale\" and scale the operands beforehand"},
 R"({"target": "sm_90a", "gemm": {"a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "tile": {"k": 128}, "scale": {"dtype": "ue8m0"}}})", "/gemm/scale", false, R"({"gemm": {"a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "tile": {"k": 128}, "scale": {"dtype": "ue8m0"}}})", check_scale_target},
{"SCALE-KIND", "the operand types form no block-scaled kind", "PTX ISA 9.1 §9.7.16.10.7.1 Table 57; §9.7.16.10.4 (packing of 4- and 6-bit types)",
 "Block scaling takes float8/6/4 operands: .kind::mxf8f6f4 any mix of e4m3, e5m2, e2m3, e3m2 and e2m1 (4- and 6-bit types in 8-bit containers in shared memory), .kind::mxf4 and .kind::mxf4nvf4 e2m1 x e2m1 stored two per byte. Without \"kind\" the types choose: e2m1 x e2m1 takes the packed kinds (mxf4nvf4 with ue4m3 factors or vec 16), every other float8/6/4 pair mxf8f6f4. A \"kind\" given must take the types.",
 "Block scaling on bf16 or integer operands; \"kind\": \"mxf4\" with fp8 operands.",
 {"use float8/6/4 operands", "or leave \"kind\" out and let the types choose it (the diagnostic names the kind and the factors it takes)"},
 R"({"gemm": {"scale": {"dtype": "ue8m0"}}})", "/gemm/scale", false, R"({"gemm": {"a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "tile": {"k": 128}, "scale": {"dtype": "ue8m0"}}})", check_scale_kind},
{"SCALE-TYPE", "the scale type and block size are not a combination of the kind", "PTX ISA 9.1 §9.7.16.10.7.1 Tables 56 and 57",
 "Each block-scaled kind takes its scale types and block sizes: .kind::mxf8f6f4 ue8m0 per 32 elements (.scale_vec::1X / .block32), .kind::mxf4 ue8m0 per 32 (.scale_vec::2X / .block32), .kind::mxf4nvf4 ue8m0 per 32 or ue8m0 or ue4m3 per 16 (.scale_vec::4X / .block16). \"vec\" defaults to 16 for ue4m3 and 32 for ue8m0 (with sparse A twice that: SPARSE-KIND).",
 "NVFP4 scales (ue4m3 per 16) on fp8 operands; MXFP4 with vec 16 and \"kind\": \"mxf4\".",
 {"use the scale type and vec the diagnostic names (the least change the kind takes), or the other kind it names"},
 R"({"gemm": {"a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "tile": {"k": 128}, "scale": {"dtype": "ue4m3"}}})", "/gemm/scale/dtype", false,
 R"({"gemm": {"a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "tile": {"k": 128}, "scale": {"dtype": "ue8m0"}}})", check_scale_type},
{"SCALE-K", "K is not a multiple of the scale vector", "PTX ISA 9.1 §9.7.16.10.7 (one scale factor per block of vec elements of K)",
 "Every scale factor covers vec consecutive elements of K of its row of A (column of B). A K that is no multiple of vec leaves a partial last block, which the 128x4 scale layout, cuBLAS and the quantizers that write it do not describe. The launch header refuses such a k at run time too.",
 "Odd hidden sizes, or K counted in bytes for packed e2m1.",
 {"pad K to a multiple of vec (zeros in A and B; any factor)"},
 R"({"gemm": {"k": 4100, "a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "tile": {"k": 128}, "scale": {"dtype": "ue8m0"}}})", "/gemm/k", false, R"({"gemm": {"a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "tile": {"k": 128}, "scale": {"dtype": "ue8m0"}}})", check_scale_k},
{"SCALE-TILE", "a tile the scale-factor copies cannot take", "PTX ISA 9.1 §9.7.16.10.7.2-3 (scale factors in tensor memory); §9.7.16.9.2 (tcgen05.cp .32x128b.warpx4)",
 "The scale factors reach tensor memory in the 128x4 layout's 512-byte blocks (128 rows of A or columns of B by 4 factors), one tcgen05.cp.32x128b.warpx4 each, which puts row r at lane r % 32 of every lane quarter, column r / 32. So tile.n is whole 128-column blocks of B (at cta_group 2 at most 256: one instruction per pair, each CTA holding B's factors for all of N), a pair's tile.m whole M = 256 instructions (M = 128, data-path layout B, is ptxgen's refusal: its factor placement is not stated), and tile.k whole 4-factor columns (4 x vec elements) of the layout.",
 "tile.n = 64 or 192; tile.k = 64 with MXFP8 (two factors of a 4-factor column).",
 {"use a tile.n that is a multiple of 128, a tile.k that is a multiple of 4 x vec"},
 R"({"gemm": {"a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "tile": {"n": 192, "k": 128}, "scale": {"dtype": "ue8m0"}}})", "/gemm/tile/n", false, R"({"gemm": {"a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "tile": {"k": 128}, "scale": {"dtype": "ue8m0"}}})", check_scale_tile},

{"SCALE-BLOCK-TYPE", "block-wise f32 factors on operands or an accumulator they do not scale", "PTX ISA 9.1 §9.7.15.5.2 (wgmma .e4m3/.e5m2 with an f32 accumulator)",
 "Block-wise f32 scale factors (\"scale\": {\"dtype\": \"f32\"}, DeepSeek-V3's recipe) scale FP8 operands: A and B e4m3 or e5m2 (any mix, wgmma's .e4m3 and .e5m2 types), and each K block's partial sums are multiplied by the factors and added in f32 registers, so the accumulator is f32.",
 "Block-wise factors on bf16 operands; an f16 accumulator.",
 {"use e4m3 or e5m2 operands and an f32 accumulator", "or drop \"scale\""},
 R"({"target": "sm_90a", "gemm": {"tile": {"n": 128, "k": 128}, "scale": {"dtype": "f32"}}})", "/gemm/a/dtype", false, R"({"target": "sm_90a", "gemm": {"a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "tile": {"n": 128, "k": 128}, "scale": {"dtype": "f32"}}})", check_scale_block_type},
{"SCALE-BLOCK-VEC", "block-wise f32 factors of another block size or a kind", "(docs/spec.md, \"Block scaling\": block-wise f32 factors)",
 "Block-wise f32 factors cover 128 elements of K: A's one per row and 128 of K, B's one per 128 x 128 block. Other block sizes are not built, and \"kind\" (a block-scaled tcgen05 kind) has no meaning for them: the wgmma kernel multiplies each K block's partial sums by the factors in registers.",
 "\"vec\": 64 or \"kind\": \"mxf8f6f4\" beside \"dtype\": \"f32\".",
 {"leave \"vec\" and \"kind\" out"},
 R"({"target": "sm_90a", "gemm": {"a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "tile": {"n": 128, "k": 128}, "scale": {"dtype": "f32", "vec": 64}}})", "/gemm/scale/vec", false, R"({"target": "sm_90a", "gemm": {"a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "tile": {"n": 128, "k": 128}, "scale": {"dtype": "f32"}}})", check_scale_block_vec},
{"SCALE-BLOCK-TILE", "a tile the block-wise f32 factors do not divide, or whose two accumulators do not fit", "PTX ISA 9.1 §9.7.15.5.1.1 (wgmma accumulator fragments); §9.7.15.5.2 (scale-d)",
 "With block-wise f32 factors each K block of the main loop is one block of the factors: its wgmmas start a fresh set of partial sums (scale-d 0) that is then multiplied by A's factor of each row and B's factor of the tile and added to the accumulator, so tile.k is 128; B's factors are one per 128 columns and the kernel reads one per tile, so tile.n is 128. Each consumer thread holds two sets of accumulators (64 registers each for 64 rows of a 128-column tile); a ping-pong consumer's whole 128-row tile would need 256.",
 "tile.k = 64 (two loop blocks per factor block); tile.n = 256; ping-pong consumers with tile.m 128.",
 {"use tile.k 128 and tile.n 128", "with ping-pong consumers tile.m 64, or cooperative consumers"},
 R"({"target": "sm_90a", "gemm": {"a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "tile": {"n": 128, "k": 64}, "swizzle": {"a": 64, "b": 64}, "scale": {"dtype": "f32"}}})", "/gemm/tile/k", false, R"({"target": "sm_90a", "gemm": {"a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "tile": {"n": 128, "k": 128}, "scale": {"dtype": "f32"}}})", check_scale_block_tile},
{"SCALE-BLOCK-PARTIALS", "two sets of block-wise partial sums where they do not fit, or partials without f32 factors", "PTX ISA 9.1 §9.7.15.7 (wgmma.wait_group N); §9.7.15.5.1.1 (accumulator fragments); §9.7.19.5 (setmaxnreg)",
 "With block-wise f32 factors each consumer promotes a K block's partial sums (acc = partial * sa sb + acc) once its wgmmas completed. With \"partials\": 2 it keeps two sets, one per parity of the K block: block kb + 1 waits for block kb's group (wgmma.wait_group 0), issues its wgmmas into the other set and promotes block kb while they run, so the tensor pipe works through the promotion. Block kb's stage is released only after block kb + 1's wgmmas were issued, so the ring needs two stages; A loaded into registers is rewritten every block, so A is read from shared memory; and a thread holds the scaled sum and both sets, 3 x 64 f32 for a warpgroup's 64 x 128, beside its addresses and factors, which ptxas fits without spilling in a setmaxnreg budget of 232 (\"registers\"). Left out, \"partials\" is 2 where it fits and 1 elsewhere. Other factors scale the MMA itself and have no partial sums.",
 "\"partials\": 2 without \"registers\" (the launch's 168 registers a thread), with one stage, or beside ue8m0 factors.",
 {"use \"partials\": 1 or leave it out", "or give the consumers 232 registers (\"registers\": {\"producer\": 40, \"consumer\": 232}), 2 or more stages and A from shared memory"},
 R"({"target": "sm_90a", "gemm": {"a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "tile": {"m": 128, "n": 128, "k": 128}, "registers": {"producer": 40, "consumer": 200}, "scale": {"dtype": "f32", "partials": 2}}})", "/gemm/scale/partials", false, R"({"target": "sm_90a", "gemm": {"a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "tile": {"m": 128, "n": 128, "k": 128}, "registers": {"producer": 40, "consumer": 232}, "scale": {"dtype": "f32", "partials": 2}}})", check_scale_block_partials},
// ---- Sparse A (the gemm template's "sparse") ----------------------------------------------------
{"SPARSE-TARGET", "sparse A needs a tcgen05 target", "PTX ISA 9.1 §9.7.16.10.8; §9.7.16.10.9.2 (tcgen05.mma.sp)",
 "The template plans structured-sparse A with tcgen05.mma.sp, whose metadata lives in tensor memory. wgmma has a sparse form too, with the metadata in registers, which ptxgen does not plan: that is ptxgen's refusal, not the hardware's.",
 "Porting a sparse Blackwell spec to Hopper.",
 {"target sm_100a, sm_100f, sm_103a or sm_110a", "or drop \"sparse\""},
 R"({"target": "sm_90a", "gemm": {"a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "tile": {"k": 256}, "stages": 2, "sparse": true}})", "/gemm/sparse", false, R"({"gemm": {"a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "tile": {"k": 256}, "stages": 2, "sparse": true}})", check_sparse_target},
{"SPARSE-KIND", "a block size the sparse block-scaled MMA does not take", "PTX ISA 9.1 §9.7.16.10.7.1 Table 56; §9.7.16.10.9.2 (tcgen05.mma.sp, .blockN); §9.7.16.10.8.2-3",
 "A sparse block-scaled MMA (.kind::mxf8f6f4 at 2:4, .kind::mxf4 and .kind::mxf4nvf4 at 4:8 in pairs) computes twice the K of the dense one with as many scale factors per row (Table 56: M x 1, M x 2, M x 4 for all K), so each factor covers twice the elements of K: .kind::mxf8f6f4 ue8m0 per 64 (.scale_vec::1X / .block32: 32 of A's stored elements), .kind::mxf4 ue8m0 per 64 (2X), .kind::mxf4nvf4 ue8m0 per 64 (2X) or ue8m0 or ue4m3 per 32 (4X / .block16). \"vec\" counts elements of K (the factor tensors' 128x4 layout is over K, as CUTLASS's sparse block-scaled kernels take it) and defaults to 64 for ue8m0 and 32 for ue4m3 with sparse A. MXFP8's 32-element blocks and NVFP4's 16 have no sparse instruction.",
 "Sparse MXFP8 with the dense 32-element factor tensors; NVFP4 with vec 16 and sparse A.",
 {"use the sparse block size (64 for ue8m0, 32 for ue4m3 with the e2m1 kinds) and factor tensors over it", "or drop \"sparse\""},
 R"({"gemm": {"a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "tile": {"k": 256}, "stages": 2, "sparse": true, "scale": {"dtype": "ue8m0", "vec": 32}}})", "/gemm/scale/vec", false, R"({"gemm": {"a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "tile": {"k": 256}, "stages": 2, "sparse": true, "scale": {"dtype": "ue8m0"}}})", check_sparse_kind},
{"SPARSE-TILE", "a sparse A the template cannot lay out", "PTX ISA 9.1 §9.7.16.10.8 (sparse A, metadata; .5 alignment); §9.7.16.10.5 (layouts C, F); §9.7.16.9.2 (tcgen05.cp .128x128b)",
 "Sparse A is K-major in shared memory (each row keeps half of its elements of K: two of every four, one of every two for tf32, two pairs of every eight for packed e2m1; half of tile.k), read from there (not copied into tensor memory), and its metadata arrives in atoms of 128 rows by 16 bytes, one tcgen05.cp.128x128b each, 4 bits per chunk: 128 elements of K for the 2:4 kinds (.kind::f16, .kind::f8f6f4, .kind::mxf8f6f4, .kind::i8), 64 for .kind::tf32 (1:2), 256 for .kind::mxf4 and .kind::mxf4nvf4 (4:8 in pairs). tile.k is whole atoms. The metadata rows sit in D's lanes: 128 rows per M group (layouts D and A), or, where D takes half the lanes (M = 64, layout F; a CTA pair's M = 128, layout C), an M group's rows at D's lane alignment, placed by 16-row boxes (§9.7.16.10.8.5: the same alignment for A, D and the metadata; docs/architecture.md item 12).",
 "tile.k = 64 with bf16 or 8-bit operands, tile.k = 32 with tf32, an M-major A or \"a_source\": \"tmem\" with \"sparse\".",
 {"use K-major A from shared memory and a tile.k that is a multiple of the atom (128; 64 for tf32, 256 for packed e2m1)"},
 R"({"gemm": {"swizzle": {"a": 64}, "sparse": true}})", "/gemm/tile/k", false, R"({"gemm": {"tile": {"k": 128}, "stages": 2, "sparse": true}})", check_sparse_tile},
{"SPARSE-K", "with sparse A, K is not a multiple of tile.k", "PTX ISA 9.1 §9.7.16.10.8.1-2 (metadata values)",
 "Each 4-bit index pair of the metadata is one of seven values (tf32's 4-bit index one of two); TMA fills what lies past k with zeros, which is none of them, and an MMA reads the metadata of a whole K block. So k is a multiple of tile.k, and the metadata tensor holds valid indices over all of it (zero values of A past the real K). The launch header refuses other k at run time.",
 "A K padded to 128 but not to tile.k = 256.",
 {"pad K to a multiple of tile.k (zero values, valid metadata)", "or use a smaller tile.k"},
 R"({"gemm": {"k": 4000, "a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "tile": {"k": 256}, "stages": 2, "sparse": true}})", "/gemm/k", false, R"({"gemm": {"a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "tile": {"k": 256}, "stages": 2, "sparse": true}})", check_sparse_k},

// ---- wgmma (sm_90a) -----------------------------------------------------------------------------
{"WGMMA-TYPES", "A and B types have no wgmma variant", "PTX ISA 9.1 §9.7.15.3 (matrix data types); §9.7.15.5.2 syntax",
 "wgmma.mma_async takes f16.f16, bf16.bf16, tf32.tf32, e4m3/e5m2 in any mix, and s8.s8 or u8.u8: integer multiplicands must both be signed or both unsigned, and there are no 6- or 4-bit types.",
 "Porting a Blackwell spec (e2m1, s8 x u8) to Hopper.",
 {"convert to a pair wgmma takes", "or target sm_100a"},
 R"({"target": "sm_90a", "gemm": {"a": {"dtype": "s8"}, "b": {"dtype": "u8"}, "accumulator": "s32", "d": {"dtype": "s32"}, "tile": {"k": 128}}})", "/gemm/b/dtype", false,
 R"({"target": "sm_90a", "gemm": {"a": {"dtype": "s8"}, "b": {"dtype": "s8"}, "accumulator": "s32", "d": {"dtype": "s32"}, "tile": {"k": 128}}})", check_wgmma_types},
{"WGMMA-ACCUM", "the accumulator type is not available for wgmma with these inputs", "PTX ISA 9.1 §9.7.15.3",
 "f16 and e4m3/e5m2 multiplicands accumulate in f16 or f32; bf16 and tf32 in f32; s8/u8 in s32.",
 "An f16 accumulator for bf16 inputs.",
 {"use the accumulator the message gives"},
 R"({"target": "sm_90a", "gemm": {"accumulator": "f16"}})", "/gemm/accumulator", false, R"({"target": "sm_90a"})", check_wgmma_accumulator},
{"WGMMA-MAJOR", "wgmma transposes only 16-bit operands", "PTX ISA 9.1 §9.7.15.5.2 (imm-trans-a, imm-trans-b)",
 "The transpose immediates exist only for f16/bf16 with descriptor operands; tf32, e4m3/e5m2 and s8/u8 operands must be K-major in shared memory.",
 "An N-major (row-major K x N) fp8 or tf32 B.",
 {"store the operand K-major", "or target sm_100a"},
 R"({"target": "sm_90a", "gemm": {"a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3", "major": "n"}, "tile": {"k": 128}}})", "/gemm/b/major", false,
 R"({"target": "sm_90a", "gemm": {"a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "tile": {"k": 128}}})", check_wgmma_major},
{"WGMMA-M", "tile.m is not a multiple of 64", "PTX ISA 9.1 §9.7.15.2 (m64nNkK)",
 "Every wgmma has M = 64; ptxgen gives each consumer warpgroup 64 rows of the tile.",
 "Tiles sized for tcgen05 (M=32) or for mma.sync.",
 {"use tile.m = 64, 128, 192 or 256"},
 R"({"target": "sm_90a", "gemm": {"tile": {"m": 96}}})", "/gemm/tile/m", false, R"({"target": "sm_90a"})", check_wgmma_m},
{"WGMMA-N", "tile.n cannot be split into wgmma widths", "PTX ISA 9.1 §9.7.15.2",
 "N per wgmma is 8..256 in steps of 8; for s8/u8 it is 8, 16, 24, 32, then steps of 16. The planner splits tile.n into groups of at most 256.",
 "Widths that are not multiples of 8, or integer tiles of e.g. 40 columns beyond the last 256-wide group.",
 {"use the tile.n the diagnostic names (the next width that splits)"},
 R"({"target": "sm_90a", "gemm": {"tile": {"n": 100}}})", "/gemm/tile/n", false, R"({"target": "sm_90a", "gemm": {"tile": {"n": 104}}})", check_wgmma_n},
{"WGMMA-K", "tile.k is not a multiple of the wgmma K", "PTX ISA 9.1 §9.7.15.2",
 "K per wgmma is 16 (f16/bf16), 8 (tf32) or 32 (8-bit): 256 bits of each row.",
 "tile.k chosen for another element width.",
 {"use a tile.k that is a multiple of the instruction K"},
 R"({"target": "sm_90a", "gemm": {"tile": {"k": 8}, "swizzle": {"a": 0, "b": 0}}})", "/gemm/tile/k", false,
 R"({"target": "sm_90a", "gemm": {"tile": {"k": 16}, "swizzle": {"a": 0, "b": 0}}})", check_wgmma_k},
{"WGMMA-SWIZZLE", "no 32B-atomicity swizzle on sm_90a", "PTX ISA 9.1 §9.7.15.5.1.2.2 (2-bit swizzle field)",
 "The wgmma descriptor encodes no swizzle, 128B, 64B or 32B; 128B with 32-byte atomicity is a tcgen05 mode.",
 "Porting a tf32 MN-major Blackwell spec.",
 {"use 0, 32, 64 or 128"},
 R"({"target": "sm_90a", "gemm": {"swizzle": {"b": "128_base32b"}}})", "/gemm/swizzle/b", false, R"({"target": "sm_90a"})", check_wgmma_swizzle},
{"WGMMA-REGISTERS", "the accumulators do not fit the register file", "PTX ISA 9.1 §9.7.15.5.1.1 (accumulator fragments); 64K registers per SM",
 "Each consumer thread holds tile.n/2 accumulator registers (f32, s32) or tile.n/4 (f16), plus 4 per K step of A fragments when A comes from registers. An SM's 64K registers are four banks of 16K, one per warp scheduler; with one 128-thread warpgroup per 64 rows plus a producer warp, the busiest scheduler holds ceil(warps/4) warps, which bounds what one thread may hold (128 x 256 tiles: 9 warps, 168 registers).",
 "256 x 256 f32 tiles (four consumer warpgroups of 128 accumulators each).",
 {"reduce tile.n or tile.m"},
 R"({"target": "sm_90a", "gemm": {"tile": {"m": 256}}})", "/gemm/tile/n", false, R"({"target": "sm_90a", "gemm": {"tile": {"m": 128}}})", check_wgmma_registers},

// ---- Clusters, TMA, budgets ------------------------------------------------------------------
{"REGISTERS-TARGET", "register budgets on a target without the wgmma template", "PTX ISA 9.1 §9.7.19.5 (setmaxnreg)",
 "\"registers\" gives the wgmma template's producer warpgroup and consumer warpgroups their own per-thread register budgets (setmaxnreg). The tcgen05 templates keep the accumulator in tensor memory and their roles are single warps, so the field has no meaning there.",
 "A spec tuned for sm_90a retargeted to sm_100a.",
 {"remove \"registers\"", "or target sm_90a"},
 R"({"gemm": {"registers": {"producer": 40, "consumer": 232}}})", "/gemm/registers", false,
 R"({"target": "sm_90a", "gemm": {"registers": {"producer": 40, "consumer": 232}}})", check_registers_target},
{"REGISTERS-BUDGET", "register budgets that do not add up", "PTX ISA 9.1 §9.7.19.5 (setmaxnreg); 64K registers per SM",
 "With \"registers\" the producer is a whole warpgroup (setmaxnreg acts on warpgroups) that lowers its per-thread budget with setmaxnreg.dec, and each consumer warpgroup raises its own with setmaxnreg.inc, which waits until the CTA's pool has the registers. The launch gives every thread the same share (64K registers over the CTA's warps, four banks of 16K: 168 for 384 threads), so the producer's budget must be at most that share and the consumers' at least it, each a multiple of 8 from 24 to 256, and 128 x producer + 128 x warpgroups x consumer at most 65536, or the consumers would wait forever.",
 "Budgets copied from a kernel with fewer consumer warpgroups; 240 for two consumers beside a producer of 40.",
 {"keep 128 x producer + consumer threads x consumer within 65536", "e.g. \"registers\": {\"producer\": 40, \"consumer\": 232} for tile.m 128"},
 R"({"target": "sm_90a", "gemm": {"registers": {"producer": 40, "consumer": 240}}})", "/gemm/registers", false,
 R"({"target": "sm_90a", "gemm": {"registers": {"producer": 40, "consumer": 232}}})", check_registers_budget},
{"CONSUMERS-PINGPONG", "ping-pong consumers where the template cannot run them", "PTX ISA 9.1 §9.7.15.5 (wgmma.mma_async, accumulators in registers); §9.7.13.15 (mbarrier)",
 "\"consumers\": \"pingpong\" gives the wgmma template two consumer warpgroups that take alternate tiles of a persistent CTA, each computing its whole tile (tile.m / 64 stacked m64 wgmmas) while the other stores its previous tile, so that the epilogue no longer stalls the tensor cores. The alternation walks the persistent CTA's tiles, so the schedule must be persistent; each warpgroup reads all of A's tile through descriptors, so A comes from shared memory; tcgen05 kernels keep the accumulator in tensor memory and overlap the epilogue through its double buffer instead.",
 "Ping-pong asked for on a data-parallel grid, or in a spec retargeted to sm_100a.",
 {"add \"schedule\": \"persistent\"", "or use \"consumers\": \"cooperative\" (the default)"},
 R"({"target": "sm_90a", "gemm": {"tile": {"m": 128, "n": 128}, "consumers": "pingpong"}})", "/gemm/consumers", false,
 R"({"target": "sm_90a", "gemm": {"tile": {"m": 128, "n": 128}, "consumers": "pingpong", "schedule": "persistent"}})", check_consumers_pingpong},
{"CLUSTER-MULTICAST", "a cluster whose shared operands ptxgen cannot multicast", "PTX ISA 9.1 §9.7.9.27.1.2 (cp.async.bulk.tensor .multicast::cluster, .cta_group::2); §9.7.16.12.1 (tcgen05.commit .multicast::cluster); §9.7.13.15 (mbarrier)",
 "A cluster's CTAs (with cta_group 2, its pairs) cover a block of neighbouring output tiles, x along N and y along M, and share operands: the tiles of one tile row of the block share A's tile, those of one tile column B's. Each CTA loads its part of a shared tile by TMA and multicasts it into the shared memory of the CTAs that share it (in a pair, those of its own rank: each CTA holds its half), so the shared tile must split into equal parts of whole TMA boxes. A stage is then written by several producers and is released in each of their CTAs: on tcgen05 each pair's (CTA's) MMA issuer commits it to every CTA of its block row and column, on sm_90a each consumer warpgroup arrives in every CTA of its block row and column. A cluster of 2 x 2 shares both: a stage is then written by the producers of the CTA's block row and column and released in each of their CTAs. The cluster's z would compute the same tiles again. A in tensor memory at M = 64 is loaded in 16-row pieces per lane quarter, which ptxgen does not multicast.",
 "A shared tile of 256 rows split three ways; a z extent; A in tensor memory at M = 64 with a cluster along N.",
 {"use a tile that splits into the cluster's parts of whole TMA boxes", "or a smaller cluster", "or a cluster z of 1"},
 R"({"target": "sm_90a", "gemm": {"cluster": [1, 3, 1]}})", "/gemm/tile/n", false,
 R"({"target": "sm_90a", "gemm": {"cluster": [2, 2, 1]}})", check_cluster_multicast},
{"CLUSTER-PAIR", "cta_group 2 needs an even cluster x dimension", "PTX ISA 9.1 §9.7.16.5.1 (CTA pair)",
 "The two CTAs of a pair have %cluster_ctarank differing in the last bit; the cluster's x extent must be even so every CTA has its peer.",
 "A 2-CTA MMA with the default single-CTA cluster.",
 {"use \"cluster\": [2, 1, 1] (or any even x)"},
 R"({"gemm": {"cta_group": 2, "tile": {"m": 256}, "cluster": [1, 1, 1]}})", "/gemm/cluster/0", false,
 R"({"gemm": {"cta_group": 2, "tile": {"m": 256}, "cluster": [2, 1, 1]}})", check_cluster_pair},
{"SCHEDULE-PERSISTENT", "a cluster the persistent schedule cannot take", "(docs/spec.md, \"Persistent schedule\"); PTX ISA 9.1 §9.7.16.5 (CTA pairs)",
 "\"schedule\": \"persistent\" launches one CTA per multiprocessor (one CTA pair per two with cta_group 2, one cluster per cluster's worth); each CTA's roles walk its tiles, the shared-memory ring carrying on from tile to tile, so the next tile's loads overlap this tile's epilogue. On tcgen05 targets the accumulator has two buffers in tensor memory (one when two do not fit in 512 columns: `ptxgen plan` says which), so the next tile's MMAs fill one while the epilogue reads the other. The grid is one row of clusters that walk blocks of tiles together, the cluster's x along N and y along M (CLUSTER-MULTICAST); a cluster z has no tiles to take.",
 "A cluster z of 2 copied from a data-parallel spec.",
 {"use a cluster z of 1 (the diagnostic names the cluster); a data-parallel grid's z would compute the same tiles again (CLUSTER-MULTICAST)"},
 R"({"gemm": {"schedule": "persistent", "cluster": [1, 1, 2]}})", "/gemm/cluster/2", false, R"({"gemm": {"schedule": "persistent", "cluster": [1, 2, 1]}})", check_schedule_persistent},
{"GLU-N", "a gated activation over an odd n", "(docs/spec.md, \"Epilogues\": the gated activations)",
 "\"activation\": \"swiglu\" or \"geglu\" pairs the product's columns: B's n rows are the gate's n/2, then up's n/2, and D is m x n/2 with D[i][j] = act(P[i][j]) P[i][j + n/2] (vLLM's SiluAndMul convention). An odd n has no such halves. Where n is given at run time the launch header refuses an odd one the same way.",
 "A spec written with D's width (n = d) instead of B's rows (n = 2d); an odd n from a shape table.",
 {"use an even n: B's rows, twice D's columns"},
 R"({"gemm": {"n": 4095, "activation": "swiglu"}})", "/gemm/n", false, R"({"gemm": {"n": 4096, "activation": "swiglu"}})", check_glu_n},
{"GLU-BIAS", "a bias along M with a gated activation", "(docs/spec.md, \"Epilogues\": the gated activations)",
 "A gated activation adds the bias to the product's n columns, gate and up halves both, before it pairs them (torch's F.linear(x, W, b) then SiluAndMul): the bias is a row of n elements along N. A bias along M is not built with it.",
 "A per-row bias carried over from a non-gated spec.",
 {"use \"along\": \"n\" (n elements: the gate's n/2, then up's)", "or drop the bias"},
 R"({"gemm": {"activation": "swiglu", "bias": {"dtype": "bf16", "along": "m"}}})", "/gemm/bias/along", false,
 R"({"gemm": {"activation": "swiglu", "bias": {"dtype": "bf16", "along": "n"}}})", check_glu_bias},
{"GLU-LAYOUT", "a gated activation on a configuration it is not built for", "PTX ISA 9.1 §9.7.16.8.3 (tcgen05.ld .32x32b: a row per thread), §9.7.15.5.1.1 (wgmma D fragments); §5.5 (TMA boxes)",
 "The gated epilogue loads B's tile as two TMA boxes of tile.n / 2 rows (the gate's rows from n0, up's from n/2 + n0) into the halves of one K-major tile, so the accumulator holds the gate in its first tile.n / 2 columns and up in the rest, and each thread pairs column c with c + tile.n / 2, which it holds itself (tcgen05's layout D read by .32x32b: a whole row per thread; wgmma: the gate's and up's accumulators, one per half, in the same fragment). Built: K-major B, tile.n a multiple of 16, cta_group 1, clusters of y = 1 (A may be multicast, B not), no block scaling or sparse A, A from shared memory (wgmma's register A would be reloaded between the gate's and up's wgmmas), on tcgen05 tile.m a multiple of 128, and no alpha or C (they come before the activation, where the product is still two halves; a residual, the amax and D's scale apply to D and are built).",
 "An N-major B (torch weights stored K x N), a CTA pair, an M = 64 tile on sm_100a, alpha or C beside swiglu.",
 {"store B K-major (n x k)", "use cta_group 1 and a cluster of y = 1", "on tcgen05, a tile.m that is a multiple of 128"},
 R"({"gemm": {"activation": "geglu", "b": {"major": "n"}}})", "/gemm/b/major", false, R"({"gemm": {"activation": "geglu", "b": {"major": "k"}}})", check_glu_layout},
{"EPILOGUE-TMA", "a TMA epilogue box that would be partial", "PTX ISA 9.1 §9.7.9.25.5.1 (cp.async.bulk.tensor); §5.5 (bounding box); (docs/spec.md, \"Epilogue\")",
 "\"epilogue\": \"tma\" writes D into a 128-byte swizzled shared-memory tile and stores it with cp.async.bulk.tensor, box by box; TMA writes only what lies inside the tensor, so edges need no predicates. A box is 128 bytes of a row (64 bf16 or f16 columns, 32 f32 or s32) by the rows a warpgroup (sm_90a: 64) or the epilogue (tcgen05: the CTA's 128 rows of an M group, 64 for M = 64 and a pair's M = 128) holds, and every box a tile stores is whole: TMA would write a partial box's other columns too, into the next columns of D. So tile.n must be whole boxes, and on tcgen05 so must every run of columns tensor memory holds apart: a CTA pair's N groups are stored in halves (each CTA's B holds half of N), an M = 64 group left over folds its N into halves at the two lane alignments. \"epilogue\": \"auto\" (sm_90a) plans the same boxes, and also the direct stores the kernel takes when D's rows are not 16-byte multiples apart at run time (a tensor map cannot stride them); tcgen05 kernels take \"tma\" or \"direct\".",
 "A tile.n such as 200 or 96 with bf16 D; a pair's tile.n of 64.",
 {"use a tile.n of whole 128-byte boxes (of whole pairs of boxes for a CTA pair)", "or \"epilogue\": \"direct\""},
 R"({"gemm": {"epilogue": "tma", "tile": {"n": 96}}})", "/gemm/tile/n", false, R"({"gemm": {"epilogue": "tma", "tile": {"n": 128}}})", check_epilogue_tma},
{"D-FP8", "an 8- or 4-bit D from other than f32 accumulators, or a 4-bit D through the TMA epilogue", "PTX ISA 9.1 §9.7.9.21 (cvt.rn.satfinite.e4m3x2.f32, .e5m2x2, .e2m1x2); §5.5.7 (the 128-byte swizzle of the TMA epilogue's staging)",
 "An 8-bit floating-point D is converted from f32 accumulators two elements at a time (cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32: round to nearest even, a value beyond the type's range becomes its largest finite value, NaN stays NaN), and stored from the registers (a pair of bytes where both lie inside D and aligned, else each byte) or through the TMA epilogue's staging: boxes of 128 one-byte columns, one 128-byte swizzle row. A 4-bit D (e2m1, MXFP4 and NVFP4's elements, cvt.rn.satfinite.e2m1x2.f32) holds two elements a byte and is stored directly only: the TMA epilogue stages 8-, 16- and 32-bit D (ptxgen's refusal, not the hardware's).",
 "An e4m3 D with an f16 accumulator; an MXFP4 or NVFP4 D with \"epilogue\": \"tma\".",
 {"use \"accumulator\": \"f32\"", "for a 4-bit D, use \"epilogue\": \"direct\" (the default for it), or an 8-bit D (MXFP8) with \"epilogue\": \"tma\""},
 R"({"gemm": {"d": {"dtype": "e2m1"}, "quantize": "mxfp4", "epilogue": "tma"}})", "/gemm/epilogue", false, R"({"gemm": {"d": {"dtype": "e4m3"}, "epilogue": "tma"}})", check_d_fp8},
{"QUANT-DTYPE", "a block-quantized D of a type the format does not store, or an e2m1 D without its block scaling", "OCP Microscaling Formats v1.0 §5 (MXFP8: E4M3 or E5M2 elements, MXFP4: E2M1, an E8M0 scale per 32); PTX ISA 9.1 §9.7.9.21 (cvt.rn.satfinite.e4m3x2.f32, .e5m2x2, .e2m1x2)",
 "\"quantize\": \"mxfp8\" writes D as MXFP8: each block of 32 consecutive elements of a row divided by its power-of-two factor and converted to e4m3 or e5m2 (round to nearest even, saturating), the factors (ue8m0) to the kernel output SFD in the 128x4 layout a block-scaled GEMM reads; \"mxfp4\" likewise with e2m1 elements, two a byte; \"nvfp4\" with e2m1 elements and a ue4m3 factor per 16. D's dtype is the elements' type, so it must be one of the format's. An e2m1 D (15 values from -6 to 6) is stored only as MXFP4's scaled elements.",
 "Asking for MXFP8 while D is left bf16; an e2m1 D without \"quantize\".",
 {"use \"d\": {\"dtype\": \"e4m3\"} (or e5m2)", "or drop \"quantize\""},
 R"({"gemm": {"quantize": "mxfp8"}})", "/gemm/d/dtype", false, R"({"gemm": {"quantize": "mxfp8", "d": {"dtype": "e4m3"}}})", check_quant_dtype},
{"QUANT-TARGET", "MXFP4 or NVFP4 on a target without the e2m1 conversion", "PTX ISA 9.1 §9.7.9.21 (cvt.rn.satfinite.e2m1x2.f32: sm_100a, sm_101a, sm_120a; the f targets from PTX ISA 8.8)",
 "MXFP4's and NVFP4's elements are converted from f32 two at a time by cvt.rn.satfinite.e2m1x2.f32, which the tcgen05 targets have and sm_90a does not. MXFP8 (e4m3 or e5m2 elements) is built on sm_90a.",
 "An MXFP4 output asked of an sm_90a (H100, H200) kernel.",
 {"use \"quantize\": \"mxfp8\" on sm_90a (with an e4m3 or e5m2 D)", "or target sm_100a"},
 R"({"target": "sm_90a", "gemm": {"tile": {"m": 128, "n": 128, "k": 64}, "d": {"dtype": "e2m1"}, "quantize": "mxfp4"}})", "/gemm/quantize", false,
 R"({"target": "sm_90a", "gemm": {"tile": {"m": 128, "n": 128, "k": 64}, "d": {"dtype": "e4m3"}, "quantize": "mxfp8"}})", check_quant_target},
{"QUANT-N", "a block-quantized D whose columns are not whole blocks", "OCP Microscaling Formats v1.0 §5 (one scale per block of 32); (docs/spec.md, \"Block scaling\": the 128x4 layout)",
 "MXFP8 gives every 32 consecutive columns of a row of D one ue8m0 factor, and the 128x4 layout the next GEMM reads (D as its A, D's columns its K) describes whole blocks only, as cuBLAS, CUTLASS and torch do. D's columns (n, or n / 2 with a gated activation) must be a multiple of 32; where n is given at run time the launch header refuses other values the same way.",
 "A projection width such as 4080 kept from an unquantized layer.",
 {"use an n whose D columns are a multiple of 32"},
 R"({"gemm": {"n": 4080, "d": {"dtype": "e4m3"}, "quantize": "mxfp8"}})", "/gemm/n", false,
 R"({"gemm": {"n": 4096, "d": {"dtype": "e4m3"}, "quantize": "mxfp8"}})", check_quant_n},
{"QUANT-TILE", "a block-quantized D whose blocks do not lie whole in a tile and in the registers that quantize them", "PTX ISA 9.1 §9.7.16.8.3 (tcgen05.ld fragments), §9.7.15.5.1.1 (wgmma D fragments), §9.7.9.6 (shfl.sync)",
 "Each block of 32 columns of a row is quantized where its values are: in one thread's registers (tcgen05.ld .32x32b: a row per thread), or in the same registers of the 4 lanes that share a row (.16x256b, wgmma accumulators: the block's amax combined by shfl.sync.bfly over lanes xor 1 and xor 2). D's tile must be a whole number of blocks wide (tile.n, or tile.n / 2 with a gated activation, a multiple of 32), and every column chunk the epilogue loads must start on a block.",
 "tile.n = 48 or 96 with a gated activation.",
 {"use a tile.n whose D columns are a multiple of 32 (e.g. 128 or 256)"},
 R"({"gemm": {"tile": {"n": 48}, "d": {"dtype": "e4m3"}, "quantize": "mxfp8"}})", "/gemm/tile/n", false,
 R"({"gemm": {"tile": {"n": 64}, "d": {"dtype": "e4m3"}, "quantize": "mxfp8"}})", check_quant_tile},
{"EPILOGUE-AUTO", "the run-time choice of epilogue on a tcgen05 target", "PTX ISA 9.1 §5.5.1 (tensor strides), with the driver's cuTensorMapEncodeTiled (row strides of 16-byte multiples); §9.7.16.8.3 (tcgen05.ld)",
 "\"epilogue\": \"auto\" gives an sm_90a kernel both epilogues: the TMA store where D's rows are 16-byte multiples apart at run time (a tensor map's stride), the direct st.global of each accumulator pair otherwise, so the kernel takes any n. The wgmma consumers hold D in registers either way, so the two differ only in how they store; a tcgen05 kernel reads D out of tensor memory box by box for TMA and by warp fragments for direct stores, which ptxgen does not plan side by side.",
 "A spec tuned on sm_90a (where the planner may choose \"auto\") retargeted to sm_100a.",
 {"use \"epilogue\": \"tma\" or \"direct\"", "or target sm_90a"},
 R"({"gemm": {"epilogue": "auto"}})", "/gemm/epilogue", false, R"({"target": "sm_90a", "gemm": {"epilogue": "auto"}})", check_epilogue_auto},
{"CLUSTER-SIZE", "the cluster has more than 16 CTAs", "PTX ISA 9.1 §11.7 (cluster dimension directives); CUDA cluster limits",
 "A cluster holds at most 8 CTAs portably and 16 with the non-portable opt-in; larger clusters cannot launch.",
 "Cluster shapes chosen for multicast without counting the CTAs.",
 {"use at most 16 CTAs per cluster (the diagnostic names one: z 1, x and y halved)"},
 R"({"gemm": {"cluster": [4, 4, 2]}})", "/gemm/cluster", false, R"({"gemm": {"cluster": [2, 2, 1]}})", check_cluster_size},
{"TMA-STRIDE", "a leading dimension TMA cannot use", "PTX ISA 9.1 §5.5.5 (tensor-map strides); CUDA driver cuTensorMapEncodeTiled",
 "Operands are loaded with TMA (cp.async.bulk.tensor), whose tensor maps need every global stride to be a multiple of 16 bytes, and a row must hold the contiguous extent (K for a K-major operand, M or N otherwise). Without \"ld\" ptxgen pads rows to 16 bytes, so any size works; an explicit ld must itself be such a stride.",
 "Sub-matrices of tightly packed odd-sized tensors (ld = 1001 bf16 elements).",
 {"pad the leading dimension to a multiple of 16 bytes and keep the logical size; TMA zero-fills the edge", "or leave ld out"},
 R"({"gemm": {"k": 1001, "a": {"ld": 1001}}})", "/gemm/a/ld", false, R"({"gemm": {"k": 1001, "a": {"ld": 1008}}})", check_tma_stride},
{"SMEM-DESC-RANGE", "an operand tile is beyond a matrix descriptor's 18-bit address range", "PTX ISA 9.1 §9.7.16.4.1 Table 40 (14-bit fields of matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4)",
 "A shared-memory descriptor addresses bytes 0 .. 2^18-1 (its start, LBO and SBO are 14-bit fields in 16-byte units). One stage of an operand tile of 256 KiB or more cannot be described; it is also more shared memory than any CTA has.",
 "Very deep tile.k with large tile.m or tile.n (1024 x 1024 bf16 is 2 MiB).",
 {"reduce tile.k (each stage holds tile.k columns of A and B)", "or reduce tile.m / tile.n"},
 R"({"gemm": {"tile": {"m": 1024, "k": 1024}, "stages": 1}})", "/gemm/tile/k", false, R"({"gemm": {"tile": {"k": 256}, "stages": 1}})", check_smem_desc_range},
{"LAUNCH-GRID", "the launch grid exceeds the grid dimensions of the target", "PTX ISA 9.1 §10.7 (%nctaid: x up to 2^31-1, y and z up to 65535 on sm_9x and sm_10x); §10.15 (%cluster_nctaid)",
 "The kernel runs one CTA per output tile (cta_group CTAs per tile along M): x = tiles along N times cta_group, y = tiles along M, z = the cluster's z, each rounded up to whole clusters. x may reach 2^31-1; y and z at most 65535, so M may span at most 65535 tiles.",
 "Very tall problems (M of tens of millions) with short tiles.",
 {"use a taller tile.m (the diagnostic names one the shape rules take)", "or split the problem along M into several launches"},
 R"({"gemm": {"m": 2147483392}})", "/gemm/m", false, R"({"gemm": {"m": 8388480}})", check_launch_grid},
// ---- Program level (docs/spec.md "The program level"; examples patch the program example) -------
{"TMEM-BUDGET", "the plan needs more tensor memory than a CTA has", "PTX ISA 9.1 §9.7.16.1 (512 columns x 128 lanes); §9.7.16.7.1 (tcgen05.alloc)",
 "Accumulators take one 32-bit column per N element per M group (half of N per CTA for M=128 pairs); A in tensor memory takes tile.k x bits / 32 columns per M group. The allocation is a power of two of at least 32 and at most 512 columns.",
 "Large tiles (256 x 512), or A in tensor memory beside a wide accumulator.",
 {"reduce tile.n or tile.m", "or split rows across a CTA pair (cta_group 2, M=256)"},
 R"({"gemm": {"tile": {"m": 256, "n": 512}, "stages": 2}})", "/gemm/tile/n", false, R"({"gemm": {"tile": {"m": 128, "n": 512}, "stages": 2}})", check_tmem_budget},
{"SMEM-BUDGET", "the pipeline needs more shared memory than a CTA gets", "CUDA: 227 KB of shared memory per block on sm_90 and sm_100; PTX ISA 9.1 Table 41 (1024-byte alignment)",
 "Every stage holds one tile of A and one of B (each rounded to 1024 bytes, where swizzle patterns start), plus mbarriers, the TMEM address slot and 1024 bytes to align the dynamic base at run time.",
 "Deep pipelines of large tiles.",
 {"use fewer stages", "or a smaller tile.k"},
 R"({"gemm": {"stages": 8}})", "/gemm/stages", false, R"({"gemm": {"stages": 4}})", check_smem_budget},
{"SPEC-VIEW", "a tensor-memory view is not one of allocation, slice, cast, alias", "(docs/spec.md); PTX ISA 9.1 §9.7.16.7.1",
 "Each entry under /program/tmem is exactly one of: an allocation ({\"columns\": N}), a slice, a cast or an alias of another view. Allocations become tcgen05.alloc instructions and need a name, so they cannot be written inline.",
 "A view object with two kinds of members, or an inline {\"columns\": N} inside a chain.",
 {"keep one of \"columns\", \"slice\", \"cast\" and \"alias\" per view", "declare allocations by name and refer to them"},
 R"({"program": {"tmem": {"x": {"alias": "acc", "columns": 32}}}})", "/program/tmem/x", false, R"({"program": {"tmem": {"x": {"alias": "acc"}}}})"},
{"PROGRAM-TARGET", "the program level needs a tcgen05 target", "PTX ISA 9.1 §9.7.16 (target notes of every tcgen05 instruction)",
 "A program manages tensor memory and issues tcgen05.cp/mma/ld/st, which exist on sm_100a, sm_100f, sm_103a and sm_110a only.",
 "A program written for Blackwell retargeted to sm_90a.",
 {"target sm_100a, sm_100f, sm_103a or sm_110a"},
 R"({"target": "sm_90a", "program": {}})", "/target", false, R"({"target": "sm_100f", "program": {}})", check_program_target},
{"PROGRAM-THREADS", "threads is not a whole number of warps", "PTX ISA 9.1 §9.7.16.8.1; §9.7.16.7.1 (.sync.aligned)",
 "tcgen05.alloc, tcgen05.ld/st and tcgen05.wait are executed by whole warps (.sync.aligned), and the warp→lane map of tensor memory is per warp: a kernel has a whole number of warps.",
 "A thread count chosen for another kind of kernel.",
 {"use a multiple of 32 threads; 128 (one warpgroup) reaches all 128 lanes"},
 R"({"program": {"threads": 100}})", "/program/threads", false, R"({"program": {"threads": 256}})", check_program_threads},
{"PROGRAM-NAME", "a name is not an identifier, names two things, or is one ptxgen keeps", "(docs/spec.md); PTX ISA 9.1 §4.4 (identifiers)",
 "Global tensors become kernel parameters and all names appear in labels and the plan: each is [A-Za-z_][A-Za-z0-9_]* (at most 64 characters), and one name means one thing among global tensors, tiles, views, register sets and barriers, since ops refer to them by name. Names beginning with ptxgen_ belong to the barriers and register sets the planner adds (ptxgen_done, ptxgen_loadN, ptxgen_stN): a barrier of the spec by such a name would share the phases of the planner's own, and its waits would pass early.",
 "A tile and a view with the same name, names with dashes, a barrier called ptxgen_done.",
 {"rename one of them"},
 R"({"program": {"smem": {"acc": {"dtype": "bf16", "shape": [8, 8]}}}})", "/program/tmem/acc", false,
 R"({"program": {"smem": {"acc_s": {"dtype": "bf16", "shape": [8, 8]}}}})", check_program_name},
{"PROGRAM-SIZE", "a size is not declared, or cannot be a parameter's name", "(docs/spec.md, \"Sizes and a grid\")",
 "A program's tensors, grid and loop may be sized by problem sizes the kernel takes at run time (.u32 parameters): \"sizes\": {\"m\": 4096} declares one with the spec's value, which the checks and the plan use. A name used as an extent, a grid dimension or a loop's range must be declared there, and a size is an identifier that ptxgen does not give other things (rows, cols, p_*, tmap_*, ptxgen_*). A derived size with \"exact\": true asks the size it divides to be a multiple of its \"div\" (the spec's value here; the launch header refuses others at run time).",
 "A global shaped [\"m\", 64] with no \"m\" in /program/sizes; a size named p_A; \"l\": 500 under {\"of\": \"l\", \"div\": 128, \"exact\": true}.",
 {"declare the size under /program/sizes", "rename it"},
 R"({"program": {"globals": {"D": {"dtype": "f32", "shape": ["m", 128]}}}})", "/program/globals/D/shape/0", false,
 R"({"program": {"sizes": {"m": 128}, "globals": {"D": {"dtype": "f32", "shape": ["m", 128]}}}})", check_program_size},
{"PROGRAM-GRID", "a position steps with the tile without a grid, or along a fixed extent", "(docs/spec.md, \"Sizes and a grid\")",
 "With \"grid\": {\"tile\": [TM, TN]} the kernel launches one CTA (pair) per output tile of its m x n problem, and a load or store may step with the CTA's tile row and column (\"at\": [{\"m_tile\": TM}, ...]) or the loop's iteration (\"k_block\"). A position that steps lies along an extent the kernel takes at run time (a size): TMA zero-fills past it and stores stop at it, so tiles and blocks at the edge stay inside the tensor. Stepping with the tile needs a grid.",
 "An op stepping with \"m_tile\" in a program without \"grid\"; a tile row stepping along a global whose rows are a fixed number.",
 {"add \"grid\" (and sizes for the extents it steps along)", "drop the step"},
 R"({"program": {"ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "store", "regs": "r", "dst": "D", "at": [{"m_tile": 128}, {"n_tile": 128}]}]}})", "/program/ops/7/at/0", false,
 R"({"program": {"sizes": {"m": 256, "n": 256}, "grid": {"tile": [128, 128]}, "globals": {"D": {"dtype": "f32", "shape": ["m", "n"]}}, "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "store", "regs": "r", "dst": "D", "at": [{"m_tile": 128}, {"n_tile": 128}]}]}})", check_program_grid},
{"PROGRAM-LOOP", "a loop ptxgen cannot pipeline, or a ring or step outside it", "(docs/spec.md, \"Loops and roles\")",
 "A program has at most one loop: over a size in blocks (\"over\": \"k\", \"block\": 64, max(1, ceil(k / 64)) iterations) or a fixed number of times (\"trips\"). Its ops run pipelined across warp roles, ptxgen planning the mbarriers between them, so a program with a loop declares roles. Ring tiles (\"stages\") are used in the loop only, all with the same number of stages (the barriers that guard them have as many); positions that step with the iteration (\"k_block\") and \"accumulate\": \"after_first\" are the loop's.",
 "A loop in a program without roles; two loops; a loop inside a loop; a ring tile loaded before the loop.",
 {"declare roles and give each op its role", "merge the loops", "move the op into the loop"},
 R"({"program": {"ops": [{"op": "loop", "trips": 2, "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "mma", "a": "a", "b": "b", "d": "acc", "accumulate": "after_first"}]}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "store", "regs": "r", "dst": "D"}]}})", "/program/ops/0", false,
 R"({"program": {"threads": 192, "roles": {"epilogue": {"warps": [0, 1, 2, 3]}, "producer": {"warps": [4]}, "mma": {"warps": [5]}}, "ops": [{"op": "loop", "trips": 2, "ops": [{"op": "load", "role": "producer", "src": "A", "dst": "a", "via": "tma"}, {"op": "load", "role": "producer", "src": "B", "dst": "b", "via": "tma"}, {"op": "mma", "role": "mma", "a": "a", "b": "b", "d": "acc", "accumulate": "after_first"}]}, {"op": "tmem_load", "role": "epilogue", "src": "acc", "regs": "r"}, {"op": "store", "role": "epilogue", "regs": "r", "dst": "D"}]}})", check_program_loop},
{"PROGRAM-ROLE", "a role's warps, or an op's role, cannot be planned", "(docs/spec.md, \"Loops and roles\"); PTX ISA 9.1 §9.7.13.15 (mbarrier), §9.7.16.6 (tcgen05 memory consistency)",
 "Roles are sets of consecutive warps (disjoint, inside the CTA) that run their own ops at the same time as the other roles; in a program with roles every op names its role, and ptxgen plans the mbarrier waits, arrivals, commits and transaction counts the order of the ops needs between them (the spec writes no commit or wait). Loads go by TMA (one thread of the role issues them; the reading roles wait on their transaction bytes). A register set belongs to the threads that loaded it: its stores and tmem_stores run in the same role.",
 "An op without \"role\"; a role of warps [0, 2]; a plain load in a pipelined program; a store in another role than the tmem_load of its registers.",
 {"give the op its role", "list consecutive warps", "add \"via\": \"tma\""},
 R"({"program": {"threads": 192, "roles": {"epilogue": {"warps": [0, 1, 2, 3]}, "producer": {"warps": [4]}, "mma": {"warps": [5]}}, "ops": [{"op": "loop", "trips": 2, "ops": [{"op": "load", "role": "producer", "src": "A", "dst": "a", "via": "tma"}, {"op": "load", "role": "producer", "src": "B", "dst": "b", "via": "tma"}, {"op": "mma", "role": "mma", "a": "a", "b": "b", "d": "acc", "accumulate": "after_first"}]}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "store", "role": "epilogue", "regs": "r", "dst": "D"}]}})", "/program/ops/1", false,
 R"({"program": {"threads": 192, "roles": {"epilogue": {"warps": [0, 1, 2, 3]}, "producer": {"warps": [4]}, "mma": {"warps": [5]}}, "ops": [{"op": "loop", "trips": 2, "ops": [{"op": "load", "role": "producer", "src": "A", "dst": "a", "via": "tma"}, {"op": "load", "role": "producer", "src": "B", "dst": "b", "via": "tma"}, {"op": "mma", "role": "mma", "a": "a", "b": "b", "d": "acc", "accumulate": "after_first"}]}, {"op": "tmem_load", "role": "epilogue", "src": "acc", "regs": "r"}, {"op": "store", "role": "epilogue", "regs": "r", "dst": "D"}]}})", check_program_role},
{"FORMAT-PACKED", "\"packed\" is a format of e2m1 only", "PTX ISA 9.1 §9.7.16.10.4.4, §9.7.16.10.4.6",
 "4-bit elements sit in shared (and global) memory either padded, 16 elements then 8 bytes of padding per 16 bytes (the format of .kind::f8f6f4 and .kind::mxf8f6f4 and the source of tcgen05.cp's decompression), or packed two per byte (.kind::mxf4, .kind::mxf4nvf4). 6-bit types have only the padded format; wider types neither.",
 "\"format\": \"packed\" on a type that is not e2m1.",
 {"drop \"format\", or use it on e2m1"},
 R"({"program": {"smem": {"a": {"format": "packed"}}}})", "/program/smem/a/format", false, "{\"program\": {}}", check_format_packed},
{"SMEM-TILE", "a shared-memory tile is not a canonical layout", "PTX ISA 9.1 §9.7.16.3.3 (canonical layouts); Table 55",
 "Tiles are laid out the way TMA boxes write the canonical layouts the descriptors describe: K-major tiles are whole 8-row core matrices and their K bytes a multiple of the swizzle width; MN-major tiles have M/N bytes a multiple of the swizzle width and whole 8-row (4 for 32-byte atomicity) K groups.",
 "A 128-byte swizzle on a tile whose rows are 64 bytes; a 4-row tile.",
 {"use a smaller swizzle whose atoms the shape fills (the diagnostic names the largest; it then points at \"swizzle\")", "or give the tile whole swizzle atoms (when no swizzle fits, for example rows that are no multiple of 8, the diagnostic points at \"shape\" and gives the rounded shape)"},
 R"({"program": {"smem": {"a": {"shape": [128, 32]}}}})", "/program/smem/a/swizzle", false,
 R"({"program": {"smem": {"a": {"shape": [128, 32], "swizzle": 64}, "b": {"shape": [128, 32], "swizzle": 64}}, "tmem": {"a_t": {"cast": {"of": {"slice": {"columns": [128, 144]}}}}}}})", check_smem_tile},
{"SMEM-ALIGN", "a tile's alignment is below its swizzle pattern", "PTX ISA 9.1 §9.7.16.4.1 Table 41; CUDA C++ Programming Guide (TMA destinations 128-byte aligned)",
 "A swizzle pattern repeats every 1024 (128B), 512 (64B) or 256 (32B) bytes; descriptors with base offset 0 (the only ones ptxgen writes) need the tile to start at such a boundary. A tile a TMA load (\"via\": \"tma\") writes starts 128-byte aligned whatever its swizzle. Alignments are powers of two of at least 16 bytes.",
 "An explicit align copied from another tile with a smaller swizzle.",
 {"use the pattern size or a larger power of two, or omit \"align\""},
 R"({"program": {"smem": {"a": {"align": 512}}}})", "/program/smem/a/align", false, R"({"program": {"smem": {"a": {"align": 2048}}}})", check_smem_align},
{"TMEM-ALLOC", "an allocation is not a power of two of 32 to 512 columns", "PTX ISA 9.1 §9.7.16.1.2; §9.7.16.7.1 (tcgen05.alloc)",
 "Tensor memory is allocated in units of 32 columns of all 128 lanes, a power of two of 32 to 512 columns per tcgen05.alloc.",
 "Allocations sized to exactly what one accumulator needs.",
 {"round the allocation up to a power of two and slice it"},
 R"({"program": {"tmem": {"t": {"columns": 200}}}})", "/program/tmem/t/columns", false, R"({"program": {"tmem": {"t": {"columns": 256}}}})", check_tmem_alloc},
{"NAME-UNKNOWN", "a name that is not declared", "(docs/spec.md)",
 "Ops and views refer to global tensors, tiles and views by the names declared under /program/globals, /program/smem and /program/tmem.",
 "Typos, or a view used before it was added to the spec.",
 {"declare the name, or use one that is declared"},
 R"({"program": {"tmem": {"acc": {"slice": {"of": "tt"}}}}})", "/program/tmem/acc/slice/of", false, R"({"program": {"tmem": {"acc": {"slice": {"of": "t"}}}}})", check_name_unknown},
{"OP-OPERAND", "an operand of the wrong kind", "PTX ISA 9.1 §9.7.16.10 (where A, B, D live); §9.7.16.9.2; §9.7.16.8",
 "Each operand has a kind: load reads a global tensor into a tile, copy a tile into a tensor-memory view, tcgen05.mma reads A from a tile or a view, B from a tile, and writes D to a view; tmem_load/tmem_store move between views and registers; store writes registers to a global tensor.",
 "A tile where a global tensor is meant, or B in tensor memory (tcgen05.mma reads B from shared memory only).",
 {"use an operand of the kind the message names"},
 R"({"program": {"ops": [{"op": "load", "src": "a", "dst": "a"}]}})", "/program/ops/0/src", false,
 R"({"program": {"ops": [{"op": "load", "src": "A", "dst": "a"}]}})", check_op_operand},
{"VIEW-CYCLE", "views derive from each other in a cycle", "PTX ISA 9.1 §9.7.16.1 (every view is cells of an allocation)",
 "A view resolves through its chain of slices, casts and aliases to an allocation. A chain that comes back to a view already on it never reaches one.",
 "Two aliases of each other; a slice of a view that is derived from the slice.",
 {"end every chain at an allocation"},
 R"({"program": {"tmem": {"acc": {"slice": {"of": "acc2"}}, "acc2": {"alias": "acc"}}}})", "/program/tmem/acc2/alias", false,
 R"({"program": {"tmem": {"acc2": {"alias": "acc"}}}})", check_view_cycle},
{"VIEW-SLICE-RANGE", "a slice goes beyond the view it slices", "PTX ISA 9.1 §9.7.16.1 (128 lanes x 512 columns); §9.7.16.1.1",
 "A slice takes lanes [a, b) and columns [c, d) of the view it slices, counted in tensor-memory lanes and 32-bit columns; both ranges must be non-empty and inside that view.",
 "Columns counted in elements of a 16-bit type (twice the 32-bit columns), or a slice of a slice counted from the allocation.",
 {"count lanes and 32-bit columns of the view sliced"},
 R"({"program": {"tmem": {"acc": {"slice": {"columns": [0, 300]}}}}})", "/program/tmem/acc/slice/columns", false, "{\"program\": {}}", check_view_slice_range},
{"VIEW-PACKING", "a packing the element type does not have", "PTX ISA 9.1 §9.7.16.10.4 (packing formats)",
 "A 32-bit tensor-memory cell holds 1 element of 32 bits; 1 (in the low half, as the accumulator D) or 2 (packed, as A) of 16 bits; 1 or 4 of 8 bits (and of 4- or 6-bit types in 8-bit containers); e2m1 may also pack 8 (two per byte, the mxf4 kinds).",
 "Packing 4 for a 16-bit type.",
 {"use a packing the message lists"},
 R"({"program": {"tmem": {"a_t": {"cast": {"packing": 4}}}}})", "/program/tmem/a_t/cast/packing", false, "{\"program\": {}}", check_view_packing},
{"VIEW-LAYOUT", "a layout the view's lanes cannot hold", "PTX ISA 9.1 §9.7.16.9.2 (.warpx2, .warpx4 multicast); §9.7.16.10.5.6 (layout F); §9.7.16.8.1",
 "The replicated layouts are what tcgen05.cp's multicast writes: warpx2::02_13 holds 64 rows at lanes r and r+64, warpx2::01_23 rows 0-31 at lanes 0-63 and rows 32-63 at 64-127, warpx4 32 rows at lanes r, r+32, r+64, r+96. layout_f::0 and layout_f::16 are data-path layout F of an M = 64 MMA: 64 rows, row r at lane 32 (r / 16) + r % 16 + the alignment 0 or 16. They all place rows in every 32-lane quarter, so they need all 128 lanes, and a lane slice of them would keep some replicas (or 16-lane pieces) and drop others.",
 "A layout cast of a lane slice; a lane slice of a replicated view.",
 {"cast a view of all 128 lanes; slice only columns of a replicated view"},
 R"({"program": {"tmem": {"sf": {"cast": {"of": {"slice": {"of": "t", "lanes": [0, 64], "columns": [160, 164]}}, "layout": "warpx4"}}}}})", "/program/tmem/sf/cast/layout", false,
 R"({"program": {"tmem": {"sf": {"cast": {"of": {"slice": {"of": "t", "columns": [160, 164]}}, "layout": "warpx4"}}}}})", check_view_layout},
{"VIEW-ROWS", "rows that do not split into row blocks", "PTX ISA 9.1 §9.7.16.1 (128 lanes); §9.7.16.10.5 (one 128-row M group per instruction)",
 "A view holds more rows than its lanes (an A or D operand over several M groups) as blocks side by side in its columns: rows / rows-per-block blocks of equal width, rows-per-block being the lanes (rows layout), 64 (warpx2) or 32 (warpx4).",
 "rows = 100 on a 128-lane view.",
 {"use a multiple of the rows per block whose block count divides the columns"},
 R"({"program": {"tmem": {"x": {"cast": {"of": "acc", "rows": 100}}}}})", "/program/tmem/x/cast/rows", false, R"({"program": {"tmem": {"x": {"cast": {"of": "acc", "rows": 256}}}}})", check_view_rows},
{"LOAD-DTYPE", "a load between tensors of different types", "(docs/spec.md, load)",
 "load copies bytes from a global tensor into a tile: both hold the same element type in the same storage format.",
 "Loading f32 data into a bf16 tile.",
 {"give the global tensor and the tile the same dtype (and format)"},
 R"({"program": {"ops": [{"op": "load", "src": "D", "dst": "a"}]}})", "/program/ops/0/dst", false, R"({"program": {"ops": [{"op": "load", "src": "A", "dst": "a"}]}})", check_load_dtype},
{"LOAD-BOUNDS", "a load reaches outside the global tensor", "(docs/spec.md, load)",
 "A K-major tile reads rows x columns of the global tensor from \"at\"; an MN-major tile reads its K extent as rows and its M/N extent as columns. All of it must lie inside the global tensor.",
 "\"at\" past the last full tile.",
 {"move \"at\", or shrink the tile"},
 R"({"program": {"ops": [{"op": "load", "src": "A", "dst": "a", "at": [64, 0]}]}})", "/program/ops/0/at", false, R"({"program": {"ops": [{"op": "load", "src": "A", "dst": "a", "at": [0, 0]}]}})", check_load_bounds},
{"LOAD-ALIGN", "global rows or the load's start are not 16-byte aligned", "(docs/spec.md, load); PTX ISA 9.1 §9.7.9.8 (ld vector alignment)",
 "The kernel loads 16-byte chunks (ld.global.v4): rows of the global tensor and the tile's first column must sit at multiples of 16 bytes (the tensor's address itself is 16-byte aligned by the caller).",
 "Unpadded odd row lengths.",
 {"pad global rows to a multiple of 16 bytes", "start at a column that is a multiple of 16 bytes"},
 R"({"program": {"globals": {"A": {"shape": [128, 68]}}}})", "/program/globals/A/shape/1", false, R"({"program": {"globals": {"A": {"shape": [128, 72]}}}})", check_load_align},
{"LOAD-TMA", "a TMA load the tensor map cannot address", "PTX ISA 9.1 §9.7.9.27.1.2 (cp.async.bulk.tensor: .s32 coordinates); §5.5.3.1 (bounding box); CUDA driver API cuTensorMapEncodeTiled (dimensions at most 2^32, strides below 2^40, box dimensions at most 256); CUDA C++ Programming Guide (TMA destinations 128-byte aligned)",
 "A load with \"via\": \"tma\" reads through a tensor map that sees the global tensor as rows of bytes (4-byte words for the 32-byte-atom swizzle): a copy of storage bytes whatever the dtype. Its coordinates are signed 32-bit, so a row of the global tensor holds at most 2^31 - 1 of those units; a box is one swizzle width of a row by at most 256 rows, and starts 128-byte aligned in shared memory.",
 "A global tensor whose rows are longer than 2 GiB.",
 {"describe the part of the tensor the kernel reads", "or load with \"via\": \"ld\" (plain 16-byte loads, 64-bit addresses)"},
 R"({"program": {"globals": {"A": {"shape": [128, 1100000000]}}, "ops": [{"op": "load", "src": "A", "dst": "a", "via": "tma"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "store", "regs": "r", "dst": "D"}]}})", "/program/ops/0/via", false,
 R"({"program": {"ops": [{"op": "load", "src": "A", "dst": "a", "via": "tma"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "store", "regs": "r", "dst": "D"}]}})", check_load_tma},
{"CP-SOURCE", "a tcgen05.cp source that is not K-major core matrices", "PTX ISA 9.1 §9.7.16.9.2; §9.7.16.3.3",
 "tcgen05.cp reads its source through a shared-memory descriptor as K-major core matrices (8 rows of 16 bytes): a row of the tile becomes (part of) a lane of tensor memory. Sources are K-major, lie inside the tile and start on an 8-row core matrix (4 rows for the 4-row shape).",
 "Copying an MN-major operand tile.",
 {"declare the tile K-major"},
 R"({"program": {"smem": {"a": {"major": "mn"}}}})", "/program/ops/2/src", false, "{\"program\": {}}", check_cp_source},
{"CP-WIDTH", "the bits per row do not match tcgen05.cp or the destination", "PTX ISA 9.1 §9.7.16.2.3 (data-movement shapes); §9.7.16.9.2",
 "Each tcgen05.cp moves 256 or 128 bits of every row. A copy moves a multiple of 128 bits per row from a 128-bit boundary, and the destination's rows hold exactly that many elements (columns x packing per row block).",
 "A destination slice one column short; copying 4 bf16 of a row.",
 {"slice the destination to the copied width"},
 R"({"program": {"tmem": {"a_t": {"cast": {"of": {"slice": {"columns": [128, 156]}}}}}}})", "/program/ops/2/dst", false, "{\"program\": {}}", check_cp_width},
{"CP-FORMAT", "the destination's type or packing does not receive the copied bits", "PTX ISA 9.1 §9.7.16.9.1 (decompression); §9.7.16.10.4",
 "tcgen05.cp moves bits: the destination holds the source's type packed 32/bits per column (bf16: 2, 8-bit: 4, 32-bit: 1, e2m1 two per byte: 8). Padded 4- and 6-bit sources are decompressed (.b8x16.b4x16_p64, .b8x16.b6x16_p32) into 8-bit containers: the destination holds the type packed 4.",
 "An unpacked bf16 view as the destination of a bf16 tile.",
 {"cast the destination to the packing the message gives"},
 R"({"program": {"tmem": {"a_t": {"cast": {"packing": 1}}}}})", "/program/ops/2/dst", false, "{\"program\": {}}", check_cp_format},
{"CP-SHAPE", "no tcgen05.cp shape writes these rows into these lanes", "PTX ISA 9.1 §9.7.16.9.2 (.128x256b, .128x128b, .64x128b.warpx2, .32x128b.warpx4, .4x256b)",
 "tcgen05.cp writes 128 rows to 128 lanes, 64 rows to two lanes each (.warpx2::02_13: lanes r and r+64; ::01_23: rows 0-31 to lanes 0-63, 32-63 to 64-127), 32 rows to four lanes each (.warpx4) or 4 rows to lanes 0, 32, 64, 96 (.4x256b). A destination of 128 rows, 64 rows (a warpx2 view, or lanes 0-63, 32-95 or 64-127) or 32 rows (a warpx4 view or one 32-lane quarter) has a shape; other row counts and lane sets have none, nor has a layout-F view (16-lane pieces): copy 128 rows into the rows view it is cast from.",
 "A 96-lane slice; 64 lanes starting at lane 16; a source with more rows than the destination.",
 {"copy 128, 64, 32 or 4 rows into a destination the message lists"},
 R"({"program": {"tmem": {"a_t": {"cast": {"of": {"slice": {"lanes": [0, 96]}}}}}}})", "/program/ops/2/dst", false, "{\"program\": {}}", check_cp_shape},
{"CP-MULTICAST-OVERLAP", "a multicasting tcgen05.cp clobbers data still to be read", "PTX ISA 9.1 §9.7.16.9.2 (.warpx2, .warpx4)",
 "A 64-row copy into lanes 0-63 uses .64x128b.warpx2::02_13, which also writes the rows to lanes 64-127; a 32-row copy into one quarter uses .warpx4, which writes all four. What those lanes of the same columns hold is overwritten: that is refused only when a later op reads those cells before anything writes them again (the data was live). Reusing the lanes of a view whose data was already read (copy, wait, read, then copy the next block) is the normal use of per-warpgroup views.",
 "A view in lanes 64-127 that is read after a 64-row copy into lanes 0-63 of the same columns.",
 {"read the other view before the copy", "use other columns for the other view", "or copy into a replicated view that owns all the lanes"},
 R"({"program": {"globals": {"H": {"dtype": "bf16", "shape": [64, 64]}}, "smem": {"h": {"dtype": "bf16", "shape": [64, 64], "swizzle": 128}}, "tmem": {"top": {"cast": {"of": {"slice": {"of": "t", "lanes": [0, 64], "columns": [160, 192]}}, "dtype": "bf16", "packing": 2}}, "low": {"cast": {"of": {"slice": {"of": "t", "lanes": [64, 128], "columns": [160, 192]}}, "dtype": "bf16", "packing": 2}}}, "ops": [{"op": "load", "src": "H", "dst": "h"}, {"op": "copy", "src": "h", "dst": "low"}, {"op": "commit", "barrier": "b1"}, {"op": "wait", "barrier": "b1"}, {"op": "copy", "src": "h", "dst": "top"}, {"op": "commit", "barrier": "b2"}, {"op": "wait", "barrier": "b2"}, {"op": "tmem_load", "src": "low", "regs": "q"}]}})", "/program/ops/4/dst", false,
 R"({"program": {"globals": {"H": {"dtype": "bf16", "shape": [64, 64]}}, "smem": {"h": {"dtype": "bf16", "shape": [64, 64], "swizzle": 128}}, "tmem": {"top": {"cast": {"of": {"slice": {"of": "t", "lanes": [0, 64], "columns": [160, 192]}}, "dtype": "bf16", "packing": 2}}, "low": {"cast": {"of": {"slice": {"of": "t", "lanes": [64, 128], "columns": [160, 192]}}, "dtype": "bf16", "packing": 2}}}, "ops": [{"op": "load", "src": "H", "dst": "h"}, {"op": "copy", "src": "h", "dst": "low"}, {"op": "commit", "barrier": "b1"}, {"op": "wait", "barrier": "b1"}, {"op": "tmem_load", "src": "low", "regs": "q"}, {"op": "copy", "src": "h", "dst": "top"}, {"op": "commit", "barrier": "b2"}, {"op": "wait", "barrier": "b2"}, {"op": "tmem_load", "src": "top", "regs": "q2"}]}})", check_cp_multicast_overlap},
{"LD-WARPS", "the listed warps cannot reach the view's lanes", "PTX ISA 9.1 §9.7.16.8.1 (access restrictions)",
 "Warp w of a warpgroup reaches lanes 32*(w%4) to 32*(w%4)+31 with tcgen05.ld/st, and no others. The warps of a tmem_load or tmem_store must exist, each reach some of the view's lanes, and together reach every row once.",
 "Warps 0-2 for a 128-lane accumulator; warp 4 in a 128-thread kernel.",
 {"list one warp for each 32-lane quarter the view uses, or omit \"warps\""},
 R"({"program": {"ops": [{"op": "tmem_load", "src": "acc", "regs": "r", "warps": [0, 1, 2]}]}})", "/program/ops/0/warps", false,
 R"({"program": {"ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r", "warps": [0, 1, 2, 3]}, {"op": "store", "regs": "r", "dst": "D"}]}})", check_ld_warps},
{"LD-SHAPE", "the tcgen05.ld/st shape does not fit the view's lanes or columns", "PTX ISA 9.1 §9.7.16.2.3; §9.7.16.8.3-4",
 ".32x32b moves a whole 32-lane quarter per instruction, the 16x shapes 16 lanes; .16x32bx2 moves two halves of the columns. The view's lanes within each quarter must be whole pieces of that size, and its columns a multiple of what one instruction moves.",
 "A 16-lane view with the default .32x32b.",
 {"use a 16-lane shape for 16-lane pieces"},
 R"({"program": {"tmem": {"part": {"slice": {"of": "acc", "lanes": [0, 16]}}}, "ops": [{"op": "tmem_load", "src": "part", "regs": "q"}]}})", "/program/ops/0", false,
 R"({"program": {"tmem": {"part": {"slice": {"of": "acc", "lanes": [0, 16]}}}, "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "part", "regs": "r", "shape": "16x64b"}, {"op": "store", "regs": "r", "dst": "D"}]}})", check_ld_shape},
{"LD-NUM", ".num is not legal for the shape or does not divide the columns", "PTX ISA 9.1 §9.7.16.8.3 Table 49, §9.7.16.8.4 Table 50",
 ".num is .x1, .x2, .x4 ... .x128, with at most 128 registers per thread (16x128b has no .x128, 16x256b no .x64 or .x128), and the columns of the view are a multiple of the columns one instruction moves.",
 "A .num that does not divide the row; .x64 with .16x256b.",
 {"use a .num from Table 49 that divides the columns, or omit it"},
 R"({"program": {"ops": [{"op": "tmem_load", "src": "acc", "regs": "r", "shape": "16x256b", "num": 64}]}})", "/program/ops/0/num", false,
 R"({"program": {"ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r", "shape": "16x256b", "num": 16}, {"op": "store", "regs": "r", "dst": "D"}]}})", check_ld_num},
{"LD-PACK", ".pack::16b / .unpack::16b on a view that is not unpacked 16-bit", "PTX ISA 9.1 §9.7.16.8.2",
 ".pack::16b moves the 16-bit elements of two adjacent columns (each unpacked, in the low half) through one register; .unpack::16b does the reverse. It applies to 16-bit views of packing 1; a packed view already has two elements per column.",
 "pack on an f32 accumulator.",
 {"drop pack/unpack, or cast the view to an unpacked 16-bit type"},
 R"({"program": {"ops": [{"op": "tmem_load", "src": "acc", "regs": "r", "pack": true}]}})", "/program/ops/0/pack", false,
 R"({"program": {"globals": {"A": {"dtype": "f16"}, "B": {"dtype": "f16"}, "D": {"dtype": "f16"}}, "smem": {"a": {"dtype": "f16"}, "b": {"dtype": "f16"}}, "tmem": {"t": {"dtype": "f16"}, "a_t": {"cast": {"dtype": "f16"}}}, "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r", "pack": true}, {"op": "store", "regs": "r", "dst": "D"}]}})", check_ld_pack},
{"LD-REGS", "a register set larger than ptxgen keeps", "PTX ISA 9.1 §9.7.16.8.3 (Table 49)",
 "A tmem_load puts the whole view in registers of each thread. ptxgen keeps a register set at 256 registers per thread or fewer (a thread has 255 physical registers; beyond that everything spills).",
 "Loading 512 columns of an accumulator at once.",
 {"load column slices of the view one at a time"},
 R"({"program": {"tmem": {"t": {"columns": 512}, "wide": {"slice": {"of": "t", "columns": [0, 512]}}}, "ops": [{"op": "tmem_load", "src": "wide", "regs": "r"}]}})", "/program/ops/0/regs", false,
 R"({"program": {"tmem": {"t": {"columns": 512}}}})", check_ld_regs},
{"ST-REGS", "registers that do not hold what the tcgen05.st moves", "PTX ISA 9.1 §9.7.16.8.4; §9.7.16.2.3.1 (fragments)",
 "tcgen05.st moves each thread's registers to fixed cells (the shape's fragment): every element a thread stores must be one it holds from the tmem_load, in every thread the same register. The view stored to has the same rows and elements per row as the registers.",
 "Storing with .16x256b registers loaded with .32x32b (thread t holds lane t; .16x256b would need lanes t/4 and t/4+8).",
 {"store with the shape, .num and warps of the load"},
 R"({"program": {"tmem": {"p": {"slice": {"of": "t", "columns": [160, 224]}}}, "ops": [{"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "tmem_store", "dst": "p", "regs": "r"}]}})", "/program/ops/1/dst", false,
 R"({"program": {"tmem": {"p": {"cast": {"of": {"slice": {"of": "t", "columns": [0, 64]}}, "dtype": "bf16", "packing": 2}}}, "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "store", "regs": "r", "dst": "D"}, {"op": "tmem_store", "dst": "p", "regs": "r"}]}})", check_st_regs},
{"ST-DTYPE", "tmem_store between types it does not convert", "PTX ISA 9.1 §9.7.9.21 (cvt); §9.7.16.8.4",
 "tmem_store writes the registers' own type, or converts f32 registers to f16 or bf16 (cvt.rn) for a 16-bit view (the P of attention, written over S).",
 "Storing f32 registers to an 8-bit view.",
 {"store f32 to f32, f16 or bf16 views"},
 R"({"program": {"tmem": {"q8": {"cast": {"of": "acc", "dtype": "e4m3"}}}, "ops": [{"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "tmem_store", "dst": "q8", "regs": "r"}]}})", "/program/ops/1/dst", false,
 R"({"program": {"tmem": {"q": {"cast": {"of": "acc", "dtype": "bf16"}}}, "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "store", "regs": "r", "dst": "D"}, {"op": "tmem_store", "dst": "q", "regs": "r"}]}})", check_st_dtype},
{"MATH-APPROX", "an elementwise function or activation without its approximate instructions' \"approx\", or with one it has not", "PTX ISA 9.1 §9.7.3.20 (lg2), §9.7.3.21 (ex2), §9.7.3.22 (tanh), §9.7.3.16 (rsqrt): .approx required; §9.7.3.13 (rcp), §9.7.3.15 (sqrt)",
 "exp2, log2, tanh and rsqrt exist in f32 only as approximate instructions (ex2.approx.f32, lg2.approx.f32, tanh.approx.f32, rsqrt.approx.f32), each with its documented maximum error; the spec says it accepts that error with \"approx\": true. rcp and sqrt are either .approx (\"approx\": true) or correctly rounded (.rn, without). add, sub, mul, fma, min, max, neg, abs, the comparisons (lt, le, gt, ge, eq, ne: set.CMP.f32.f32, §9.7.6.1) and select (selp.f32, §9.7.6.3) have no approximate form. An activation (docs/spec.md, \"Activations\") takes \"approx\": true exactly where its composition has approximate instructions: sigmoid and silu (ex2.approx, rcp.approx), gelu_tanh (tanh.approx) and gelu (rcp.approx, ex2.approx); relu is max.f32 and takes none. It is reported once per op, naming the activation.",
 "exp2 written like add; \"approx\" on an add; sigmoid, silu, gelu_tanh or gelu without \"approx\"; relu with it.",
 {"add \"approx\": true to an approximate-only function", "drop \"approx\" where the function has no approximate form"},
 R"({"program": {"ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "exp2", "regs": "y", "a": "r"}, {"op": "store", "regs": "y", "dst": "D"}]}})", "/program/ops/7/op", false,
 R"({"program": {"ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "exp2", "regs": "y", "a": "r", "approx": true}, {"op": "store", "regs": "y", "dst": "D"}]}})", check_math_approx},
{"MATH-OPERANDS", "the operands of an elementwise function hold different elements", "PTX ISA 9.1 §9.7.16.8.3 (tcgen05.ld: which thread holds which element); §9.7.3",
 "An elementwise function computes register j of each thread from register j of each operand, so the operands must hold the same element (row and column) in the same register of the same thread: register sets loaded by tmem_load from views of the same rows and columns, with the same shape, .num and warps (or the same wgmma accumulators). The result holds those elements too, so at least one operand is a register set; the others may be constants (numbers), except select's condition a: a constant there picks b (nonzero) or c (zero) for every element, so it is refused.",
 "Adding an accumulator to a slice of it, or to a set loaded with another shape.",
 {"tmem_load the operands from views of one shape with the same shape, .num and warps"},
 R"({"program": {"tmem": {"h": {"slice": {"of": "t", "columns": [0, 64]}}}, "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "tmem_load", "src": "h", "regs": "q"}, {"op": "add", "regs": "y", "a": "r", "b": "q"}]}})", "/program/ops/8/b", false,
 R"({"program": {"tmem": {"h": {"slice": {"of": "t", "columns": [0, 128]}}}, "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "tmem_load", "src": "h", "regs": "q"}, {"op": "add", "regs": "y", "a": "r", "b": "q"}, {"op": "store", "regs": "y", "dst": "D"}]}})", check_math_operands},
{"MATH-DTYPE", "an elementwise function of registers that are not f32", "PTX ISA 9.1 §9.7.3 (f32 instructions); §9.7.16.8.3 (.pack::16b)",
 "The elementwise functions are f32 instructions over registers of one f32 element each: the registers of a tmem_load of an f32 view (an accumulator). Registers of one 16-bit element each and s32 accumulators are not computed on; packed pairs (a convert's, or .pack::16b) take the packed functions (MATH-PACKED). A convert takes f32 registers. A constant operand, and a fill's value, is the f32 nearest the number: one beyond f32's finite range is refused; a fill gives the registers of an f32 view only.",
 "exp2 of the registers of a bf16 view; a fill of 1e39, or like a bf16 view.",
 {"tmem_load an f32 view without \"pack\""},
 R"({"program": {"tmem": {"q": {"cast": {"of": "acc", "dtype": "bf16"}}}, "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "tmem_load", "src": "q", "regs": "p"}, {"op": "neg", "regs": "y", "a": "p"}]}})", "/program/ops/8/a", false,
 R"({"program": {"ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "neg", "regs": "y", "a": "r"}, {"op": "store", "regs": "y", "dst": "D"}]}})", check_math_dtype},
{"MATH-PACKED", "packed and f32 operands mixed, or a convert of registers it cannot pair", "PTX ISA 9.1 §9.7.4 (half-precision instructions: .f16x2, .bf16x2); §9.7.9.21 (cvt.rn.bf16x2.f32)",
 "A \"convert\" with \"dtype\": \"bf16x2\" or \"f16x2\" holds an f32 register set as packed pairs: register j of the result holds the set's registers 2j and 2j + 1, rounded to nearest even, in its low and high halves. That is two neighbouring columns of one row only for tcgen05.ld .32x32b fragments of an even .num (in the other shapes and in wgmma accumulators a register's neighbour is another row's, or lies in another thread), so only those are converted. The elementwise functions of packed sets are the packed instructions (add.rn.bf16x2, ...), one type per instruction: an operand of f32 registers, or of the other 16-bit type, beside a packed one is refused.",
 "add of a bf16x2 set and the f32 set it was converted from; convert of registers loaded with .16x256b.",
 {"convert the f32 operand too (the same \"dtype\"), or compute in f32 before converting", "tmem_load the f32 registers with \"shape\": \"32x32b\" and an even \"num\""},
 R"({"program": {"globals": {"D": {"dtype": "bf16"}}, "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "convert", "regs": "h", "a": "r", "dtype": "bf16x2"}, {"op": "add", "regs": "y", "a": "h", "b": "r"}]}})", "/program/ops/8/b", false,
 R"({"program": {"globals": {"D": {"dtype": "bf16"}}, "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "convert", "regs": "h", "a": "r", "dtype": "bf16x2"}, {"op": "add", "regs": "y", "a": "h", "b": "h"}, {"op": "store", "regs": "y", "dst": "D"}]}})", check_math_packed},
{"MATH-PACKED-FN", "a function of packed registers that PTX has only in f32", "PTX ISA 9.1 §9.7.4 (the packed half-precision instructions); §9.7.3 (f32)",
 "The packed half-precision instructions are add, sub, mul and fma (.rn), min, max, neg, abs, and the approximate ex2 and tanh, of .f16x2 and .bf16x2 pairs (§9.7.4; every sm_100a-family target has them all). log2, rsqrt, rcp, sqrt, the comparisons, select and the activations have f32 instructions only, so they are refused on a packed set: compute them on the f32 set before its convert.",
 "rcp.approx of a bf16x2 set.",
 {"compute the function on the f32 set before its \"convert\", then convert its result"},
 R"({"program": {"globals": {"D": {"dtype": "bf16"}}, "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "convert", "regs": "h", "a": "r", "dtype": "bf16x2"}, {"op": "rcp", "regs": "y", "a": "h", "approx": true}]}})", "/program/ops/8/op", false,
 R"({"program": {"globals": {"D": {"dtype": "bf16"}}, "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "rcp", "regs": "q", "a": "r", "approx": true}, {"op": "convert", "regs": "y", "a": "q", "dtype": "bf16x2"}, {"op": "store", "regs": "y", "dst": "D"}]}})", check_math_packed_fn},
{"MATH-ROLES", "arithmetic on the registers of another role", "(docs/spec.md: Loops and roles, Arithmetic)",
 "Registers belong to the threads that hold them: an elementwise function, a read or a row reduction in a program with roles computes on the registers of the warps that run it, so its operands are register sets its own role loaded or computed (a tmem_load, or arithmetic, of the same role), and its result is that role's.",
 "An elementwise function given to the producer role on the epilogue's accumulator registers.",
 {"run the op in the role that loaded its operands"},
 R"({"program": {"threads": 192, "roles": {"epilogue": {"warps": [0, 1, 2, 3]}, "producer": {"warps": [4]}, "mma": {"warps": [5]}}, "ops": [{"op": "loop", "trips": 2, "ops": [{"op": "load", "role": "producer", "src": "A", "dst": "a", "via": "tma"}, {"op": "load", "role": "producer", "src": "B", "dst": "b", "via": "tma"}, {"op": "mma", "role": "mma", "a": "a", "b": "b", "d": "acc", "accumulate": "after_first"}]}, {"op": "tmem_load", "role": "epilogue", "src": "acc", "regs": "r"}, {"op": "neg", "role": "producer", "regs": "y", "a": "r"}, {"op": "store", "role": "producer", "regs": "y", "dst": "D"}]}})", "/program/ops/2/role", false,
 R"({"program": {"threads": 192, "roles": {"epilogue": {"warps": [0, 1, 2, 3]}, "producer": {"warps": [4]}, "mma": {"warps": [5]}}, "ops": [{"op": "loop", "trips": 2, "ops": [{"op": "load", "role": "producer", "src": "A", "dst": "a", "via": "tma"}, {"op": "load", "role": "producer", "src": "B", "dst": "b", "via": "tma"}, {"op": "mma", "role": "mma", "a": "a", "b": "b", "d": "acc", "accumulate": "after_first"}]}, {"op": "tmem_load", "role": "epilogue", "src": "acc", "regs": "r"}, {"op": "neg", "role": "epilogue", "regs": "y", "a": "r"}, {"op": "store", "role": "epilogue", "regs": "y", "dst": "D"}]}})", check_math_roles},
{"READ-DTYPE", "a read of a tensor that is not f32, bf16 or f16, or shaped like registers that are not f32", "PTX ISA 9.1 §9.7.9.8 (ld); §9.7.9.21 (cvt.f32.f16, cvt.f32.bf16: exact)",
 "A read gives a register set f32 values, one per register where the set it is shaped like (\"like\") holds its elements: the operands of the elementwise functions. It loads f32, bf16 or f16 elements and converts the 16-bit ones to f32, which is exact; integer, 8-bit and sub-byte tensors are not read. The set it is shaped like holds one f32 element per register (an accumulator's tcgen05.ld, or wgmma's f32 accumulators).",
 "A bias declared as e4m3 or s32; a read shaped like packed bf16 registers.",
 {"give the tensor the dtype f32, bf16 or f16", "shape the read like f32 registers (a tmem_load of an f32 view without \"pack\")"},
 R"({"program": {"globals": {"bias": {"dtype": "s32", "shape": [1, 128]}}, "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "read", "src": "bias", "regs": "bv", "like": "r"}, {"op": "add", "regs": "y", "a": "r", "b": "bv"}, {"op": "store", "regs": "y", "dst": "D"}]}})", "/program/ops/7/src", false,
 R"({"program": {"globals": {"bias": {"dtype": "bf16", "shape": [1, 128]}}, "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "read", "src": "bias", "regs": "bv", "like": "r"}, {"op": "add", "regs": "y", "a": "r", "b": "bv"}, {"op": "store", "regs": "y", "dst": "D"}]}})", check_read_dtype},
{"READ-SHAPE", "a read shaped like registers of a tcgen05.ld shape other than .32x32b and .16x256b", "PTX ISA 9.1 §9.7.16.8.3 (which thread holds which element of each shape)",
 "Each thread of a read loads the elements its registers hold, so ptxgen computes each one's row and column from the fragment's layout: for tcgen05.ld .32x32b and .16x256b fragments (the accumulator epilogue's shapes) and wgmma accumulators. Sets loaded with the other shapes are not read into (ptxgen's refusal, not the hardware's).",
 "A read shaped like registers loaded with .16x128b.",
 {"tmem_load the registers with \"shape\": \"32x32b\" or \"16x256b\""},
 R"({"program": {"globals": {"bias": {"dtype": "f32", "shape": [1, 128]}}, "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r", "shape": "16x128b"}, {"op": "read", "src": "bias", "regs": "bv", "like": "r"}, {"op": "add", "regs": "y", "a": "r", "b": "bv"}, {"op": "store", "regs": "y", "dst": "D"}]}})", "/program/ops/7/like", false,
 R"({"program": {"globals": {"bias": {"dtype": "f32", "shape": [1, 128]}}, "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r", "shape": "32x32b"}, {"op": "read", "src": "bias", "regs": "bv", "like": "r"}, {"op": "add", "regs": "y", "a": "r", "b": "bv"}, {"op": "store", "regs": "y", "dst": "D"}]}})", check_read_shape},
{"READ-BOUNDS", "a read reaches outside a tensor of fixed extents", "(docs/spec.md, \"Arithmetic\")",
 "A read gives register j the element at \"at\" plus the row and column register j holds; along a dimension of extent 1 (a vector, a scalar) the same element for every row or column. Where the tensor's extents are fixed, every element read must lie inside them; at run time extents, elements past them read as 0.",
 "A bias of 2 rows where one (broadcast) or 128 were meant.",
 {"move \"at\"", "give the tensor 1 row (or 1 column) to broadcast it"},
 R"({"program": {"globals": {"bias": {"dtype": "f32", "shape": [2, 128]}}, "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "read", "src": "bias", "regs": "bv", "like": "r"}, {"op": "add", "regs": "y", "a": "r", "b": "bv"}, {"op": "store", "regs": "y", "dst": "D"}]}})", "/program/ops/7/at", false,
 R"({"program": {"globals": {"bias": {"dtype": "f32", "shape": [1, 128]}}, "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "read", "src": "bias", "regs": "bv", "like": "r"}, {"op": "add", "regs": "y", "a": "r", "b": "bv"}, {"op": "store", "regs": "y", "dst": "D"}]}})", check_read_bounds},
{"REDUCE-SHAPE", "a row reduction of registers of a tcgen05.ld shape other than .32x32b and .16x256b", "PTX ISA 9.1 §9.7.16.8.3 (which thread holds which element); §9.7.9.6 (shfl.sync)",
 "A row reduction folds the registers of each row a thread holds, then, where several lanes share a row, exchanges the partial results between them: ptxgen knows the rows of .32x32b fragments (each thread a whole row) and of .16x256b fragments and wgmma accumulators (4 lanes a row, shfl.sync.bfly over lanes xor 1 and xor 2). Sets loaded with the other shapes are not reduced (ptxgen's refusal, not the hardware's).",
 "A reduction of registers loaded with .16x128b or .16x64b.",
 {"tmem_load the registers with \"shape\": \"32x32b\" or \"16x256b\""},
 R"({"program": {"ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r", "shape": "16x128b"}, {"op": "reduce", "fn": "max", "regs": "m", "a": "r"}, {"op": "sub", "regs": "y", "a": "r", "b": "m"}, {"op": "store", "regs": "y", "dst": "D"}]}})", "/program/ops/7/a", false,
 R"({"program": {"ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r", "shape": "16x256b"}, {"op": "reduce", "fn": "max", "regs": "m", "a": "r"}, {"op": "sub", "regs": "y", "a": "r", "b": "m"}, {"op": "store", "regs": "y", "dst": "D"}]}})", check_reduce_shape},
{"AMAX-DST", "an amax into other than one f32", "PTX ISA 9.1 §9.7.13.6 (red.global.max.u32); §9.7.3.10-12 (abs.f32, max.f32)",
 "amax raises one f32 in global memory to the largest |element| of a register set (the elements a store at the same \"at\" writes inside \"of\"): each thread folds its elements (abs.f32, max.f32), each warp its lanes' (shfl.sync.bfly), and lane 0 raises the word with red.global.max.u32 of the f32 bits, which order as the values do for values >= 0. So the destination is an f32 tensor of one element, of fixed shape [1, 1], which the caller sets (to 0) before the launch: the kernel only raises it.",
 "An amax into a [1, 2] tensor, or into a bf16 scalar.",
 {"declare the destination as {\"dtype\": \"f32\", \"shape\": [1, 1]}"},
 R"({"program": {"globals": {"amax": {"dtype": "f32", "shape": [1, 2]}}, "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "amax", "a": "r", "dst": "amax", "of": "D"}, {"op": "store", "regs": "r", "dst": "D"}]}})", "/program/ops/7/dst", false,
 R"({"program": {"globals": {"amax": {"dtype": "f32", "shape": [1, 1]}}, "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "amax", "a": "r", "dst": "amax", "of": "D"}, {"op": "store", "regs": "r", "dst": "D"}]}})", check_amax_dst},
{"QUANT-OF", "a quantize whose stored tensor is not the format's element type, or not whole blocks wide", "OCP Microscaling Formats v1.0 §5 (MXFP8: E4M3 or E5M2, MXFP4: E2M1, a scale per 32); PTX ISA 9.1 §9.7.9.21 (cvt.rn.satfinite.e4m3x2.f32, .e5m2x2, .e2m1x2)",
 "quantize divides each block of a row of a register set by the block's factor, for a store of the result into \"of\", whose dtype is the elements' type: e4m3 or e5m2 for \"mxfp8\", e2m1 two a byte (\"format\": \"packed\", which the store writes with cvt.rn.satfinite.e2m1x2.f32) for \"mxfp4\" and \"nvfp4\". The factor of a block is computed so that no element exceeds that type's largest finite value (448, 57344, 6), so the type must be known. The blocks are 32 (16 for nvfp4) consecutive columns of a row of \"of\", whose columns must be whole blocks: the 128x4 layout of the factors holds whole blocks only.",
 "MXFP8 stored to a bf16 tensor; a tensor of 100 columns.",
 {"declare \"of\" with the format's element type (e4m3 or e5m2; packed e2m1)", "use a number of columns that is a multiple of the block"},
 R"({"program": {"globals": {"D": {"dtype": "bf16"}, "SF": {"dtype": "ue8m0", "shape": [32, 16]}}, "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "quantize", "regs": "q", "a": "r", "format": "mxfp8", "dst": "SF", "of": "D"}, {"op": "store", "regs": "q", "dst": "D"}]}})", "/program/ops/7/of", false,
 R"({"program": {"globals": {"D": {"dtype": "e4m3"}, "SF": {"dtype": "ue8m0", "shape": [32, 16]}}, "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "quantize", "regs": "q", "a": "r", "format": "mxfp8", "dst": "SF", "of": "D"}, {"op": "store", "regs": "q", "dst": "D"}]}})", check_quant_of},
{"QUANT-FACTORS", "a quantize whose factor tensor is not the format's factor type in the 128x4 layout", "OCP Microscaling Formats v1.0 §5.1 (E8M0); (docs/spec.md, \"Block scaling\": the 128x4 layout)",
 "quantize writes the factor of each block of \"of\" (32 columns of a row, 16 for nvfp4) as one byte, ue8m0 (mxfp8, mxfp4) or ue4m3 (nvfp4), at byte ((i / 128) ceil(n / 4 vec) + b / 4) 512 + (i % 32) 16 + ((i % 128) / 32) 4 + b % 4 of \"dst\" for row i and block b: the 128x4 layout a block-scaled MMA reads (ptxgen's \"scale\", cuBLAS's VEC32_UE8M0 and VEC16_UE4M3), rows of \"of\" padded to 128 and blocks to 4. \"dst\" is therefore lines of 16 bytes, ceil(rows / 128) ceil(cols / (4 vec)) 32 of them: a global [that many, 16] of the factor type.",
 "Factors declared as [16, 16] for a 128 x 128 e4m3 tensor (32 lines needed); ue4m3 factors for mxfp8.",
 {"declare the factors as {\"dtype\": \"ue8m0\" (ue4m3 for nvfp4), \"shape\": [ceil(rows / 128) ceil(cols / (4 vec)) 32, 16]}"},
 R"({"program": {"globals": {"D": {"dtype": "e4m3"}, "SF": {"dtype": "ue8m0", "shape": [16, 16]}}, "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "quantize", "regs": "q", "a": "r", "format": "mxfp8", "dst": "SF", "of": "D"}, {"op": "store", "regs": "q", "dst": "D"}]}})", "/program/ops/7/dst", false,
 R"({"program": {"globals": {"D": {"dtype": "e4m3"}, "SF": {"dtype": "ue8m0", "shape": [32, 16]}}, "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "quantize", "regs": "q", "a": "r", "format": "mxfp8", "dst": "SF", "of": "D"}, {"op": "store", "regs": "q", "dst": "D"}]}})", check_quant_factors},
{"STORE-DTYPE", "store to a global tensor of a type it does not write", "PTX ISA 9.1 §9.7.9.10 (st); §9.7.9.21 (cvt)",
 "store writes each register element with its own type, or converts f32 to f16/bf16 (cvt.rn). 4- and 6-bit elements have no per-element store.",
 "Storing an f32 accumulator into an s32 tensor.",
 {"give the global tensor the registers' type, or f16/bf16 for f32 registers"},
 R"({"program": {"globals": {"D": {"dtype": "s32"}}}})", "/program/ops/7/dst", false, R"({"program": {"globals": {"D": {"dtype": "bf16"}}}})", check_store_dtype},
{"STORE-BOUNDS", "a store reaches outside the global tensor", "(docs/spec.md, store)",
 "The registers hold the rows x elements of the view they were loaded from; stored at \"at\" they must fit the global tensor.",
 "A store offset past the last row.",
 {"move \"at\", or store a smaller view"},
 R"({"program": {"globals": {"D": {"shape": [128, 64]}}}})", "/program/ops/7/at", false, R"({"program": {"globals": {"D": {"shape": [256, 128]}}}})", check_store_bounds},
{"STORE-CLIP", "a store into a tensor of run-time extents from packed registers", "(docs/spec.md, \"Sizes and a grid\")",
 "A store into a tensor whose extents the kernel takes at run time writes only the elements inside them: each thread tests each element's row and column, a pair of adjacent columns at a time. ptxgen does that for registers of one element each (the accumulators' form: f32, s32, f16 unpacked) moved by .32x32b or .16x256b; registers of packed 16- or 8-bit elements, or other shapes, it stores only into tensors of fixed extents (ptxgen's refusal, not the hardware's).",
 "A tmem_load of a bf16 view of packing 2, stored to a global shaped [\"k\", 16].",
 {"load an unpacked view (f32, or 16-bit elements one per column) with shape 32x32b or 16x256b", "or give the tensor fixed extents"},
 R"({"program": {"sizes": {"m": 128}, "globals": {"D": {"dtype": "bf16", "shape": ["m", 128]}}, "tmem": {"acc": {"slice": {"of": "t", "columns": [0, 64]}}, "accb": {"cast": {"of": "acc", "dtype": "bf16", "packing": 2}}}, "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "tmem_load", "src": "accb", "regs": "r"}, {"op": "store", "regs": "r", "dst": "D"}]}})", "/program/ops/4/regs", false,
 R"({"program": {"sizes": {"m": 128}, "globals": {"D": {"shape": ["m", 128]}}}})", check_store_clip},
{"STORE-TMA", "a store by TMA that the staging path does not take", "PTX ISA 9.1 §9.7.9.27.1.2 (cp.async.bulk.tensor); §9.7.9.27.2.2 (cp.async.bulk.wait_group.read); §5.5 (tensor maps: 16-byte strides, the bounding box); §5.5.7 (the 128-byte swizzle)",
 "A store with \"via\": \"tma\" writes one box of D, 128 bytes of each row of the registers (64 bf16 or f16, 32 f32 or s32, 128 e4m3 or e5m2 columns), through the shared-memory tile \"stage\": the role's threads write their elements into it, converted to D's type, 16-byte chunk c of row r at chunk c ^ (r % 8), and one thread writes the box with cp.async.bulk.tensor, which clips it to D's extents. So the registers hold one element each from a .32x32b or .16x256b tmem_load of exactly one box's columns; D's rows are a multiple of 16 bytes apart (a tensor map's stride) and its elements a byte or more; the staging tile is D's dtype, K-major, 128-byte swizzled, one box wide and at least the registers' rows tall, and is used by the stores of one role only (its issuing thread waits until TMA has read a stage before the stage is written again, cp.async.bulk.wait_group.read). A tile of S stages takes the role's stores through it in turn. The TMA stores into one global share its tensor map, whose box is their registers' rows: all of them have the same rows. \"stage\" without \"via\": \"tma\" is refused, and so are a TMA store inside the loop and in a CTA pair (ptxgen's refusals, not the hardware's).",
 "A staging tile with the 64-byte swizzle for a box of 32 f32 columns.",
 {"declare the staging tile {\"dtype\": D's, \"shape\": [rows, 128 / element bytes], \"major\": \"k\", \"swizzle\": 128}", "load one box's columns (a slice of the accumulator) per store", "or store directly (drop \"via\")"},
 R"({"program": {"smem": {"d_stage": {"dtype": "f32", "shape": [128, 32], "major": "k", "swizzle": 64}}, "tmem": {"acc0": {"slice": {"of": "t", "columns": [0, 32]}}}, "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc0", "regs": "r"}, {"op": "store", "regs": "r", "dst": "D", "via": "tma", "stage": "d_stage"}]}})", "/program/smem/d_stage/swizzle", false,
 R"({"program": {"smem": {"d_stage": {"dtype": "f32", "shape": [128, 32], "major": "k", "swizzle": 128}}, "tmem": {"acc0": {"slice": {"of": "t", "columns": [0, 32]}}}, "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc0", "regs": "r"}, {"op": "store", "regs": "r", "dst": "D", "via": "tma", "stage": "d_stage"}]}})", check_store_tma},
{"OP-MMA-KIND", "A and B (and scale factors) form no MMA kind", "PTX ISA 9.1 §9.7.16.2.1 Table 39; §9.7.16.10.7.1 Table 57",
 "Types select the kind: f16/bf16 pairs .kind::f16, tf32 .kind::tf32, the 8/6/4-bit floats .kind::f8f6f4, s8/u8 .kind::i8; with scale factors, padded 8/6/4-bit floats .kind::mxf8f6f4 and e2m1 two per byte .kind::mxf4 (or .kind::mxf4nvf4 with block 16 or ue4m3 scales). A \"kind\" given must be the one the types select (mxf4nvf4 may replace mxf4).",
 "bf16 x e4m3; \"kind\": \"mxf8f6f4\" without scale factors.",
 {"convert one operand so both fall in one kind"},
 R"({"program": {"smem": {"b": {"dtype": "e4m3", "shape": [128, 128]}}}})", "/program/ops/3/b", false, "{\"program\": {}}", check_op_mma_kind},
{"OP-MMA-FORMAT", "4-bit operands in the format of another kind", "PTX ISA 9.1 §9.7.16.10.4.4, §9.7.16.10.4.6",
 ".kind::f8f6f4 and .kind::mxf8f6f4 read 4-bit elements padded to 8-bit containers; .kind::mxf4 and .kind::mxf4nvf4 read them two per byte. Packed e2m1 without scale factors has no kind.",
 "e2m1 tiles packed two per byte in an MMA without \"scale\".",
 {"use \"format\": \"padded\"", "or add scale factors for .kind::mxf4"},
 R"({"program": {"globals": {"A": {"dtype": "e2m1", "format": "packed", "shape": [128, 128]}, "B": {"dtype": "e2m1", "format": "packed", "shape": [128, 128]}}, "smem": {"a": {"dtype": "e2m1", "format": "packed", "shape": [128, 128], "swizzle": 64}, "b": {"dtype": "e2m1", "format": "packed", "shape": [128, 128], "swizzle": 64}}, "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "mma", "a": "a", "b": "b", "d": "acc"}]}})", "/program/ops/2/a", false,
 R"({"program": {"globals": {"A": {"dtype": "e2m1", "shape": [128, 128]}, "B": {"dtype": "e2m1", "shape": [128, 128]}}, "smem": {"a": {"dtype": "e2m1", "shape": [128, 128]}, "b": {"dtype": "e2m1", "shape": [128, 128]}}, "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "mma", "a": "a", "b": "b", "d": "acc"}]}})", check_op_mma_format},
{"OP-MMA-TARGET", "the target lacks this MMA variant", "PTX ISA 9.1 §9.7.16.10.9.1-2 target notes; §13 Table 60",
 ".kind::i8 exists on sm_100a and sm_110a only (not sm_100f, not sm_103a); tcgen05.mma.sp with .kind::mxf4/.kind::mxf4nvf4 is not on the family target sm_100f. ptxas 13.0 refuses both.",
 "Integer MMAs in family-portable code.",
 {"target sm_100a or sm_110a", "or use another kind"},
 R"({"target": "sm_103a", "program": {"globals": {"A": {"dtype": "s8", "shape": [128, 128]}, "B": {"dtype": "s8", "shape": [128, 128]}, "D": {"dtype": "s32"}}, "smem": {"a": {"dtype": "s8", "shape": [128, 128]}, "b": {"dtype": "s8", "shape": [128, 128]}}, "tmem": {"t": {"dtype": "s32"}, "a_t": {"cast": {"dtype": "s8", "packing": 4}}}}})", "/target", false,
 R"({"target": "sm_110a", "program": {"globals": {"A": {"dtype": "s8", "shape": [128, 128]}, "B": {"dtype": "s8", "shape": [128, 128]}, "D": {"dtype": "s32"}}, "smem": {"a": {"dtype": "s8", "shape": [128, 128]}, "b": {"dtype": "s8", "shape": [128, 128]}}, "tmem": {"t": {"dtype": "s32"}, "a_t": {"cast": {"dtype": "s8", "packing": 4}}}}})", check_op_mma_target},
{"OP-MMA-ACCUM", "the accumulator view's type is not D's type for the kind", "PTX ISA 9.1 §9.7.16.2.1 Table 39; Tables 42-44 (dtype)",
 "D is f32 or f16 for f16 inputs and the f8f6f4 kind, f32 for bf16, tf32 and the block-scaled kinds, s32 for i8. The D view's element type is D's type.",
 "An f16 accumulator view for bf16 inputs.",
 {"cast the accumulator view to the type the message gives"},
 R"({"program": {"tmem": {"t": {"dtype": "f16"}}}})", "/program/ops/3/d", false, "{\"program\": {}}", check_op_mma_accum},
{"OP-MMA-D", "the accumulator view is not in a data-path layout", "PTX ISA 9.1 §9.7.16.10.4.1; §9.7.16.10.5 (layouts A to F)",
 "D of an M=128 instruction is row i in lane i (data-path layout D, a rows view of all 128 lanes); D of an M=64 instruction is layout F (a view cast to layout_f::0 or layout_f::16: row i in lane 32 (i / 16) + i % 16 + the alignment). In a CTA pair each CTA keeps its rows: M = 256 in a rows view (layout A), the dense M = 128 in a layout_b view (layout B: row r's first N/2 elements at lane r, the rest at lane 64 + r), the sparse M = 128 in a layout-F view (layout C). Layout B belongs to a dense pair only, and layout F in a pair to a sparse one. Always one element per 32-bit column (16-bit D is not packed). A 64-lane slice in the rows layout is no data-path layout.",
 "A packed 16-bit accumulator view; a lane slice as D.",
 {"use an unpacked view of 128 lanes in the rows layout", "or, for M = 64, cast it to layout_f::0 (or layout_f::16)"},
 R"({"program": {"globals": {"A": {"dtype": "f16"}, "B": {"dtype": "f16"}}, "smem": {"a": {"dtype": "f16"}, "b": {"dtype": "f16"}}, "tmem": {"t": {"dtype": "f16", "packing": 2}, "a_t": {"cast": {"dtype": "f16"}}}}})", "/program/ops/3/d", false,
 R"({"program": {"globals": {"A": {"dtype": "f16"}, "B": {"dtype": "f16"}, "D": {"dtype": "f16"}}, "smem": {"a": {"dtype": "f16"}, "b": {"dtype": "f16"}}, "tmem": {"t": {"dtype": "f16"}, "a_t": {"cast": {"dtype": "f16"}}}}})", check_op_mma_d},
{"OP-MMA-MAJOR", "an operand that cannot be transposed", "PTX ISA 9.1 §9.7.16.10.1 Table 51; §9.7.16.10.3 Table 54",
 "MN-major (transposed) operands are 8-, 16- and 32-bit (tf32 only with 32-byte atomicity); 4- and 6-bit operands and the mxf4 kinds are K-major only.",
 "An MN-major e2m1 tile.",
 {"store the operand K-major"},
 R"({"program": {"globals": {"B": {"dtype": "e2m3", "shape": [128, 128]}, "A": {"dtype": "e2m3", "shape": [128, 128]}}, "smem": {"a": {"dtype": "e2m3", "shape": [128, 128]}, "b": {"dtype": "e2m3", "shape": [128, 128], "major": "mn"}}, "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "mma", "a": "a", "b": "b", "d": "acc"}]}})", "/program/smem/b/major", false,
 R"({"program": {"globals": {"B": {"dtype": "e2m3", "shape": [128, 128]}, "A": {"dtype": "e2m3", "shape": [128, 128]}}, "smem": {"a": {"dtype": "e2m3", "shape": [128, 128]}, "b": {"dtype": "e2m3", "shape": [128, 128]}}, "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "mma", "a": "a", "b": "b", "d": "acc"}]}})", check_op_mma_major},
{"OP-MMA-SWIZZLE", "a swizzle the operand cannot take", "PTX ISA 9.1 §9.7.16.10.1; Table 54; §9.7.16.3.3",
 "Transposed tf32 operands need 128-byte swizzling with 32-byte atomicity, and only they may use it. One instruction's descriptor spans at most one swizzle atom row of K: the sparse B operand reads 64 bytes of K per row, more than a 32-byte swizzle holds.",
 "A sparse MMA with B swizzled 32 bytes.",
 {"use a wider swizzle (or none) for the operand"},
 R"({"program": {"globals": {"A": {"shape": [128, 32]}, "META": {"dtype": "b8", "shape": [128, 16]}}, "smem": {"a": {"shape": [128, 32], "swizzle": 64}, "b": {"swizzle": 32}, "meta_s": {"dtype": "b8", "shape": [128, 16]}}, "tmem": {"meta": {"cast": {"of": {"slice": {"of": "t", "columns": [200, 204]}}, "dtype": "b8", "packing": 4}}}, "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "load", "src": "META", "dst": "meta_s"}, {"op": "copy", "src": "meta_s", "dst": "meta"}, {"op": "mma", "a": "a", "b": "b", "d": "acc", "sparse": {"metadata": "meta"}}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "store", "regs": "r", "dst": "D"}]}})", "/program/smem/b/swizzle", false,
 R"({"program": {"globals": {"A": {"shape": [128, 32]}, "META": {"dtype": "b8", "shape": [128, 16]}}, "smem": {"a": {"shape": [128, 32], "swizzle": 64}, "meta_s": {"dtype": "b8", "shape": [128, 16]}}, "tmem": {"meta": {"cast": {"of": {"slice": {"of": "t", "columns": [200, 204]}}, "dtype": "b8", "packing": 4}}}, "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "load", "src": "META", "dst": "meta_s"}, {"op": "copy", "src": "meta_s", "dst": "meta"}, {"op": "mma", "a": "a", "b": "b", "d": "acc", "sparse": {"metadata": "meta"}}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "store", "regs": "r", "dst": "D"}]}})", check_op_mma_swizzle},
{"OP-MMA-SHAPE", "A, B and D do not make legal instruction shapes", "PTX ISA 9.1 §9.7.16.2.1 Table 39; §9.7.16.10.1 Table 52; §9.7.16.10.5",
 "A is M x K (K/2 stored when sparse), B is N x K, D is M x N. The program level plans M in groups of 128 (D in the rows layout, data-path layout D) or of 64 (D in layout F); N in legal widths of at most 256 (8..256 step 8; i8 8, 16, 24, 32, then steps of 16; 8-bit N-major B steps of 16), and K in multiples of the kind's instruction K. The block-scaled kinds have M = 128 only at .cta_group::1 (Table 39), so their D is never layout F. In a CTA pair each CTA's B holds half of N (N = 2 x B's rows, 16..256 in steps of 16) and one mma op is one instruction wide in N, so that D's column j < N/2 is CTA 0's B row j and the rest CTA 1's.",
 "An accumulator view narrower than B's rows; 64 rows of A with a 128-lane rows accumulator; M = 64 with block scaling.",
 {"make D M x N: a rows view for multiples of 128 rows, a layout_f view for M = 64"},
 R"({"program": {"tmem": {"acc": {"slice": {"columns": [0, 64]}}}}})", "/program/ops/3/d", false, "{\"program\": {}}", check_op_mma_shape},
{"OP-MMA-A-TMEM", "A's view is not A's tensor-memory layout", "PTX ISA 9.1 §9.7.16.10.2 Table 53; §9.7.16.10.4.3-5; §9.7.16.10.5 (same lane alignment for A and D)",
 "A in tensor memory is row-major: row i in lane i of 128 lanes (layout F at D's alignment for M = 64 and a pair's sparse M = 128; for a pair's dense M = 128, layout B, each row at lanes i and 64 + i: a warpx2::02_13 view), K along the columns packed 32 bits per column (2 bf16, 4 8-bit or 8-bit containers, 8 e2m1 for mxf4), one block of M-instruction rows per M group.",
 "An unpacked bf16 A view.",
 {"cast A's view to the packing the message gives"},
 R"({"program": {"tmem": {"a_x": {"cast": {"of": {"slice": {"of": "t", "columns": [128, 192]}}, "dtype": "bf16", "packing": 1}}}, "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_x", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "store", "regs": "r", "dst": "D"}]}})", "/program/ops/3/a", false, "{\"program\": {}}", check_op_mma_a_tmem},
{"OP-MMA-SCALE-VEC", "no such block size for the kind and scale type", "PTX ISA 9.1 §9.7.16.10.7.1 Tables 56, 57",
 ".kind::mxf8f6f4 takes ue8m0 scale factors per 32 elements (.scale_vec::1X / .block32); .kind::mxf4 ue8m0 per 32 (.scale_vec::2X); .kind::mxf4nvf4 ue8m0 per 32 (2X) or ue8m0/ue4m3 per 16 (.scale_vec::4X / .block16). An op's vec is the instruction's .blockN: with sparse A it counts A's stored elements, so each factor covers 2 x vec elements of K (the gemm template's scale.vec counts K itself: SPARSE-KIND).",
 "vec 16 with .kind::mxf8f6f4; ue4m3 scales with vec 32.",
 {"use a block size and scale type of Table 57"},
 R"({"program": {"globals": {"A": {"dtype": "e4m3", "shape": [128, 128]}, "B": {"dtype": "e4m3", "shape": [128, 128]}, "SFA": {"dtype": "ue8m0", "shape": [32, 16]}, "SFB": {"dtype": "ue8m0", "shape": [32, 16]}}, "smem": {"a": {"dtype": "e4m3", "shape": [128, 128]}, "b": {"dtype": "e4m3", "shape": [128, 128]}, "sfa_s": {"dtype": "ue8m0", "shape": [32, 16]}, "sfb_s": {"dtype": "ue8m0", "shape": [32, 16]}}, "tmem": {"sfa": {"cast": {"of": {"slice": {"of": "t", "columns": [160, 164]}}, "dtype": "ue8m0", "packing": 4, "layout": "warpx4"}}, "sfb": {"cast": {"of": {"slice": {"of": "t", "columns": [164, 168]}}, "dtype": "ue8m0", "packing": 4, "layout": "warpx4"}}}, "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "load", "src": "SFA", "dst": "sfa_s"}, {"op": "load", "src": "SFB", "dst": "sfb_s"}, {"op": "copy", "src": "sfa_s", "dst": "sfa"}, {"op": "copy", "src": "sfb_s", "dst": "sfb"}, {"op": "mma", "a": "a", "b": "b", "d": "acc", "scale": {"a": "sfa", "b": "sfb", "vec": 16}}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "store", "regs": "r", "dst": "D"}]}})", "/program/ops/6/scale/vec", false,
 R"({"program": {"globals": {"A": {"dtype": "e4m3", "shape": [128, 128]}, "B": {"dtype": "e4m3", "shape": [128, 128]}, "SFA": {"dtype": "ue8m0", "shape": [32, 16]}, "SFB": {"dtype": "ue8m0", "shape": [32, 16]}}, "smem": {"a": {"dtype": "e4m3", "shape": [128, 128]}, "b": {"dtype": "e4m3", "shape": [128, 128]}, "sfa_s": {"dtype": "ue8m0", "shape": [32, 16]}, "sfb_s": {"dtype": "ue8m0", "shape": [32, 16]}}, "tmem": {"sfa": {"cast": {"of": {"slice": {"of": "t", "columns": [160, 164]}}, "dtype": "ue8m0", "packing": 4, "layout": "warpx4"}}, "sfb": {"cast": {"of": {"slice": {"of": "t", "columns": [164, 168]}}, "dtype": "ue8m0", "packing": 4, "layout": "warpx4"}}}, "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "load", "src": "SFA", "dst": "sfa_s"}, {"op": "load", "src": "SFB", "dst": "sfb_s"}, {"op": "copy", "src": "sfa_s", "dst": "sfa"}, {"op": "copy", "src": "sfb_s", "dst": "sfb"}, {"op": "mma", "a": "a", "b": "b", "d": "acc", "scale": {"a": "sfa", "b": "sfb", "vec": 32}}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "store", "regs": "r", "dst": "D"}]}})", check_op_mma_scale_vec},
{"OP-MMA-SCALE", "the scale-factor views do not hold the factors the MMA reads", "PTX ISA 9.1 §9.7.16.10.7 (duplicated to all 32 lane partitions); §9.7.16.10.7.2-3 (SF IDs); Tables 43/44 (bit 23)",
 "Scale factors are ue8m0 or ue4m3, one type for A and B. They sit four per 32-bit column: the factors of row r in lane r % 32 of every 32-lane quarter (a warpx4 view, as .32x128b.warpx4 copies them), column r / 32; each K step reads its factors at a byte (1X), half-word (2X) or word (4X) the scale-factor ID selects, and the next four factors of every row follow in the next 4 columns per 128 rows. A view of ceil(steps x factors / 4) x 4 x ceil(rows / 128) columns holds them all.",
 "A scale view in the rows layout, or too few columns for the K steps.",
 {"cast the scale view to ue8m0 packing 4 layout warpx4 with the columns the message gives"},
 R"({"program": {"globals": {"A": {"dtype": "e4m3", "shape": [128, 128]}, "B": {"dtype": "e4m3", "shape": [128, 128]}, "SFA": {"dtype": "ue8m0", "shape": [32, 16]}, "SFB": {"dtype": "ue8m0", "shape": [32, 16]}}, "smem": {"a": {"dtype": "e4m3", "shape": [128, 128]}, "b": {"dtype": "e4m3", "shape": [128, 128]}, "sfa_s": {"dtype": "ue8m0", "shape": [32, 16]}, "sfb_s": {"dtype": "ue8m0", "shape": [32, 16]}}, "tmem": {"sfa4": {"cast": {"of": {"slice": {"of": "t", "columns": [160, 164]}}, "dtype": "ue8m0", "packing": 4, "layout": "warpx4"}}, "sfa": {"cast": {"of": "sfa4", "layout": "rows"}}, "sfb": {"cast": {"of": {"slice": {"of": "t", "columns": [164, 168]}}, "dtype": "ue8m0", "packing": 4, "layout": "warpx4"}}}, "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "load", "src": "SFA", "dst": "sfa_s"}, {"op": "load", "src": "SFB", "dst": "sfb_s"}, {"op": "copy", "src": "sfa_s", "dst": "sfa4"}, {"op": "copy", "src": "sfb_s", "dst": "sfb"}, {"op": "mma", "a": "a", "b": "b", "d": "acc", "scale": {"a": "sfa", "b": "sfb"}}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "store", "regs": "r", "dst": "D"}]}})", "/program/ops/6/scale/a", false,
 R"({"program": {"globals": {"A": {"dtype": "e4m3", "shape": [128, 128]}, "B": {"dtype": "e4m3", "shape": [128, 128]}, "SFA": {"dtype": "ue8m0", "shape": [32, 16]}, "SFB": {"dtype": "ue8m0", "shape": [32, 16]}}, "smem": {"a": {"dtype": "e4m3", "shape": [128, 128]}, "b": {"dtype": "e4m3", "shape": [128, 128]}, "sfa_s": {"dtype": "ue8m0", "shape": [32, 16]}, "sfb_s": {"dtype": "ue8m0", "shape": [32, 16]}}, "tmem": {"sfa": {"cast": {"of": {"slice": {"of": "t", "columns": [160, 164]}}, "dtype": "ue8m0", "packing": 4, "layout": "warpx4"}}, "sfb": {"cast": {"of": {"slice": {"of": "t", "columns": [164, 168]}}, "dtype": "ue8m0", "packing": 4, "layout": "warpx4"}}}, "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "load", "src": "SFA", "dst": "sfa_s"}, {"op": "load", "src": "SFB", "dst": "sfb_s"}, {"op": "copy", "src": "sfa_s", "dst": "sfa"}, {"op": "copy", "src": "sfb_s", "dst": "sfb"}, {"op": "mma", "a": "a", "b": "b", "d": "acc", "scale": {"a": "sfa", "b": "sfb"}}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "store", "regs": "r", "dst": "D"}]}})", check_op_mma_scale},
{"OP-MMA-SPARSE", "the metadata view does not hold the metadata the sparse MMA reads", "PTX ISA 9.1 §9.7.16.10.8 (granularity, sparsity selector), §9.7.16.10.8.5 (alignment)",
 "Sparsity metadata takes per instruction 32 bits per row (tf32: a 4-bit index per 2 elements of K=16; f16: two 2-bit indices per 4 of K=32) or 64 bits (8-bit kinds K=64, mxf4 kinds K=128 in pairs). The 64-bit cases hold row i in lane i, two columns, the sparsity selector 0. The 32-bit cases take one column, picked from an even pair by the selector, arranged per 16 rows as CUTLASS and Mosaic GPU place it (docs/architecture.md, ISA reading 17): chunks 0-3 of rows i and i + 8 of a 16-row block in D's lane of row i (i % 16 < 8), chunks 4-7 in that of row i + 8, row i's in the low half-word, chunk c at bit 4 (c % 4). For M = 64 (a layout-F accumulator) the metadata rows sit where D's rows do: a layout-F view at D's alignment (§9.7.16.10.8.5: layouts F and C use the same alignment across A, D and the metadata), filled by a 128-row copy into the rows view it casts, as for A.",
 "A metadata view with one column for several K steps; for M = 64, metadata in a rows view or at the other alignment than D.",
 {"give the metadata view the columns the message gives", "for M = 64, cast the metadata view to D's layout (layout_f::0 or layout_f::16)"},
 R"({"program": {"globals": {"A": {"shape": [128, 32]}, "META": {"dtype": "b8", "shape": [128, 16]}}, "smem": {"a": {"shape": [128, 32], "swizzle": 64}, "meta_s": {"dtype": "b8", "shape": [128, 16]}}, "tmem": {"meta4": {"cast": {"of": {"slice": {"of": "t", "columns": [200, 204]}}, "dtype": "b8", "packing": 4}}, "meta": {"slice": {"of": "meta4", "columns": [0, 1]}}}, "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "load", "src": "META", "dst": "meta_s"}, {"op": "copy", "src": "meta_s", "dst": "meta4"}, {"op": "mma", "a": "a", "b": "b", "d": "acc", "sparse": {"metadata": "meta"}}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "store", "regs": "r", "dst": "D"}]}})", "/program/ops/4/sparse/metadata", false,
 R"({"program": {"globals": {"A": {"shape": [128, 32]}, "META": {"dtype": "b8", "shape": [128, 16]}}, "smem": {"a": {"shape": [128, 32], "swizzle": 64}, "meta_s": {"dtype": "b8", "shape": [128, 16]}}, "tmem": {"meta": {"cast": {"of": {"slice": {"of": "t", "columns": [200, 204]}}, "dtype": "b8", "packing": 4}}}, "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "load", "src": "META", "dst": "meta_s"}, {"op": "copy", "src": "meta_s", "dst": "meta"}, {"op": "mma", "a": "a", "b": "b", "d": "acc", "sparse": {"metadata": "meta"}}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "store", "regs": "r", "dst": "D"}]}})", check_op_mma_sparse},
{"OP-MMA-OVERLAP", "D overlaps what the same MMA reads", "PTX ISA 9.1 §9.7.16.10 (D = A*B + D)",
 "tcgen05.mma writes D while it reads A, the scale factors and the metadata from tensor memory: those regions must not share cells with D.",
 "An A view carved from the accumulator's columns.",
 {"give A (and the scale factors, the metadata) their own columns"},
 R"({"program": {"tmem": {"a_t": {"cast": {"of": {"slice": {"columns": [96, 128]}}}}}}})", "/program/ops/3/d", false, "{\"program\": {}}", check_op_mma_overlap},
{"ORDER-UNWRITTEN", "an op reads what no earlier op wrote", "(docs/spec.md: ops run in the order listed)",
 "Ops run in the order listed: a tile is read after a load fills it, a view after a copy, an mma or a tmem_store wrote it, registers after a tmem_load filled them. An mma with \"accumulate\": true reads D too.",
 "mma before its operands are loaded.",
 {"move the op after the one that writes what it reads"},
 R"({"program": {"ops": [{"op": "mma", "a": "a", "b": "b", "d": "acc"}, {"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}]}})", "/program/ops/0/a", false,
 R"({"program": {"ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "mma", "a": "a", "b": "b", "d": "acc"}]}})", check_order_unwritten},
{"ORDER-INCOMPLETE", "an op touches what an unfinished tcgen05.cp/mma works on", "PTX ISA 9.1 §9.7.16.6 (memory consistency), §9.7.16.6.4 (canonical patterns)",
 "tcgen05.cp and tcgen05.mma are asynchronous: their results are visible to other instructions only after tcgen05.commit to an mbarrier and a wait on it, and their sources must not change before then. Only tcgen05.cp followed by tcgen05.mma, and tcgen05.mma followed by tcgen05.mma on the same accumulator and shape, are ordered without (pipelined pairs, §9.7.16.6.2).",
 "tmem_load of an accumulator straight after the mma; reloading a tile an mma still reads.",
 {"commit to a barrier and wait on it between the two ops"},
 R"({"program": {"ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "tmem_load", "src": "acc", "regs": "r"}]}})", "/program/ops/4/src", false,
 R"({"program": {"ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}]}})", check_order_incomplete},
{"ORDER-BARRIER", "commits and waits on a barrier do not alternate", "PTX ISA 9.1 §9.7.16.12.1 (tcgen05.commit); §9.7.13.15 (mbarrier phases)",
 "Each commit arrives once on its mbarrier (count 1) and completes a phase; each wait waits for the next phase by its parity. A wait with no commit before it never ends, and two commits without a wait between make the parities ambiguous.",
 "A wait on a barrier nothing was committed to.",
 {"commit before each wait, and wait before committing again"},
 R"({"program": {"ops": [{"op": "wait", "barrier": "done"}]}})", "/program/ops/0/barrier", false,
 R"({"program": {"ops": [{"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}]}})", check_order_barrier},
{"TMEM-ALLOC-TOTAL", "the allocations need more tensor memory than a CTA has", "PTX ISA 9.1 §9.7.16.1 (512 columns); §9.7.16.7.1",
 "A CTA has 512 columns of tensor memory; a tcgen05.alloc beyond what is free blocks until columns are freed, which in one CTA is never.",
 "One allocation per buffer instead of slices of one.",
 {"share columns through slices and aliases"},
 R"({"program": {"tmem": {"u": {"columns": 512}}}})", "/program/tmem", false, R"({"program": {"tmem": {"u": {"columns": 256}}}})", check_tmem_alloc_total},
{"PROGRAM-SMEM-BUDGET", "the tiles need more shared memory than a CTA gets", "CUDA: 227 KB of shared memory per block on sm_100",
 "Tiles (each at its swizzle alignment), the mbarriers, the words tcgen05.alloc writes and the slack to align the dynamic base at run time must fit the shared memory of one CTA.",
 "A large tile for each load instead of reused tiles; a pipelined loop's rings of too many stages.",
 {"use smaller tiles, or load into one tile several times", "where rings overflow, fewer stages: the help names the count that fits and the rings to set it on"},
 R"({"program": {"smem": {"big": {"dtype": "bf16", "shape": [512, 128], "swizzle": 128}, "big2": {"dtype": "bf16", "shape": [512, 128], "swizzle": 128}}}})", "/program/smem", false,
 R"({"program": {"smem": {"big": {"dtype": "bf16", "shape": [512, 128], "swizzle": 128}}}})", check_program_smem_budget},

{"PROGRAM-LAUNCH-GRID", "a program's grid of tiles exceeds the grid dimensions of the target", "PTX ISA 9.1 §10.7 (%nctaid: x up to 2^31-1, y and z up to 65535 on sm_9x and sm_10x)",
 "A program with \"grid\": {\"tile\": [TM, TN]} launches one CTA (pair) per output tile of its m x n problem: x = ceil(n / TN) times cta_group, y = ceil(m / TM), at the spec's values of the sizes the grid walks. x may reach 2^31-1, y at most 65535, so m may span at most 65535 tiles; the launch header launches the grid the kernel's sizes give at run time, and a larger one fails to launch.",
 "Very tall problems (m of tens of millions) with short tiles; narrow tiles of a CTA pair over n near 2^31.",
 {"use a taller grid.tile (or wider, along x), stepping the ops' \"m_tile\" / \"n_tile\" with it", "or split the problem into several launches"},
 R"({"program": {"sizes": {"m": 8388481, "n": 256}, "grid": {"tile": [128, 128]}, "globals": {"D": {"dtype": "f32", "shape": ["m", "n"]}}, "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "store", "regs": "r", "dst": "D", "at": [{"m_tile": 128}, {"n_tile": 128}]}]}})", "/program/sizes/m", false,
 R"({"program": {"sizes": {"m": 8388480, "n": 256}, "grid": {"tile": [128, 128]}, "globals": {"D": {"dtype": "f32", "shape": ["m", "n"]}}, "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "store", "regs": "r", "dst": "D", "at": [{"m_tile": 128}, {"n_tile": 128}]}]}})", check_program_launch_grid},
{"GLOBAL-SIZE", "a global tensor larger than 2^48 bytes", "(docs/spec.md, globals)",
 "A global tensor is a row-major array the kernel reaches by byte offsets from its address; ptxgen takes at most 2^48 bytes (256 TiB, more than any GPU's memory) so that every offset it computes, rows times row bytes and a pair's per_cta offset, stays far inside 64-bit arithmetic.",
 "Shapes of 2^31 - 1 by 2^31 - 1 elements.",
 {"describe the part of the tensor the kernel touches, and pass that part's address"},
 R"({"program": {"globals": {"A": {"shape": [2147483647, 2147483640]}}}})", "/program/globals/A/shape", false,
 R"({"program": {"globals": {"A": {"shape": [1048576, 64]}}}})", check_global_size},
{"OUTPUT-SIZE", "the kernel would be larger than ptxgen writes", "(docs/spec.md, \"The program level\": the size of a kernel)",
 "ptxgen bounds what one spec can make it write, so that every spec it accepts is checked, planned and emitted in well under a second and 200 MB: at most 65536 PTX instructions, 8 MiB of PTX and 2048 tcgen05.cp/tcgen05.mma instructions (each listed with its descriptors decoded in the plan). Each op's instructions are counted from what it makes (plus the most the planner's order can insert around it: an upper bound of what the emitter writes), op by op, without planning the kernel, and the count stops at the op that crosses a bound: the pointer names it.",
 "Long op lists generated by a script: thousands of tmem_store, store or mma ops, each moving a whole accumulator.",
 {"split the work into several kernels (specs)", "move fewer registers per op: smaller tmem_load, tmem_store and store views, or fewer such ops", "use fewer or smaller copy and mma ops"},
 "(built) the example program with 200 more stores of its 128 x 128 f32 accumulator registers", "/program/ops/119", false,
 R"({"program": {"ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "store", "regs": "r", "dst": "D"}, {"op": "store", "regs": "r", "dst": "D"}]}})", check_output_size, many_stores_document},
{"PAIR-PER-CTA", "per_cta in a one-CTA program", "(docs/spec.md, \"CTA pairs\")",
 "per_cta says where CTA 1 of a pair reads (load) or writes (store) in the global tensor: CTA r starts at at + r x per_cta. A one-CTA program has no CTA 1, so the field would silently do nothing.",
 "A pair program turned back into one CTA with its loads unchanged.",
 {"drop per_cta", "or make the program a CTA pair: \"cta_group\": 2"},
 R"({"program": {"ops": [{"op": "load", "src": "A", "dst": "a", "per_cta": [128, 0]}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "store", "regs": "r", "dst": "D"}]}})", "/program/ops/0/per_cta", false,
 R"({"program": {"ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "store", "regs": "r", "dst": "D"}]}})", check_pair_per_cta},
{"PAIR-STORE-OVERLAP", "both CTAs of a pair store to the same elements", "(docs/spec.md, \"CTA pairs\")",
 "Both CTAs of a pair run every store, each with its own registers (its half of the rows of D). Where the two regions overlap, which CTA's values land is a race; per_cta must move CTA 1 past CTA 0's rows or columns.",
 "A pair whose final store has no per_cta.",
 {"set per_cta to the rows (or columns) CTA 0 stores"},
 R"({"program": {"cta_group": 2, "globals": {"A": {"shape": [256, 64]}, "D": {"shape": [256, 128]}}, "smem": {"b": {"shape": [64, 64]}}, "ops": [{"op": "load", "src": "A", "dst": "a", "per_cta": [128, 0]}, {"op": "load", "src": "B", "dst": "b", "per_cta": [64, 0]}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "store", "regs": "r", "dst": "D"}]}})", "/program/ops/7", false,
 R"({"program": {"cta_group": 2, "globals": {"A": {"shape": [256, 64]}, "D": {"shape": [256, 128]}}, "smem": {"b": {"shape": [64, 64]}}, "ops": [{"op": "load", "src": "A", "dst": "a", "per_cta": [128, 0]}, {"op": "load", "src": "B", "dst": "b", "per_cta": [64, 0]}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "store", "regs": "r", "dst": "D", "per_cta": [128, 0]}]}})", check_pair_store_overlap},
{"PAIR-MMA", "a block-scaled MMA at a CTA pair's M = 128", "PTX ISA 9.1 §9.7.16.5 (issue granularity); §9.7.16.10.5.2 (layout B); §9.7.16.10.7 (scale factors)",
 "In a pair, CTA 0 issues tcgen05.mma.cta_group::2 for both CTAs: each CTA supplies its rows of A and half of B's rows (N) from its own shared memory and keeps its rows of D in its own tensor memory (M = 256 in layout A, dense M = 128 in layout B, sparse M = 128 in layout C). Block scaling at M = 256 takes, in each CTA, A's scale factors for its own rows and B's for all of N. Block scaling at the pair's M = 128 (layout B) is not planned: where B's factors sit for that layout is not stated by the ISA. That is ptxgen's refusal, not the hardware's.",
 "A block-scaled mma whose D is a layout_b view.",
 {"use M = 256 per pair: 128 rows of A and a 128-lane rows D in each CTA", "or make the program one CTA (\"cta_group\": 1)"},
 R"({"program": {"globals": {"A": {"dtype": "e4m3", "shape": [128, 128]}, "B": {"dtype": "e2m3", "shape": [128, 128]}, "SFA": {"dtype": "ue8m0", "shape": [64, 16]}, "SFB": {"dtype": "ue8m0", "shape": [32, 16]}, "D": {"dtype": "f32", "shape": [128, 128]}}, "smem": {"a": {"dtype": "e4m3", "shape": [64, 128], "swizzle": 128}, "b": {"dtype": "e2m3", "shape": [64, 128], "swizzle": 128}, "sfa_s": {"dtype": "ue8m0", "shape": [32, 16]}, "sfb_s": {"dtype": "ue8m0", "shape": [32, 16]}}, "tmem": {"t": {"columns": 512}, "acc": {"slice": null, "cast": {"of": {"slice": {"of": "t", "columns": [0, 64]}}, "layout": "layout_b"}}, "sfa": {"cast": {"of": {"slice": {"of": "t", "columns": [128, 132]}}, "dtype": "ue8m0", "packing": 4, "layout": "warpx4"}}, "sfb": {"cast": {"of": {"slice": {"of": "t", "columns": [132, 136]}}, "dtype": "ue8m0", "packing": 4, "layout": "warpx4"}}}, "ops": [{"op": "load", "src": "A", "dst": "a", "per_cta": [64, 0]}, {"op": "load", "src": "B", "dst": "b", "per_cta": [64, 0]}, {"op": "load", "src": "SFA", "dst": "sfa_s", "per_cta": [32, 0]}, {"op": "load", "src": "SFB", "dst": "sfb_s"}, {"op": "copy", "src": "sfa_s", "dst": "sfa"}, {"op": "copy", "src": "sfb_s", "dst": "sfb"}, {"op": "mma", "a": "a", "b": "b", "d": "acc", "scale": {"a": "sfa", "b": "sfb", "vec": 32}}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "d"}, {"op": "store", "regs": "d", "dst": "D", "per_cta": [64, 0]}], "cta_group": 2}})", "/program/ops/6/scale", false,
 R"({"program": {"globals": {"A": {"dtype": "e4m3", "shape": [256, 128]}, "B": {"dtype": "e2m3", "shape": [128, 128]}, "SFA": {"dtype": "ue8m0", "shape": [64, 16]}, "SFB": {"dtype": "ue8m0", "shape": [32, 16]}, "D": {"dtype": "f32", "shape": [256, 128]}}, "smem": {"a": {"dtype": "e4m3", "shape": [128, 128], "swizzle": 128}, "b": {"dtype": "e2m3", "shape": [64, 128], "swizzle": 128}, "sfa_s": {"dtype": "ue8m0", "shape": [32, 16]}, "sfb_s": {"dtype": "ue8m0", "shape": [32, 16]}}, "tmem": {"t": {"columns": 512}, "acc": {"cast": {"of": {"slice": {"of": "t", "columns": [0, 128]}}, "rows": 128}, "slice": null}, "sfa": {"cast": {"of": {"slice": {"of": "t", "columns": [128, 132]}}, "dtype": "ue8m0", "packing": 4, "layout": "warpx4"}}, "sfb": {"cast": {"of": {"slice": {"of": "t", "columns": [132, 136]}}, "dtype": "ue8m0", "packing": 4, "layout": "warpx4"}}}, "ops": [{"op": "load", "src": "A", "dst": "a", "per_cta": [128, 0]}, {"op": "load", "src": "B", "dst": "b", "per_cta": [64, 0]}, {"op": "load", "src": "SFA", "dst": "sfa_s", "per_cta": [32, 0]}, {"op": "load", "src": "SFB", "dst": "sfb_s"}, {"op": "copy", "src": "sfa_s", "dst": "sfa"}, {"op": "copy", "src": "sfb_s", "dst": "sfb"}, {"op": "mma", "a": "a", "b": "b", "d": "acc", "scale": {"a": "sfa", "b": "sfb", "vec": 32}}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "d"}, {"op": "store", "regs": "d", "dst": "D", "per_cta": [128, 0]}], "cta_group": 2}})", check_pair_mma},
{"PAIR-ROLE-ISSUE", "a CTA pair's MMA role does more than issue tcgen05.cp/mma", "PTX ISA 9.1 §9.7.16.5 (issue granularity, Table 46); §9.7.13.15.16 (mbarrier.try_wait: .shared::cta); §9.7.9.27.1.2 (cp.async.bulk.tensor .cta_group::2)",
 "In a CTA pair one thread of CTA 0 issues every tcgen05.cp and tcgen05.mma with .cta_group::2, for both CTAs' tensor memory, so the role that issues them runs in CTA 0 only, and the barriers it waits on are CTA 0's: both CTAs' TMA loads complete their bytes on CTA 0's barrier, both CTAs' threads arrive on CTA 0's barrier. A thread waits only on a barrier of its own CTA. An op of another kind in that role runs in both CTAs, and its CTA 1 threads would wait on barriers that complete in CTA 0 alone: the pair's producer, epilogue and other roles of both CTAs are roles of their own.",
 "A pair's loads, tcgen05.ld or stores given the role of its mma ops (one role for the loads and the MMAs, as one CTA could have).",
 {"give the op a role of its own: a producer warp for the loads, epilogue warps for tmem_load, tmem_store and store"},
 R"({"program": {"cta_group": 2, "threads": 192, "roles": {"epilogue": {"warps": [0, 1, 2, 3]}, "producer": {"warps": [4]}, "mma": {"warps": [5]}}, "globals": {"A": {"shape": [256, 64]}, "D": {"shape": [256, 128]}}, "smem": {"b": {"shape": [64, 64]}}, "ops": [{"op": "loop", "trips": 2, "ops": [{"op": "load", "role": "producer", "src": "A", "dst": "a", "per_cta": [128, 0], "via": "tma"}, {"op": "load", "role": "mma", "src": "B", "dst": "b", "per_cta": [64, 0], "via": "tma"}, {"op": "mma", "role": "mma", "a": "a", "b": "b", "d": "acc", "accumulate": "after_first"}]}, {"op": "tmem_load", "role": "epilogue", "src": "acc", "regs": "r"}, {"op": "store", "role": "epilogue", "regs": "r", "dst": "D", "per_cta": [128, 0]}]}})", "/program/ops/0/ops/1/role", false,
 R"({"program": {"cta_group": 2, "threads": 192, "roles": {"epilogue": {"warps": [0, 1, 2, 3]}, "producer": {"warps": [4]}, "mma": {"warps": [5]}}, "globals": {"A": {"shape": [256, 64]}, "D": {"shape": [256, 128]}}, "smem": {"b": {"shape": [64, 64]}}, "ops": [{"op": "loop", "trips": 2, "ops": [{"op": "load", "role": "producer", "src": "A", "dst": "a", "per_cta": [128, 0], "via": "tma"}, {"op": "load", "role": "producer", "src": "B", "dst": "b", "per_cta": [64, 0], "via": "tma"}, {"op": "mma", "role": "mma", "a": "a", "b": "b", "d": "acc", "accumulate": "after_first"}]}, {"op": "tmem_load", "role": "epilogue", "src": "acc", "regs": "r"}, {"op": "store", "role": "epilogue", "regs": "r", "dst": "D", "per_cta": [128, 0]}]}})", check_pair_role_issue},
{"PAIR-ROLE-RELOAD", "a CTA pair loads a tile again before anything read it", "PTX ISA 9.1 §9.7.9.27.1.2 (cp.async.bulk.tensor .cta_group::2); §9.7.13.15.16 (mbarrier.try_wait: .shared::cta)",
 "A CTA pair's TMA loads complete their bytes on CTA 0's barrier, where the MMA thread waits (CTA 0 arms it for both CTAs' bytes). A load into a tile that no copy or mma read since the last load into it must wait for that load's bytes first (two TMA writes of one tile are not ordered), and CTA 1's producer cannot: a thread waits only on a barrier of its own CTA, and CTA 1's copy of the barrier receives no bytes. The order is followed as ptxgen plans it: the ops before the loop, the loop twice (what an iteration leaves to the next), the ops after, so a tile loaded in the loop and read by no op in it is loaded again too.",
 "Two loads into one tile with no mma or copy between them; a tile the loop loads that no op in the loop reads.",
 {"drop the earlier load, or read the tile (copy or mma) between the two loads", "or make the program one CTA (\"cta_group\": 1), whose producer waits on its own barrier"},
 R"({"program": {"cta_group": 2, "threads": 192, "roles": {"epilogue": {"warps": [0, 1, 2, 3]}, "producer": {"warps": [4]}, "mma": {"warps": [5]}}, "globals": {"A": {"shape": [256, 64]}, "D": {"shape": [256, 128]}}, "smem": {"b": {"shape": [64, 64]}}, "ops": [{"op": "loop", "trips": 2, "ops": [{"op": "load", "role": "producer", "src": "A", "dst": "a", "per_cta": [128, 0], "via": "tma"}, {"op": "load", "role": "producer", "src": "A", "dst": "a", "per_cta": [128, 0], "via": "tma"}, {"op": "load", "role": "producer", "src": "B", "dst": "b", "per_cta": [64, 0], "via": "tma"}, {"op": "mma", "role": "mma", "a": "a", "b": "b", "d": "acc", "accumulate": "after_first"}]}, {"op": "tmem_load", "role": "epilogue", "src": "acc", "regs": "r"}, {"op": "store", "role": "epilogue", "regs": "r", "dst": "D", "per_cta": [128, 0]}]}})", "/program/ops/0/ops/1/dst", false,
 R"({"program": {"cta_group": 2, "threads": 192, "roles": {"epilogue": {"warps": [0, 1, 2, 3]}, "producer": {"warps": [4]}, "mma": {"warps": [5]}}, "globals": {"A": {"shape": [256, 64]}, "D": {"shape": [256, 128]}}, "smem": {"b": {"shape": [64, 64]}}, "ops": [{"op": "loop", "trips": 2, "ops": [{"op": "load", "role": "producer", "src": "A", "dst": "a", "per_cta": [128, 0], "via": "tma"}, {"op": "load", "role": "producer", "src": "B", "dst": "b", "per_cta": [64, 0], "via": "tma"}, {"op": "mma", "role": "mma", "a": "a", "b": "b", "d": "acc", "accumulate": "after_first"}]}, {"op": "tmem_load", "role": "epilogue", "src": "acc", "regs": "r"}, {"op": "store", "role": "epilogue", "regs": "r", "dst": "D", "per_cta": [128, 0]}]}})", check_pair_role_reload},
{"LOAD-RELOAD", "a run of TMA loads writes one tile twice", "PTX ISA 9.1 §9.7.9.27.1.2 (cp.async.bulk.tensor); §9.7.13.15 (mbarrier expect-tx)",
 "In a program with roles ptxgen gives each run of consecutive TMA loads of one role one mbarrier, armed once (expect_tx) with the bytes of the whole run. Two TMA writes of one tile are not ordered, so a load into a tile the run already writes must wait for the earlier load's bytes first; they complete on the run's own barrier, which is armed only after the wait: the producer would wait forever. The earlier load's bytes are overwritten unread, so the program has no use for them.",
 "A load duplicated while editing a program; two loads of different tensors into one tile.",
 {"drop the earlier load", "or read the tile (copy or mma) between the two loads"},
 R"({"program": {"threads": 192, "roles": {"epilogue": {"warps": [0, 1, 2, 3]}, "producer": {"warps": [4]}, "mma": {"warps": [5]}}, "ops": [{"op": "loop", "trips": 2, "ops": [{"op": "load", "role": "producer", "src": "A", "dst": "a", "via": "tma"}, {"op": "load", "role": "producer", "src": "A", "dst": "a", "via": "tma"}, {"op": "load", "role": "producer", "src": "B", "dst": "b", "via": "tma"}, {"op": "mma", "role": "mma", "a": "a", "b": "b", "d": "acc", "accumulate": "after_first"}]}, {"op": "tmem_load", "role": "epilogue", "src": "acc", "regs": "r"}, {"op": "store", "role": "epilogue", "regs": "r", "dst": "D"}]}})", "/program/ops/0/ops/1/dst", false,
 R"({"program": {"threads": 192, "roles": {"epilogue": {"warps": [0, 1, 2, 3]}, "producer": {"warps": [4]}, "mma": {"warps": [5]}}, "ops": [{"op": "loop", "trips": 2, "ops": [{"op": "load", "role": "producer", "src": "A", "dst": "a", "via": "tma"}, {"op": "load", "role": "producer", "src": "B", "dst": "b", "via": "tma"}, {"op": "mma", "role": "mma", "a": "a", "b": "b", "d": "acc", "accumulate": "after_first"}]}, {"op": "tmem_load", "role": "epilogue", "src": "acc", "regs": "r"}, {"op": "store", "role": "epilogue", "regs": "r", "dst": "D"}]}})", check_load_reload},
{"PROGRAM-COVERAGE", "loads and stores that step with the grid or the loop do not cover their tensors once", "(docs/spec.md, \"Coverage\")",
 "A load or store whose position steps with the CTA's tile row or column (\"m_tile\", \"n_tile\") or the loop's iteration (\"k_block\") walks its tensor step by step, along an extent that is the walker's size (or derived from it: ceil(S / div) x mul). One step of the grid is one tile (TM rows, TN columns) of that extent, one iteration one block of the loop, scaled as the extent is: anything else leaves part of the output unwritten or has CTAs race on the same elements, or leaves part of the input (of K) unread, or reads past it. Inside one step the stores of a tensor write each element exactly once and its loads read each element; a load that reaches past its step of the loop reads elements the next iteration reads again (the MMAs sum them twice); a store in the loop steps with the iteration; a grid of several tiles along a dimension has the stores step along it. The grid's tiles are counted at the spec's sizes.",
 "A store stepping 64 rows per tile row in a grid of 128-row tiles; a loop block of 128 over loads that step 64 along K; A's rows stepping 256 per tile row while D's step 128; a grid tile of 256 rows whose stores write 128.",
 {"step every load and store by the grid's tile (the loop's block) of its extent", "or make the grid's tile (the loop's block) what the loads and stores step",
  "store (load) registers (tiles) that cover one step exactly"},
 R"({"program": {"sizes": {"m": 256, "n": 256}, "grid": {"tile": [128, 128]}, "globals": {"D": {"dtype": "f32", "shape": ["m", "n"]}}, "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "store", "regs": "r", "dst": "D", "at": [{"m_tile": 64}, {"n_tile": 128}]}]}})", "/program/grid/tile/0", false,
 R"({"program": {"sizes": {"m": 256, "n": 256}, "grid": {"tile": [128, 128]}, "globals": {"D": {"dtype": "f32", "shape": ["m", "n"]}}, "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "store", "regs": "r", "dst": "D", "at": [{"m_tile": 128}, {"n_tile": 128}]}]}})", check_program_coverage},
{"LOAD-PLACE", "a load places rows in layout F's lanes into a tile a 128-row copy cannot move", "PTX ISA 9.1 §9.7.16.10.5.6 (data-path layout F); §9.7.16.9.2 (tcgen05.cp shapes)",
 "An M = 64 MMA (data-path layout F) reads row r of A (and of its sparsity metadata) in tensor-memory lane 32 (r / 16) + r % 16 + its alignment (0 or 16). No tcgen05.cp shape writes 16-lane pieces: a 128-row copy moves tile row i to lane i, so a naturally ordered A reaches layout F only if its rows sit in the tile at those lanes. \"place\": \"layout_f::0\" or \"layout_f::16\" on a load puts the rows it reads there (16 rows at a time, half of each 128-row slab), \"layout_f\" two M = 64 groups per slab (the first at alignment 0, the second at 16), as the gemm template places A. The tile is K-major (tcgen05.cp reads K-major tiles) and whole 128-row slabs.",
 "\"place\" on a load into a 64-row tile, or into an MN-major tile.",
 {"give the tile whole 128-row slabs, K-major", "or drop \"place\" (rows in order)"},
 R"({"program": {"smem": {"a": {"shape": [64, 64]}}, "ops": [{"op": "load", "src": "A", "dst": "a", "place": "layout_f::0"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "store", "regs": "r", "dst": "D"}]}})", "/program/ops/0/place", false,
 R"({"program": {"ops": [{"op": "load", "src": "A", "dst": "a", "place": "rows"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_t", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r"}, {"op": "store", "regs": "r", "dst": "D"}]}})", check_load_place},
{"OP-MMA-A-ORDER", "warning: an M = 64 mma reads A in layout F from a tile loaded in row order", "PTX ISA 9.1 §9.7.16.10.5.6 (data-path layout F); §9.7.16.9.2 (tcgen05.cp shapes)",
 "A warning, not an error. An M = 64 MMA with A in tensor memory reads row r of A in lane 32 (r / 16) + r % 16 + its alignment (layout F). A gets there by a 128-row copy (tile row i to lane i) into a rows view that the layout-F view casts, so row r of A is tile row 32 (r / 16) + r % 16 + the alignment: a load that fills the tile in row order from a naturally ordered A gives D with permuted rows, and every check passes. \"place\" on the load puts the rows where layout F reads them (LOAD-PLACE); a global that already holds A in that lane order says so with \"place\": \"rows\", which silences the warning.",
 "A load without \"place\" into the tile whose copy an M = 64 mma reads as A in layout F.",
 {"add \"place\": \"layout_f::0\" or \"layout_f::16\" (the mma's alignment), or \"layout_f\" for both, to the load",
  "or \"place\": \"rows\" when the global already holds A in layout F's lane order"},
 R"({"program": {"tmem": {"acc": {"slice": null, "cast": {"of": {"slice": {"of": "t", "columns": [0, 128]}}, "layout": "layout_f::0"}}, "a_f": {"cast": {"of": "a_t", "layout": "layout_f::0"}}}, "ops": [{"op": "load", "src": "A", "dst": "a"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_f", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r", "shape": "16x256b"}, {"op": "store", "regs": "r", "dst": "D"}]}})", "/program/ops/0", false,
 R"({"program": {"tmem": {"acc": {"slice": null, "cast": {"of": {"slice": {"of": "t", "columns": [0, 128]}}, "layout": "layout_f::0"}}, "a_f": {"cast": {"of": "a_t", "layout": "layout_f::0"}}}, "ops": [{"op": "load", "src": "A", "dst": "a", "place": "layout_f::0"}, {"op": "load", "src": "B", "dst": "b"}, {"op": "copy", "src": "a", "dst": "a_t"}, {"op": "mma", "a": "a_f", "b": "b", "d": "acc"}, {"op": "commit", "barrier": "done"}, {"op": "wait", "barrier": "done"}, {"op": "tmem_load", "src": "acc", "regs": "r", "shape": "16x256b"}, {"op": "store", "regs": "r", "dst": "D"}]}})", check_op_mma_a_order},
// ---- Performance warnings (last: they fire only for a spec every rule above accepts) -----------
{"PLAN-SINGLE-STAGE", "warning: ptxgen chose one pipeline stage for a K loop of several blocks", "PTX ISA 9.1 §9.7.9.27.1.2 (cp.async.bulk.tensor); §9.7.13.15 (mbarrier); docs/spec.md, \"Chosen when left out\"",
 "A warning, not an error. Where a spec leaves \"stages\" out, ptxgen takes as many stages as shared memory holds (at most 4; 5 for ping-pong consumers). When only one fits, the kernel is right but not pipelined: the loads of K block i + 1 go into the stage the MMAs of block i are reading, so they wait for those MMAs, and the next MMAs wait for the loads: loading and computing take turns instead of overlapping, and the K loop runs at the sum of their latencies. It fires only for a count ptxgen chose, over a K loop of two or more blocks: a spec that writes \"stages\": 1 has asked for it.",
 "A large tile.k or tile.n (one stage of 128 x 256 x 256 bf16 is 192 KB of 227 KB), block scaling's or sparse A's tiles beside A and B, or a persistent kernel's TMA staging memory taking its share.",
 {"a smaller tile.k or tile.n (the help names one and the stages it leaves room for)", "or write \"stages\": 1 to say that one stage is meant"},
 R"({"gemm": {"tile": {"k": 256}, "stages": null}})", "/gemm/tile", false, R"({"gemm": {"tile": {"k": 128}, "stages": null}})", check_plan_single_stage},
{"PLAN-ACC-SINGLE-BUFFER", "warning: a persistent kernel's accumulator has one buffer in tensor memory, not two", "PTX ISA 9.1 §9.7.16.1 (512 columns x 128 lanes); §9.7.16.7.1 (tcgen05.alloc)",
 "A warning, not an error. A persistent tcgen05 kernel keeps two accumulator buffers in tensor memory when twice D's columns (tile.n for each M group, f32) and what lies beside them (A in tensor memory, block scaling's factors, sparse A's metadata) fit in the CTA's 512 columns: the epilogue of one tile reads one buffer while the MMAs of the CTA's next tile fill the other. When two do not fit ptxgen keeps one, and the next tile's MMAs wait until the epilogue has read it: the epilogue no longer overlaps the MMAs, which is most of what the persistent schedule is for. `ptxgen plan` says which it took (\"accumulator:\"). No member asks for one buffer: the warning goes with a tile whose two buffers fit, and the shipped specs that cover the one-buffer kernel on purpose (specs/gemm_bf16_a_tmem_persistent_one_buffer.json) draw it.",
 "tile.n 256 with A in tensor memory, or with block scaling or sparse A, whose factors or metadata take columns beside D's.",
 {"a smaller tile.n (128 leaves room for two buffers)", "or A in shared memory, whose tensor-memory columns then hold the second buffer"},
 R"({"gemm": {"a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "scale": {"dtype": "ue8m0"}, "tile": {"k": 128}, "schedule": "persistent"}})", "/gemm/tile/n", false,
 R"({"gemm": {"a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "scale": {"dtype": "ue8m0"}, "tile": {"n": 128, "k": 128}, "schedule": "persistent"}})", check_plan_acc_single_buffer},
{"PTXAS-SPILL", "warning: ptxas spills the kernel's registers to local memory", "ptxas -v (its resource report: \"bytes spill stores\"); PTX ISA 9.1 §5.1.5 (the local state space)",
 "A warning of `ptxgen build`, not of `check`: the spec is right, and the kernel ptxas assembled computes what it says, slower. ptxas reports the bytes it stores to and loads from local memory because the registers a thread may use (the launch's share of the multiprocessor's 64K, or a setmaxnreg budget) cannot hold what is live at once: the accumulators and, in a fused epilogue, the inputs read beside them. Each spill is a round trip through local memory (the L1 cache, then L2) in the epilogue or the K loop. `ptxgen build` prints the warning from the report it writes beside the cubin (NAME.ptxas.txt).",
 "Ping-pong consumers on sm_90a (each holds a whole tile's accumulators) without \"registers\", with C and a residual fused in; a wide tile.n; a program that loads a whole accumulator with one tmem_load and applies many elementwise ops to it.",
 {"keep fewer registers live: a smaller tile.n, cooperative consumers, a program's accumulator loaded and stored in narrower pieces",
  "on sm_90a, \"registers\" (setmaxnreg) to raise the consumers' budget", "or fuse fewer epilogue inputs into the kernel"},
 R"({"target": "sm_90a", "gemm": {"tile": {"n": 128}, "consumers": "pingpong", "schedule": "persistent", "c": {"dtype": "bf16"}, "residual": {"dtype": "f16"}}})", "/gemm", false,
 R"({"target": "sm_90a", "gemm": {"tile": {"n": 128}, "consumers": "cooperative", "schedule": "persistent", "c": {"dtype": "bf16"}, "residual": {"dtype": "f16"}}})", nullptr, nullptr,
 // `ptxgen build` of the failing example, ptxas 13.0 (V13.0.88); its compile time left out.
 "ptxas info    : 0 bytes gmem\n"
 "ptxas info    : Compiling entry function 'example' for 'sm_90a'\n"
 "ptxas info    : Function properties for example\n"
 "    624 bytes stack frame, 1652 bytes spill stores, 1956 bytes spill loads\n"
 "ptxas info    : Used 168 registers, used 1 barriers, 624 bytes cumulative stack size\n"},
// ---- Budgets (last: they skip when earlier rules found errors) -------------------------------

};
// clang-format on



}  // namespace

const std::vector<Rule>& table() { return kTable; }

const Rule* find(std::string_view id) {
  // Case aside: `ptxgen explain mma-n` finds MMA-N.
  auto same = [](std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (std::toupper(static_cast<unsigned char>(a[i])) != std::toupper(static_cast<unsigned char>(b[i]))) return false;
    return true;
  };
  for (const auto& r : kTable)
    if (same(r.id, id)) return &r;
  return nullptr;
}

std::string_view example_base() { return kExampleBase; }
std::string_view example_program_base() { return kProgramBase; }
bool uses_program_base(const Rule& r) { return !r.bad_is_document && program_patch(r.bad); }

std::string bad_document(const Rule& r) {
  if (r.make_bad) return r.make_bad();
  return r.bad_is_document ? std::string(r.bad) : patched(r.bad);
}
std::string good_document(const Rule& r) { return patched(r.good); }

const ir::Kernel* lowered(const Context& c, const Diagnostics& d) {
  if (!c.lowering_tried && (c.spec.program || !d.has_errors())) {
    c.lowering_tried = true;
    // A program whose sizes, grid, loop or roles are refused is not lowered: the pipeliner plans
    // only a structure it can take (check_pipeline.cpp reports why). Steps that contradict the
    // grid or the loop (PROGRAM-COVERAGE) lower as they are, so that the kernel's other errors
    // (its launch grid, its budgets) are reported in the same run.
    bool steps_refused = false;
    if (c.spec.program)
      for (const auto& p : program_structure(c)) {
        if (p.rule != "PROGRAM-COVERAGE") return nullptr;
        steps_refused = true;
      }
    c.kernel = std::make_shared<ir::Kernel>(lower::lower(c.spec));
    verify::Verdict v = verify::run(*c.kernel);
    // What one step covers is measured in steps that are right: with steps refused, the
    // verifiers' coverage problems would only follow from them.
    if (steps_refused)
      v.problems.erase(std::remove_if(v.problems.begin(), v.problems.end(), [](const verify::Problem& p) { return p.rule == "PROGRAM-COVERAGE"; }),
                       v.problems.end());
    c.problems = std::move(v.problems);
    c.buffer_problems = v.buffer_problems;
    c.warnings = std::move(v.warnings);
  }
  return c.kernel.get();
}

const plan::MemoryMap& memory_map(const Context& c, const ir::Kernel& k) {
  if (!c.facts.memory) c.facts.memory = plan::memory_map(k);  // narrow call
  return *c.facts.memory;
}

const plan::Grid& launch_grid(const Context& c, const ir::Kernel& k) {
  if (!c.facts.grid) c.facts.grid = plan::launch_grid(k);  // narrow call
  return *c.facts.grid;
}

const std::optional<plan::SizeCrossing>& output_bound(const Context& c, const ir::Kernel& k) {
  if (!c.facts.sized) {
    c.facts.crossing = plan::output_bound(k, &c.facts.size);  // narrow call
    c.facts.sized = true;
  }
  return c.facts.crossing;
}

const ir::Kernel* verified(const Context& c, const Diagnostics& d) {
  const ir::Kernel* k = lowered(c, d);
  return k && c.problems.empty() ? k : nullptr;
}

const ir::Kernel* buffers_verified(const Context& c, const Diagnostics& d) {
  const ir::Kernel* k = lowered(c, d);
  return k && c.buffer_problems == 0 ? k : nullptr;
}

namespace {
// A diagnostic about a value ptxgen chose where the spec is silent (spec::choose_gemm_defaults)
// says so and points at a member the spec has: one at a chosen member points at the template (the
// stages at the tile when the spec wrote it, the member that drove the choice); with the tile
// chosen, every error says so in a help line, since the tile shapes all the rest.
void say_chosen(const spec::Gemm* g, const Diagnostics& found, Diagnostics& out) {
  for (Diagnostic x : found.list()) {
    if (g && x.severity == Severity::error) {
      bool at_chosen = x.message.find("chosen by ptxgen") != std::string::npos;  // SMEM-BUDGET says so itself
      for (const std::string member : {"tile", "stages", "schedule", "epilogue", "consumers", "registers", "cluster"}) {
        const std::string* note = spec::chosen_note(*g, member);
        const std::string at = "/gemm/" + member;
        if (!note || (x.pointer != at && x.pointer.rfind(at + "/", 0) != 0)) continue;
        x.pointer = member == "stages" && !spec::chosen_note(*g, "tile") ? "/gemm/tile" : "/gemm";
        x.message += "; chosen by ptxgen where the spec is silent: " + *note;
        x.help.push_back("write \"" + member + "\" in the spec to choose another");
        at_chosen = true;
      }
      // Elsewhere, a diagnostic about a tile extent (LAUNCH-GRID's tile.m, SPARSE-K's tile.k,
      // GROUPS-ALIGN's tile.m) says in its message whose extent it was.
      const std::string* tile = spec::chosen_note(*g, "tile");
      if (tile && !at_chosen) {
        const std::string what = tile->substr(0, tile->find(':'));
        bool names_extent = false;  // "tile.m 128", "tile.k = 128", "tile.n=256" of the chosen tile
        for (const auto& [e, v] : {std::pair{"m", g->tile.m}, {"n", g->tile.n}, {"k", g->tile.k}})
          for (const char* sep : {" ", " = ", "="}) names_extent = names_extent || x.message.find("tile." + std::string(e) + sep + std::to_string(v)) != std::string::npos;
        if (names_extent) x.message += " (the " + what + " was chosen by ptxgen: the spec leaves \"tile\" out)";
        x.help.push_back("the " + what + " was chosen by ptxgen where the spec is silent; write \"tile\" to choose another");
      }
    }
    Diagnostic& y = x.severity == Severity::error ? out.error(x.rule, x.pointer, x.message) : out.warning(x.rule, x.pointer, x.message);
    y = x;
  }
}
}  // namespace

Analysis check(const spec::Spec& s, Diagnostics& diags) {
  const spec::Gemm* g = s.gemm ? &*s.gemm : nullptr;
  Context c{s, g, isa::target_info(s.target), std::nullopt, nullptr, false, {}, 0, {}, std::nullopt, {}};
  if (g)
    c.kind = g->scale && !g->scale->blockwise() ? isa::gemm_scaled_kind(g->a.dtype, g->b.dtype, g->scale->dtype, isa::stored_scale_vec(g->scale->vec, g->sparse),
                                              g->scale->kind)
                      : isa::unscaled_kind(g->a.dtype, g->b.dtype);
  Diagnostics found;
  if (s.program) lowered(c, found);
  for (const auto& r : kTable)
    if (r.check) r.check(c, found);
  say_chosen(g, found, diags);
  Analysis a;
  if (found.has_errors()) return a;
  // Every rule passed: the kernel the rules lowered (the gemm template's after its own rules, a
  // program's at once), which the verifiers passed, and what the narrow calls computed of it.
  if (!lowered(c, found)) return a;
  a.kernel = std::move(c.kernel);
  a.facts = std::move(c.facts);
  return a;
}

Checked parse_and_check(std::string_view text, Diagnostics& diags) {
  Checked out;
  out.parsed = spec::parse(text, diags);
  if (!out.parsed.spec) return out;
  check(*out.parsed.spec, diags);
  out.ok = !diags.has_errors();
  return out;
}

}  // namespace ptxgen::rules
