// Lesson 09: the map of patterns, the picture gs_sweep draws. One tile per member (its final v,
// inferno colormap, one scale for every tile), laid out on the (F, k) axes: k grows to the
// right, F grows upwards, as in Pearson's map; tick values and axis names in a small bitmap
// font, a colour bar on the right. The program writes it as a PNG (gs/png_file.hpp). Read, not
// edited.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace GS_LESSON_NAMESPACE {

// What the picture shows and how large it is drawn.
struct MosaicLayout {
  std::vector<double> feed;        // F of each row of tiles, ascending (drawn bottom to top)
  std::vector<double> kill;        // k of each column of tiles, ascending (drawn left to right)
  int tile_pixels = 64;            // height of a tile; its width keeps the member's aspect ratio
  float vmin = 0.0f;               // v drawn black
  float vmax = 1.0f;               // v drawn pale yellow
  std::vector<std::string> title;  // lines above the map
};

// An RGB picture, row by row from the top, 3 bytes per pixel.
struct Image {
  int width = 0;
  int height = 0;
  std::vector<unsigned char> rgb;
};

// The map of `v`: feed.size() * kill.size() members of rows x cols cells, [member][row][col],
// member m = (feed index) * kill.size() + (kill index). Its size is mosaic_size()'s, which must fit
// a PNG (gs::check_png_size()).
Image draw_mosaic(const float* v, int rows, int cols, const MosaicLayout& layout);

// The size in pixels draw_mosaic() gives the map, told without drawing it (64-bit: a map too large
// for a PNG is refused before any work).
struct MosaicSize {
  std::int64_t width = 0;
  std::int64_t height = 0;
};
MosaicSize mosaic_size(int rows, int cols, const MosaicLayout& layout);

// The width in pixels of `text` drawn at `scale` by the picture's font (6 x 9 pixels a glyph).
int text_width(const std::string& text, int scale);

}  // namespace GS_LESSON_NAMESPACE
