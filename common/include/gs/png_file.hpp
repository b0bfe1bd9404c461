/// @file png_file.hpp
/// @brief PNG pictures (libpng) written through gs::OutputFile, so that a picture obeys the same
///        rules as every other output (output_file.hpp): gs_render's frames and lesson 09's map.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "gs/output_file.hpp"

namespace gs {

/// @brief The largest width and height libpng writes by default, in pixels: its user limits
///        PNG_USER_WIDTH_MAX and PNG_USER_HEIGHT_MAX (1,000,000), which png_set_IHDR enforces.
inline constexpr int kMaxPngSide = 1000000;

/// @brief Refuses, before any work, a picture of @p width x @p height pixels that libpng would
///        refuse when it is written: a side below 1 or above kMaxPngSide.
/// @throws OutputError naming @p flag and @p path, the size and the limit.
void check_png_size(int width, int height, const std::string& path, const std::string& flag);

/// @brief Fills row @p y (0 at the top) of a picture: 3 bytes (R, G, B) per pixel.
using PngRowFiller = std::function<void(int y, unsigned char* rgb)>;

/// @brief Writes an 8-bit RGB PNG of @p width x @p height pixels into @p file (which the caller
///        commits), the rows made by @p fill_row. Throws OutputError: a failed write (e.g. the
///        disk is full) or what libpng refused.
void write_rgb_png(OutputFile& file, int width, int height, const PngRowFiller& fill_row);

}  // namespace gs
