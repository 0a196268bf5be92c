#include "engine/optim/mlp.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

namespace adj::optim {

namespace {

template <class S>
S hidden_act(MlpActivation a, S x) {
  return a == MlpActivation::tanh ? std::tanh(x) : x > S(0) ? x : std::expm1(x);
}

// the activation's derivative from its value y
template <class S>
S hidden_slope(MlpActivation a, S y) {
  return a == MlpActivation::tanh ? S(1) - y * y : y > S(0) ? S(1) : y + S(1);
}

// a SIMD pack of the x86-64 baseline (SSE2: 4 floats or 2 doubles; vector extensions elsewhere):
// each lane rounds as the scalar operation does
template <class S>
struct Pack {
  static constexpr int W = 16 / int(sizeof(S));
  typedef S V __attribute__((vector_size(16)));
};
template <class S>
using Vec = typename Pack<S>::V;

template <class S>
inline Vec<S> load(const S* p) {
  Vec<S> v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class S>
inline void store(S* p, const Vec<S>& v) {
  std::memcpy(p, &v, sizeof v);
}
template <class S>
inline Vec<S> splat(S x) {
  if constexpr (Pack<S>::W == 4)
    return Vec<S>{x, x, x, x};
  else
    return Vec<S>{x, x};
}

// out[j] = init[j] (0 without init) + sum_i m[i len + j] v[i], each sum in order i = 0..k-1; four
// packs of outputs at a time, then one, then one output. A layer's forward is this over its
// matrix transposed (z = b + W x), the gradient to its input over the matrix as stored
// (dx = W^T dz)
template <class S>
void accumulate_columns(const S* init, const S* m, const S* v, int k, int len, S* out) {
  constexpr int W = Pack<S>::W;
  auto start = [&](int j) { return init ? load(init + j) : splat(S(0)); };
  int j = 0;
  for (; j + 4 * W <= len; j += 4 * W) {
    Vec<S> a0 = start(j), a1 = start(j + W), a2 = start(j + 2 * W), a3 = start(j + 3 * W);
    const S* col = m + j;
    for (int i = 0; i < k; ++i, col += len) {
      const Vec<S> vi = splat(v[i]);
      a0 += load(col) * vi;
      a1 += load(col + W) * vi;
      a2 += load(col + 2 * W) * vi;
      a3 += load(col + 3 * W) * vi;
    }
    store(out + j, a0);
    store(out + j + W, a1);
    store(out + j + 2 * W, a2);
    store(out + j + 3 * W, a3);
  }
  for (; j + W <= len; j += W) {
    Vec<S> a = start(j);
    for (int i = 0; i < k; ++i) a += load(m + std::size_t(i) * len + j) * splat(v[i]);
    store(out + j, a);
  }
  for (; j < len; ++j) {
    S s = init ? init[j] : S(0);
    for (int i = 0; i < k; ++i) s += m[std::size_t(i) * len + j] * v[i];
    out[j] = s;
  }
}

// one weight row (ni weights, then its bias) += dz[q] x[q], samples q in order; x[q] = x + q ni,
// dz[q] = dz[q n]; four samples at a time (their sum kept in a pack between them), then one
template <class S>
void row_accumulate(const S* dz, int n, const S* x, int ni, int count, S* row, S* bias) {
  constexpr int W = Pack<S>::W;
  int q = 0;
  for (; q + 4 <= count; q += 4) {
    const S d0 = dz[std::size_t(q) * n], d1 = dz[std::size_t(q + 1) * n], d2 = dz[std::size_t(q + 2) * n],
            d3 = dz[std::size_t(q + 3) * n];
    *bias += d0;
    *bias += d1;
    *bias += d2;
    *bias += d3;
    const S *x0 = x + std::size_t(q) * ni, *x1 = x0 + ni, *x2 = x1 + ni, *x3 = x2 + ni;
    const Vec<S> v0 = splat(d0), v1 = splat(d1), v2 = splat(d2), v3 = splat(d3);
    int c = 0;
    for (; c + W <= ni; c += W) {
      Vec<S> a = load(row + c);
      a += v0 * load(x0 + c);
      a += v1 * load(x1 + c);
      a += v2 * load(x2 + c);
      a += v3 * load(x3 + c);
      store(row + c, a);
    }
    for (; c < ni; ++c) {
      S a = row[c];
      a += d0 * x0[c];
      a += d1 * x1[c];
      a += d2 * x2[c];
      a += d3 * x3[c];
      row[c] = a;
    }
  }
  for (; q < count; ++q) {
    const S d = dz[std::size_t(q) * n];
    *bias += d;
    const S* xq = x + std::size_t(q) * ni;
    const Vec<S> v = splat(d);
    int c = 0;
    for (; c + W <= ni; c += W) store(row + c, load(row + c) + v * load(xq + c));
    for (; c < ni; ++c) row[c] += d * xq[c];
  }
}

// the (rows x cols) row-major matrix m made orthogonal as PyTorch's orthogonal_ makes it: the QR
// factorization of m (of m^T when rows < cols) with R's diagonal made positive, Q in its place.
// That Q is the Gram-Schmidt basis of the tall matrix's columns (run twice over, which keeps
// it orthonormal to rounding in double)
inline void orthonormalize(int rows, int cols, double* m) {
  const bool tall = rows >= cols;
  const int len = tall ? rows : cols, k = tall ? cols : rows;  // k vectors of len entries
  // vector j, entry i of the tall matrix
  auto at = [&](int j, int i) -> double& { return tall ? m[std::size_t(i) * cols + j] : m[std::size_t(j) * cols + i]; };
  for (int j = 0; j < k; ++j) {
    for (int pass = 0; pass < 2; ++pass)
      for (int p = 0; p < j; ++p) {
        double d = 0;
        for (int i = 0; i < len; ++i) d += at(p, i) * at(j, i);
        for (int i = 0; i < len; ++i) at(j, i) -= d * at(p, i);
      }
    double n2 = 0;
    for (int i = 0; i < len; ++i) n2 += at(j, i) * at(j, i);
    const double inv = 1.0 / std::sqrt(n2);
    for (int i = 0; i < len; ++i) at(j, i) *= inv;
  }
}

// the LayerNorm of one sample's n activations a: x = (a - mean) rstd, y = gain x + bias;
// returns rstd = 1 / sqrt(var + 1e-5) (the biased variance, as PyTorch's nn.LayerNorm)
template <class S>
S layer_norm(const S* a, int n, const S* gain, const S* bias, S* x, S* y) {
  S mean = 0;
  for (int r = 0; r < n; ++r) mean += a[r];
  mean /= S(n);
  S var = 0;
  for (int r = 0; r < n; ++r) var += (a[r] - mean) * (a[r] - mean);
  var /= S(n);
  const S rstd = S(1) / std::sqrt(var + S(1e-5));
  for (int r = 0; r < n; ++r) {
    x[r] = (a[r] - mean) * rstd;
    y[r] = gain[r] * x[r] + bias[r];
  }
  return rstd;
}

// the LayerNorm's backward: given dy = dL/dy, da = dL/da
// = rstd (gain dy - mean(gain dy) - x mean(gain dy x))
template <class S>
void layer_norm_backward(const S* x, S rstd, int n, const S* gain, const S* dy, S* da) {
  S m1 = 0, m2 = 0;
  for (int r = 0; r < n; ++r) {
    const S dx = gain[r] * dy[r];
    m1 += dx;
    m2 += dx * x[r];
  }
  m1 /= S(n);
  m2 /= S(n);
  for (int r = 0; r < n; ++r) da[r] = rstd * (gain[r] * dy[r] - m1 - x[r] * m2);
}

}  // namespace

template <class S>
MlpT<S>::MlpT(std::vector<int> sizes, S output_scale, bool linear_output, MlpForm form)
    : sizes_(std::move(sizes)), output_scale_(output_scale), linear_(linear_output), form_(form) {
  for (std::size_t l = 0; l + 1 < sizes_.size(); ++l) {
    w_offset_.push_back(weight_count_);
    weight_count_ += (sizes_[l] + 1 + (normed(int(l)) ? 2 : 0)) * sizes_[l + 1];
  }
}

template <class S>
std::string MlpT<S>::weight_name(int k) const {
  int l = int(w_offset_.size()) - 1;
  while (l > 0 && k < w_offset_[l]) --l;
  int in = sizes_[l], n = sizes_[l + 1], j = k - w_offset_[l];
  // after the matrix: the biases, then the LayerNorm's gains and biases, n each
  const int part = j < in * n ? 0 : 1 + (j - in * n) / n;
  const char* names[] = {"W", "b", "g", "beta"};
  // appended piece by piece: GCC 12 warns falsely (-Wrestrict) on "x" + std::string chains
  std::string s = names[part];
  s += std::to_string(l);
  s += '[';
  s += std::to_string(j < in * n ? j / in : (j - in * n) % n);
  s += ']';
  if (j < in * n) {
    s += '[';
    s += std::to_string(j % in);
    s += ']';
  }
  return s;
}

template <class S>
void MlpT<S>::init_weights(S* w, std::uint64_t seed) const {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::normal_distribution<double> gauss;
  const int L = int(sizes_.size()) - 1;
  std::vector<double> m;
  for (int l = 0; l < L; ++l) {
    const int in = sizes_[l], out = sizes_[l + 1];
    m.resize(std::size_t(in) * std::size_t(out));
    if (form_.init == MlpInit::orthogonal) {
      for (double& v : m) v = gauss(rng);
      orthonormalize(out, in, m.data());
    } else {
      const double a = std::sqrt(6.0 / (in + out)) * (l == L - 1 ? 0.1 : 1.0);
      for (double& v : m) v = a * u(rng);
    }
    S* W = w + w_offset_[l];
    for (std::size_t k = 0; k < m.size(); ++k) W[k] = S(m[k]);
    for (int k = 0; k < out; ++k) W[in * out + k] = S(0);
    if (normed(l))
      for (int k = 0; k < out; ++k) W[(in + 1) * out + k] = S(1), W[(in + 2) * out + k] = S(0);
  }
}

template <class S>
void MlpT<S>::resize(Batch& b, int count) const {
  const int L = int(sizes_.size()) - 1;
  b.count = count;
  b.inputs = sizes_.front();
  b.act.resize(std::size_t(L + 1));
  b.dz.resize(std::size_t(L));
  for (int l = 0; l <= L; ++l) b.act[l].resize(std::size_t(count) * std::size_t(sizes_[l]));
  for (int l = 0; l < L; ++l) b.dz[l].resize(std::size_t(count) * std::size_t(sizes_[l + 1]));
  for (auto* v : {&b.ln_a, &b.ln_x, &b.ln_rstd, &b.ln_dy}) v->resize(std::size_t(L));
  for (int l = 0; l < L; ++l) {
    const std::size_t n = normed(l) ? std::size_t(count) * std::size_t(sizes_[l + 1]) : 0;
    b.ln_a[l].resize(n);
    b.ln_x[l].resize(n);
    b.ln_dy[l].resize(n);
    b.ln_rstd[l].resize(normed(l) ? std::size_t(count) : 0);
  }
}

template <class S>
void MlpT<S>::pack(const S* w, std::vector<S>& packed) const {
  packed.resize(std::size_t(weight_count_));
  for (std::size_t l = 0; l < w_offset_.size(); ++l) {
    const int ni = sizes_[l], n = sizes_[l + 1];
    const S* W = w + w_offset_[l];
    S* T = packed.data() + w_offset_[l];
    for (int r = 0; r < n; ++r)
      for (int c = 0; c < ni; ++c) T[std::size_t(c) * n + r] = W[std::size_t(r) * ni + c];
    // the biases (and LayerNorm gains and biases) as stored
    const std::size_t end = std::size_t(ni + 1 + (normed(int(l)) ? 2 : 0)) * n;
    std::copy(W + std::size_t(ni) * n, W + end, T + std::size_t(ni) * n);
  }
}

template <class S>
void MlpT<S>::forward(const S* packed, Batch& b, int begin, int end) const {
  const int L = int(sizes_.size()) - 1;
  for (int q = begin; q < end; ++q)
    for (int l = 0; l < L; ++l) {
      const int ni = sizes_[l], n = sizes_[l + 1];
      const S* T = packed + w_offset_[l];
      S* y = b.act[l + 1].data() + std::size_t(q) * n;
      const std::size_t at = std::size_t(q) * n;
      // with LayerNorm the activations go to ln_a, their normalized values to act
      S* z = normed(l) ? b.ln_a[l].data() + at : y;
      accumulate_columns(T + std::size_t(ni) * n, T, b.act[l].data() + std::size_t(q) * ni, ni, n, z);
      // the output layer keeps tanh without its scale (z itself when linear)
      if (l < L - 1) {
        for (int r = 0; r < n; ++r) z[r] = hidden_act(form_.activation, z[r]);
        if (normed(l)) {
          const S* gain = T + std::size_t(ni + 1) * n;
          b.ln_rstd[l][q] = layer_norm(z, n, gain, gain + n, b.ln_x[l].data() + at, y);
        }
      } else if (!linear_)
        for (int r = 0; r < n; ++r) z[r] = std::tanh(z[r]);
    }
}

template <class S>
S MlpT<S>::output(const Batch& b, int q, int k) const {
  const S y = b.act.back()[std::size_t(q) * sizes_.back() + k];
  return linear_ ? y : y * output_scale_;
}

template <class S>
void MlpT<S>::backward_samples(const S* w, Batch& b, const S* d_out, int begin, int end, S* d_in) const {
  const int L = int(sizes_.size()) - 1, no = sizes_.back();
  for (int q = begin; q < end; ++q) {
    // the output layer's dz, then each layer's input gradient times the activation's slope
    const S* da = d_out + std::size_t(q - begin) * no;
    const S* y = b.act[L].data() + std::size_t(q) * no;
    S* dz = b.dz[L - 1].data() + std::size_t(q) * no;
    for (int r = 0; r < no; ++r) dz[r] = linear_ ? da[r] : da[r] * output_scale_ * (S(1) - y[r] * y[r]);
    for (int l = L - 1; l >= 0; --l) {
      const int ni = sizes_[l], n = sizes_[l + 1];
      const S* W = w + w_offset_[l];
      const S* dzl = b.dz[l].data() + std::size_t(q) * n;
      if (l == 0) {
        if (d_in) accumulate_columns<S>(nullptr, W, dzl, n, ni, d_in + std::size_t(q - begin) * ni);
        break;
      }
      S* prev = b.dz[l - 1].data() + std::size_t(q) * ni;
      const std::size_t at = std::size_t(q) * ni;
      // with LayerNorm: dL/d act kept (the gains' gradient), then dL/d(the activation)
      S* dy = normed(l - 1) ? b.ln_dy[l - 1].data() + at : prev;
      accumulate_columns<S>(nullptr, W, dzl, n, ni, dy);
      const S* a = b.act[l].data() + at;
      if (normed(l - 1)) {
        const S* gain = w + w_offset_[l - 1] + std::size_t(sizes_[l - 1] + 1) * ni;
        layer_norm_backward(b.ln_x[l - 1].data() + at, b.ln_rstd[l - 1][q], ni, gain, dy, prev);
        a = b.ln_a[l - 1].data() + at;
      }
      for (int c = 0; c < ni; ++c) prev[c] = prev[c] * hidden_slope(form_.activation, a[c]);
    }
  }
}

template <class S>
int MlpT<S>::row_count() const {
  int rows = 0;
  for (std::size_t l = 1; l < sizes_.size(); ++l) rows += sizes_[l];
  return rows;
}

template <class S>
void MlpT<S>::accumulate(const Batch& b, int begin, int end, int row_begin, int row_end, S* d_w) const {
  int first = 0;  // the layer's first row among all layers'
  for (std::size_t l = 0; l < w_offset_.size(); ++l) {
    const int ni = sizes_[l], n = sizes_[l + 1];
    const int r0 = std::max(row_begin - first, 0), r1 = std::min(row_end - first, n);
    S* dW = d_w + w_offset_[l];
    for (int r = r0; r < r1; ++r) {
      row_accumulate(b.dz[l].data() + std::size_t(begin) * n + r, n, b.act[l].data() + std::size_t(begin) * ni, ni,
                     end - begin, dW + std::size_t(r) * ni, dW + std::size_t(ni) * n + r);
      if (!normed(int(l))) continue;
      // the LayerNorm's gain and bias of unit r: sum dy x and sum dy, samples in order
      S* dg = dW + std::size_t(ni + 1) * n + r;
      for (int q = begin; q < end; ++q) {
        const std::size_t at = std::size_t(q) * n + r;
        *dg += b.ln_dy[l][at] * b.ln_x[l][at];
        dg[n] += b.ln_dy[l][at];
      }
    }
    first += n;
  }
}

template <class S>
void MlpT<S>::backward(const S* w, Batch& b, const S* d_out, int begin, int end, S* d_w, S* d_in) const {
  backward_samples(w, b, d_out, begin, end, d_in);
  accumulate(b, begin, end, 0, row_count(), d_w);
}

// one sample through the network: its batch of one, forward run
template <class S>
typename MlpT<S>::Batch MlpT<S>::forward_one(const S* w, const std::vector<S>& in) const {
  std::vector<S> packed;
  pack(w, packed);
  Batch b;
  resize(b, 1);
  std::copy_n(in.begin(), std::min(in.size(), std::size_t(input_size())), b.input(0));
  forward(packed.data(), b, 0, 1);
  return b;
}

template <class S>
void MlpT<S>::forward(const S* w, const std::vector<S>& in, std::vector<S>& out) const {
  const Batch b = forward_one(w, in);
  out.resize(std::size_t(output_size()));
  for (int k = 0; k < output_size(); ++k) out[std::size_t(k)] = output(b, 0, k);
}

template <class S>
void MlpT<S>::backward(const S* w, const std::vector<S>& in, const std::vector<S>& d_out, S* d_w,
                       std::vector<S>& d_in) const {
  Batch b = forward_one(w, in);
  d_in.resize(std::size_t(input_size()));
  backward(w, b, d_out.data(), 0, 1, d_w, d_in.data());
}

template class MlpT<float>;
template class MlpT<double>;

}  // namespace adj::optim
