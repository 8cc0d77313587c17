// The rule table. One record per rule; checks, `ptxgen rules`, `ptxgen explain`, docs/rules.md
// and the negative tests all come from here.
#include <nlohmann/json.hpp>

#include "context.hpp"
#include "ptxgen/rules.hpp"

namespace ptxgen::rules {

namespace {

// clang-format off
const std::vector<Rule> kTable = {
// ---- The spec document itself (enforced by the parser) ------------------------------------------
{"SPEC-JSON", "the spec is not well-formed JSON", "(input format; RFC 8259)",
 "The file is not a JSON document: a syntax error, a stray character, an unterminated string, invalid UTF-8, or text after the document.",
 "Hand-edited specs (trailing commas, comments, single quotes) and truncated files written by another program.",
 {"fix the text at the line and column given; JSON has no comments and no trailing commas"},
 R"({"ptxgen": 1, "name": "x",)", "", true, "{}"},
{"SPEC-LIMIT", "the spec exceeds an input limit", "(input format)",
 "ptxgen reads at most 1 MiB, 32 levels of nesting, 4096 elements per array, 256 members per object and 256 bytes per string. Beyond these the input is refused before it is processed.",
 "Generated specs gone wrong (runaway nesting, unbounded arrays) or a wrong file passed as the spec.",
 {"check that the right file is passed", "split very large programs into several specs"},
 "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]", "/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0", true, "{}"},
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
 "The gemm template needs m, n, k, a, b, d, accumulator and tile; a spec needs ptxgen, name and target.",
 "A template written from memory, or a field renamed in an older draft of the format.",
 {"add the member; docs/spec.md lists each one with its meaning"},
 R"({"gemm": {"tile": null}})", "/gemm/tile", false, "{}"},
{"SPEC-UNKNOWN-KEY", "a member that the format does not define", "(docs/spec.md)",
 "Unknown members are errors, never ignored: a misspelt optional field would otherwise silently take its default.",
 "Typos (\"swizle\"), fields from another tool's format, or fields of a newer ptxgen.",
 {"use the suggested spelling", "remove the member"},
 R"({"gemm": {"swizle": {"a": 64}}})", "/gemm/swizle", false, "{}"},
{"SPEC-INT-RANGE", "an integer is outside its range", "(docs/spec.md)",
 "Integers are range-checked before any arithmetic uses them: problem sizes 1..2^31-1, tile extents 1..1024, stages 1..32, cluster dimensions 1..16. Integers beyond 64 bits are out of range too.",
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
{"SPEC-TEMPLATE", "a spec needs exactly one of gemm or program", "(docs/spec.md)",
 "A spec describes one kernel, either with the gemm template or at the program level.",
 "An empty spec, or both levels written into one file.",
 {"keep one of \"gemm\" and \"program\""},
 R"({"gemm": null})", "", false, "{}"},

// ---- Targets -----------------------------------------------------------------------------------
{"TARGET-A-TMEM", "A in tensor memory needs a tcgen05 target", "PTX ISA 9.1 §9.7.16.1 (Tensor Memory); §9.7.15 (wgmma)",
 "Tensor memory exists on the sm_100a family only. On sm_90a the wgmma A operand comes from shared memory or registers.",
 "Porting a Blackwell spec to Hopper.",
 {"use \"a_source\": \"smem\" or \"registers\" on sm_90a", "or target sm_100a"},
 R"({"target": "sm_90a", "gemm": {"a_source": "tmem"}})", "/gemm/a_source", false, R"({"target": "sm_90a"})", check_target_a_tmem},
{"TARGET-CTA-PAIR", "cta_group 2 needs a tcgen05 target", "PTX ISA 9.1 §9.7.16.5.1 (CTA pair)",
 "A CTA pair issuing one MMA over both CTAs' tensor memory is a tcgen05 feature; sm_90a has none.",
 "Porting a Blackwell 2-CTA spec to Hopper.",
 {"use \"cta_group\": 1 on sm_90a"},
 R"({"target": "sm_90a", "gemm": {"cta_group": 2, "tile": {"m": 256}}})", "/gemm/cta_group", false, R"({"target": "sm_90a"})", check_target_cta_pair},
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
{"MMA-A-TMEM-M", "A in tensor memory with a half-datapath M", "PTX ISA 9.1 §9.7.16.10.5 (layouts F and B)",
 "M=64 at cta_group::1 (layout F) and M=128 at cta_group::2 (layout B) use half of the tensor-core data path; which lanes must hold A's rows is given only by figures the ISA text does not carry, so ptxgen places A in tensor memory only with the full-datapath layouts (128 rows per CTA).",
 "A tile of 64 rows (or 128 for a CTA pair) with a_source tmem.",
 {"use a tile.m that is a multiple of 128 (256 for cta_group 2)", "or keep A in shared memory"},
 R"({"gemm": {"a_source": "tmem", "tile": {"m": 64}}})", "/gemm/tile/m", false, R"({"gemm": {"a_source": "tmem"}})", check_mma_a_tmem_m},

// ---- Shapes -------------------------------------------------------------------------------------
{"MMA-M", "tile.m is not a multiple of a legal instruction M", "PTX ISA 9.1 §9.7.16.2.1 Table 39",
 "One tcgen05.mma has M = 64 or 128 (cta_group::1) or 128 or 256 (cta_group::2; block-scaled kinds 128 only at cta_group::1). The planner splits a larger tile into M groups, each with its own accumulator.",
 "Tiles sized for other hardware (96, 192 at cta_group::2).",
 {"use a tile.m that is a multiple of 64 (cta_group 1) or 128 (cta_group 2)"},
 R"({"gemm": {"tile": {"m": 96}}})", "/gemm/tile/m", false, "{}", check_mma_m},
{"MMA-N", "tile.n cannot be split into legal instruction widths", "PTX ISA 9.1 §9.7.16.2.1 Table 39; §9.7.16.10.1 Table 52",
 "N per instruction: 8..256 step 8 at cta_group::1 (16..256 step 16 at cta_group::2); kind::i8 takes 8, 16, 24, 32, then steps of 16 (steps of 32 for a pair); 8-bit N-major B needs steps of 16 (32 for a pair). The planner splits tile.n into groups of at most 256 whose starts fall on B's core matrices or swizzle atoms.",
 "Widths that are not multiples of 8, or integer and 8-bit transposed GEMMs at widths the finer float steps would allow.",
 {"round tile.n to a width that the message lists"},
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
 {"use a smaller swizzle for the operand", "or grow the tile along the swizzled dimension"},
 R"({"gemm": {"tile": {"k": 32}}})", "/gemm/swizzle/a", false, R"({"gemm": {"tile": {"k": 32}, "swizzle": {"a": 64, "b": 64}}})", check_layout_atom},

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
 {"round tile.n as the message says"},
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
{"CLUSTER-PAIR", "cta_group 2 needs an even cluster x dimension", "PTX ISA 9.1 §9.7.16.5.1 (CTA pair)",
 "The two CTAs of a pair have %cluster_ctarank differing in the last bit; the cluster's x extent must be even so every CTA has its peer.",
 "A 2-CTA MMA with the default single-CTA cluster.",
 {"use \"cluster\": [2, 1, 1] (or any even x)"},
 R"({"gemm": {"cta_group": 2, "tile": {"m": 256}, "cluster": [1, 1, 1]}})", "/gemm/cluster/0", false,
 R"({"gemm": {"cta_group": 2, "tile": {"m": 256}, "cluster": [2, 1, 1]}})", check_cluster_pair},
{"CLUSTER-SIZE", "the cluster has more than 16 CTAs", "PTX ISA 9.1 §11.7 (cluster dimension directives); CUDA cluster limits",
 "A cluster holds at most 8 CTAs portably and 16 with the non-portable opt-in; larger clusters cannot launch.",
 "Cluster shapes chosen for multicast without counting the CTAs.",
 {"use at most 16 CTAs per cluster"},
 R"({"gemm": {"cluster": [4, 4, 2]}})", "/gemm/cluster", false, R"({"gemm": {"cluster": [2, 2, 1]}})", check_cluster_size},
{"TMA-STRIDE", "a leading dimension TMA cannot use", "PTX ISA 9.1 §5.5.5 (tensor-map strides); CUDA driver cuTensorMapEncodeTiled",
 "Operands are loaded with TMA (cp.async.bulk.tensor), whose tensor maps need every global stride to be a multiple of 16 bytes, and a row must hold the contiguous extent (K for a K-major operand, M or N otherwise). Without \"ld\" ptxgen pads rows to 16 bytes, so any size works; an explicit ld must itself be such a stride.",
 "Sub-matrices of tightly packed odd-sized tensors (ld = 1001 bf16 elements).",
 {"pad the leading dimension to a multiple of 16 bytes and keep the logical size; TMA zero-fills the edge", "or leave ld out"},
 R"({"gemm": {"k": 1001, "a": {"ld": 1001}}})", "/gemm/a/ld", false, R"({"gemm": {"k": 1001, "a": {"ld": 1008}}})", check_tma_stride},
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
};
// clang-format on

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

std::string patched(std::string_view patch) {
  nlohmann::ordered_json base = nlohmann::ordered_json::parse(kExampleBase);
  base.merge_patch(nlohmann::ordered_json::parse(patch));
  return base.dump(2);
}

}  // namespace

const std::vector<Rule>& table() { return kTable; }

const Rule* find(std::string_view id) {
  for (const auto& r : kTable)
    if (r.id == id) return &r;
  return nullptr;
}

std::string_view example_base() { return kExampleBase; }

std::string bad_document(const Rule& r) { return r.bad_is_document ? std::string(r.bad) : patched(r.bad); }
std::string good_document(const Rule& r) { return patched(r.good); }

void check(const spec::Spec& s, Diagnostics& diags) {
  const spec::Gemm* g = s.gemm ? &*s.gemm : nullptr;
  Context c{s, g, isa::target_info(s.target), std::nullopt};
  if (g) c.kind = isa::unscaled_kind(g->a.dtype, g->b.dtype);
  for (const auto& r : kTable)
    if (r.check) r.check(c, diags);
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
