// Every cudaDeviceAttr of the CUDA headers (device_attributes.inc, generated from driver_types.h
// at configure time): prints "attr NAME VALUE" or "attr NAME error ERROR" for each, checks that
// cudaGetDeviceProperties agrees with the attributes, and that bad queries get the errors the
// CUDA runtime gives. The test (run_test.cpp) compares the values with the preset.
#include <cstdio>
#include <cstring>

#include "check.cuh"

struct Attribute {
  const char* name;
  cudaDeviceAttr attr;
};

const Attribute kAttributes[] = {
#define X(name) {#name, name},
#include "device_attributes.inc"
#undef X
};

int value_of(cudaDeviceAttr attr) {
  int value = 0;
  EXPECT_CUDA(cudaDeviceGetAttribute(&value, attr, 0), cudaSuccess);
  return value;
}

int mismatches = 0;

void agree(const char* field, long long prop, cudaDeviceAttr attr) {
  const int value = value_of(attr);
  if (prop != value) {
    std::printf("FAIL cudaDeviceProp.%s = %lld but the attribute says %d\n", field, prop, value);
    ++mismatches;
  }
}

int main() {
  for (const Attribute& a : kAttributes) {
    int value = -12345;
    const cudaError_t error = cudaDeviceGetAttribute(&value, a.attr, 0);
    if (error == cudaSuccess) {
      std::printf("attr %s %d\n", a.name, value);
    } else {
      std::printf("attr %s error %s\n", a.name, cudaGetErrorName(error));
    }
  }

  cudaDeviceProp prop;
  std::memset(&prop, 0xff, sizeof prop);
  EXPECT_CUDA(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  std::printf("prop name %s\n", prop.name);
  std::printf("prop totalGlobalMem %llu\n", static_cast<unsigned long long>(prop.totalGlobalMem));
#define AGREE(field, attr) agree(#field, static_cast<long long>(prop.field), attr)
  AGREE(sharedMemPerBlock, cudaDevAttrMaxSharedMemoryPerBlock);
  AGREE(regsPerBlock, cudaDevAttrMaxRegistersPerBlock);
  AGREE(warpSize, cudaDevAttrWarpSize);
  AGREE(memPitch, cudaDevAttrMaxPitch);
  AGREE(maxThreadsPerBlock, cudaDevAttrMaxThreadsPerBlock);
  AGREE(maxThreadsDim[0], cudaDevAttrMaxBlockDimX);
  AGREE(maxThreadsDim[1], cudaDevAttrMaxBlockDimY);
  AGREE(maxThreadsDim[2], cudaDevAttrMaxBlockDimZ);
  AGREE(maxGridSize[0], cudaDevAttrMaxGridDimX);
  AGREE(maxGridSize[1], cudaDevAttrMaxGridDimY);
  AGREE(maxGridSize[2], cudaDevAttrMaxGridDimZ);
  AGREE(totalConstMem, cudaDevAttrTotalConstantMemory);
  AGREE(major, cudaDevAttrComputeCapabilityMajor);
  AGREE(minor, cudaDevAttrComputeCapabilityMinor);
  AGREE(textureAlignment, cudaDevAttrTextureAlignment);
  AGREE(texturePitchAlignment, cudaDevAttrTexturePitchAlignment);
  AGREE(multiProcessorCount, cudaDevAttrMultiProcessorCount);
  AGREE(integrated, cudaDevAttrIntegrated);
  AGREE(canMapHostMemory, cudaDevAttrCanMapHostMemory);
  AGREE(maxTexture1D, cudaDevAttrMaxTexture1DWidth);
  AGREE(maxTexture1DMipmap, cudaDevAttrMaxTexture1DMipmappedWidth);
  AGREE(maxTexture2D[0], cudaDevAttrMaxTexture2DWidth);
  AGREE(maxTexture2D[1], cudaDevAttrMaxTexture2DHeight);
  AGREE(maxTexture2DMipmap[0], cudaDevAttrMaxTexture2DMipmappedWidth);
  AGREE(maxTexture2DMipmap[1], cudaDevAttrMaxTexture2DMipmappedHeight);
  AGREE(maxTexture2DLinear[0], cudaDevAttrMaxTexture2DLinearWidth);
  AGREE(maxTexture2DLinear[1], cudaDevAttrMaxTexture2DLinearHeight);
  AGREE(maxTexture2DLinear[2], cudaDevAttrMaxTexture2DLinearPitch);
  AGREE(maxTexture2DGather[0], cudaDevAttrMaxTexture2DGatherWidth);
  AGREE(maxTexture2DGather[1], cudaDevAttrMaxTexture2DGatherHeight);
  AGREE(maxTexture3D[0], cudaDevAttrMaxTexture3DWidth);
  AGREE(maxTexture3D[1], cudaDevAttrMaxTexture3DHeight);
  AGREE(maxTexture3D[2], cudaDevAttrMaxTexture3DDepth);
  AGREE(maxTexture3DAlt[0], cudaDevAttrMaxTexture3DWidthAlt);
  AGREE(maxTexture3DAlt[1], cudaDevAttrMaxTexture3DHeightAlt);
  AGREE(maxTexture3DAlt[2], cudaDevAttrMaxTexture3DDepthAlt);
  AGREE(maxTextureCubemap, cudaDevAttrMaxTextureCubemapWidth);
  AGREE(maxTexture1DLayered[0], cudaDevAttrMaxTexture1DLayeredWidth);
  AGREE(maxTexture1DLayered[1], cudaDevAttrMaxTexture1DLayeredLayers);
  AGREE(maxTexture2DLayered[0], cudaDevAttrMaxTexture2DLayeredWidth);
  AGREE(maxTexture2DLayered[1], cudaDevAttrMaxTexture2DLayeredHeight);
  AGREE(maxTexture2DLayered[2], cudaDevAttrMaxTexture2DLayeredLayers);
  AGREE(maxTextureCubemapLayered[0], cudaDevAttrMaxTextureCubemapLayeredWidth);
  AGREE(maxTextureCubemapLayered[1], cudaDevAttrMaxTextureCubemapLayeredLayers);
  AGREE(maxSurface1D, cudaDevAttrMaxSurface1DWidth);
  AGREE(maxSurface2D[0], cudaDevAttrMaxSurface2DWidth);
  AGREE(maxSurface2D[1], cudaDevAttrMaxSurface2DHeight);
  AGREE(maxSurface3D[0], cudaDevAttrMaxSurface3DWidth);
  AGREE(maxSurface3D[1], cudaDevAttrMaxSurface3DHeight);
  AGREE(maxSurface3D[2], cudaDevAttrMaxSurface3DDepth);
  AGREE(maxSurface1DLayered[0], cudaDevAttrMaxSurface1DLayeredWidth);
  AGREE(maxSurface1DLayered[1], cudaDevAttrMaxSurface1DLayeredLayers);
  AGREE(maxSurface2DLayered[0], cudaDevAttrMaxSurface2DLayeredWidth);
  AGREE(maxSurface2DLayered[1], cudaDevAttrMaxSurface2DLayeredHeight);
  AGREE(maxSurface2DLayered[2], cudaDevAttrMaxSurface2DLayeredLayers);
  AGREE(maxSurfaceCubemap, cudaDevAttrMaxSurfaceCubemapWidth);
  AGREE(maxSurfaceCubemapLayered[0], cudaDevAttrMaxSurfaceCubemapLayeredWidth);
  AGREE(maxSurfaceCubemapLayered[1], cudaDevAttrMaxSurfaceCubemapLayeredLayers);
  AGREE(surfaceAlignment, cudaDevAttrSurfaceAlignment);
  AGREE(concurrentKernels, cudaDevAttrConcurrentKernels);
  AGREE(ECCEnabled, cudaDevAttrEccEnabled);
  AGREE(pciBusID, cudaDevAttrPciBusId);
  AGREE(pciDeviceID, cudaDevAttrPciDeviceId);
  AGREE(pciDomainID, cudaDevAttrPciDomainId);
  AGREE(tccDriver, cudaDevAttrTccDriver);
  AGREE(asyncEngineCount, cudaDevAttrAsyncEngineCount);
  AGREE(unifiedAddressing, cudaDevAttrUnifiedAddressing);
  AGREE(memoryBusWidth, cudaDevAttrGlobalMemoryBusWidth);
  AGREE(l2CacheSize, cudaDevAttrL2CacheSize);
  AGREE(persistingL2CacheMaxSize, cudaDevAttrMaxPersistingL2CacheSize);
  AGREE(maxThreadsPerMultiProcessor, cudaDevAttrMaxThreadsPerMultiProcessor);
  AGREE(streamPrioritiesSupported, cudaDevAttrStreamPrioritiesSupported);
  AGREE(globalL1CacheSupported, cudaDevAttrGlobalL1CacheSupported);
  AGREE(localL1CacheSupported, cudaDevAttrLocalL1CacheSupported);
  AGREE(sharedMemPerMultiprocessor, cudaDevAttrMaxSharedMemoryPerMultiprocessor);
  AGREE(regsPerMultiprocessor, cudaDevAttrMaxRegistersPerMultiprocessor);
  AGREE(managedMemory, cudaDevAttrManagedMemory);
  AGREE(isMultiGpuBoard, cudaDevAttrIsMultiGpuBoard);
  AGREE(multiGpuBoardGroupID, cudaDevAttrMultiGpuBoardGroupID);
  AGREE(hostNativeAtomicSupported, cudaDevAttrHostNativeAtomicSupported);
  AGREE(pageableMemoryAccess, cudaDevAttrPageableMemoryAccess);
  AGREE(concurrentManagedAccess, cudaDevAttrConcurrentManagedAccess);
  AGREE(computePreemptionSupported, cudaDevAttrComputePreemptionSupported);
  AGREE(canUseHostPointerForRegisteredMem, cudaDevAttrCanUseHostPointerForRegisteredMem);
  AGREE(cooperativeLaunch, cudaDevAttrCooperativeLaunch);
  AGREE(sharedMemPerBlockOptin, cudaDevAttrMaxSharedMemoryPerBlockOptin);
  AGREE(pageableMemoryAccessUsesHostPageTables, cudaDevAttrPageableMemoryAccessUsesHostPageTables);
  AGREE(directManagedMemAccessFromHost, cudaDevAttrDirectManagedMemAccessFromHost);
  AGREE(maxBlocksPerMultiProcessor, cudaDevAttrMaxBlocksPerMultiprocessor);
  AGREE(accessPolicyMaxWindowSize, cudaDevAttrMaxAccessPolicyWindowSize);
  AGREE(reservedSharedMemPerBlock, cudaDevAttrReservedSharedMemoryPerBlock);
  AGREE(hostRegisterSupported, cudaDevAttrHostRegisterSupported);
  AGREE(sparseCudaArraySupported, cudaDevAttrSparseCudaArraySupported);
  AGREE(hostRegisterReadOnlySupported, cudaDevAttrHostRegisterReadOnlySupported);
  AGREE(timelineSemaphoreInteropSupported, cudaDevAttrTimelineSemaphoreInteropSupported);
  AGREE(memoryPoolsSupported, cudaDevAttrMemoryPoolsSupported);
  AGREE(gpuDirectRDMASupported, cudaDevAttrGPUDirectRDMASupported);
  AGREE(gpuDirectRDMAFlushWritesOptions, cudaDevAttrGPUDirectRDMAFlushWritesOptions);
  AGREE(gpuDirectRDMAWritesOrdering, cudaDevAttrGPUDirectRDMAWritesOrdering);
  AGREE(memoryPoolSupportedHandleTypes, cudaDevAttrMemoryPoolSupportedHandleTypes);
  AGREE(deferredMappingCudaArraySupported, cudaDevAttrDeferredMappingCudaArraySupported);
  AGREE(ipcEventSupported, cudaDevAttrIpcEventSupport);
  AGREE(clusterLaunch, cudaDevAttrClusterLaunch);
  AGREE(deviceNumaConfig, cudaDevAttrNumaConfig);
  AGREE(deviceNumaId, cudaDevAttrNumaId);
  AGREE(mpsEnabled, cudaDevAttrMpsEnabled);
  AGREE(hostNumaId, cudaDevAttrHostNumaId);
  AGREE(gpuPciDeviceID, cudaDevAttrGpuPciDeviceId);
  AGREE(gpuPciSubsystemID, cudaDevAttrGpuPciSubsystemId);
  AGREE(hostNumaMultinodeIpcSupported, cudaDevAttrHostNumaMultinodeIpcSupported);
#undef AGREE
  if (mismatches != 0) return 1;

  // Bad queries: what the CUDA runtime answers.
  int value = 0;
  EXPECT_CUDA(cudaDeviceGetAttribute(nullptr, cudaDevAttrComputeMode, 0), cudaErrorInvalidValue);
  EXPECT_CUDA(cudaDeviceGetAttribute(&value, cudaDevAttrMax, 0), cudaErrorInvalidValue);
  EXPECT_CUDA(cudaDeviceGetAttribute(&value, static_cast<cudaDeviceAttr>(0), 0), cudaErrorInvalidValue);
  EXPECT_CUDA(cudaDeviceGetAttribute(&value, static_cast<cudaDeviceAttr>(-3), 0), cudaErrorInvalidValue);
  EXPECT_CUDA(cudaDeviceGetAttribute(&value, cudaDevAttrComputeMode, 1), cudaErrorInvalidDevice);
  EXPECT_CUDA(cudaDeviceGetAttribute(&value, cudaDevAttrComputeMode, -1), cudaErrorInvalidDevice);
  EXPECT_CUDA(cudaGetDeviceProperties(nullptr, 0), cudaErrorInvalidValue);
  EXPECT_CUDA(cudaGetDeviceProperties(&prop, 1), cudaErrorInvalidDevice);
  // The PCI address agrees with the attributes, and finds the device again.
  char bus_id[32] = {};
  EXPECT_CUDA(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, 0), cudaSuccess);
  char expected_id[32];
  std::snprintf(expected_id, sizeof expected_id, "%04x:%02x:%02x.0", value_of(cudaDevAttrPciDomainId),
                value_of(cudaDevAttrPciBusId), value_of(cudaDevAttrPciDeviceId));
  if (std::strcmp(bus_id, expected_id) != 0) {
    std::printf("FAIL cudaDeviceGetPCIBusId = %s, the attributes say %s\n", bus_id, expected_id);
    return 1;
  }
  int found = -1;
  EXPECT_CUDA(cudaDeviceGetByPCIBusId(&found, bus_id), cudaSuccess);
  if (found != 0) return 1;
  EXPECT_CUDA(cudaDeviceGetByPCIBusId(&found, "0000:7f:00.0"), cudaErrorInvalidDevice);
  EXPECT_CUDA(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, 1), cudaErrorInvalidDevice);
  int can_access = -1;
  EXPECT_CUDA(cudaDeviceCanAccessPeer(&can_access, 0, 0), cudaSuccess);
  if (can_access != 0) return 1;
  EXPECT_CUDA(cudaDeviceCanAccessPeer(&can_access, 0, 1), cudaErrorInvalidDevice);
  EXPECT_CUDA(cudaGetLastError(), cudaErrorInvalidDevice);
  std::printf("PASS device_attributes: %zu attributes\n", sizeof kAttributes / sizeof kAttributes[0]);
  return 0;
}
