// A stand-in libcuda.so.1 for tests/header/kernels_test.cpp: the driver calls a launch header
// makes, answered from a few settings and recorded, so that the path from a launch function to
// cuLaunchKernelEx (device choice, module cache, tensor maps, parameter buffer, grid, cluster) is
// tested without a GPU. Contexts are numbers (1, 2, ...); a stream belongs to context s >> 8.
#include <cuda.h>

#include <cstdio>
#include <cstring>

namespace {

struct State {
  CUcontext current = nullptr;
  int cc = 90;
  int optin = 232448;
  int multiprocessors = 132;
  int clusters = 0;  // cuOccupancyMaxActiveClusters: 0 answers multiprocessors / cluster size
  int non_portable = 0;  // functions opted in to clusters of more than 8 CTAs
  int modules_loaded = 0;
  int encodes = 0;
  CUtensorMapDataType type[64] = {};
  cuuint64_t dims[64][3] = {}, strides[64] = {}, plane_strides[64] = {};
  cuuint32_t box[64][3] = {};
  cuuint32_t rank[64] = {};
  CUtensorMapSwizzle swizzle[64] = {};
  void* address[64] = {};
  int launches = 0;
  CUlaunchConfig config = {};
  CUlaunchAttribute attr = {};
  int nparams = 0;  // how many kernelParams entries to record (the test says)
  void* params[64] = {};
  CUfunction function = nullptr;
  char entry[128] = "";
};
State state;

}  // namespace

extern "C" {

// The settings and the record, for the test (found with dlsym).
__attribute__((visibility("default"))) void* fake_cuda_state() { return &state; }
__attribute__((visibility("default"))) void fake_cuda_set(CUcontext current, int cc, int optin) {
  state.current = current;
  state.cc = cc;
  state.optin = optin;
}
__attribute__((visibility("default"))) void fake_cuda_set_clusters(int n) { state.clusters = n; }
__attribute__((visibility("default"))) int fake_cuda_non_portable() { return state.non_portable; }
__attribute__((visibility("default"))) int fake_cuda_modules_loaded() { return state.modules_loaded; }
__attribute__((visibility("default"))) int fake_cuda_launches() { return state.launches; }
__attribute__((visibility("default"))) const CUlaunchConfig* fake_cuda_config() { return &state.config; }
__attribute__((visibility("default"))) void fake_cuda_expect_params(int n) { state.nparams = n; }
__attribute__((visibility("default"))) void** fake_cuda_params() { return state.params; }
__attribute__((visibility("default"))) const char* fake_cuda_entry() { return state.entry; }
__attribute__((visibility("default"))) int fake_cuda_encodes() { return state.encodes; }
// The i-th tensor map encoded: its address, dims, stride, box, type and swizzle.
__attribute__((visibility("default"))) void fake_cuda_encode(int i, void** address, cuuint64_t* dims,
                                                             cuuint64_t* stride, cuuint32_t* box, int* type,
                                                             int* swizzle) {
  *address = state.address[i];
  dims[0] = state.dims[i][0], dims[1] = state.dims[i][1];
  *stride = state.strides[i];
  box[0] = state.box[i][0], box[1] = state.box[i][1];
  *type = state.type[i];
  *swizzle = state.swizzle[i];
}
// Its rank, and the third dimension of a rank-3 map (its planes, their stride, the box's depth).
__attribute__((visibility("default"))) void fake_cuda_encode3(int i, int* rank, cuuint64_t* planes,
                                                              cuuint64_t* plane_stride, cuuint32_t* box_planes) {
  *rank = static_cast<int>(state.rank[i]);
  *planes = state.dims[i][2];
  *plane_stride = state.plane_strides[i];
  *box_planes = state.box[i][2];
}

CUresult CUDAAPI cuGetErrorName(CUresult error, const char** pStr) {
  *pStr = error == CUDA_ERROR_INVALID_VALUE ? "CUDA_ERROR_INVALID_VALUE" : "CUDA_ERROR_FAKE";
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuGetErrorString(CUresult, const char** pStr) {
  *pStr = "the fake driver's words";
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuCtxGetCurrent(CUcontext* pctx) {
  *pctx = state.current;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuCtxGetId(CUcontext ctx, unsigned long long* id) {
  *id = reinterpret_cast<unsigned long long>(ctx) * 1000;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuCtxGetDevice(CUdevice* device) {
  *device = 0;
  return state.current ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}
CUresult CUDAAPI cuDeviceGetAttribute(int* pi, CUdevice_attribute attrib, CUdevice) {
  if (attrib == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
    *pi = state.cc / 10;
  else if (attrib == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
    *pi = state.cc % 10;
  else if (attrib == CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
    *pi = state.optin;
  else if (attrib == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
    *pi = state.multiprocessors;
  else
    return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGetName(char* name, int len, CUdevice) {
  std::snprintf(name, static_cast<size_t>(len), "Fake GPU");
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuModuleLoadData(CUmodule* module, const void* image) {
  if (std::memcmp(image,
                  "\x7f"
                  "ELF",
                  4) != 0)
    return CUDA_ERROR_INVALID_IMAGE;
  ++state.modules_loaded;
  *module = reinterpret_cast<CUmodule>(static_cast<size_t>(0x1000 + state.modules_loaded));
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuModuleGetFunction(CUfunction* hfunc, CUmodule, const char* name) {
  std::snprintf(state.entry, sizeof state.entry, "%s", name);
  *hfunc = reinterpret_cast<CUfunction>(static_cast<size_t>(0x2000 + state.modules_loaded));
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuModuleUnload(CUmodule) { return CUDA_SUCCESS; }
CUresult CUDAAPI cuOccupancyMaxActiveClusters(int* n, CUfunction, const CUlaunchConfig* config) {
  if (!config || config->numAttrs != 1 || config->attrs[0].id != CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) return CUDA_ERROR_INVALID_VALUE;
  const auto& c = config->attrs[0].value.clusterDim;
  *n = state.clusters ? state.clusters : state.multiprocessors / static_cast<int>(c.x * c.y * c.z);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuFuncSetAttribute(CUfunction, CUfunction_attribute attrib, int value) {
  if (attrib == CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED && value == 1) {
    ++state.non_portable;
    return CUDA_SUCCESS;
  }
  return attrib == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES && value <= state.optin ? CUDA_SUCCESS
                                                                                           : CUDA_ERROR_INVALID_VALUE;
}
CUresult CUDAAPI cuStreamGetCtx(CUstream hStream, CUcontext* pctx) {
  *pctx = reinterpret_cast<CUcontext>(reinterpret_cast<size_t>(hStream) >> 8);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuTensorMapEncodeTiled(CUtensorMap* tensorMap, CUtensorMapDataType tensorDataType,
                                        cuuint32_t tensorRank, void* globalAddress, const cuuint64_t* globalDim,
                                        const cuuint64_t* globalStrides, const cuuint32_t* boxDim, const cuuint32_t*,
                                        CUtensorMapInterleave, CUtensorMapSwizzle swizzle, CUtensorMapL2promotion,
                                        CUtensorMapFloatOOBfill) {
  if (tensorRank < 2 || tensorRank > 3 || state.encodes >= 64) return CUDA_ERROR_INVALID_VALUE;
  const int i = state.encodes++;
  state.type[i] = tensorDataType;
  state.address[i] = globalAddress;
  state.rank[i] = tensorRank;
  state.dims[i][0] = globalDim[0], state.dims[i][1] = globalDim[1];
  state.strides[i] = globalStrides[0];
  state.box[i][0] = boxDim[0], state.box[i][1] = boxDim[1];
  if (tensorRank == 3) {
    state.dims[i][2] = globalDim[2];
    state.plane_strides[i] = globalStrides[1];
    state.box[i][2] = boxDim[2];
  }
  state.swizzle[i] = swizzle;
  // The map's bytes: its address and dims, so a test can find which map went where.
  std::memset(tensorMap, 0, sizeof *tensorMap);
  std::memcpy(tensorMap, &globalAddress, 8);
  std::memcpy(reinterpret_cast<char*>(tensorMap) + 8, globalDim, 16);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f, void** kernelParams, void** extra) {
  if (extra || !kernelParams) return CUDA_ERROR_INVALID_VALUE;
  ++state.launches;
  state.config = *config;
  if (config->numAttrs) state.attr = config->attrs[0];
  state.config.attrs = &state.attr;
  for (int i = 0; i < state.nparams && i < 64; ++i) state.params[i] = kernelParams[i];
  state.function = f;
  return CUDA_SUCCESS;
}

}  // extern "C"
