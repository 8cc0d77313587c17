// ptxgen-launch: runs a kernel ptxgen built, from its launch manifest, and checks and times it.
//
//   ptxgen-launch MANIFEST CUBIN [--m M --n N --k K] [--iters N] [--seed S] [--tolerance T]
//
// It reads the manifest (entry, parameters, grid/block/cluster, dynamic shared memory, tensor
// maps), fills fresh random inputs, poisons D and a guard region after it, launches with
// cuLaunchKernelEx, checks every element against a reference (float64 on the CPU for small
// problems; cuBLAS for large ones where cuBLAS has the types, else a float64 GPU kernel), and
// times the kernel and cuBLAS with CUDA events (median of --iters after warm-up). One JSON line on
// stdout; exit 0 when the result is within tolerance, 1 when it is not, 2 on bad input, 3 on a
// CUDA error (its name printed), 4 on a timeout (a kernel that does not finish in 20 s).
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using nlohmann::json;

namespace {

[[noreturn]] void die(int code, const std::string& msg) {
  std::fprintf(stderr, "ptxgen-launch: %s\n", msg.c_str());
  std::exit(code);
}

void check(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return;
  const char* name = "?";
  cuGetErrorName(r, &name);
  die(3, std::string(what) + " failed: " + name);
}
void check(cudaError_t r, const char* what) {
  if (r == cudaSuccess) return;
  die(3, std::string(what) + " failed: " + cudaGetErrorName(r));
}
void check(cublasStatus_t r, const char* what) {
  if (r == CUBLAS_STATUS_SUCCESS) return;
  die(3, std::string(what) + " failed: cuBLAS status " + std::to_string(static_cast<int>(r)));
}
#define CK(x) check((x), #x)

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) die(2, "cannot open " + path);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// ---- element types --------------------------------------------------------------------------
enum class T { f16, bf16, tf32, f32, e4m3, e5m2, s8, u8, s32 };
T parse_type(const std::string& s) {
  if (s == "f16") return T::f16;
  if (s == "bf16") return T::bf16;
  if (s == "tf32") return T::tf32;
  if (s == "f32") return T::f32;
  if (s == "e4m3") return T::e4m3;
  if (s == "e5m2") return T::e5m2;
  if (s == "s8") return T::s8;
  if (s == "u8") return T::u8;
  if (s == "s32") return T::s32;
  die(2, "the launcher does not handle element type " + s);
}
size_t bytes_of(T t) {
  switch (t) {
    case T::f16:
    case T::bf16: return 2;
    case T::e4m3:
    case T::e5m2:
    case T::s8:
    case T::u8: return 1;
    default: return 4;
  }
}
bool is_int(T t) { return t == T::s8 || t == T::u8 || t == T::s32; }

// Writes the element nearest `v` at p[i] and returns its exact value.
double store(T t, void* p, size_t i, double v) {
  switch (t) {
    case T::f16: {
      __half h = __double2half(v);
      static_cast<__half*>(p)[i] = h;
      return __half2float(h);
    }
    case T::bf16: {
      __nv_bfloat16 h = __double2bfloat16(v);
      static_cast<__nv_bfloat16*>(p)[i] = h;
      return __bfloat162float(h);
    }
    case T::tf32: {  // keep the 10 mantissa bits tf32 has: the MMA ignores the rest
      float f = static_cast<float>(v);
      uint32_t u;
      std::memcpy(&u, &f, 4);
      u &= 0xFFFFE000u;
      std::memcpy(&f, &u, 4);
      static_cast<float*>(p)[i] = f;
      return f;
    }
    case T::f32: static_cast<float*>(p)[i] = static_cast<float>(v); return static_cast<float>(v);
    case T::e4m3: {
      __nv_fp8_e4m3 h(static_cast<float>(v));
      static_cast<__nv_fp8_e4m3*>(p)[i] = h;
      return static_cast<float>(h);
    }
    case T::e5m2: {
      __nv_fp8_e5m2 h(static_cast<float>(v));
      static_cast<__nv_fp8_e5m2*>(p)[i] = h;
      return static_cast<float>(h);
    }
    case T::s8: static_cast<int8_t*>(p)[i] = static_cast<int8_t>(v); return static_cast<int8_t>(v);
    case T::u8: static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(v); return static_cast<uint8_t>(v);
    case T::s32: static_cast<int32_t*>(p)[i] = static_cast<int32_t>(v); return static_cast<int32_t>(v);
  }
  return 0;
}

double load(T t, const void* p, size_t i) {
  switch (t) {
    case T::f16: return __half2float(static_cast<const __half*>(p)[i]);
    case T::bf16: return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
    case T::tf32:
    case T::f32: return static_cast<const float*>(p)[i];
    case T::e4m3: return static_cast<float>(static_cast<const __nv_fp8_e4m3*>(p)[i]);
    case T::e5m2: return static_cast<float>(static_cast<const __nv_fp8_e5m2*>(p)[i]);
    case T::s8: return static_cast<const int8_t*>(p)[i];
    case T::u8: return static_cast<const uint8_t*>(p)[i];
    case T::s32: return static_cast<const int32_t*>(p)[i];
  }
  return 0;
}

// A matrix as the manifest describes it: logical rows x cols, `contiguous` names which of the two
// is contiguous, `ld` the elements between consecutive non-contiguous indices.
struct Matrix {
  T type;
  int64_t rows, cols;
  bool row_major;  // cols contiguous
  int64_t ld;
  size_t elements() const { return static_cast<size_t>(row_major ? rows * ld : cols * ld); }
  size_t index(int64_t r, int64_t c) const {
    return static_cast<size_t>(row_major ? r * ld + c : c * ld + r);
  }
};

Matrix matrix(const json& t, int64_t rows, int64_t cols) {
  Matrix m;
  m.type = parse_type(t.at("dtype"));
  m.rows = rows;
  m.cols = cols;
  const std::string contiguous = t.at("contiguous");
  const std::vector<std::string> dims = t.at("dims");
  m.row_major = contiguous == dims.at(1);
  m.ld = m.row_major ? cols : rows;
  return m;
}

CUtensorMapDataType cu_type(const std::string& s) {
  if (s == "CU_TENSOR_MAP_DATA_TYPE_FLOAT16") return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  if (s == "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16") return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  if (s == "CU_TENSOR_MAP_DATA_TYPE_TFLOAT32") return CU_TENSOR_MAP_DATA_TYPE_TFLOAT32;
  if (s == "CU_TENSOR_MAP_DATA_TYPE_FLOAT32") return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  if (s == "CU_TENSOR_MAP_DATA_TYPE_UINT8") return CU_TENSOR_MAP_DATA_TYPE_UINT8;
  die(2, "the launcher does not handle tensor-map type " + s);
}
CUtensorMapSwizzle cu_swizzle(const std::string& s) {
  if (s == "CU_TENSOR_MAP_SWIZZLE_NONE") return CU_TENSOR_MAP_SWIZZLE_NONE;
  if (s == "CU_TENSOR_MAP_SWIZZLE_32B") return CU_TENSOR_MAP_SWIZZLE_32B;
  if (s == "CU_TENSOR_MAP_SWIZZLE_64B") return CU_TENSOR_MAP_SWIZZLE_64B;
  if (s == "CU_TENSOR_MAP_SWIZZLE_128B") return CU_TENSOR_MAP_SWIZZLE_128B;
  die(2, "the launcher does not handle swizzle " + s);
}

// A float64 reference on the GPU, for types cuBLAS's GemmEx does not take.
__global__ void ref_gemm(const double* a, const double* b, double* d, int64_t m, int64_t n, int64_t k) {
  __shared__ double as[16][17], bs[16][17];
  const int64_t row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
  double acc = 0;
  for (int64_t k0 = 0; k0 < k; k0 += 16) {
    as[threadIdx.y][threadIdx.x] = (row < m && k0 + threadIdx.x < k) ? a[row * k + k0 + threadIdx.x] : 0;
    bs[threadIdx.y][threadIdx.x] = (col < n && k0 + threadIdx.y < k) ? b[(k0 + threadIdx.y) * n + col] : 0;
    __syncthreads();
    for (int j = 0; j < 16; ++j) acc += as[threadIdx.y][j] * bs[j][threadIdx.x];
    __syncthreads();
  }
  if (row < m && col < n) d[row * n + col] = acc;
}

double median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void sync_with_timeout(CUstream s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (;;) {
    CUresult r = cuStreamQuery(s);
    if (r == CUDA_SUCCESS) return;
    if (r != CUDA_ERROR_NOT_READY) check(r, "kernel execution");
    if (std::chrono::steady_clock::now() > deadline) die(4, "the kernel did not finish within 20 s (a hang)");
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) die(2, "usage: ptxgen-launch MANIFEST CUBIN [--m M --n N --k K] [--iters N] [--seed S] [--tolerance T]");
  const json man = json::parse(slurp(argv[1]), nullptr, false);
  if (man.is_discarded()) die(2, std::string("cannot parse ") + argv[1]);
  const std::string cubin = slurp(argv[2]);
  int64_t m = man.at("problem").at("m"), n = man.at("problem").at("n"), k = man.at("problem").at("k");
  int iters = 30;
  unsigned seed = 1;
  double tolerance = -1;
  for (int i = 3; i + 1 < argc; i += 2) {
    const std::string f = argv[i];
    const long long v = std::atoll(argv[i + 1]);
    if (f == "--m") m = v;
    else if (f == "--n") n = v;
    else if (f == "--k") k = v;
    else if (f == "--iters") iters = static_cast<int>(v);
    else if (f == "--seed") seed = static_cast<unsigned>(v);
    else if (f == "--tolerance") tolerance = std::atof(argv[i + 1]);
    else die(2, "unknown option " + f);
  }
  if (m < 1 || n < 1 || k < 1 || iters < 1) die(2, "sizes and --iters must be positive");

  CK(cuInit(0));
  CUdevice dev;
  CK(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CK(cuCtxSetCurrent(ctx));
  CUmodule mod;
  CK(cuModuleLoadData(&mod, cubin.data()));
  CUfunction fn;
  const std::string entry = man.at("entry");
  if (cuModuleGetFunction(&fn, mod, entry.c_str()) != CUDA_SUCCESS) die(2, "the cubin has no entry " + entry);
  const int smem = man.at("dynamic_shared_memory_bytes");
  CK(cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem));

  const json& ts = man.at("tensors");
  Matrix A = matrix(ts.at("A"), m, k), B = matrix(ts.at("B"), k, n), D = matrix(ts.at("D"), m, n);
  // Leading dimensions: the manifest's for its own problem; for other sizes, rows padded to 16
  // bytes (the manifest's default).
  const bool same = m == int64_t(man.at("problem").at("m")) && n == int64_t(man.at("problem").at("n")) &&
                    k == int64_t(man.at("problem").at("k"));
  for (auto [x, key] : {std::pair<Matrix*, const char*>{&A, "A"}, {&B, "B"}}) {
    const int64_t contiguous = x->row_major ? x->cols : x->rows;
    const int64_t eb = static_cast<int64_t>(bytes_of(x->type));
    x->ld = same ? int64_t(ts.at(key).at("leading_dimension")) : (contiguous * eb + 15) / 16 * 16 / eb;
  }
  const size_t a_bytes = A.elements() * bytes_of(A.type), b_bytes = B.elements() * bytes_of(B.type);
  const size_t d_bytes = D.elements() * bytes_of(D.type), guard = 1 << 16;
  size_t free_b = 0, total_b = 0;
  CK(cuMemGetInfo(&free_b, &total_b));
  if (a_bytes + b_bytes + 2 * (d_bytes + guard) + 8 * (size_t(m) * k + size_t(k) * n + size_t(m) * n) > free_b)
    die(2, "the problem does not fit in device memory (" + std::to_string(free_b >> 20) + " MiB free)");

  // Fresh random inputs: floats uniform in [-1, 1) rounded to the type, integers in [-4, 4].
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uf(-1.0, 1.0);
  std::uniform_int_distribution<int> ui(-4, 4), uu(0, 8);
  std::vector<char> ha(a_bytes, 0), hb(b_bytes, 0);
  std::vector<double> ra(size_t(m) * k), rb(size_t(k) * n);  // exact values, row-major A[m][k], B[k][n]
  auto fill = [&](Matrix& x, std::vector<char>& h, std::vector<double>& r, bool a_side) {
    for (int64_t i = 0; i < x.rows; ++i)
      for (int64_t j = 0; j < x.cols; ++j) {
        const double v = x.type == T::s8 ? ui(rng) : x.type == T::u8 ? uu(rng) : uf(rng);
        const double e = store(x.type, h.data(), x.index(i, j), v);
        r[a_side ? size_t(i) * k + j : size_t(i) * n + j] = e;
      }
  };
  fill(A, ha, ra, true);
  fill(B, hb, rb, false);

  CUdeviceptr da, db, dd;
  CK(cuMemAlloc(&da, a_bytes));
  CK(cuMemAlloc(&db, b_bytes));
  CK(cuMemAlloc(&dd, d_bytes + guard));
  CK(cuMemcpyHtoD(da, ha.data(), a_bytes));
  CK(cuMemcpyHtoD(db, hb.data(), b_bytes));
  CK(cuMemsetD8(dd, 0xFE, d_bytes + guard));  // poison: an improbable value in every type

  // Tensor maps exactly as the manifest gives them, over this problem's sizes.
  std::vector<CUtensorMap> maps;
  for (const json& t : man.at("tensor_maps")) {
    const bool is_a = t.at("tensor") == "A";
    const Matrix& x = is_a ? A : B;
    const bool k_contiguous = is_a ? x.row_major : !x.row_major;
    cuuint64_t dims[2], strides[1];
    dims[0] = static_cast<cuuint64_t>(k_contiguous ? k : (is_a ? m : n));
    dims[1] = static_cast<cuuint64_t>(k_contiguous ? (is_a ? m : n) : k);
    strides[0] = static_cast<cuuint64_t>(x.ld) * bytes_of(x.type);
    cuuint32_t box[2] = {t.at("box_dims")[0], t.at("box_dims")[1]}, es[2] = {1, 1};
    CUtensorMap map;
    CK(cuTensorMapEncodeTiled(&map, cu_type(t.at("data_type")), 2, reinterpret_cast<void*>(is_a ? da : db), dims,
                              strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE, cu_swizzle(t.at("swizzle")),
                              CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
    maps.push_back(map);
  }
  if (maps.size() != 2) die(2, "the manifest must have two tensor maps");
  uint32_t um = static_cast<uint32_t>(m), un = static_cast<uint32_t>(n), uk = static_cast<uint32_t>(k);
  // The parameters in the manifest's order: D's address, the tensor maps, the sizes.
  std::vector<void*> args;
  size_t next_map = 0;
  for (const json& prm : man.at("params")) {
    const std::string kind = prm.at("kind"), name = prm.at("name");
    if (kind == "tensor_map") args.push_back(&maps.at(next_map++));
    else if (kind == "global_pointer") args.push_back(&dd);
    else if (name == "m") args.push_back(&um);
    else if (name == "n") args.push_back(&un);
    else if (name == "k") args.push_back(&uk);
    else die(2, "the manifest names a parameter the launcher does not know: " + name);
  }

  // Grid for this problem, by the manifest's rule: x walks N tiles (cta_group CTAs each), y walks
  // M tiles, both rounded up to whole clusters.
  const int cx = man.at("cluster")[0], cy = man.at("cluster")[1], cz = man.at("cluster")[2];
  const int64_t tm = man.at("tile").at("m"), tn = man.at("tile").at("n"), pairs = man.at("cta_group");
  auto up = [](int64_t v, int64_t a) { return (v + a - 1) / a * a; };
  const int64_t gx = up(std::max<int64_t>(1, (n + tn - 1) / tn) * pairs, cx), gy = up((m + tm - 1) / tm, cy);
  CUlaunchConfig cfg{};
  cfg.gridDimX = static_cast<unsigned>(gx);
  cfg.gridDimY = static_cast<unsigned>(gy);
  cfg.gridDimZ = static_cast<unsigned>(cz);
  cfg.blockDimX = man.at("block")[0];
  cfg.blockDimY = 1;
  cfg.blockDimZ = 1;
  cfg.sharedMemBytes = static_cast<unsigned>(smem);
  CUstream stream;
  CK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  cfg.hStream = stream;
  CUlaunchAttribute attr{};
  attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attr.value.clusterDim.x = static_cast<unsigned>(cx);
  attr.value.clusterDim.y = static_cast<unsigned>(cy);
  attr.value.clusterDim.z = static_cast<unsigned>(cz);
  cfg.attrs = &attr;
  cfg.numAttrs = cx * cy * cz > 1 ? 1 : 0;

  CK(cuLaunchKernelEx(&cfg, fn, args.data(), nullptr));
  sync_with_timeout(stream);

  std::vector<char> hd(d_bytes + guard);
  CK(cuMemcpyDtoH(hd.data(), dd, d_bytes + guard));
  size_t guard_hit = 0;
  for (size_t i = d_bytes; i < d_bytes + guard; ++i) guard_hit += static_cast<unsigned char>(hd[i]) != 0xFE;

  // Reference.
  std::vector<double> ref(size_t(m) * n, 0.0);
  std::string ref_kind;
  const double work = double(m) * double(n) * double(k);
  cublasHandle_t blas;
  CK(cublasCreate(&blas));
  CK(cublasSetStream(blas, stream));
  const bool blas_types = (A.type == B.type) && (A.type == T::bf16 || A.type == T::f16 || A.type == T::tf32 || A.type == T::s8);
  // cuBLAS is column-major: row-major D (M x N) is column-major D^T = B^T A^T.
  const cublasOperation_t opA = A.row_major ? CUBLAS_OP_N : CUBLAS_OP_T;
  const cublasOperation_t opB = B.row_major ? CUBLAS_OP_N : CUBLAS_OP_T;
  auto cuda_type = [](T t) {
    switch (t) {
      case T::bf16: return CUDA_R_16BF;
      case T::f16: return CUDA_R_16F;
      case T::s8: return CUDA_R_8I;
      case T::s32: return CUDA_R_32I;
      default: return CUDA_R_32F;
    }
  };
  if (work <= double(1u << 30)) {
    ref_kind = "float64 CPU";
    for (int64_t i = 0; i < m; ++i)
      for (int64_t kk = 0; kk < k; ++kk) {
        const double a = ra[size_t(i) * k + kk];
        if (a == 0) continue;
        const double* brow = &rb[size_t(kk) * n];
        double* drow = &ref[size_t(i) * n];
        for (int64_t j = 0; j < n; ++j) drow[j] += a * brow[j];
      }
  } else if (blas_types) {
    ref_kind = A.type == T::s8 ? "cuBLAS s32" : "cuBLAS f32";
    const bool integer = A.type == T::s8;
    CUdeviceptr dr;
    CK(cuMemAlloc(&dr, size_t(m) * n * 4));
    const float one = 1, zero = 0;
    const int32_t ione = 1, izero = 0;
    CK(cublasGemmEx(blas, opB, opA, static_cast<int>(n), static_cast<int>(m), static_cast<int>(k),
                    integer ? static_cast<const void*>(&ione) : &one, reinterpret_cast<void*>(db), cuda_type(B.type),
                    static_cast<int>(B.ld), reinterpret_cast<void*>(da), cuda_type(A.type), static_cast<int>(A.ld),
                    integer ? static_cast<const void*>(&izero) : &zero, reinterpret_cast<void*>(dr),
                    integer ? CUDA_R_32I : CUDA_R_32F, static_cast<int>(n),
                    integer ? CUBLAS_COMPUTE_32I : CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    sync_with_timeout(stream);
    std::vector<float> hr(size_t(m) * n);
    CK(cuMemcpyDtoH(hr.data(), dr, hr.size() * 4));
    for (size_t i = 0; i < hr.size(); ++i)
      ref[i] = integer ? static_cast<double>(reinterpret_cast<int32_t*>(hr.data())[i]) : hr[i];
    CK(cuMemFree(dr));
  } else {
    ref_kind = "float64 GPU";
    double *ga, *gb, *gd;
    CK(cudaMalloc(&ga, ra.size() * 8));
    CK(cudaMalloc(&gb, rb.size() * 8));
    CK(cudaMalloc(&gd, ref.size() * 8));
    CK(cudaMemcpy(ga, ra.data(), ra.size() * 8, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(gb, rb.data(), rb.size() * 8, cudaMemcpyHostToDevice));
    ref_gemm<<<dim3(unsigned((n + 15) / 16), unsigned((m + 15) / 16)), dim3(16, 16)>>>(ga, gb, gd, m, n, k);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(ref.data(), gd, ref.size() * 8, cudaMemcpyDeviceToHost));
    cudaFree(ga);
    cudaFree(gb);
    cudaFree(gd);
  }

  // Compare: relative Frobenius error, maximum error, unwritten and non-finite elements.
  double num = 0, den = 0, max_abs = 0;
  size_t unwritten = 0, nonfinite = 0;
  std::vector<unsigned char> poison(bytes_of(D.type), 0xFE);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const size_t idx = D.index(i, j);
      if (std::memcmp(&hd[idx * bytes_of(D.type)], poison.data(), poison.size()) == 0) ++unwritten;
      const double v = load(D.type, hd.data(), idx), r = ref[size_t(i) * n + j];
      if (!std::isfinite(v)) {
        ++nonfinite;
        continue;
      }
      num += (v - r) * (v - r);
      den += r * r;
      max_abs = std::max(max_abs, std::fabs(v - r));
    }
  const double rel = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  if (tolerance < 0) tolerance = is_int(D.type) && is_int(A.type) ? 0.0 : 1e-2;
  const bool ok = unwritten == 0 && nonfinite == 0 && guard_hit == 0 && rel <= tolerance;

  // Timing: warm-up, then the median of `iters` launches, each between two events.
  CUevent e0, e1;
  CK(cuEventCreate(&e0, CU_EVENT_DEFAULT));
  CK(cuEventCreate(&e1, CU_EVENT_DEFAULT));
  auto time_it = [&](auto&& launch) {
    for (int i = 0; i < 3; ++i) launch();
    sync_with_timeout(stream);
    std::vector<float> ms;
    for (int i = 0; i < iters; ++i) {
      CK(cuEventRecord(e0, stream));
      launch();
      CK(cuEventRecord(e1, stream));
      sync_with_timeout(stream);
      float t = 0;
      CK(cuEventElapsedTime(&t, e0, e1));
      ms.push_back(t);
    }
    return median(ms);
  };
  const double ms = time_it([&] { CK(cuLaunchKernelEx(&cfg, fn, args.data(), nullptr)); });
  // cuBLAS on the same inputs, writing its standard output type for them (16-bit inputs: the same
  // 16-bit type; tf32: f32; s8: s32): the comparison is the same GEMM at cuBLAS's own epilogue.
  double blas_ms = -1;
  if (blas_types) {
    const bool integer = A.type == T::s8;
    const T out_t = integer ? T::s32 : (A.type == T::tf32 ? T::f32 : A.type);
    const bool f16acc = man.at("accumulator") == "f16";
    CUdeviceptr dr;
    CK(cuMemAlloc(&dr, size_t(m) * n * bytes_of(out_t)));
    const float one = 1, zero = 0;
    const __half hone = __float2half(1.f), hzero = __float2half(0.f);
    const int32_t ione = 1, izero = 0;
    const void* alpha = integer ? static_cast<const void*>(&ione) : f16acc ? static_cast<const void*>(&hone) : &one;
    const void* beta = integer ? static_cast<const void*>(&izero) : f16acc ? static_cast<const void*>(&hzero) : &zero;
    const cublasComputeType_t ct = integer             ? CUBLAS_COMPUTE_32I
                                   : f16acc            ? CUBLAS_COMPUTE_16F
                                   : A.type == T::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                       : CUBLAS_COMPUTE_32F;
    auto call = [&] {
      return cublasGemmEx(blas, opB, opA, static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), alpha,
                          reinterpret_cast<void*>(db), cuda_type(B.type), static_cast<int>(B.ld),
                          reinterpret_cast<void*>(da), cuda_type(A.type), static_cast<int>(A.ld), beta,
                          reinterpret_cast<void*>(dr), cuda_type(out_t), static_cast<int>(n), ct, CUBLAS_GEMM_DEFAULT);
    };
    if (call() == CUBLAS_STATUS_SUCCESS) blas_ms = time_it([&] { CK(call()); });
    sync_with_timeout(stream);
    CK(cuMemFree(dr));
  }
  const double flops = 2.0 * work;
  json out;
  out["entry"] = entry;
  out["m"] = m;
  out["n"] = n;
  out["k"] = k;
  out["reference"] = ref_kind;
  out["rel_err"] = rel;
  out["max_abs_err"] = max_abs;
  out["tolerance"] = tolerance;
  out["unwritten"] = unwritten;
  out["nonfinite"] = nonfinite;
  out["guard_overwritten"] = guard_hit;
  out["ms"] = ms;
  out["tflops"] = flops / (ms * 1e-3) / 1e12;
  if (blas_ms > 0) {
    out["cublas_ms"] = blas_ms;
    out["cublas_tflops"] = flops / (blas_ms * 1e-3) / 1e12;
  }
  out["ok"] = ok;
  std::printf("%s\n", out.dump().c_str());
  cublasDestroy(blas);
  return ok ? 0 : 1;
}
