// Lesson 09: the map of patterns, the picture gs_sweep draws. One tile per member (its final v,
// inferno colormap, one scale for every tile), laid out on the (F, k) axes: k grows to the
// right, F grows upwards, as in Pearson's map; tick values and axis names in a small bitmap
// font, a colour bar on the right. Read, not edited.
#pragma once

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
// member m = (feed index) * kill.size() + (kill index).
Image draw_mosaic(const float* v, int rows, int cols, const MosaicLayout& layout);

// Writes `image` as a PNG file at exactly `path` (the caller chooses a temporary name and renames
// it once everything is written), flushed to the disk first if `flush_to_disk`. Throws
// gs::OutputError.
void write_png(const std::string& path, const Image& image, bool flush_to_disk);

// The width in pixels of `text` drawn at `scale` by the picture's font (6 x 9 pixels a glyph).
int text_width(const std::string& text, int scale);

}  // namespace GS_LESSON_NAMESPACE
