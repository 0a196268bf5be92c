#pragma once
// The picture of a loss landscape (engine/optim/landscape.h), drawn on the CPU into RGBA8:
// the 1D slice's curves (one per contact setting, with each one's analytic tangent at the
// centre, dashed), axes with ticks in the loss's units (log10 when it spans decades, said on
// the axis), a legend; with a 2D slice, a heat map beside it with contour lines and the
// gradient's arrow at the centre. Text through stb_easy_font.
#include <cstdint>
#include <vector>

#include "engine/optim/landscape.h"

namespace adj::app {

struct PlotImage {
  int width = 0, height = 0;
  std::vector<std::uint8_t> rgba;  // width * height * 4
};

// the curve colours, in order (the task's own contact first), 0xRRGGBB; the PNG and the
// editor's Landscape panel draw with them
std::uint32_t landscape_colour(int curve);
// the heat map's colour at t in [0, 1] (dark blue - teal - yellow, as viridis), 0xRRGGBB
std::uint32_t landscape_heat(double t);
// about `want` round tick values covering [lo, hi]
std::vector<double> nice_ticks(double lo, double hi, int want);

PlotImage plot_landscape(const optim::Landscape& l);

}  // namespace adj::app
