// finite-difference checker (as MuJoCo's engine_derivative_fd.c): central differences of a
// scalar function, compared to an analytic gradient with |AD - FD| <= atol + rtol |FD|
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace adj {

struct FdReport {
  bool ok = true;
  int worst = -1;         // coordinate with the largest violation
  double ad = 0, fd = 0;  // values there
  double excess = 0;      // |AD - FD| - (atol + rtol |FD|) there (<= 0 when ok)
  std::string message;
};

// d f / d x_i by central differences, restoring x after each evaluation
template <class F>
std::vector<double> central_difference(const F& f, std::vector<double> x, double eps) {
  std::vector<double> g(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    double x0 = x[i];
    x[i] = x0 + eps;
    double fp = f(x);
    x[i] = x0 - eps;
    double fm = f(x);
    x[i] = x0;
    g[i] = (fp - fm) / (2 * eps);
  }
  return g;
}

// the largest entrywise difference of x and y, relative to y's largest entry
inline double relative_error(const std::vector<double>& x, const std::vector<double>& y) {
  double err = 0, scale = 0;
  for (std::size_t k = 0; k < x.size(); ++k) {
    err = std::max(err, std::fabs(x[k] - y[k]));
    scale = std::max(scale, std::fabs(y[k]));
  }
  return err / scale;
}

inline FdReport compare_gradients(const std::vector<double>& ad, const std::vector<double>& fd, double atol,
                                  double rtol) {
  FdReport r;
  r.excess = -1e300;
  if (ad.size() != fd.size()) {
    r.ok = false;
    r.message = "gradient sizes differ";
    return r;
  }
  for (std::size_t i = 0; i < ad.size(); ++i) {
    double err = std::fabs(ad[i] - fd[i]);
    double excess = err - (atol + rtol * std::fabs(fd[i]));
    if (!(excess <= r.excess) || r.worst < 0) {
      if (excess > r.excess || std::isnan(excess) || r.worst < 0) {
        r.excess = std::isnan(excess) ? 1e300 : excess;
        r.worst = int(i);
        r.ad = ad[i];
        r.fd = fd[i];
      }
    }
  }
  r.ok = r.excess <= 0;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s: worst coordinate %d of %zu: AD %.9g FD %.9g (atol %g, rtol %g)",
                r.ok ? "ok" : "FD mismatch", r.worst, ad.size(), r.ad, r.fd, atol, rtol);
  r.message = buf;
  return r;
}

template <class F>
FdReport fd_check(const F& f, const std::vector<double>& x, const std::vector<double>& ad, double eps, double atol,
                  double rtol) {
  return compare_gradients(ad, central_difference(f, x, eps), atol, rtol);
}

}  // namespace adj
