// ptxgen/spec.hpp — the kernel spec: JSON text in, typed plain structs out.
//
// The spec stage knows the JSON format (docs/spec.md) and nothing of rules or PTX: it reports
// malformed input (syntax, limits, unknown keys, wrong types, out-of-range integers, unknown
// names) with the SPEC-* rule ids and leaves every hardware question to the rule table.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>
#include <string_view>

#include "ptxgen/diag.hpp"
#include "ptxgen/isa.hpp"
#include "ptxgen/math_fn.hpp"
#include "ptxgen/program.hpp"

namespace ptxgen::spec {

// Limits on the input itself (each one is the rule SPEC-LIMIT when exceeded).
struct Limits {
  size_t max_bytes = 1 << 20;  // whole document
  int max_depth = 32;          // nesting of arrays/objects
  size_t max_array = 4096;     // elements of one array
  size_t max_string = 256;     // bytes of one string or key
  size_t max_members = 256;    // members of one object
};

enum class ASource : uint8_t { smem, tmem, registers };
std::string_view name(ASource s);
// How the grid covers the tiles: one CTA per output tile, or persistent CTAs (one per
// multiprocessor) each looping over tiles (ir::Grid::persistent).
enum class Schedule : uint8_t { data_parallel, persistent };
std::string_view name(Schedule s);
// How D leaves the kernel: each thread's st.global of its accumulator registers, or (tma) through
// a shared-memory tile and cp.async.bulk.tensor stores of whole boxes; automatic ("auto", sm_90a):
// by TMA when D's rows are 16-byte multiples apart at run time, else directly (the kernel has both).
enum class Epilogue : uint8_t { direct, tma, automatic };
std::string_view name(Epilogue e);
// The wgmma template's consumer warpgroups: cooperative (each warpgroup 64 rows of every tile) or
// pingpong (two warpgroups taking alternate tiles of a persistent CTA, each the whole tile, so
// that one's epilogue overlaps the other's main loop).
enum class Consumers : uint8_t { cooperative, pingpong };

// Grouped GEMM's layouts of A, B, D and the run-time group sizes (Gemm::groups).
enum class GroupsLayout : uint8_t { masked, contiguous, k_grouped };
std::string_view name(GroupsLayout l);
std::string_view name(Consumers c);
// Glu (the gated activations) and Quantize (the block-quantized formats) are shared with the
// program level's ops (ptxgen/program.hpp).

// A name ptxgen puts into PTX (entry, parameter, label): [A-Za-z_][A-Za-z0-9_]*, at most 64
// characters (PTX ISA 9.1 §4.4 identifiers; the length keeps names portable to C and file names).
bool valid_name(const std::string& s);

struct Operand {
  isa::DType dtype = isa::DType::bf16;
  isa::Major major = isa::Major::k;
  int64_t ld = 0;  // leading dimension in elements, as given ("ld"); 0: not given
};

// The leading dimension the kernel's tensor maps use: the one given, else the contiguous extent
// rounded up to 16 bytes (a TMA row stride must be a multiple of 16 bytes).
int64_t leading_dimension(const Operand& op, int64_t contiguous_extent);

// Block scaling of the gemm template (docs/spec.md, "Block scaling"): D = (A * SFA) . (B * SFB),
// one scale factor of `dtype` per `vec` elements of K of each row of A and each column of B; the
// factor tensors SFA and SFB are kernel inputs in the 128x4 layout.
// dtype f32 is block-wise scaling instead (DeepSeek-V3's recipe, sm_90a): D = sum over K blocks kb
// of 128 of SFA[kb][m] SFB[n / 128][kb] (A x B over the block), A's factors one f32 per row and
// block (stored [ceil(k / 128), m]), B's one per 128 x 128 block ([ceil(n / 128), ceil(k / 128)]);
// vec is then 128.
struct Scale {
  isa::DType dtype = isa::DType::ue8m0;
  bool blockwise() const { return dtype == isa::DType::f32; }
  int vec = 32;                   // elements of K per factor as written, else 16 for ue4m3 and 32 for ue8m0
                                  // (32 and 64 with sparse A: isa::stored_scale_vec)
  std::optional<isa::Kind> kind;  // as written; else the types choose (isa::gemm_scaled_kind)
  // Block-wise f32 factors: the consumers' sets of partial sums, 1 (block kb promoted once its
  // wgmmas completed) or 2 (promoted while block kb + 1's run); 0 until chosen.
  int partials = 0;
};

// The `gemm` template (docs/spec.md): D[M,N] = A[M,K] . B[K,N].
struct Gemm {
  int64_t m = 0, n = 0, k = 0;
  Operand a, b;
  isa::DType d = isa::DType::f32;
  isa::DType accumulator = isa::DType::f32;
  struct {
    int64_t m = 0, n = 0, k = 0;
  } tile;
  int64_t stages = 0;  // 0 until chosen (choose_gemm_defaults) when the spec leaves it out
  int64_t raster = 8;  // M tiles per group of the launch order (ir::Grid::raster_group)
  Schedule schedule = Schedule::data_parallel;
  Epilogue epilogue = Epilogue::direct;
  Consumers consumers = Consumers::cooperative;
  isa::Swizzle swizzle_a = isa::Swizzle::b128;
  isa::Swizzle swizzle_b = isa::Swizzle::b128;
  ASource a_source = ASource::smem;
  int cta_group = 1;
  std::array<int64_t, 3> cluster{1, 1, 1};
  bool cluster_given = false;  // the spec wrote "cluster" (else choose_gemm_defaults says what it took)
  // The spec wrote these (else, where the planner chooses the tile, it chooses them too).
  bool schedule_given = false, epilogue_given = false, consumers_given = false;
  // wgmma (sm_90a): register budgets per thread of a producer warpgroup and of the consumer
  // warpgroups (setmaxnreg, §9.7.19.5). Present: the producer is a whole warpgroup that lowers its
  // budget and the consumers raise theirs; absent: one producer warp and no setmaxnreg.
  struct Registers {
    int64_t producer = 0, consumer = 0;
  };
  std::optional<Registers> registers;
  std::optional<Scale> scale;  // block scaling: the block-scaled kinds (tcgen05), block-wise f32 (wgmma)
  // Structured-sparse A (docs/spec.md, "Sparse A"): A holds two of every four elements of K (2:4,
  // §9.7.16.10.8), its metadata a kernel input; tcgen05.mma.sp.
  bool sparse = false;
  // The fused epilogue (docs/spec.md, "Epilogues"), applied to the accumulator in this order before
  // D's conversion: times alpha (a constant or an input), + beta times the kernel input "c" (m x n, of its
  // dtype), + bias (a vector along N, one per column: the kernel input "bias" of n elements; along
  // M, one per row, of m), the activation, + the kernel input "residual" (m x n).
  std::optional<double> alpha;
  std::optional<isa::DType> c;
  std::optional<double> beta;  // given: c times it (1 when left out)
  // "alpha": "input", "beta": "input": the factor is the kernel input "alpha" ("beta"), one f32 read
  // through a device pointer (cuBLASLt's CUBLASLT_POINTER_MODE_DEVICE), in place of a constant
  // (alpha, beta then empty).
  bool alpha_input = false, beta_input = false;
  struct Bias {
    isa::DType dtype = isa::DType::bf16;
    bool along_m = false;
  };
  std::optional<Bias> bias;
  std::optional<Activation> activation;
  std::optional<isa::DType> residual;
  // The kernel output "amax" (one f32) raised to the largest |element| of D before its conversion
  // (red.global.max; the caller zeroes it before the launch).
  bool amax = false;
  // "d": {"scale": true}: D's values times the kernel input "d_scale" (one f32) before D's
  // conversion, after the amax (cuBLASLt's scale_d: an FP8 recipe's per-tensor scale).
  bool d_scale = false;
  // A gated activation (docs/spec.md, "Epilogues"; vLLM's SiluAndMul convention) instead of
  // `activation`: B's n rows are two halves, gate [0, n/2) and up [n/2, n), and D is m x n/2 with
  // D[i][j] = act(P[i][j]) * P[i][j + n/2], P = A x B (+ bias along N), act = glu_gate(glu).
  std::optional<Glu> glu;
  // "quantize": D's values over their blocks' factors, which go to the kernel output "SFD"
  // (ir::Quantize), after D's scale (NVFP4's global encode scale); D's dtype the format's element type.
  std::optional<Quantize> quantize;
  // "groups" (docs/spec.md, "Grouped GEMM"; issue 30): G independent GEMMs of one launch, the
  // layouts DeepGEMM and torch use for mixture-of-experts. masked: A [G, m, K], B [G, N, K],
  // D [G, m, N], group g's valid rows the run-time int32 masked_m[g] <= m (batched GEMM: every
  // masked_m[g] = m). contiguous: A [sum of padded M, K], each group's rows a segment starting at a
  // multiple of `align`, the run-time int32 ends of the groups; B [G, N, K]. k_grouped: A [M, sum
  // of K], B [sum of K, N], D [G, M, N]. `count` is the spec's G, as m, n, k are its sizes: the
  // launch header takes G at run time.
  struct Groups {
    GroupsLayout layout = GroupsLayout::masked;
    int64_t count = 0;
    int64_t align = 128;  // contiguous only: the rows each group's segment of A starts on
    bool align_given = false;
  };
  std::optional<Groups> groups;
  // What was chosen where the spec is silent, each with its reason (choose_gemm_defaults).
  std::vector<std::string> chosen;
};

// Fills the tile (tile.m == 0) and the pipeline depth (stages == 0) a spec left out, by the rule
// of docs/spec.md ("Chosen when left out"), and records each choice in g.chosen.
void choose_gemm_defaults(Gemm& g, isa::Arch target);
// The shared-memory bytes of one pipeline stage: every tile a stage holds (A, B, block scaling's
// factors, sparse A's metadata) as the lowering lays it out, each rounded up to 1 KB. What the
// chooser divides shared memory by; tests/chosen_sweep_test.cpp holds it to the memory map.
int64_t stage_bytes(const Gemm& g, isa::Arch target);
// Whether a wgmma kernel's TMA epilogue stages D in two subtile buffers instead of the whole tile:
// ir::d_staging (which decides it, with stmatrix) asked with the spec's D, on a wgmma target with
// a TMA epilogue. The chooser counts the buffers; the lowering sizes the staging tile by it.
bool d_subtiles(const Gemm& g, isa::Arch target);
// Whether the consumers of a block-wise f32 kernel can keep two sets of partial sums (docs/spec.md,
// "Block-wise f32 factors"), or why not: block kb + 1's wgmmas read their stage while block kb's
// is still held, so the ring needs 2 or more stages (stages); A is read from shared memory, not
// loaded into registers each block (a_source); and a consumer thread holds the scaled sum and both
// sets (3 x 64 registers) beside its addresses and factors within its setmaxnreg budget
// (registers: "registers.consumer" at least kTwoPartialsRegisters).
inline constexpr int64_t kTwoPartialsRegisters = 232;
enum class PartialsMiss : uint8_t { fits, stages, a_source, registers };
PartialsMiss two_partials_miss(const Gemm& g);
// The note choose_gemm_defaults recorded for `member` ("stages", "tile", "schedule", ...: each note
// begins with the member's name), or nullptr where the spec wrote the member.
const std::string* chosen_note(const Gemm& g, std::string_view member);


struct Spec {
  int version = 1;
  std::string name;
  isa::Arch target = isa::Arch::sm_100a;
  std::optional<Gemm> gemm;
  std::optional<Program> program;  // the program level (ptxgen/program.hpp)
};

struct ParseResult {
  std::optional<Spec> spec;  // present when no SPEC-* error was found
  SourceMap positions;       // for printing diagnostics with line and column
};

// Parses a whole document. Errors go to `diags`; on any error `spec` is empty.
ParseResult parse(std::string_view text, Diagnostics& diags, const Limits& limits = {});

// Serializes a spec back to canonical JSON (sorted keys, every default made explicit).
std::string to_json(const Spec& s);

}  // namespace ptxgen::spec
