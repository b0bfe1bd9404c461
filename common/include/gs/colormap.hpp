/// @file colormap.hpp
/// @brief The colormap of every picture of the course: matplotlib's "inferno" (N. Smith and
///        S. van der Walt, CC0), from black through purple and orange to pale yellow. Its
///        brightness rises steadily with the value, so a picture reads the same in grey, and
///        v = 0 (no pattern) is black.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>

namespace gs {

/// @brief A colour as three 8-bit channels: red, green, blue.
using Rgb = std::array<unsigned char, 3>;

/// @brief Inferno sampled at ten evenly spaced points of [0, 1]; linear interpolation between
///        them stays within a few levels of matplotlib's full 256-entry table.
inline constexpr std::array<Rgb, 10> kInfernoSamples = {{{0x00, 0x00, 0x04},
                                                         {0x1B, 0x0C, 0x42},
                                                         {0x4B, 0x0C, 0x6B},
                                                         {0x78, 0x1C, 0x6D},
                                                         {0xA5, 0x2C, 0x60},
                                                         {0xCF, 0x44, 0x46},
                                                         {0xED, 0x69, 0x25},
                                                         {0xFB, 0x9A, 0x06},
                                                         {0xF7, 0xD0, 0x3C},
                                                         {0xFC, 0xFF, 0xA4}}};

/// @brief The inferno colour of @p t: 0 is black, 1 pale yellow; values outside [0, 1] are
///        clamped, and one that is not finite (NaN, infinite) gets the colour of 0.
inline Rgb inferno(double t) {
  constexpr std::size_t kLast = kInfernoSamples.size() - 1;
  t = std::clamp(std::isfinite(t) ? t : 0.0, 0.0, 1.0) * static_cast<double>(kLast);
  const std::size_t low = std::min<std::size_t>(static_cast<std::size_t>(t), kLast - 1);
  const double weight = t - static_cast<double>(low);
  Rgb rgb{};
  for (std::size_t channel = 0; channel < 3; ++channel) {
    const double value =
        (1.0 - weight) * kInfernoSamples[low][channel] + weight * kInfernoSamples[low + 1][channel];
    rgb[channel] = static_cast<unsigned char>(std::lround(value));
  }
  return rgb;
}

}  // namespace gs
