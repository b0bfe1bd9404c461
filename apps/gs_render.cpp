// gs_render: turns the frames of an output file into PNG pictures (the inferno colormap on v),
// and into a GIF or MP4 when ffmpeg is installed.
#include <png.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "gs/hdf5_io.hpp"

namespace {

// Matplotlib's "inferno" colormap (N. Smith and S. van der Walt, CC0), sampled at ten evenly
// spaced points; linear interpolation between them is within a few levels of the full table.
constexpr std::array<std::array<int, 3>, 10> kInferno = {{{0x00, 0x00, 0x04},
                                                          {0x1B, 0x0C, 0x42},
                                                          {0x4B, 0x0C, 0x6B},
                                                          {0x78, 0x1C, 0x6D},
                                                          {0xA5, 0x2C, 0x60},
                                                          {0xCF, 0x44, 0x46},
                                                          {0xED, 0x69, 0x25},
                                                          {0xFB, 0x9A, 0x06},
                                                          {0xF7, 0xD0, 0x3C},
                                                          {0xFC, 0xFF, 0xA4}}};

std::array<unsigned char, 3> inferno(double t) {
  t = std::clamp(std::isfinite(t) ? t : 0.0, 0.0, 1.0) * (kInferno.size() - 1);
  const std::size_t low = std::min<std::size_t>(static_cast<std::size_t>(t), kInferno.size() - 2);
  const double weight = t - static_cast<double>(low);
  std::array<unsigned char, 3> rgb{};
  for (int channel = 0; channel < 3; ++channel) {
    const double value =
        (1.0 - weight) * kInferno[low][channel] + weight * kInferno[low + 1][channel];
    rgb[channel] = static_cast<unsigned char>(std::lround(value));
  }
  return rgb;
}

void write_png(const std::string& path, int rows, int cols, const std::vector<float>& v, float vmin,
               float vmax) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) throw std::runtime_error("cannot create '" + path + "'");
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png != nullptr ? png_create_info_struct(png) : nullptr;
  std::vector<unsigned char> row(static_cast<std::size_t>(cols) * 3);
  if (png == nullptr || info == nullptr || setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    std::fclose(file);
    std::remove(path.c_str());
    throw std::runtime_error("libpng failed while writing '" + path + "'");
  }
  png_init_io(png, file);
  png_set_IHDR(png, info, static_cast<png_uint_32>(cols), static_cast<png_uint_32>(rows), 8,
               PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  const double scale = vmax > vmin ? 1.0 / (static_cast<double>(vmax) - vmin) : 0.0;
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      const auto rgb = inferno((v[static_cast<std::size_t>(r) * cols + c] - vmin) * scale);
      std::copy(rgb.begin(), rgb.end(), row.begin() + 3 * c);
    }
    png_write_row(png, row.data());
  }
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  if (std::fclose(file) != 0) throw std::runtime_error("closing '" + path + "' failed");
}

bool have_ffmpeg() {
  return std::system("command -v ffmpeg > /dev/null 2>&1") == 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string input = "output.h5";
  std::string out_dir = "frames";
  int first = 0;
  int last = -1;
  int stride = 1;
  float vmin = 0.0f;
  float vmax = NAN;
  std::string video;
  CLI::App app{"Renders frames of a Gray-Scott output file as PNG (inferno colormap on v).",
               "gs_render"};
  app.add_option("input", input, "HDF5 file written by gray_scott or a lesson")
      ->capture_default_str();
  app.add_option("-d,--out-dir", out_dir, "directory for frame_NNNNN.png")->capture_default_str();
  app.add_option("--first", first, "first frame (negative counts from the end)")
      ->capture_default_str();
  app.add_option("--last", last, "last frame, included (negative counts from the end)")
      ->capture_default_str();
  app.add_option("--stride", stride, "render every Nth frame")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--vmin", vmin, "value drawn black")->capture_default_str();
  app.add_option("--vmax", vmax, "value drawn white (default: the largest v rendered)");
  app.add_option("--video", video, "also assemble the PNGs into this .gif or .mp4 (needs ffmpeg)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? 0 : 2;
  }
  try {
    if (!video.empty() && !have_ffmpeg()) {
      std::cerr << "gs_render: error: --video needs ffmpeg, which is not installed "
                   "(sudo apt-get install ffmpeg); the PNG frames need nothing else\n";
      return 2;
    }
    gs::FrameReader reader(input);
    const gs::OutputInfo& info = reader.info();
    if (first < 0) first += info.frames;
    if (last < 0) last += info.frames;
    if (first < 0 || last >= info.frames || first > last) {
      std::cerr << "gs_render: error: frames " << first << ".." << last << " are not inside [0, "
                << info.frames - 1 << "] of '" << input << "'\n";
      return 2;
    }
    std::vector<int> selected;
    for (int frame = first; frame <= last; frame += stride) selected.push_back(frame);
    if (std::isnan(vmax)) {
      vmax = vmin;
      for (const int frame : selected) {
        const std::vector<float> v = reader.read_frame(frame);
        for (const float value : v) {
          if (std::isfinite(value)) vmax = std::max(vmax, value);
        }
      }
    }
    std::filesystem::create_directories(out_dir);
    int written = 0;
    for (const int frame : selected) {
      char name[32];
      std::snprintf(name, sizeof name, "frame_%05d.png", written++);
      write_png((std::filesystem::path(out_dir) / name).string(), info.rows, info.cols,
                reader.read_frame(frame), vmin, vmax);
    }
    std::cout << "gs_render: wrote " << written << " PNG frame(s) of " << info.rows << " x "
              << info.cols << " to " << out_dir << "/ (frames " << first << ".." << last << " step "
              << stride << ", v in [" << vmin << ", " << vmax << "], written by "
              << (info.implementation.empty() ? "unknown" : info.implementation) << ")\n";
    if (!video.empty()) {
      const std::string pattern = (std::filesystem::path(out_dir) / "frame_%05d.png").string();
      const std::string command = "ffmpeg -loglevel error -y -framerate 25 -i '" + pattern + "' " +
                                  (video.size() > 4 && video.substr(video.size() - 4) == ".mp4"
                                       ? "-pix_fmt yuv420p -vf 'scale=trunc(iw/2)*2:trunc(ih/2)*2' "
                                       : "") +
                                  "'" + video + "'";
      if (std::system(command.c_str()) != 0) {
        std::cerr << "gs_render: error: ffmpeg failed to write '" << video << "'\n";
        return 1;
      }
      std::cout << "gs_render: wrote " << video << "\n";
    }
    return 0;
  } catch (const std::exception& error) {
    std::cerr << "gs_render: error: " << error.what() << "\n";
    return 1;
  }
}
