// Lesson 03, the file you edit: the fused step. Included by stencil.cpp, which defines
// GS_HOST_DEVICE (__host__ __device__ under nvcc), on_device() (the execution policy) and raw()
// (the device pointer of a device_vector). The same file is compiled for Thrust's CUDA backend
// and for its OpenMP backend.
#pragma once

// One cell's whole update, called by thrust::transform once per cell index; the pair it returns
// goes into u_next and v_next.
struct FusedCellUpdate {
  const float* u;
  const float* v;
  int rows;
  int cols;
  Rates rates;

  GS_HOST_DEVICE thrust::tuple<float, float> operator()(int index) const {
    const float u_centre = u[index];
    const float v_centre = v[index];
    // TODO(lesson 03): the cell's whole update, as docs/PROBLEM.md defines it. From `index` find
    // the row and the column; add up the in-grid neighbours of u and of v (all eight inside the
    // grid, fewer on an edge or a corner) and count them (N); L(a) = sum - N * a; then the
    // reaction (u * v * v, the feed F and the kill k) and one Euler step of length dt for both
    // fields. README.md, "The exercise", has hints. Until then every cell keeps its old values.
    return thrust::make_tuple(u_centre, v_centre);
  }
};

// The one upload: host memory -> device memory, across PCIe.
inline void upload(const gs::State& state, thrust::device_vector<float>& u,
                   thrust::device_vector<float>& v) {
  // TODO(lesson 03): copy state.u and state.v into the device vectors u and v
  // (device_vector::assign takes two host iterators). As shipped the device holds u = 1, v = 0
  // everywhere instead of the loaded state.
  u.assign(state.u.size(), 1.0f);
  v.assign(state.v.size(), 0.0f);
}

// One step: (u, v) -> (u_next, v_next).
inline void fused_transform(const thrust::device_vector<float>& u,
                            const thrust::device_vector<float>& v,
                            thrust::device_vector<float>& u_next,
                            thrust::device_vector<float>& v_next, int rows, int cols,
                            const Rates& rates) {
  // TODO(lesson 03): one thrust::transform over the cell indices 0 .. rows * cols - 1
  // (thrust::counting_iterator<int>) that writes FusedCellUpdate{raw(u), raw(v), rows, cols,
  // rates}'s pair into u_next and v_next at once (thrust::make_zip_iterator(thrust::make_tuple(
  // ...))). Pass on_device() as the first argument. As shipped the next buffers receive a copy
  // of the current fields, so nothing ever changes.
  (void)rows;
  (void)cols;
  (void)rates;
  thrust::copy(on_device(), u.begin(), u.end(), u_next.begin());
  thrust::copy(on_device(), v.begin(), v.end(), v_next.begin());
}
