// In-kernel malloc/free/new/delete (the device heap): each thread builds a linked list with new,
// a later launch walks and deletes it (blocks outlive their launch), then every thread asks for
// 4 KiB at once until the heap (8 MiB by default) runs out, and the blocks are freed again.
struct HeapNode {
  int value;
  HeapNode* next;
};

extern "C" __global__ void heap_build_lists(const int* seeds, HeapNode** heads, int threads) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= threads) return;
  HeapNode* head = nullptr;
  const int length = t % 13 + 1;
  for (int i = 0; i < length; ++i) {
    HeapNode* node = new HeapNode;
    if (node == nullptr) break;
    node->value = seeds[t] * (i + 1) - i;
    node->next = head;
    head = node;
  }
  heads[t] = head;
}

extern "C" __global__ void heap_sum_lists(HeapNode** heads, long long* sums, int threads) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= threads) return;
  long long sum = 0;
  int count = 0;
  for (HeapNode* node = heads[t]; node != nullptr;) {
    HeapNode* next = node->next;
    sum += node->value;
    ++count;
    delete node;
    node = next;
  }
  sums[t] = sum * 100 + count;
}

extern "C" __global__ void heap_grab(unsigned char** blocks, unsigned bytes, int threads) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= threads) return;
  unsigned char* block = static_cast<unsigned char*>(malloc(bytes));
  if (block != nullptr) {
    block[0] = static_cast<unsigned char>(t);
    block[bytes - 1] = static_cast<unsigned char>(t >> 8);
  }
  blocks[t] = block;
}

extern "C" __global__ void heap_release(unsigned char** blocks, int* marks, int threads) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= threads) return;
  unsigned char* block = blocks[t];
  marks[t] = block == nullptr ? -1 : block[0] | (block[4095] << 8);
  free(block);
}
