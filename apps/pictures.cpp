// Pictures for gs_render: the inferno colormap, PNG through libpng, animated GIF through giflib,
// both written through gs::OutputFile, and ffmpeg started with an argument vector (posix_spawn),
// never through a shell, so that no file name is ever read as a command.
#include "pictures.hpp"

#if GS_HAVE_GIF
#include <gif_lib.h>
#endif
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "gs/colormap.hpp"
#include "gs/png_file.hpp"

extern char** environ;

namespace gs::render {
namespace {

std::string reason_of(int error_number) {
  return error_number != 0 ? std::string(" (") + std::strerror(error_number) + ")" : std::string();
}

}  // namespace

std::array<unsigned char, 3> inferno(double t) {
  return gs::inferno(t);
}

std::array<std::array<unsigned char, 3>, 256> inferno_palette() {
  std::array<std::array<unsigned char, 3>, 256> palette{};
  for (int i = 0; i < 256; ++i) palette[i] = inferno(i / 255.0);
  return palette;
}

void write_png(const std::string& path, const gs::OutputOptions& options, int rows, int cols,
               const std::vector<float>& v, float vmin, float vmax) {
  gs::OutputFile file(path, options);
  const double scale = vmax > vmin ? 1.0 / (static_cast<double>(vmax) - vmin) : 0.0;
  gs::write_rgb_png(file, cols, rows, [&](int r, unsigned char* rgb) {
    for (int c = 0; c < cols; ++c) {
      const auto colour = inferno((v[static_cast<std::size_t>(r) * cols + c] - vmin) * scale);
      std::copy(colour.begin(), colour.end(), rgb + 3 * c);
    }
  });
  file.commit();
}

GifGeometry gif_geometry(int rows, int cols, int max_size) {
  constexpr int kGifLimit = 65535;  // a GIF's width and height are 16-bit numbers
  const int longer = std::max(rows, cols);
  const int limit = max_size > 0 ? std::min(max_size, kGifLimit) : kGifLimit;
  GifGeometry geometry;
  geometry.factor = std::max(1, (longer + limit - 1) / limit);
  geometry.width = (cols + geometry.factor - 1) / geometry.factor;
  geometry.height = (rows + geometry.factor - 1) / geometry.factor;
  return geometry;
}

std::vector<unsigned char> gif_pixels(const std::vector<float>& v, int rows, int cols,
                                      const GifGeometry& geometry, float vmin, float vmax) {
  const double scale = vmax > vmin ? 255.0 / (static_cast<double>(vmax) - vmin) : 0.0;
  std::vector<unsigned char> pixels(static_cast<std::size_t>(geometry.width) * geometry.height);
  const int f = geometry.factor;
  for (int y = 0; y < geometry.height; ++y) {
    for (int x = 0; x < geometry.width; ++x) {
      double sum = 0.0;
      int count = 0;
      for (int r = y * f; r < std::min(rows, (y + 1) * f); ++r) {
        for (int c = x * f; c < std::min(cols, (x + 1) * f); ++c) {
          const float value = v[static_cast<std::size_t>(r) * cols + c];
          if (std::isfinite(value)) {
            sum += value;
            ++count;
          }
        }
      }
      const double level = count > 0 ? (sum / count - vmin) * scale : 0.0;
      pixels[static_cast<std::size_t>(y) * geometry.width + x] =
          static_cast<unsigned char>(std::lround(std::clamp(level, 0.0, 255.0)));
    }
  }
  return pixels;
}

#if GS_HAVE_GIF

namespace {

// giflib's output function: its bytes go to the OutputFile (giflib is C: no exception through
// it; a failed write returns 0 bytes written and the OutputFile keeps the error).
extern "C" int gif_write_to_file(GifFileType* gif, const GifByteType* bytes, int length) {
  auto* file = static_cast<gs::OutputFile*>(gif->UserData);
  return file->write_noexcept(bytes, static_cast<std::size_t>(length)) == 0 ? length : 0;
}

}  // namespace

GifAnimation::GifAnimation(const std::string& path, const gs::OutputOptions& options, int width,
                           int height, int delay_centiseconds)
    : path_(path),
      file_(std::make_unique<gs::OutputFile>(path, options)),
      width_(width),
      height_(height),
      delay_(delay_centiseconds) {
  int error = 0;
  GifFileType* gif = EGifOpen(file_.get(), gif_write_to_file, &error);
  if (gif == nullptr) fail("cannot start writing", error);
  gif_ = gif;
  EGifSetGifVersion(gif, true);  // GIF89a: delays and looping need its extensions

  ColorMapObject* palette = GifMakeMapObject(256, nullptr);
  if (palette == nullptr) fail("out of memory while writing", E_GIF_ERR_NOT_ENOUGH_MEM);
  const auto colours = inferno_palette();
  for (int i = 0; i < 256; ++i) {
    palette->Colors[i].Red = colours[i][0];
    palette->Colors[i].Green = colours[i][1];
    palette->Colors[i].Blue = colours[i][2];
  }
  const int described = EGifPutScreenDesc(gif, width_, height_, 8, 0, palette);
  GifFreeMapObject(palette);
  if (described == GIF_ERROR) fail("writing", gif->Error);

  // The NETSCAPE2.0 application extension: loop forever (count 0).
  static const char kApplication[] = "NETSCAPE2.0";
  static const unsigned char kLoopForever[] = {1, 0, 0};
  if (EGifPutExtensionLeader(gif, APPLICATION_EXT_FUNC_CODE) == GIF_ERROR ||
      EGifPutExtensionBlock(gif, 11, kApplication) == GIF_ERROR ||
      EGifPutExtensionBlock(gif, 3, kLoopForever) == GIF_ERROR ||
      EGifPutExtensionTrailer(gif) == GIF_ERROR) {
    fail("writing", gif->Error);
  }
}

GifAnimation::~GifAnimation() {
  if (gif_ != nullptr) {
    int ignored = 0;
    EGifCloseFile(static_cast<GifFileType*>(gif_), &ignored);
  }
  // file_ deletes the temporary file unless finish() committed it.
}

void GifAnimation::fail(const std::string& what, int gif_error) {
  if (gif_ != nullptr) {
    int ignored = 0;
    EGifCloseFile(static_cast<GifFileType*>(gif_), &ignored);
    gif_ = nullptr;
  }
  // The OutputFile's own error (e.g. no space left) says more than giflib's "write failed".
  const int write_error = file_->write_error();
  file_->abandon();
  if (write_error != 0) file_->throw_write_error(write_error);
  const char* gif_message = GifErrorString(gif_error);
  throw gs::OutputError(what + " " + file_->flag() + " '" + path_ +
                        "' failed: " + (gif_message ? gif_message : "giflib error"));
}

void GifAnimation::add_frame(const std::vector<unsigned char>& pixels) {
  auto* gif = static_cast<GifFileType*>(gif_);
  if (gif == nullptr || finished_) throw gs::OutputError("'" + path_ + "' is already closed");
  if (pixels.size() != static_cast<std::size_t>(width_) * height_) {
    throw gs::OutputError("a GIF frame of " + std::to_string(pixels.size()) + " pixels is not " +
                          std::to_string(width_) + " x " + std::to_string(height_));
  }
  GraphicsControlBlock control{};
  control.DisposalMode = DISPOSE_DO_NOT;
  control.UserInputFlag = false;
  control.DelayTime = delay_;
  control.TransparentColor = NO_TRANSPARENT_COLOR;
  GifByteType extension[4];
  const std::size_t length = EGifGCBToExtension(&control, extension);
  if (EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, static_cast<int>(length), extension) ==
          GIF_ERROR ||
      EGifPutImageDesc(gif, 0, 0, width_, height_, false, nullptr) == GIF_ERROR) {
    fail("writing", gif->Error);
  }
  std::vector<GifPixelType> line(static_cast<std::size_t>(width_));
  for (int y = 0; y < height_; ++y) {
    std::copy_n(pixels.begin() + static_cast<std::ptrdiff_t>(y) * width_, width_, line.begin());
    if (EGifPutLine(gif, line.data(), width_) == GIF_ERROR) fail("writing", gif->Error);
  }
  ++frames_;
}

void GifAnimation::finish() {
  if (finished_) return;
  int error = 0;
  const int closed = EGifCloseFile(static_cast<GifFileType*>(gif_), &error);  // writes the trailer
  gif_ = nullptr;
  if (closed == GIF_ERROR) fail("writing", error);
  file_->commit();
  finished_ = true;
}

#else  // a build without giflib: gs_render refuses --gif before any work; this is the backstop

GifAnimation::GifAnimation(const std::string& path, const gs::OutputOptions&, int width, int height,
                           int delay_centiseconds)
    : path_(path), width_(width), height_(height), delay_(delay_centiseconds) {
  throw gs::OutputError("cannot write '" + path_ + "': " + kNoGifSupport);
}

GifAnimation::~GifAnimation() = default;

void GifAnimation::fail(const std::string& what, int) {
  throw gs::OutputError(what + " '" + path_ + "' failed: " + kNoGifSupport);
}

void GifAnimation::add_frame(const std::vector<unsigned char>&) {
  fail("writing", 0);
}

void GifAnimation::finish() {
  fail("writing", 0);
}

#endif  // GS_HAVE_GIF

std::string find_program(const std::string& program) {
  const char* path = std::getenv("PATH");
  const std::string directories = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= directories.size()) {
    const std::size_t end = std::min(directories.find(':', start), directories.size());
    const std::string directory = directories.substr(start, end - start);
    const std::string candidate = (directory.empty() ? "." : directory) + "/" + program;
    struct stat status {};
    if (::stat(candidate.c_str(), &status) == 0 && S_ISREG(status.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    start = end + 1;
  }
  return "";
}

int run_without_shell(const std::vector<std::string>& arguments) {
  std::vector<char*> argv;
  for (const std::string& argument : arguments) argv.push_back(const_cast<char*>(argument.c_str()));
  argv.push_back(nullptr);
  // The child starts with the default action for the signals this program catches or ignores
  // (SIGXFSZ is ignored here so that a file-size limit is an error; the child decides itself).
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t defaults;
  sigemptyset(&defaults);
  for (const int signal_number : {SIGINT, SIGTERM, SIGHUP, SIGXFSZ, SIGPIPE}) {
    sigaddset(&defaults, signal_number);
  }
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF);
  pid_t child = 0;
  const int started =
      posix_spawn(&child, arguments.at(0).c_str(), nullptr, &attributes, argv.data(), environ);
  posix_spawnattr_destroy(&attributes);
  if (started != 0) {
    throw PictureError("cannot run '" + arguments[0] + "'" + reason_of(started));
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) {
      throw PictureError("lost track of '" + arguments[0] + "'" + reason_of(errno));
    }
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace gs::render
