// Lesson 09: the map of patterns (mosaic.hpp): tiles, axes, a colour bar, a bitmap font. The
// program writes it as a PNG through common/'s output mechanism (gs/png_file.hpp).
#include "mosaic.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "gs/colormap.hpp"

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

namespace {

constexpr int kScale = 2;  // font pixels are 2 x 2 pixels
constexpr int kPad = 16;
constexpr int kTick = 6;
constexpr int kLabelGap = 8;  // between a tick and its value: a tick must not read as a minus
constexpr int kBarWidth = 18;
constexpr int kCharHeight = kCellRows * kScale;

// Where everything goes. The sizes are 64-bit so that the size of a picture too large to draw
// can be told (and refused) before any work; drawing happens only once it fits libpng's limits.
struct Plan {
  int feeds = 0;
  int kills = 0;
  int tile_height = 0;
  std::int64_t tile_width = 0;
  int gap = 0;
  std::int64_t pitch_x = 0;
  std::int64_t pitch_y = 0;
  std::int64_t grid_width = 0;
  std::int64_t grid_height = 0;
  std::vector<std::string> kill_labels;
  std::vector<std::string> feed_labels;
  std::string bar_labels[3];
  std::int64_t left = 0;
  std::int64_t top = 0;
  std::int64_t width = 0;
  std::int64_t height = 0;
};

Plan plan_mosaic(int rows, int cols, const MosaicLayout& layout) {
  Plan plan;
  plan.feeds = static_cast<int>(layout.feed.size());
  plan.kills = static_cast<int>(layout.kill.size());
  plan.tile_height = std::max(1, layout.tile_pixels);
  plan.tile_width =
      std::max<std::int64_t>(1, std::llround(static_cast<double>(plan.tile_height) * cols / rows));
  plan.gap = std::max(1, plan.tile_height / 32);
  plan.pitch_x = plan.tile_width + plan.gap;
  plan.pitch_y = plan.tile_height + plan.gap;
  plan.grid_width = plan.kills * plan.pitch_x - plan.gap;
  plan.grid_height = plan.feeds * plan.pitch_y - plan.gap;

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
  const auto as_pitch = [](std::int64_t pitch) {
    return static_cast<int>(std::min<std::int64_t>(pitch, 1 << 30));
  };
  const int sample_width = text_width(format_value(0.0, 1e-4), kScale);
  const int kill_stride =
      label_stride(plan.kills, sample_width + 2 * kCellCols * kScale, as_pitch(plan.pitch_x));
  const int feed_stride = label_stride(plan.feeds, kCharHeight + 6, as_pitch(plan.pitch_y));
  plan.kill_labels = labels(layout.kill, kill_stride);
  plan.feed_labels = labels(layout.feed, feed_stride);
  int feed_label_width = 0;
  for (const std::string& text : plan.feed_labels) {
    feed_label_width = std::max(feed_label_width, text_width(text, kScale));
  }
  plan.bar_labels[0] = format_value(layout.vmin, 0.01);
  plan.bar_labels[1] = format_value(0.5 * (layout.vmin + layout.vmax), 0.01);
  plan.bar_labels[2] = format_value(layout.vmax, 0.01);
  int bar_label_width = text_width("v", kScale);
  for (const std::string& text : plan.bar_labels) {
    bar_label_width = std::max(bar_label_width, text_width(text, kScale));
  }

  plan.left = kPad + kCharHeight + kPad / 2 + feed_label_width + kLabelGap + kTick + 2;
  // Above the map: the title, then room for the colour bar's name.
  plan.top = kPad + static_cast<std::int64_t>(layout.title.size()) * (kCharHeight + 4) +
             kCharHeight + kPad;
  const int bottom = kTick + 4 + kCharHeight + 8 + kCharHeight + kPad;
  const int right = kPad + kBarWidth + kTick + kLabelGap + bar_label_width + kPad;
  int title_width = 0;
  for (const std::string& line : layout.title) {
    title_width = std::max(title_width, text_width(line, kScale));
  }
  plan.width = std::max<std::int64_t>(plan.left + plan.grid_width + right, 2 * kPad + title_width);
  plan.height = plan.top + plan.grid_height + bottom;
  return plan;
}

}  // namespace

MosaicSize mosaic_size(int rows, int cols, const MosaicLayout& layout) {
  const Plan plan = plan_mosaic(rows, cols, layout);
  return {plan.width, plan.height};
}

Image draw_mosaic(const float* v, int rows, int cols, const MosaicLayout& layout) {
  const Plan plan = plan_mosaic(rows, cols, layout);
  const int char_height = kCharHeight;
  const int feeds = plan.feeds;
  const int kills = plan.kills;
  const int tile_height = plan.tile_height;
  const int tile_width = static_cast<int>(plan.tile_width);
  const int pitch_x = static_cast<int>(plan.pitch_x);
  const int pitch_y = static_cast<int>(plan.pitch_y);
  const int grid_width = static_cast<int>(plan.grid_width);
  const int grid_height = static_cast<int>(plan.grid_height);
  const std::vector<std::string>& kill_labels = plan.kill_labels;
  const std::vector<std::string>& feed_labels = plan.feed_labels;
  const std::string(&bar_labels)[3] = plan.bar_labels;
  const int left = static_cast<int>(plan.left);
  const int top = static_cast<int>(plan.top);
  Image image;
  image.width = static_cast<int>(plan.width);
  image.height = static_cast<int>(plan.height);
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

}  // namespace GS_LESSON_NAMESPACE
