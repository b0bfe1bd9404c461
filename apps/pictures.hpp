/// @file pictures.hpp
/// @brief What gs_render draws with: the inferno colormap, PNG files (libpng), an animated GIF
///        (giflib) and running ffmpeg without a shell. Every picture is written through
///        gs::OutputFile (common/include/gs/output_file.hpp): into a temporary file beside it,
///        renamed over the old picture only once complete, so a failed write (e.g. "No space left
///        on device") or a signal leaves the previous picture as it was.
#pragma once

#include <array>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "gs/output_file.hpp"

namespace gs::render {

/// @brief Thrown when a helper program (ffmpeg) cannot be run.
class PictureError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// @brief The inferno colormap at @p t in [0, 1] (clamped; NaN counts as 0): gs::inferno() of
///        common/include/gs/colormap.hpp, the colormap of every picture of the course.
std::array<unsigned char, 3> inferno(double t);

/// @brief The 256 colours of the GIF palette: inferno(i / 255) for i = 0..255.
std::array<std::array<unsigned char, 3>, 256> inferno_palette();

/// @brief Writes @p v (rows x cols, row-major) as an 8-bit RGB PNG at @p path, @p vmin black and
///        @p vmax white, through a gs::OutputFile made with @p options (its flag names the file
///        in messages), flushed to the disk before it replaces the old one.
/// @throws gs::OutputError naming the flag, the file and the reason; nothing is replaced.
void write_png(const std::string& path, const gs::OutputOptions& options, int rows, int cols,
               const std::vector<float>& v, float vmin, float vmax);

/// @brief The size of a frame in the GIF: each side divided by @p factor, rounded up.
struct GifGeometry {
  int factor = 1;  ///< Cells averaged along each side into one pixel.
  int width = 0;   ///< Pixels across.
  int height = 0;  ///< Pixels down.
};

/// @brief The smallest integer downscaling of a @p rows x @p cols frame whose longer side is at
///        most @p max_size pixels (0: no limit) and at most 65,535 (the GIF format's limit).
GifGeometry gif_geometry(int rows, int cols, int max_size);

/// @brief Palette indices (0 = @p vmin, 255 = @p vmax) of frame @p v downscaled to @p geometry:
///        each pixel is the mean of the finite values of its factor x factor block.
std::vector<unsigned char> gif_pixels(const std::vector<float>& v, int rows, int cols,
                                      const GifGeometry& geometry, float vmin, float vmax);

/// @brief True when this gs_render was built with giflib (CMake found libgif-dev).
inline constexpr bool kHaveGif = GS_HAVE_GIF != 0;

/// @brief What gs_render says when --gif is asked of a build without giflib.
inline constexpr const char* kNoGifSupport =
    "this gs_render was built without giflib, so it cannot write GIFs (install libgif-dev, e.g. "
    "bash scripts/setup.sh, then configure and build again); the PNG frames need nothing else";

/// @brief An animated GIF that loops forever, written frame by frame through a gs::OutputFile:
///        the inferno palette, one delay for every frame. It replaces the old file only when
///        finish() succeeds; destroyed before, it leaves the old file as it was.
class GifAnimation {
 public:
  /// @brief Starts writing @p path (through a gs::OutputFile made with @p options) for frames of
  ///        @p width x @p height pixels shown @p delay_centiseconds hundredths of a second each.
  GifAnimation(const std::string& path, const gs::OutputOptions& options, int width, int height,
               int delay_centiseconds);
  /// @brief Deletes the temporary file unless finish() succeeded.
  ~GifAnimation();
  GifAnimation(const GifAnimation&) = delete;             ///< Owns a file: not copyable.
  GifAnimation& operator=(const GifAnimation&) = delete;  ///< Owns a file: not copyable.

  /// @brief Appends one frame of width * height palette indices.
  void add_frame(const std::vector<unsigned char>& pixels);
  /// @brief Writes the end of the file, flushes it to the disk and renames it into place.
  void finish();
  /// @brief Frames added so far.
  int frames() const { return frames_; }

 private:
  void fail(const std::string& what, int gif_error);

  std::string path_;
  std::unique_ptr<gs::OutputFile> file_;
  void* gif_ = nullptr;  // GifFileType*, kept out of this header
  int width_;
  int height_;
  int delay_;
  int frames_ = 0;
  bool finished_ = false;
};

/// @brief The full path of @p program found in the directories of $PATH, or "" if none.
std::string find_program(const std::string& program);

/// @brief Runs @p arguments (arguments[0] a full path) as a child process with no shell between,
///        waits for it and returns its exit status (128 + the signal if one ended it).
/// @throws PictureError when it cannot be started.
int run_without_shell(const std::vector<std::string>& arguments);

}  // namespace gs::render
