// gs_render: turns the frames of an output file into pictures of v (the inferno colormap): PNG
// frames, an animated GIF (giflib, no other program needed) and, when ffmpeg is installed, an MP4
// (or any format ffmpeg knows) assembled from the PNGs.
//
// Every picture is written through gs::OutputFile (common/include/gs/output_file.hpp): all of them
// are checked before any work, each replaces the old one only once complete.
//
// What it draws must be a simulation: the reader refuses a file whose values are elsewhere, cut
// short or never written (gs::FrameReader), and every frame to draw is read and checked before
// any picture is written: one whose v is not finite (NaN, infinite: the run diverged, or the file
// was altered) is refused, with the frame, the count and the first cell, because no colour of a
// picture says "not a number" (inferno would draw it as some v, a shrunk GIF pixel averages it
// away). Text from the file (the implementation's name) is printed through gs::printable().
//
// Exit codes: 0 done; 1 the input cannot be read, is not a simulation's, or a picture cannot be
// written (the previous picture is kept); 2 bad flags (frames outside the file, --vmin or --vmax
// not a finite float32 or not in order, --video without ffmpeg, --gif in a build without
// giflib); 128 + the signal when interrupted (Ctrl-C), the pictures being written deleted (the
// previous ones kept).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "gs/hdf5_io.hpp"
#include "gs/interrupt.hpp"
#include "gs/main_guard.hpp"
#include "gs/output_file.hpp"
#include "gs/png_file.hpp"
#include "gs/program.hpp"
#include "gs/report.hpp"
#include "pictures.hpp"

namespace {
namespace fs = std::filesystem;

struct Options {
  std::string input = "output.h5";
  std::string out_dir = "frames";
  int first = 0;
  int last = -1;
  int stride = 1;
  float vmin = 0.0f;
  float vmax = NAN;
  bool png = true;
  std::string gif;
  int gif_delay_ms = 40;
  int gif_max_size = 512;
  std::string video;
};

// A path handed to ffmpeg as an argument: one that starts with '-' would be read as an option.
std::string not_an_option(const std::string& path) {
  return !path.empty() && path[0] == '-' ? "./" + path : path;
}

// The file name of the @p index-th PNG frame written.
std::string frame_path_name(std::size_t index) {
  char name[32];
  std::snprintf(name, sizeof name, "frame_%05zu.png", index);
  return name;
}

// The path of the @p index-th PNG frame written.
std::string frame_path(const Options& options, std::size_t index) {
  return (fs::path(options.out_dir) / frame_path_name(index)).string();
}

// Where v is not finite in one frame: how many cells, the first of them and its value.
struct NotFinite {
  int frame = 0;
  std::int64_t cells = 0;
  std::size_t first = 0;
  float value = 0.0f;
};

// The PNG frames in @p directory numbered @p written or more (frame_NNNNN.png as frame_path()
// names them): what an earlier, longer render left there. Sorted by number.
std::vector<std::size_t> stale_frames(const std::string& directory, std::size_t written) {
  std::vector<std::size_t> numbers;
  std::error_code error;  // a directory that cannot be listed: nothing to say
  for (fs::directory_iterator entry(directory, error), end; !error && entry != end;
       entry.increment(error)) {
    const std::string name = entry->path().filename().string();
    constexpr std::size_t kDigitsAt = 6;  // after "frame_"
    if (name.size() < kDigitsAt + 5 + 4 || name.rfind("frame_", 0) != 0 ||
        name.compare(name.size() - 4, 4, ".png") != 0) {
      continue;
    }
    const std::string digits = name.substr(kDigitsAt, name.size() - kDigitsAt - 4);
    if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    const std::size_t number = std::stoul(digits);
    if (number >= written && name == frame_path_name(number)) numbers.push_back(number);
  }
  std::sort(numbers.begin(), numbers.end());
  return numbers;
}

// The frames first, first + stride, ... up to last; 64-bit so that a huge stride cannot overflow.
std::vector<int> select_frames(int first, int last, int stride) {
  std::vector<int> selected;
  for (std::int64_t frame = first; frame <= last; frame += stride) {
    selected.push_back(static_cast<int>(frame));
  }
  return selected;
}

int render(const Options& options) {
  std::string ffmpeg;
  if (!options.video.empty()) {
    ffmpeg = gs::render::find_program("ffmpeg");
    if (ffmpeg.empty()) {
      std::cerr << "gs_render: error: --video needs ffmpeg, which is not installed "
                   "(sudo apt-get install ffmpeg); --gif and the PNG frames need nothing else\n";
      return gs::kExitUsage;
    }
  }
  gs::FrameReader reader(options.input);
  const gs::OutputInfo& info = reader.info();
  // Negative frame numbers count from the end; 64-bit so that no sum overflows.
  const std::int64_t first =
      options.first < 0 ? std::int64_t{options.first} + info.frames : std::int64_t{options.first};
  const std::int64_t last =
      options.last < 0 ? std::int64_t{options.last} + info.frames : std::int64_t{options.last};
  const std::string input = "'" + gs::printable(options.input) + "'";
  if (first < 0 || last >= info.frames || first > last) {
    std::cerr << "gs_render: error: frames " << first << ".." << last << " are not inside [0, "
              << info.frames - 1 << "] of " << input << " (--first, --last)\n";
    return gs::kExitUsage;
  }
  const std::vector<int> selected =
      select_frames(static_cast<int>(first), static_cast<int>(last), options.stride);

  // Every picture this run writes is checked before any work: the PNG frames, the GIF and the
  // video, each a regular file or a new name (never a FIFO, a device or a directory), no two the
  // same file, the frames within libpng's limits (output_file.hpp). The frames' directory is
  // made first, and removed again if the checks fail.
  std::vector<gs::PlannedOutput> outputs;
  std::vector<fs::path> made_directories;
  if (options.png) {
    gs::check_png_size(info.cols, info.rows, options.out_dir, "-d");
    // Before the directory is made: it must not be a file, nor the path of another output (the
    // directory would be made, then that output blamed for being one).
    const fs::path directory = fs::absolute(options.out_dir).lexically_normal();
    for (const auto& [other, flag] :
         {std::pair{options.gif, "--gif"}, std::pair{options.video, "--video"}}) {
      std::error_code ignored;
      if (!other.empty() && (fs::absolute(other).lexically_normal() == directory ||
                             fs::equivalent(other, options.out_dir, ignored))) {
        throw gs::OutputError(
            std::string("-d '") + options.out_dir + "' and " + flag + " '" + other +
            "' name the same path; -d is the directory of the PNG frames, " + flag + " a file");
      }
    }
    std::error_code not_there;
    if (fs::exists(directory, not_there) && !fs::is_directory(directory, not_there)) {
      throw gs::OutputError("-d '" + options.out_dir +
                            "' is not a directory; give -d the directory of the PNG frames");
    }
    for (fs::path missing = fs::absolute(options.out_dir).lexically_normal();
         !missing.empty() && !fs::exists(missing) && missing != missing.parent_path();
         missing = missing.parent_path()) {
      made_directories.push_back(missing);  // deepest first
    }
    std::error_code error;
    fs::create_directories(options.out_dir, error);
    if (error) {
      throw gs::OutputError("cannot make the directory -d '" + options.out_dir +
                            "': " + error.message());
    }
    for (std::size_t i = 0; i < selected.size(); ++i)
      outputs.push_back({frame_path(options, i), "-d"});
  }
  if (!options.gif.empty()) outputs.push_back({options.gif, "--gif"});
  if (!options.video.empty()) outputs.push_back({options.video, "--video"});
  try {
    gs::check_outputs(outputs);
  } catch (...) {
    std::error_code ignored;
    for (const fs::path& directory : made_directories) fs::remove(directory, ignored);  // if empty
    throw;
  }
  // check_outputs() warned about temporary files left by killed runs: the writers need not.
  const gs::OutputOptions png_options("-d", nullptr);
  const gs::OutputOptions gif_options("--gif", nullptr);

  // Ctrl-C stops between two frames (the pictures in progress are deleted, the previous ones
  // kept); a second one at once.
  gs::InterruptGuard signals;
  // Every frame to draw, read once before any picture is written: its v must be finite, and its
  // largest v is the top of the scale unless --vmax says.
  float largest = options.vmin;
  std::vector<NotFinite> not_finite;
  for (const int frame : selected) {
    gs::throw_if_interrupted("while checking frame " + std::to_string(frame));
    const std::vector<float> v = reader.read_frame(frame);
    NotFinite found{frame, 0, 0, 0.0f};
    for (std::size_t cell = 0; cell < v.size(); ++cell) {
      if (std::isfinite(v[cell])) {
        largest = std::max(largest, v[cell]);
      } else if (found.cells++ == 0) {
        found.first = cell;
        found.value = v[cell];
      }
    }
    if (found.cells > 0) not_finite.push_back(found);
  }
  if (!not_finite.empty()) {
    const NotFinite& at = not_finite.front();
    std::cerr << "gs_render: error: " << input << " is not a picture of a simulation: v is not "
              << "finite (NaN or infinite) in " << not_finite.size() << " of the "
              << selected.size() << " frame(s) to draw; the first, frame " << at.frame << ", has "
              << at.cells << " such cell(s), the first at row " << at.first / info.cols
              << ", column " << at.first % info.cols << " (v = " << at.value
              << "). The run that wrote it diverged (try a smaller -t/--deltat) or the file was "
                 "altered; a picture would draw those cells as ordinary values. Nothing was "
                 "drawn.\n";
    std::error_code ignored;
    for (const fs::path& directory : made_directories) fs::remove(directory, ignored);  // if empty
    return gs::kExitFailure;
  }
  const float vmin = options.vmin;
  const float vmax = std::isnan(options.vmax) ? largest : options.vmax;

  std::unique_ptr<gs::render::GifAnimation> gif;
  gs::render::GifGeometry geometry;
  const int centiseconds = std::max(1, (options.gif_delay_ms + 5) / 10);  // GIF's unit of delay
  if (!options.gif.empty()) {
    geometry = gs::render::gif_geometry(info.rows, info.cols, options.gif_max_size);
    gif = std::make_unique<gs::render::GifAnimation>(options.gif, gif_options, geometry.width,
                                                     geometry.height, centiseconds);
  }
  int written = 0;
  for (const int frame : selected) {
    gs::throw_if_interrupted("before frame " + std::to_string(frame));
    const std::vector<float> v = reader.read_frame(frame);
    if (options.png) {
      gs::render::write_png(frame_path(options, static_cast<std::size_t>(written)), png_options,
                            info.rows, info.cols, v, vmin, vmax);
    }
    if (gif) gif->add_frame(gs::render::gif_pixels(v, info.rows, info.cols, geometry, vmin, vmax));
    ++written;
  }
  if (gif) gif->finish();

  const std::string source =
      " (frames " + std::to_string(first) + ".." + std::to_string(last) + " step " +
      std::to_string(options.stride) + ", written by " +
      (info.implementation.empty() ? std::string("unknown") : gs::printable(info.implementation)) +
      ")";
  if (options.png) {
    std::cout << "gs_render: wrote " << written << " PNG frame(s) of " << info.rows << " x "
              << info.cols << " to " << options.out_dir << "/" << source << ", v in [" << vmin
              << ", " << vmax << "]\n";
    // Frames of an earlier, longer render in the same directory are not this render's: said,
    // and left alone (they are the user's files; a render never deletes a picture it did not
    // just write). The video below takes this render's frames only.
    const std::vector<std::size_t> stale =
        stale_frames(options.out_dir, static_cast<std::size_t>(written));
    if (!stale.empty()) {
      std::cerr << "gs_render: warning: -d '" << gs::printable(options.out_dir) << "' also holds "
                << stale.size() << " older frame(s) beyond the " << written
                << " just written, from an earlier, longer render: "
                << frame_path_name(stale.front())
                << (stale.size() > 1 ? " to " + frame_path_name(stale.back()) : std::string())
                << "; they were left as they were (delete them, or render into an empty "
                   "directory, so that the frames there are this render's only)\n";
    }
  }
  if (gif) {
    std::cout << "gs_render: wrote " << options.gif << ": " << gif->frames() << " frame(s) of "
              << geometry.width << " x " << geometry.height << " pixels";
    if (geometry.factor > 1) {
      std::cout << " (each the mean of " << geometry.factor << " x " << geometry.factor
                << " cells)";
    }
    std::cout << ", " << centiseconds * 10 << " ms each" << (options.png ? "" : source) << "\n";
  }
  if (!options.video.empty()) {
    const std::string pattern = (fs::path(options.out_dir) / "frame_%05d.png").string();
    std::vector<std::string> command = {ffmpeg, "-loglevel", "error", "-y", "-framerate", "25"};
    command.push_back("-i");
    command.push_back(not_an_option(pattern));
    // This render's frames only, never older ones that follow them in the directory.
    command.push_back("-frames:v");
    command.push_back(std::to_string(written));
    const std::string& video = options.video;
    if (video.size() > 4 && video.compare(video.size() - 4, 4, ".mp4") == 0) {
      // H.264 in yuv420p (what players expect) needs even sizes.
      for (const char* argument :
           {"-pix_fmt", "yuv420p", "-vf", "scale=trunc(iw/2)*2:trunc(ih/2)*2"}) {
        command.emplace_back(argument);
      }
    }
    // "file:" makes ffmpeg take the name as a file whatever it contains (a ':' would otherwise
    // name a protocol); the format is still chosen from the extension.
    command.push_back("file:" + video);
    const int status = gs::render::run_without_shell(command);
    gs::throw_if_interrupted("while ffmpeg wrote '" + video + "'");
    if (status != 0) {
      std::cerr << "gs_render: error: ffmpeg failed (status " << status << ") to write '" << video
                << "'\n";
      return gs::kExitFailure;
    }
    std::cout << "gs_render: wrote " << video << "\n";
  }
  std::cout.flush();
  if (!std::cout) {
    std::cerr << "gs_render: error: cannot write to standard output\n";
    return gs::kExitFailure;
  }
  return gs::kExitSuccess;
}

// The command line, checked, then the pictures.
int parse_and_render(int argc, char** argv) {
  Options options;
  CLI::App app{
      "Renders frames of a Gray-Scott output file as pictures of v (inferno colormap): "
      "PNG frames, an animated GIF, a video through ffmpeg.",
      "gs_render"};
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option("input", options.input, "HDF5 file written by gray_scott or a lesson")
      ->capture_default_str();
  app.add_option("-d,--out-dir", options.out_dir, "directory for frame_NNNNN.png")
      ->capture_default_str();
  app.add_option("--first", options.first, "first frame (negative counts from the end)")
      ->capture_default_str();
  app.add_option("--last", options.last, "last frame, included (negative counts from the end)")
      ->capture_default_str();
  app.add_option("--stride", options.stride, "render every Nth frame")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--vmin", options.vmin, "value drawn black")
      ->capture_default_str()
      ->check(gs::float32_number());
  app.add_option("--vmax", options.vmax, "value drawn white (default: the largest v rendered)")
      ->check(gs::float32_number());
  app.add_flag_callback(
      "--no-png", [&options] { options.png = false; }, "write no PNG frames (with --gif)");
  app.add_option("--gif", options.gif, "also write an animated GIF (loops forever) to this file");
  app.add_option("--gif-delay", options.gif_delay_ms,
                 "milliseconds each GIF frame is shown (rounded to 10 ms, GIF's unit)")
      ->capture_default_str()
      ->check(CLI::Range(10, 655350));
  app.add_option("--gif-max-size", options.gif_max_size,
                 "largest side of a GIF frame in pixels; larger frames are shrunk by a whole "
                 "factor, each pixel the mean of its cells (0: full size)")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  app.add_option("--video", options.video,
                 "also assemble the PNGs into this .mp4 (or any format ffmpeg knows; needs "
                 "ffmpeg)");
  gs::apply_value_rules(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? gs::kExitSuccess : gs::kExitUsage;
  }
  if (options.png && options.out_dir.empty()) {
    std::cerr << "gs_render: error: -d/--out-dir is empty; give it the directory of the PNG "
                 "frames (or --no-png)\n";
    return gs::kExitUsage;
  }
  if (!options.png && options.gif.empty()) {
    std::cerr << "gs_render: error: --no-png without --gif would write nothing\n";
    return gs::kExitUsage;
  }
  if (!options.gif.empty() && !gs::render::kHaveGif) {
    std::cerr << "gs_render: error: --gif: " << gs::render::kNoGifSupport << "\n";
    return gs::kExitUsage;
  }
  if (!std::isnan(options.vmax) && !(options.vmax > options.vmin)) {
    std::cerr << "gs_render: error: --vmax (" << options.vmax << ") must be greater than --vmin ("
              << options.vmin << ")\n";
    return gs::kExitUsage;
  }
  if (!options.png && !options.video.empty()) {
    std::cerr << "gs_render: error: --video is made from the PNG frames; drop --no-png\n";
    return gs::kExitUsage;
  }
  return render(options);
}

}  // namespace

int main(int argc, char** argv) {
  gs::GuardWords words;
  words.after_interruption =
      "; the pictures being written were deleted, the previous ones kept (finished PNG frames are "
      "kept)";
  words.failure_on_own_line = false;  // no progress line to end
  return gs::guarded_main(
      "gs_render", [argc, argv] { return parse_and_render(argc, argv); }, words);
}
