// The kernel simulator (src/sim/), the product's `ptxgen simulate` and the tests' sim suites use it.
//
// ksim: a simulator of complete tcgen05 (sm_100a family) and wgmma (sm_90a) kernels as ptxgen emits
// them, driven by the PTX text and the launch (grid, cluster, parameters, tensor maps) only -- it
// knows nothing of ptxgen's plans.
//
// Every thread of every CTA runs, with real values: registers hold bit patterns, global memory is
// bytes, each CTA has its shared memory and its tensor memory (128 lanes x 512 columns of 32 bits),
// the mbarriers count arrivals and transaction bytes through their phases (PTX ISA 9.1 §9.7.13.15),
// TMA loads expand boxes through tensor maps (§5.5: tile mode, out-of-bounds zero fill, swizzle),
// TMA stores write boxes back clipped at the tensor's extents, each thread's bulk async-groups
// (commit_group, wait_group[.read]) track them,
// and tcgen05.mma/cp read shared and tensor memory through descriptors decoded here from the ISA's
// tables (§9.7.16.4) -- not through ptxgen::isa; wgmma.mma_async (§9.7.15) is an operation of the
// warpgroup reading shared memory through the sm_90 descriptors and its warps' registers (wgmma.cpp).
// Threads run one at a time, by default (Options::schedule 0) in a fixed order, switching only where they block (a failed
// mbarrier.try_wait, bar.sync, barrier.cluster.wait, a warp collective not yet reached by the whole
// warp, a cp.async.bulk.wait_group, a wgmma.wait_group, a setmaxnreg.inc). Asynchronous operations
// (TMA, tcgen05.mma/cp/commit, tcgen05.ld/st until their wait, wgmma.mma_async) take effect as late
// as possible: only when no thread can run, oldest first (other schedules: Policy below). A kernel that reads what it did not wait for therefore reads stale data, and the
// race checks name it directly. Anything the simulator cannot account for is an Error: a deadlock
// (naming the blocked threads and where), an unknown instruction, an access outside memory or the
// allocated tensor memory, a race, a misused barrier.
//
// Debugging: KSIM_TRACE=1 prints every asynchronous operation's issue and completion and every
// mbarrier arrival on stderr; the sim suites take KSIM_ONLY=<spec stem> to run one spec.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "ptxgen/program.hpp"

namespace ksim {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A CUtensorMap (cuTensorMapEncodeTiled) of rank 2 or 3, as the launch manifest describes it.
struct TensorMap {
  uint64_t global = 0;        // address of element (0, 0)
  int elem_bits = 8;          // bits per element in global memory (4 and 6: packed)
  int smem_bits = 8;          // bits per element in shared memory (16U4/16U6_ALIGN16B: 16 elements per 16 bytes)
  int rank = 2;
  uint64_t dims[3] = {0, 0, 1};  // elements: inner (contiguous) dimension first
  uint64_t stride = 0;        // bytes between rows (dimension 1)
  uint64_t stride2 = 0;       // bytes between planes (dimension 2, rank 3)
  uint32_t box[3] = {0, 0, 1};  // elements
  int swizzle = 0;            // bytes: 0, 32, 64, 128
  int atom = 16;              // swizzle atomicity: 16, or 32 (128B_ATOM_32B)
};

// One kernel parameter: a 32/64-bit value or a tensor map (passed by value).
struct Param {
  std::string name;
  uint64_t value = 0;
  bool is_tensor_map = false;
  TensorMap map;
};

struct Launch {
  std::array<uint32_t, 3> grid{1, 1, 1};
  std::array<uint32_t, 3> cluster{1, 1, 1};
  uint32_t threads = 0;       // blockDim.x (the kernel's .reqntid must agree)
  uint32_t dynamic_smem = 0;  // bytes
  std::vector<Param> params;  // by name; every .param of the entry must be given
  // Where the extern shared array starts in each CTA's shared window: deliberately not 1024-aligned,
  // so the kernels' own rounding is exercised.
  uint32_t smem_symbol = 1024 + 16;
};

// Device global memory: buffers at fixed, well separated addresses.
class Global {
 public:
  uint64_t alloc(size_t bytes, uint8_t fill = 0xEE);  // returns the buffer's address (256-byte aligned)
  std::vector<uint8_t>& at(uint64_t address);          // the buffer starting at `address`
  uint8_t* find(uint64_t address, size_t bytes);       // nullptr unless [address, +bytes) is inside one buffer
  // Write coverage: count_writes(a) counts every write (st.global, a TMA store) to each byte of the
  // buffer at a (saturating at 255), which writes(a) gives; wrote() is the simulator's call.
  void count_writes(uint64_t address);
  void wrote(uint64_t address, size_t bytes);
  const std::vector<uint8_t>* writes(uint64_t address) const;

 private:
  std::map<uint64_t, std::vector<uint8_t>> bufs_;
  std::map<uint64_t, std::vector<uint8_t>> counts_;  // by buffer address: per byte, the writes to it
  uint64_t next_ = 0x100000000ull;
};

// Schedules (ptxgen simulate --schedules): the fixed one above, or one of these under a seed. A
// barrier protocol wrong only under other timings passes the fixed schedule; these give it those
// timings. Every switch point is an instruction boundary, and every early completion keeps the
// order the ISA gives within a stream (a CTA's tcgen05.mma/cp/commit in issue order, a CTA's TMA
// stores, a CTA's wgmma; TMA loads are each their own stream).
enum class Policy : uint8_t {
  fixed,    // each thread runs until it blocks, in launch order; asynchronous operations complete as late as possible
  random,   // a random runnable thread runs a random number of instructions (1 to about 64); a random stream's
            // oldest operation completes at a random quarter of the switches
  early,    // threads in order, switching every few instructions; every operation completes at the first switch after its issue
  reverse,  // the runnable thread of the highest index runs first: the last warps (producer, MMA issuer) run far ahead
            // of the first (the epilogue), which waits as long as anything else can run
  lifo,     // the thread that became runnable last runs first, each until it blocks: a woken waiter races ahead
  lag,      // one CTA of each cluster (the schedule's number mod the cluster's size) runs only when no other
            // thread can, and operations complete at once: its peers signal it, and multicast into it, as
            // early as they can, before it has even initialized its barriers if nothing stops them
};
// The schedule a number names: 0 fixed, then random, early, reverse, lifo, lag in turn, each seeded by it.
Policy policy_of(uint64_t schedule);
const char* policy_name(Policy p);

struct Options {
  uint64_t max_instructions = 400'000'000;  // over the whole grid: a kernel that does not end is an Error
  bool race_checks = true;                  // asynchronous reads/writes against thread accesses (see sim.hpp top)
  uint64_t schedule = 0;                    // the schedule (policy_of); 0 the fixed one
};

struct Stats {
  uint64_t instructions = 0, mma = 0, tma_boxes = 0, tma_stores = 0, ctas = 0;
  // Per warp of the CTA (index tid / 32), summed over every CTA of the grid: the instructions its
  // threads executed, the times one of its threads blocked at an mbarrier (a failed
  // mbarrier.try_wait that waits for the phase), and its threads' bar.syncs (each waits for the rest).
  std::vector<uint64_t> warp_instructions, warp_mbarrier_waits, warp_bar_waits;
};

struct Kernel;  // the decoded PTX: every instruction parsed once into a compact form
struct KernelDeleter {
  void operator()(Kernel*) const;
};
using KernelPtr = std::unique_ptr<Kernel, KernelDeleter>;

// Decodes the first .entry of `ptx`; throws Error naming the line of anything it does not support.
KernelPtr parse(const std::string& ptx);

// Runs every CTA of the launch (cluster by cluster) to completion; throws Error on any failure.
Stats run(const Kernel& k, const Launch& launch, Global& global, const Options& options = {});

}  // namespace ksim

// ---- the references: a kernel run on random inputs and compared with float64 --------------------
// src/sim/gemm.cpp: the gemm template's definition (docs/spec.md: D = A B, block-scaled and
// sparse A, the fused epilogues, the quantized D with its factors); src/sim/program.cpp: a
// program spec's ops evaluated from their documented meaning (views resolved from the spec in
// src/sim/views.hpp, none of the planner's results). Both build the launch from the kernel's
// launch manifest (the JSON `ptxgen manifest` prints), as a host would.
namespace ptxgen::sim {

// One element outside its bound.
struct Mismatch {
  int64_t row = 0, col = 0;
  double got = 0, want = 0, bound = 0;  // bound 0: the bits must be equal
};

// What comparing one output tensor with its reference found.
struct TensorReport {
  static constexpr size_t kFirst = 8;  // mismatches kept
  std::string name;
  int64_t rows = 0, cols = 0;
  long checked = 0;      // elements compared (those the reference defines)
  double max_abs = 0;    // max |got - want|
  double max_rel = 0;    // max |got - want| / |want| over the elements whose reference is not 0
  double worst = 0;      // max |got - want| / bound: <= 1 passes (infinity for unequal raw bits)
  double bound = 0;      // the bound at the element `worst` was found at
  std::vector<Mismatch> first;  // the first elements outside their bound, in row-major order
  // rows x cols, row-major: the values the kernel stored and the reference's (NaN where the
  // reference defines nothing); filled for tensors of at most kKeep elements.
  static constexpr int64_t kKeep = int64_t{1} << 22;
  std::vector<double> got, want;
  std::string note;      // what else was wrong (a quantized D's factor padding overwritten)
  // Within its bound everywhere (NaN compares false: a NaN error fails) and nothing else wrong.
  bool passed() const { return worst <= 1 && note.empty(); }
};

// Input values given for a run in place of random ones (ptxgen simulate --inputs): a tensor's
// logical values, row-major over its dims (the manifest's "dims": A m x k, B k x n, a bias 1 x n or
// m x 1, a factor tensor rows x factors; a program's global rows x cols) at the run's sizes. `ndim`
// 1: a vector, for a tensor of one row or one column. Each value is rounded to the nearest of the
// tensor's type; one beyond its finite range (or not finite, or not an integer of an integer type,
// not a power of two for ue8m0) is an error, as is a shape other than the run's and a name that
// is no input of the kernel.
struct InputArray {
  int ndim = 2;
  int64_t rows = 0, cols = 0;
  std::vector<double> v;
};
using Inputs = std::map<std::string, InputArray>;
// The value of an IEEE binary16 encoding, by the simulator's own decoder (ksim::num, PTX ISA 9.1
// §5.2), so that a reader of host files (the CLI's .npy reader) needs no second one.
double f16_value(uint16_t bits);

struct GemmResult {
  std::string error;   // the simulator's Error, if it failed
  long checked = 0;    // elements of D compared
  double max_err = 0;  // max |D - reference|
  double worst = 0;    // max |D - reference| / bound (<= 1 passes)
  std::string where;   // the element at `worst`
  uint64_t ctas = 0;
  ksim::Stats stats;
  std::vector<TensorReport> tensors;  // D, then SFD (a quantized D's factors) and amax where the kernel has them
};

// Problem sizes for a kernel with the manifest's tile and `stages` pipeline stages: two tiles in M
// and N with ragged edges (odd n: the one-element stores) and two K blocks, the second partial; then
// one tile, short of the edge in M and N (even n: the paired stores), with more K blocks than
// stages (the ring wraps, every barrier changes phase; k's tail partial).
// D reached through a tensor map (the TMA epilogue) needs rows 16 bytes apart: n is then rounded
// down to a multiple of 16 bytes of D (still short of the tile's edge).
std::vector<std::array<int64_t, 3>> gemm_sizes(const nlohmann::json& manifest, int stages);
// Elements of D in 16 bytes when a tensor map reaches D, else 1: n must be a multiple of it.
int64_t d_row_unit(const nlohmann::json& manifest);

// `multiprocessors`: a persistent kernel's grid is the launcher's, min(tiles, multiprocessors /
// cta_group) * cta_group CTAs, each walking several tiles when there are more; 0: one CTA (pair) per
// tile. A data-parallel kernel ignores it. `n` is D's width: a gated kernel's (swiglu, geglu; the
// manifest's derived size d) B then has 2 n rows, the gate's and up's.
// Grouped GEMM (docs/spec.md, "Grouped GEMM"): what run_gemm gives the kernel for m, the spec's
// count of groups up to 4. Masked layout (m the capacity): masked_m, covering each case of the
// definition in turn (past the capacity, counting as m; empty; ragged, tile.m / 2 + 1 rows: a tile
// partly valid, the next wholly past; negative, counting as 0). Contiguous layout (m the rows of
// A): the groups' ends, segments of tile.m / 2 + 1 rows, none, 2 tile.m - 3 and 3, each starting at
// the previous end rounded up to align, cut at m. One group of m rows for a kernel of one GEMM.
std::vector<int64_t> group_sizes(const nlohmann::json& manifest, int64_t m);
// Row r of D (of all groups' planes in the masked layout): its group (whose plane of B it
// multiplies), the row of A it is the product of, and what the kernel must do there: 1 compute it,
// 2 write it once with an unspecified value (the rest of a tile that holds valid rows), 0 not touch it.
struct GroupRow {
  int64_t g = 0, a = 0;
  int want = 1;
};
GroupRow group_row(const nlohmann::json& manifest, const std::vector<int64_t>& sizes, int64_t m, int64_t r);

GemmResult run_gemm(const ksim::Kernel& k, const nlohmann::json& manifest, int64_t m, int64_t n, int64_t kk, unsigned seed,
                    const ksim::Options& o = {}, int multiprocessors = 0, const Inputs& inputs = {});

struct ProgramResult {
  std::string error;   // the simulator's Error, if it failed
  long checked = 0;    // stored elements compared (those the evaluation defines)
  long outputs = 0;    // elements of the globals the kernel stores
  double max_err = 0;  // max |got - reference| of the float outputs
  double worst = 0;    // max |got - reference| / bound (<= 1 passes; raw outputs must be equal: 0 or infinity)
  std::string where;
  ksim::Stats stats;
  std::vector<TensorReport> tensors;  // every global the kernel stores, in the spec's order
};

// `sizes`: the run's problem sizes where they differ from the spec's (the kernel takes them as
// parameters; a grid launches one CTA per tile of them, and tensors of run-time extents follow).
ProgramResult run_program(const ksim::Kernel& k, const ptxgen::spec::Program& p, const nlohmann::json& manifest,
                          unsigned seed, const ksim::Options& o = {}, const std::map<std::string, int64_t>& sizes = {},
                          const Inputs& inputs = {});

// The sizes a program's grid and K loop step through, for a run around its tiles: the grid's m and
// n (where some op's position steps along them) at `m` and `n`, and the K loop's size at `kblocks`
// blocks less `kpart` elements. Sizes nothing steps along are left out (they keep the spec's
// value); so is everything of a program without a grid or a K loop.
struct ProgramSteps {
  int64_t tile_m = 1, tile_n = 1, block = 0;
  std::string m, n, k;  // the size names, "" where nothing steps
  std::map<std::string, int64_t> sizes(int64_t m_size, int64_t n_size, int64_t kblocks, int64_t kpart) const;
};
ProgramSteps program_steps(const ptxgen::spec::Program& p);

}  // namespace ptxgen::sim
