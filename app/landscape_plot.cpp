#include "app/landscape_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-conversion"
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wold-style-cast"
#pragma GCC diagnostic ignored "-Wshadow"
#include <stb_easy_font.h>
#pragma GCC diagnostic pop

namespace adj::app {

namespace {

constexpr std::uint32_t k_background = 0xffffff, k_ink = 0x202020, k_grid = 0xe4e4e4;
constexpr std::uint32_t k_palette[] = {0x1f5fbf, 0xd9541e, 0x2a9d3f, 0x8e44ad, 0xc0392b, 0x16a0a0, 0x7f6a00};
constexpr int k_text_scale = 2;  // stb_easy_font's 7-pixel glyphs, doubled

class Canvas {
 public:
  Canvas(int w, int h) : w_(w), h_(h), px_(size_t(w) * size_t(h) * 4, 255) {}

  void put(int x, int y, std::uint32_t c, float alpha = 1.f) {
    if (x < 0 || y < 0 || x >= w_ || y >= h_) return;
    std::uint8_t* p = &px_[(size_t(y) * size_t(w_) + size_t(x)) * 4];
    const float rgb[3] = {float((c >> 16) & 255), float((c >> 8) & 255), float(c & 255)};
    for (int k = 0; k < 3; ++k) p[k] = std::uint8_t(std::lround(p[k] * (1 - alpha) + rgb[k] * alpha));
    p[3] = 255;
  }
  void rect(int x0, int y0, int x1, int y1, std::uint32_t c) {
    for (int y = std::max(0, y0); y < std::min(h_, y1); ++y)
      for (int x = std::max(0, x0); x < std::min(w_, x1); ++x) put(x, y, c);
  }
  // a line `width` pixels wide; dash > 0: on/off runs of that many pixels
  void line(double x0, double y0, double x1, double y1, std::uint32_t c, int width = 1, int dash = 0) {
    const double len = std::hypot(x1 - x0, y1 - y0);
    const int n = std::max(1, int(std::ceil(len * 2)));
    for (int i = 0; i <= n; ++i) {
      const double t = double(i) / n;
      if (dash > 0 && (int(t * len) / dash) % 2 == 1) continue;
      const int x = int(std::lround(x0 + (x1 - x0) * t)), y = int(std::lround(y0 + (y1 - y0) * t));
      for (int dy = -(width - 1) / 2; dy <= width / 2; ++dy)
        for (int dx = -(width - 1) / 2; dx <= width / 2; ++dx) put(x + dx, y + dy, c);
    }
  }
  // text with its top-left at (x, y); align: 0 left, 1 centre, 2 right
  void text(int x, int y, const std::string& s, std::uint32_t c, int align = 0) {
    std::string t = s;
    const int width = stb_easy_font_width(t.data()) * k_text_scale;
    if (align == 1) x -= width / 2;
    if (align == 2) x -= width;
    static thread_local std::vector<char> buf(1 << 16);
    const int quads = stb_easy_font_print(0, 0, t.data(), nullptr, buf.data(), int(buf.size()));
    for (int q = 0; q < quads; ++q) {
      const float* v = reinterpret_cast<const float*>(buf.data() + size_t(q) * 64);
      // vertices 0 and 2 are opposite corners (16 bytes a vertex: x, y, z, colour)
      const float ax = v[0], ay = v[1], bx = v[8], by = v[9];
      rect(x + int(std::min(ax, bx)) * k_text_scale, y + int(std::min(ay, by)) * k_text_scale,
           x + int(std::max(ax, bx)) * k_text_scale, y + int(std::max(ay, by)) * k_text_scale, c);
    }
  }
  PlotImage take() { return {w_, h_, std::move(px_)}; }

 private:
  int w_, h_;
  std::vector<std::uint8_t> px_;
};

std::string tick_label(double v) {
  char buf[32];
  if (v != 0 && (std::abs(v) < 1e-3 || std::abs(v) >= 1e5))
    std::snprintf(buf, sizeof buf, "%.1e", v);
  else
    std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

}  // namespace

std::vector<double> nice_ticks(double lo, double hi, int want) {
  std::vector<double> t;
  if (!(hi > lo)) return {lo};
  const double raw = (hi - lo) / want, mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * mag) {
      step = m * mag;
      break;
    }
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step)
    t.push_back(std::abs(v) < step * 1e-9 ? 0 : v);
  return t;
}

namespace {

struct Axis {
  double lo = 0, hi = 1;
  bool log = false;
  double map(double v) const { return ((log ? std::log10(v) : v) - lo) / (hi - lo); }
};

// the y axis of the curves: log10 when every value is positive and they span 2+ decades
Axis loss_axis(const optim::Landscape& l) {
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& c : l.curves)
    for (double v : c.loss)
      if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  Axis a;
  if (!std::isfinite(lo)) return a;
  a.log = lo > 0 && hi / lo > 100;
  if (a.log) lo = std::log10(lo), hi = std::log10(hi);
  const double pad = hi > lo ? 0.06 * (hi - lo) : std::max(1e-12, std::abs(hi) * 0.1 + 1e-12);
  a.lo = lo - pad;
  a.hi = hi + pad;
  return a;
}

}  // namespace

std::uint32_t landscape_heat(double t) {
  static const double stops[][3] = {{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};
  t = std::clamp(t, 0.0, 1.0) * 4;
  const int i = std::min(3, int(t));
  const double f = t - i;
  std::uint32_t c = 0;
  for (int k = 0; k < 3; ++k) c = (c << 8) | std::uint32_t(std::lround(stops[i][k] * (1 - f) + stops[i + 1][k] * f));
  return c;
}

namespace {

void draw_curves(Canvas& cv, const optim::Landscape& l, int x0, int y0, int w, int h) {
  const Axis ya = loss_axis(l);
  const double slo = l.s.front(), shi = l.s.back();
  auto X = [&](double s) { return x0 + (s - slo) / (shi - slo) * w; };
  auto Y = [&](double v) { return y0 + h - ya.map(v) * h; };
  // grid and ticks
  for (double t : nice_ticks(slo, shi, 8)) {
    cv.line(X(t), y0, X(t), y0 + h, k_grid);
    cv.line(X(t), y0 + h, X(t), y0 + h + 5, k_ink);
    cv.text(int(X(t)), y0 + h + 9, tick_label(t), k_ink, 1);
  }
  for (double t : nice_ticks(ya.lo, ya.hi, 6)) {
    const double y = y0 + h - (t - ya.lo) / (ya.hi - ya.lo) * h;
    cv.line(x0, y, x0 + w, y, k_grid);
    cv.line(x0 - 5, y, x0, y, k_ink);
    cv.text(x0 - 9, int(y) - 7, ya.log ? "1e" + tick_label(t) : tick_label(t), k_ink, 2);
  }
  cv.line(x0, y0 + h, x0 + w, y0 + h, k_ink, 2);
  cv.line(x0, y0, x0, y0 + h, k_ink, 2);
  cv.line(X(0), y0, X(0), y0 + h, 0x999999, 1, 4);  // the centre
  cv.text(x0 + w / 2, y0 + h + 34, "s: offset along " + l.direction + " [parameter units]", k_ink, 1);
  cv.text(x0, y0 - 22, ya.log ? "loss (log10 scale)" : "loss", k_ink);
  // curves, the task's own last so it is on top; each one's tangent at the centre, dashed
  for (int c = int(l.curves.size()) - 1; c >= 0; --c) {
    const optim::LandscapeCurve& cu = l.curves[size_t(c)];
    const std::uint32_t col = landscape_colour(c);
    for (size_t k = 0; k + 1 < l.s.size(); ++k) {
      const double a = cu.loss[k], b = cu.loss[k + 1];
      if (std::isfinite(a) && std::isfinite(b) && (!ya.log || (a > 0 && b > 0)))
        cv.line(X(l.s[k]), Y(a), X(l.s[k + 1]), Y(b), col, c == 0 ? 3 : 2);
    }
    for (size_t k = 0; k < l.s.size(); ++k)
      if (std::isfinite(cu.loss[k]) && (!ya.log || cu.loss[k] > 0))
        cv.rect(int(X(l.s[k])) - 2, int(Y(cu.loss[k])) - 2, int(X(l.s[k])) + 3, int(Y(cu.loss[k])) + 3, col);
    if (std::isfinite(cu.slope) && std::isfinite(cu.centre_loss)) {
      const double half = 0.25 * (shi - slo);  // the tangent over half the span, in the loss's units
      const int n = 24;
      for (int i = 0; i < n; ++i) {
        const double s0 = -half + 2 * half * i / n, s1 = -half + 2 * half * (i + 1) / n;
        const double v0 = cu.centre_loss + cu.slope * s0, v1 = cu.centre_loss + cu.slope * s1;
        const bool inside = Y(v0) >= y0 && Y(v0) <= y0 + h && Y(v1) >= y0 && Y(v1) <= y0 + h;  // clipped
        if (i % 2 == 0 && inside && (!ya.log || (v0 > 0 && v1 > 0))) cv.line(X(s0), Y(v0), X(s1), Y(v1), col, 2);
      }
    }
  }
  // legend, under the axis
  int lx = x0, ly = y0 + h + 60;
  for (size_t c = 0; c < l.curves.size(); ++c) {
    const optim::LandscapeCurve& cu = l.curves[c];
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s (slope %.3g)", cu.label.c_str(), cu.slope);
    const int tw = stb_easy_font_width(buf) * k_text_scale + 50;
    if (lx + tw > x0 + w) lx = x0, ly += 20;
    cv.rect(lx, ly + 5, lx + 20, ly + 9, landscape_colour(int(c)));
    cv.text(lx + 26, ly, buf, k_ink);
    lx += tw;
  }
  cv.text(lx, ly, "dashed: analytic tangent g.d", 0x666666);
}

void draw_heat(Canvas& cv, const optim::Landscape& l, int x0, int y0, int size) {
  const int g = l.grid;
  double lo = INFINITY, hi = -INFINITY;
  for (double v : l.loss2d)
    if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  if (!std::isfinite(lo)) return;
  const bool log = lo > 0 && hi / lo > 100;
  auto tr = [&](double v) { return log ? std::log10(v) : v; };
  const double tlo = tr(lo), thi = tr(hi) > tr(lo) ? tr(hi) : tr(lo) + 1;
  // bilinear loss at a pixel, in [0, 1]
  auto value = [&](int px, int py) {
    const double u = double(px) / (size - 1) * (g - 1), v = double(size - 1 - py) / (size - 1) * (g - 1);
    const int i = std::min(g - 2, int(u)), j = std::min(g - 2, int(v));
    const double fu = u - i, fv = v - j;
    auto at = [&](int a, int b) { return tr(l.loss2d[size_t(b * g + a)]); };
    const double m =
        (at(i, j) * (1 - fu) + at(i + 1, j) * fu) * (1 - fv) + (at(i, j + 1) * (1 - fu) + at(i + 1, j + 1) * fu) * fv;
    return (m - tlo) / (thi - tlo);
  };
  constexpr int levels = 12;
  std::vector<double> val(size_t(size) * size_t(size));
  for (int py = 0; py < size; ++py)
    for (int px = 0; px < size; ++px) val[size_t(py * size + px)] = value(px, py);
  for (int py = 0; py < size; ++py)
    for (int px = 0; px < size; ++px) {
      const double v = val[size_t(py * size + px)];
      const int band = std::isfinite(v) ? int(std::floor(v * levels)) : -1;
      const bool edge = (px + 1 < size && int(std::floor(val[size_t(py * size + px + 1)] * levels)) != band) ||
                        (py + 1 < size && int(std::floor(val[size_t((py + 1) * size + px)] * levels)) != band);
      cv.put(x0 + px, y0 + py, std::isfinite(v) ? (edge ? 0xffffff : landscape_heat(v)) : 0xff00ff, edge ? 0.7f : 1.f);
    }
  cv.line(x0, y0 + size, x0 + size, y0 + size, k_ink, 2);
  cv.line(x0, y0, x0, y0 + size, k_ink, 2);
  // the gradient at the centre: an arrow (uphill) a quarter of the panel long
  const double gl = std::hypot(l.grad_d, l.grad_d2);
  if (gl > 0) {
    const double cx = x0 + size / 2.0, cy = y0 + size / 2.0, L = size / 4.0;
    const double ex = cx + l.grad_d / gl * L, ey = cy - l.grad_d2 / gl * L;
    cv.line(cx, cy, ex, ey, 0xffffff, 4);
    cv.line(cx, cy, ex, ey, 0xd9541e, 2);
    const double ax = (ex - cx) / L, ay = (ey - cy) / L;
    for (double side : {-1.0, 1.0})
      cv.line(ex, ey, ex - 14 * ax + side * 8 * ay, ey - 14 * ay - side * 8 * ax, 0xd9541e, 2);
  }
  cv.rect(int(x0 + size / 2) - 3, int(y0 + size / 2) - 3, int(x0 + size / 2) + 4, int(y0 + size / 2) + 4, 0xffffff);
  cv.text(x0 + size / 2, y0 + size + 9, "along " + l.direction, k_ink, 1);
  cv.text(x0, y0 - 22, std::string("2D slice, loss") + (log ? " (log10)" : "") + "; arrow: gradient", k_ink);
  cv.text(x0 + size + 8, y0 + size / 2 - 7, "d2", k_ink);
  // colour bar
  for (int py = 0; py < size; ++py)
    cv.rect(x0 + size + 30, y0 + py, x0 + size + 44, y0 + py + 1, landscape_heat(1.0 - double(py) / (size - 1)));
  cv.text(x0 + size + 50, y0, tick_label(log ? std::pow(10, thi) : thi), k_ink);
  cv.text(x0 + size + 50, y0 + size - 14, tick_label(log ? std::pow(10, tlo) : tlo), k_ink);
}

}  // namespace

std::uint32_t landscape_colour(int curve) {
  return k_palette[size_t(curve) % (sizeof k_palette / sizeof k_palette[0])];
}

PlotImage plot_landscape(const optim::Landscape& l) {
  const int plot_w = 860, plot_h = 440, heat_size = 440;
  const int width = l.grid > 1 ? 1200 + heat_size + 40 : 1040;
  const int height = 80 + plot_h + 60 + 20 * (1 + int(l.curves.size()) / 2) + 20;
  Canvas cv(width, height);
  cv.rect(0, 0, width, height, k_background);
  cv.text(20, 14, "task '" + l.task + "': loss landscape", k_ink);
  draw_curves(cv, l, 120, 80, plot_w, plot_h);
  if (l.grid > 1) draw_heat(cv, l, 120 + plot_w + 80, 80, heat_size);
  return cv.take();
}

}  // namespace adj::app
