extern "C" __global__ void nothing() {}
