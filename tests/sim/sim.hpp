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
// Threads run one at a time in a fixed order and switch only where they block (a failed
// mbarrier.try_wait, bar.sync, barrier.cluster.wait, a warp collective not yet reached by the whole
// warp, a cp.async.bulk.wait_group, a wgmma.wait_group, a setmaxnreg.inc). Asynchronous operations
// (TMA, tcgen05.mma/cp/commit, tcgen05.ld/st until their wait, wgmma.mma_async) take effect as late
// as possible: only when no thread can run, oldest first. A kernel that reads what it did not wait for therefore reads stale data, and the
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
#include <stdexcept>
#include <string>
#include <vector>

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

 private:
  std::map<uint64_t, std::vector<uint8_t>> bufs_;
  uint64_t next_ = 0x100000000ull;
};

struct Options {
  uint64_t max_instructions = 400'000'000;  // over the whole grid: a kernel that does not end is an Error
  bool race_checks = true;                  // asynchronous reads/writes against thread accesses (see sim.hpp top)
};

struct Stats {
  uint64_t instructions = 0, mma = 0, tma_boxes = 0, tma_stores = 0, ctas = 0;
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
