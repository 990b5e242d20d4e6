// Kernels that call the device runtime: in-kernel malloc/free/new/delete and child launches
// (dynamic parallelism). Compiled with -rdc=true, as dynamic parallelism requires.
#include <cstdint>

struct Node {
  int value;
  Node* next;
};

// Each thread allocates `count` ints, fills them with tid * 1000 + i and publishes the block.
extern "C" __global__ void malloc_fill(int** out, int count) {
  const int tid = blockIdx.x * blockDim.x + threadIdx.x;
  int* block = static_cast<int*>(malloc(count * sizeof(int)));
  if (block != nullptr) {
    for (int i = 0; i < count; ++i) block[i] = tid * 1000 + i;
  }
  out[tid] = block;
}

// Frees what malloc_fill published (free(NULL) included).
extern "C" __global__ void free_all(int** blocks) {
  const int tid = blockIdx.x * blockDim.x + threadIdx.x;
  free(blocks[tid]);
}

// new/delete: a linked list of `length` nodes built and summed by each thread, then deleted.
extern "C" __global__ void list_sum(long long* sums, int length) {
  const int tid = blockIdx.x * blockDim.x + threadIdx.x;
  Node* head = nullptr;
  for (int i = 0; i < length; ++i) {
    Node* node = new Node;
    if (node == nullptr) {
      sums[tid] = -1;
      return;
    }
    node->value = tid + i;
    node->next = head;
    head = node;
  }
  long long sum = 0;
  while (head != nullptr) {
    Node* next = head->next;
    sum += head->value;
    delete head;
    head = next;
  }
  sums[tid] = sum;
}

extern "C" __global__ void aligned_malloc(unsigned long long* out, unsigned long long alignment) {
  out[threadIdx.x] = reinterpret_cast<unsigned long long>(__nv_aligned_device_malloc(40, alignment));
}

extern "C" __global__ void bad_free(int* p) { free(p + 1); }

// Dynamic parallelism: the child adds `value` to its slice; the parent launches one child per
// thread into the named streams.
extern "C" __global__ void child_add(int* data, int value) { data[blockIdx.x * blockDim.x + threadIdx.x] += value; }

extern "C" __global__ void parent_launch(int* data) {
  const int t = threadIdx.x;
  int* slice = data + t * 64;
  if (t == 0) {
    child_add<<<2, 32>>>(slice, 1);
  } else if (t == 1) {
    child_add<<<2, 32, 0, cudaStreamTailLaunch>>>(slice, 2);
  } else if (t == 2) {
    child_add<<<2, 32, 0, cudaStreamFireAndForget>>>(slice, 3);
  } else if (t == 3) {
    cudaStream_t stream;
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    child_add<<<1, 64, 0, stream>>>(slice, 4);
    cudaStreamDestroy(stream);
  }
  data[1024 + t] = static_cast<int>(cudaGetLastError());
}

// Virtual calls: the shapes' vtables are .global arrays initialized with function addresses.
struct Shape {
  __device__ virtual ~Shape() {}
  __device__ virtual int area() const = 0;
};
struct Square : Shape {
  int side;
  __device__ explicit Square(int s) : side(s) {}
  __device__ int area() const override { return side * side; }
};
struct Rectangle : Shape {
  int width, height;
  __device__ Rectangle(int w, int h) : width(w), height(h) {}
  __device__ int area() const override { return width * height; }
};
extern "C" __global__ void virtual_calls(const int* kind, int* out) {
  int t = threadIdx.x;
  Shape* shape = kind[t] ? static_cast<Shape*>(new Square(t)) : static_cast<Shape*>(new Rectangle(t, 3));
  out[t] = shape->area();
  delete shape;
}
