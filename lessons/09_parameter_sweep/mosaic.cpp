// Lesson 09: the map of patterns (mosaic.hpp): tiles, axes, a colour bar, a bitmap font, libpng.
#include "mosaic.hpp"

#include <png.h>

#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "gs/colormap.hpp"
#include "gs/hdf5_io.hpp"

namespace GS_LESSON_NAMESPACE {
namespace {

// The font: 5 x 8 pixel glyphs drawn for this picture ('#' ink, '.' paper; rows top to bottom,
// the eighth row for the tails of g, j, p, q, y), 6 x 9 pixels with the spacing. Only the
// characters the picture needs; any other draws as a blank.
struct Glyph {
  char character;
  const char* rows;  // 8 rows of 5 pixels, separated by spaces
};

constexpr Glyph kGlyphs[] = {
    {' ', "..... ..... ..... ..... ..... ..... ..... ....."},
    {'0', ".###. #...# #..## #.#.# ##..# #...# .###. ....."},
    {'1', "..#.. .##.. ..#.. ..#.. ..#.. ..#.. .###. ....."},
    {'2', ".###. #...# ....# ...#. ..#.. .#... ##### ....."},
    {'3', "##### ...#. ..#.. ...#. ....# #...# .###. ....."},
    {'4', "...#. ..##. .#.#. #..#. ##### ...#. ...#. ....."},
    {'5', "##### #.... ####. ....# ....# #...# .###. ....."},
    {'6', "..##. .#... #.... ####. #...# #...# .###. ....."},
    {'7', "##### ....# ...#. ..#.. .#... .#... .#... ....."},
    {'8', ".###. #...# #...# .###. #...# #...# .###. ....."},
    {'9', ".###. #...# #...# .#### ....# ...#. .##.. ....."},
    {'.', "..... ..... ..... ..... ..... .##.. .##.. ....."},
    {',', "..... ..... ..... ..... .##.. ..#.. .#... ....."},
    {'-', "..... ..... ..... ##### ..... ..... ..... ....."},
    {'+', "..... ..#.. ..#.. ##### ..#.. ..#.. ..... ....."},
    {':', "..... .##.. .##.. ..... .##.. .##.. ..... ....."},
    {'=', "..... ..... ##### ..... ##### ..... ..... ....."},
    {'(', "...#. ..#.. .#... .#... .#... ..#.. ...#. ....."},
    {')', ".#... ..#.. ...#. ...#. ...#. ..#.. .#... ....."},
    {';', "..... .##.. .##.. ..... .##.. ..#.. .#... ....."},
    {'\'', "..#.. ..#.. .#... ..... ..... ..... ..... ....."},
    {'/', "..... ....# ...#. ..#.. .#... #.... ..... ....."},
    {'A', ".###. #...# #...# ##### #...# #...# #...# ....."},
    {'B', "####. #...# #...# ####. #...# #...# ####. ....."},
    {'C', ".###. #...# #.... #.... #.... #...# .###. ....."},
    {'D', "###.. #..#. #...# #...# #...# #..#. ###.. ....."},
    {'E', "##### #.... #.... ####. #.... #.... ##### ....."},
    {'F', "##### #.... #.... ####. #.... #.... #.... ....."},
    {'G', ".###. #...# #.... #.### #...# #...# .#### ....."},
    {'H', "#...# #...# #...# ##### #...# #...# #...# ....."},
    {'I', ".###. ..#.. ..#.. ..#.. ..#.. ..#.. .###. ....."},
    {'J', "..### ...#. ...#. ...#. ...#. #..#. .##.. ....."},
    {'K', "#...# #..#. #.#.. ##... #.#.. #..#. #...# ....."},
    {'L', "#.... #.... #.... #.... #.... #.... ##### ....."},
    {'M', "#...# ##.## #.#.# #.#.# #...# #...# #...# ....."},
    {'N', "#...# #...# ##..# #.#.# #..## #...# #...# ....."},
    {'O', ".###. #...# #...# #...# #...# #...# .###. ....."},
    {'P', "####. #...# #...# ####. #.... #.... #.... ....."},
    {'Q', ".###. #...# #...# #...# #.#.# #..#. .##.# ....."},
    {'R', "####. #...# #...# ####. #.#.. #..#. #...# ....."},
    {'S', ".#### #.... #.... .###. ....# ....# ####. ....."},
    {'T', "##### ..#.. ..#.. ..#.. ..#.. ..#.. ..#.. ....."},
    {'U', "#...# #...# #...# #...# #...# #...# .###. ....."},
    {'V', "#...# #...# #...# #...# #...# .#.#. ..#.. ....."},
    {'W', "#...# #...# #...# #.#.# #.#.# #.#.# .#.#. ....."},
    {'X', "#...# #...# .#.#. ..#.. .#.#. #...# #...# ....."},
    {'Y', "#...# #...# .#.#. ..#.. ..#.. ..#.. ..#.. ....."},
    {'Z', "##### ....# ...#. ..#.. .#... #.... ##### ....."},
    {'a', "..... ..... .###. ....# .#### #...# .#### ....."},
    {'b', "#.... #.... #.##. ##..# #...# #...# ####. ....."},
    {'c', "..... ..... .###. #.... #.... #...# .###. ....."},
    {'d', "....# ....# .##.# #..## #...# #...# .#### ....."},
    {'e', "..... ..... .###. #...# ##### #.... .###. ....."},
    {'f', "..##. .#..# .#... ###.. .#... .#... .#... ....."},
    {'g', "..... ..... .#### #...# #...# .#### ....# .###."},
    {'h', "#.... #.... #.##. ##..# #...# #...# #...# ....."},
    {'i', "..#.. ..... .##.. ..#.. ..#.. ..#.. .###. ....."},
    {'j', "...#. ..... ..##. ...#. ...#. ...#. #..#. .##.."},
    {'k', "#.... #.... #..#. #.#.. ##... #.#.. #..#. ....."},
    {'l', ".##.. ..#.. ..#.. ..#.. ..#.. ..#.. .###. ....."},
    {'m', "..... ..... ##.#. #.#.# #.#.# #.#.# #.#.# ....."},
    {'n', "..... ..... #.##. ##..# #...# #...# #...# ....."},
    {'o', "..... ..... .###. #...# #...# #...# .###. ....."},
    {'p', "..... ..... ####. #...# #...# ####. #.... #...."},
    {'q', "..... ..... .#### #...# #...# .#### ....# ....#"},
    {'r', "..... ..... #.##. ##..# #.... #.... #.... ....."},
    {'s', "..... ..... .#### #.... .###. ....# ####. ....."},
    {'t', ".#... .#... ###.. .#... .#... .#..# ..##. ....."},
    {'u', "..... ..... #...# #...# #...# #..## .##.# ....."},
    {'v', "..... ..... #...# #...# #...# .#.#. ..#.. ....."},
    {'w', "..... ..... #...# #...# #.#.# #.#.# .#.#. ....."},
    {'x', "..... ..... #...# .#.#. ..#.. .#.#. #...# ....."},
    {'y', "..... ..... #...# #...# #...# .#### ....# .###."},
    {'z', "..... ..... ##### ...#. ..#.. .#... ##### ....."},
};

constexpr int kGlyphCols = 5;
constexpr int kGlyphRows = 8;
constexpr int kCellCols = kGlyphCols + 1;  // one column of spacing
constexpr int kCellRows = kGlyphRows + 1;  // one row of spacing

const Glyph* find_glyph(char character) {
  for (const Glyph& glyph : kGlyphs) {
    if (glyph.character == character) return &glyph;
  }
  return nullptr;
}

bool glyph_ink(const Glyph& glyph, int row, int col) {
  return glyph.rows[row * (kGlyphCols + 1) + col] == '#';
}

constexpr gs::Rgb kPaper = {255, 255, 255};
constexpr gs::Rgb kInk = {31, 35, 40};

void put(Image& image, int x, int y, const gs::Rgb& colour) {
  if (x < 0 || y < 0 || x >= image.width || y >= image.height) return;
  const std::size_t at = (static_cast<std::size_t>(y) * image.width + x) * 3;
  image.rgb[at] = colour[0];
  image.rgb[at + 1] = colour[1];
  image.rgb[at + 2] = colour[2];
}

void fill(Image& image, int x, int y, int width, int height, const gs::Rgb& colour) {
  for (int dy = 0; dy < height; ++dy) {
    for (int dx = 0; dx < width; ++dx) put(image, x + dx, y + dy, colour);
  }
}

// `text` with its top-left corner at (x, y), each font pixel drawn as scale x scale pixels.
void draw_text(Image& image, int x, int y, const std::string& text, int scale) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const Glyph* glyph = find_glyph(text[i]);
    if (glyph == nullptr) continue;
    const int left = x + static_cast<int>(i) * kCellCols * scale;
    for (int row = 0; row < kGlyphRows; ++row) {
      for (int col = 0; col < kGlyphCols; ++col) {
        if (glyph_ink(*glyph, row, col)) {
          fill(image, left + col * scale, y + row * scale, scale, scale, kInk);
        }
      }
    }
  }
}

// `text` turned a quarter turn counter-clockwise (read from bottom to top), its box starting at
// column x and ending at row y (the bottom of the first glyph).
void draw_text_up(Image& image, int x, int y, const std::string& text, int scale) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const Glyph* glyph = find_glyph(text[i]);
    if (glyph == nullptr) continue;
    const int along = static_cast<int>(i) * kCellCols * scale;
    for (int row = 0; row < kGlyphRows; ++row) {
      for (int col = 0; col < kGlyphCols; ++col) {
        if (glyph_ink(*glyph, row, col)) {
          fill(image, x + row * scale, y - along - (col + 1) * scale + 1, scale, scale, kInk);
        }
      }
    }
  }
}

// Tick values with as many decimals as the spacing between two labelled ticks needs.
std::string format_value(double value, double spacing) {
  int decimals = 2;
  if (spacing > 0.0)
    decimals = std::clamp(static_cast<int>(std::ceil(-std::log10(spacing))) + 1, 2, 6);
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

// Every how many tiles a label fits: labels `extent` pixels long (plus a margin) on tiles
// `pitch` pixels apart, and at most about ten labels on an axis.
int label_stride(int count, int extent, int pitch) {
  const int fit = (extent + pitch - 1) / pitch;
  const int few = (count + 9) / 10;
  return std::max({1, fit, few});
}

// The mean of v over the cells of the member that fall into one pixel of its tile; at least one
// cell, so that a tile larger than its member repeats cells.
float pixel_value(const float* member, int rows, int cols, int tile_height, int tile_width, int py,
                  int px) {
  const auto range = [](int pixel, int pixels, int cells) {
    const int begin = static_cast<int>(std::int64_t{pixel} * cells / pixels);
    const int end = static_cast<int>(std::int64_t{pixel + 1} * cells / pixels);
    return std::pair<int, int>{begin, std::max(end, begin + 1)};
  };
  const auto [row_begin, row_end] = range(py, tile_height, rows);
  const auto [col_begin, col_end] = range(px, tile_width, cols);
  double sum = 0.0;
  for (int row = row_begin; row < row_end; ++row) {
    for (int col = col_begin; col < col_end; ++col) {
      sum += member[static_cast<std::size_t>(row) * cols + col];
    }
  }
  return static_cast<float>(sum / ((row_end - row_begin) * (col_end - col_begin)));
}

}  // namespace

int text_width(const std::string& text, int scale) {
  return text.empty() ? 0 : static_cast<int>(text.size()) * kCellCols * scale - scale;
}

Image draw_mosaic(const float* v, int rows, int cols, const MosaicLayout& layout) {
  constexpr int kScale = 2;  // font pixels are 2 x 2 pixels
  constexpr int kPad = 16;
  constexpr int kTick = 6;
  constexpr int kLabelGap = 8;  // between a tick and its value: a tick must not read as a minus
  constexpr int kBarWidth = 18;
  const int char_height = kCellRows * kScale;
  const int feeds = static_cast<int>(layout.feed.size());
  const int kills = static_cast<int>(layout.kill.size());
  const int tile_height = std::max(1, layout.tile_pixels);
  const int tile_width =
      std::max(1, static_cast<int>(std::lround(static_cast<double>(tile_height) * cols / rows)));
  const int gap = std::max(1, tile_height / 32);
  const int pitch_x = tile_width + gap;
  const int pitch_y = tile_height + gap;
  const int grid_width = kills * pitch_x - gap;
  const int grid_height = feeds * pitch_y - gap;

  // The labels: which tiles get one, and their text.
  auto labels = [&](const std::vector<double>& values, int stride) {
    std::vector<std::string> text(values.size());
    const double spacing =
        values.size() > 1 ? (values.back() - values.front()) / (values.size() - 1) * stride : 0.0;
    for (std::size_t i = 0; i < values.size(); i += static_cast<std::size_t>(stride)) {
      text[i] = format_value(values[i], spacing);
    }
    return text;
  };
  const int sample_width = text_width(format_value(0.0, 1e-4), kScale);
  const int kill_stride = label_stride(kills, sample_width + 2 * kCellCols * kScale, pitch_x);
  const int feed_stride = label_stride(feeds, char_height + 6, pitch_y);
  const std::vector<std::string> kill_labels = labels(layout.kill, kill_stride);
  const std::vector<std::string> feed_labels = labels(layout.feed, feed_stride);
  int feed_label_width = 0;
  for (const std::string& text : feed_labels) {
    feed_label_width = std::max(feed_label_width, text_width(text, kScale));
  }
  const std::string bar_labels[3] = {format_value(layout.vmin, 0.01),
                                     format_value(0.5 * (layout.vmin + layout.vmax), 0.01),
                                     format_value(layout.vmax, 0.01)};
  int bar_label_width = text_width("v", kScale);
  for (const std::string& text : bar_labels) {
    bar_label_width = std::max(bar_label_width, text_width(text, kScale));
  }

  const int left = kPad + char_height + kPad / 2 + feed_label_width + kLabelGap + kTick + 2;
  // Above the map: the title, then room for the colour bar's name.
  const int top =
      kPad + static_cast<int>(layout.title.size()) * (char_height + 4) + char_height + kPad;
  const int bottom = kTick + 4 + char_height + 8 + char_height + kPad;
  const int right = kPad + kBarWidth + kTick + kLabelGap + bar_label_width + kPad;
  int title_width = 0;
  for (const std::string& line : layout.title) {
    title_width = std::max(title_width, text_width(line, kScale));
  }
  Image image;
  image.width = std::max(left + grid_width + right, 2 * kPad + title_width);
  image.height = top + grid_height + bottom;
  image.rgb.assign(static_cast<std::size_t>(image.width) * image.height * 3, 255);

  for (std::size_t i = 0; i < layout.title.size(); ++i) {
    draw_text(image, kPad, kPad + static_cast<int>(i) * (char_height + 4), layout.title[i], kScale);
  }

  // The tiles: member m = f * kills + k at column k, row feeds - 1 - f (F grows upwards).
  const double scale = layout.vmax > layout.vmin ? 1.0 / (layout.vmax - layout.vmin) : 0.0;
  const std::size_t member_cells = static_cast<std::size_t>(rows) * cols;
  for (int f = 0; f < feeds; ++f) {
    for (int k = 0; k < kills; ++k) {
      const float* member = v + static_cast<std::size_t>(f * kills + k) * member_cells;
      const int x0 = left + k * pitch_x;
      const int y0 = top + (feeds - 1 - f) * pitch_y;
      for (int py = 0; py < tile_height; ++py) {
        for (int px = 0; px < tile_width; ++px) {
          const float value = pixel_value(member, rows, cols, tile_height, tile_width, py, px);
          put(image, x0 + px, y0 + py, gs::inferno((value - layout.vmin) * scale));
        }
      }
    }
  }

  // The k axis: ticks and values under the columns, its name under them.
  const int axis_y = top + grid_height + 2;
  for (int k = 0; k < kills; ++k) {
    if (kill_labels[k].empty()) continue;
    const int centre = left + k * pitch_x + tile_width / 2;
    fill(image, centre, axis_y, 1 + kScale / 2, kTick, kInk);
    draw_text(image, centre - text_width(kill_labels[k], kScale) / 2, axis_y + kTick + 4,
              kill_labels[k], kScale);
  }
  const std::string kill_name = "kill rate k";
  draw_text(image, left + grid_width / 2 - text_width(kill_name, kScale) / 2,
            axis_y + kTick + 4 + char_height + 8, kill_name, kScale);

  // The F axis: ticks and values left of the rows, its name turned upwards.
  for (int f = 0; f < feeds; ++f) {
    if (feed_labels[f].empty()) continue;
    const int centre = top + (feeds - 1 - f) * pitch_y + tile_height / 2;
    fill(image, left - 2 - kTick, centre, kTick, 1 + kScale / 2, kInk);
    draw_text(image, left - 2 - kTick - kLabelGap - text_width(feed_labels[f], kScale),
              centre - (kGlyphRows - 1) * kScale / 2, feed_labels[f], kScale);
  }
  const std::string feed_name = "feed rate F";
  draw_text_up(image, kPad, top + grid_height / 2 + text_width(feed_name, kScale) / 2, feed_name,
               kScale);

  // The colour bar: vmin at the bottom, vmax at the top, three values.
  const int bar_x = left + grid_width + kPad;
  for (int y = 0; y < grid_height; ++y) {
    const double t = grid_height > 1 ? 1.0 - static_cast<double>(y) / (grid_height - 1) : 1.0;
    fill(image, bar_x, top + y, kBarWidth, 1, gs::inferno(t));
  }
  for (int i = 0; i < 3; ++i) {
    const int y = top + (grid_height - 1) - i * (grid_height - 1) / 2;
    fill(image, bar_x + kBarWidth, y, kTick, 1 + kScale / 2, kInk);
    draw_text(image, bar_x + kBarWidth + kTick + kLabelGap, y - (kGlyphRows - 1) * kScale / 2,
              bar_labels[i], kScale);
  }
  draw_text(image, bar_x + kBarWidth / 2 - text_width("v", kScale) / 2, top - char_height - 8, "v",
            kScale);
  return image;
}

void write_png(const std::string& path, const Image& image, bool flush_to_disk) {
  errno = 0;
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) {
    throw gs::OutputError("cannot create '" + path + "'" +
                          (errno != 0 ? std::string(" (") + std::strerror(errno) + ")" : ""));
  }
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png != nullptr ? png_create_info_struct(png) : nullptr;
  // libpng reports errors by longjmp back here; nothing between here and the writes needs a
  // destructor.
  if (png == nullptr || info == nullptr || setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    std::fclose(file);
    std::remove(path.c_str());
    throw gs::OutputError("writing '" + path + "' failed (libpng); is the disk full?");
  }
  png_init_io(png, file);
  png_set_IHDR(png, info, static_cast<png_uint_32>(image.width),
               static_cast<png_uint_32>(image.height), 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (int y = 0; y < image.height; ++y) {
    png_write_row(png, image.rgb.data() + static_cast<std::size_t>(y) * image.width * 3);
  }
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  errno = 0;
  const bool flushed = std::fflush(file) == 0 && (!flush_to_disk || ::fsync(::fileno(file)) == 0);
  const bool closed = std::fclose(file) == 0;
  if (!flushed || !closed) {
    std::remove(path.c_str());
    throw gs::OutputError("writing '" + path + "' failed" +
                          (errno != 0 ? std::string(" (") + std::strerror(errno) + ")" : "") +
                          "; is the disk full?");
  }
}

}  // namespace GS_LESSON_NAMESPACE
