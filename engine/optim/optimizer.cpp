#include "engine/optim/optimizer.h"

#include <cassert>
#include <cmath>

namespace adj::optim {

template <class S>
double global_norm(const std::vector<S>& g) {
  double sum = 0;
  for (S x : g) sum += double(x) * double(x);
  return std::sqrt(sum);
}

template <class S>
OptimizerT<S>::OptimizerT(const scene::OptimizerSpec& spec, int size) : spec_(spec) {
  m_.assign(size, 0.0);
  v_.assign(size, 0.0);
}

template <class S>
void OptimizerT<S>::reset() {
  m_.assign(m_.size(), 0.0);
  v_.assign(v_.size(), 0.0);
  t_ = 0;
  backtrack_ = {};
}

template <class S>
double OptimizerT<S>::step(std::vector<S>& theta, const std::vector<S>& grad) {
  assert(theta.size() == m_.size() && grad.size() == m_.size() && "optimizer sized for another theta");
  const double norm = global_norm(grad);
  // global-norm clipping: scale the whole gradient, keeping its direction
  const double scale = (spec_.clip > 0 && norm > spec_.clip) ? spec_.clip / norm : 1.0;
  ++t_;
  const double lr = spec_.lr;
  if (spec_.kind == scene::OptimizerKind::sgd) {
    for (std::size_t i = 0; i < theta.size(); ++i) theta[i] = S(double(theta[i]) - lr * scale * double(grad[i]));
    return norm;
  }
  const double c1 = 1.0 - std::pow(beta1, t_), c2 = 1.0 - std::pow(beta2, t_);
  for (std::size_t i = 0; i < theta.size(); ++i) {
    double g = scale * double(grad[i]);
    m_[i] = beta1 * m_[i] + (1 - beta1) * g;
    v_[i] = beta2 * v_[i] + (1 - beta2) * g * g;
    double mh = m_[i] / c1, vh = v_[i] / c2;
    theta[i] = S(double(theta[i]) - lr * mh / (std::sqrt(vh) + epsilon));
  }
  return norm;
}

template double global_norm(const std::vector<float>&);
template double global_norm(const std::vector<double>&);
template class OptimizerT<float>;
template class OptimizerT<double>;

}  // namespace adj::optim
