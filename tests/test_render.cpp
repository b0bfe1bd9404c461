// gs_render as a user runs it: PNG frames, the animated GIF (decoded here with giflib: every
// frame, the inferno palette, the delay, the loop, the pixels against the file's values), ffmpeg
// run without a shell (a stand-in ffmpeg records the arguments it was given), malformed input
// refused with a message, a full disk leaving no truncated picture, a huge --stride, the exit
// codes; files that are not a simulation (values kept in another file, a virtual dataset, a file
// cut short, NaN and infinite v) refused before any picture is written; a file's text printed
// without its escape sequences; --vmin and --vmax checked; and the rules every output follows (a
// FIFO refused without hanging, the previous pictures kept on a full disk or a Ctrl-C, links and
// modes, one file named twice, the leftovers of killed runs).
#if GS_HAVE_GIF
#include <gif_lib.h>
#endif
#include <gtest/gtest.h>
#include <hdf5.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gs/hdf5_io.hpp"
#include "process.hpp"

namespace {
namespace fs = std::filesystem;
using gs::test::Background;
using gs::test::fresh_directory;
using gs::test::Outcome;
using gs::test::run;

const std::string kGrayScott = GS_GRAY_SCOTT;
const std::string kRender = GS_RENDER;

// Quotes @p text for sh, whatever it contains.
std::string shell_quoted(const std::string& text) {
  std::string quoted = "'";
  for (const char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// A small run to draw: 30 x 40 cells, 6 frames.
std::string small_output(const std::string& dir) {
  const std::string path = dir + "/run.h5";
  const Outcome outcome = run(kGrayScott + " -r 30 -c 40 -n 6 -e 40 --impl reference -o " + path);
  EXPECT_EQ(outcome.exit_code, 0) << outcome.output;
  return path;
}

// A stand-in ffmpeg in DIR/bin (to put first on PATH) that writes each argument it receives on a
// line of its own into DIR/ffmpeg_arguments.txt; returns DIR/bin.
std::string stand_in_ffmpeg(const std::string& dir) {
  const std::string bin = dir + "/bin";
  fs::create_directories(bin);
  {
    std::ofstream script(bin + "/ffmpeg");
    script << "#!/bin/sh\nprintf '%s\\n' \"$@\" > " << shell_quoted(dir + "/ffmpeg_arguments.txt")
           << "\n";
  }
  fs::permissions(bin + "/ffmpeg", fs::perms::owner_all);
  return bin;
}

bool is_png(const fs::path& path) {
  std::ifstream png(path, std::ios::binary);
  char signature[8] = {};
  png.read(signature, 8);
  return png && std::string(signature + 1, 3) == "PNG";
}

TEST(Render, WritesOnePngPerSelectedFrame) {
  const std::string dir = fresh_directory("render_png");
  const std::string h5 = small_output(dir);
  const std::string frames = dir + "/frames";
  const Outcome outcome = run(kRender + " " + h5 + " -d " + frames + " --stride 2");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  for (const char* name : {"frame_00000.png", "frame_00001.png", "frame_00002.png"}) {
    EXPECT_TRUE(is_png(fs::path(frames) / name)) << name;
  }
  EXPECT_FALSE(fs::exists(fs::path(frames) / "frame_00003.png"));
}

#if GS_HAVE_GIF

struct DecodedGif {
  GifFileType* gif = nullptr;
  explicit DecodedGif(const std::string& path) {
    int error = 0;
    gif = DGifOpenFileName(path.c_str(), &error);
    if (gif != nullptr && DGifSlurp(gif) != GIF_OK) {
      ADD_FAILURE() << "giflib cannot decode " << path << ": " << GifErrorString(gif->Error);
    }
  }
  ~DecodedGif() {
    int error = 0;
    if (gif != nullptr) DGifCloseFile(gif, &error);
  }
  DecodedGif(const DecodedGif&) = delete;
  DecodedGif& operator=(const DecodedGif&) = delete;
};

bool loops_forever(const GifFileType* gif) {
  for (int i = 0; i < gif->ImageCount; ++i) {
    const SavedImage& image = gif->SavedImages[i];
    for (int e = 0; e + 1 < image.ExtensionBlockCount; ++e) {
      const ExtensionBlock& block = image.ExtensionBlocks[e];
      const ExtensionBlock& next = image.ExtensionBlocks[e + 1];
      if (block.Function == APPLICATION_EXT_FUNC_CODE && block.ByteCount == 11 &&
          std::string(reinterpret_cast<const char*>(block.Bytes), 11) == "NETSCAPE2.0" &&
          next.ByteCount == 3 && next.Bytes[0] == 1 && next.Bytes[1] == 0 && next.Bytes[2] == 0) {
        return true;
      }
    }
  }
  return false;
}

TEST(Render, GifHasEveryFrameThePaletteTheDelayAndTheValues) {
  const std::string dir = fresh_directory("render_gif");
  const std::string h5 = small_output(dir);
  const std::string gif_path = dir + "/run.gif";
  const Outcome outcome = run(kRender + " " + h5 + " --no-png -d " + dir + "/none --gif " +
                              gif_path + " --gif-delay 70 --vmin 0 --vmax 0.5");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_NE(outcome.output.find("6 frame(s) of 40 x 30 pixels"), std::string::npos)
      << outcome.output;
  EXPECT_FALSE(fs::exists(dir + "/none")) << "--no-png writes no PNG";
  DecodedGif decoded(gif_path);
  const GifFileType* gif = decoded.gif;
  ASSERT_NE(gif, nullptr);
  EXPECT_EQ(gif->SWidth, 40);
  EXPECT_EQ(gif->SHeight, 30);
  ASSERT_EQ(gif->ImageCount, 6);
  ASSERT_NE(gif->SColorMap, nullptr);
  ASSERT_EQ(gif->SColorMap->ColorCount, 256);
  // inferno's two ends (matplotlib's first and last colours)
  const GifColorType black = gif->SColorMap->Colors[0];
  const GifColorType white = gif->SColorMap->Colors[255];
  EXPECT_EQ((std::vector<int>{black.Red, black.Green, black.Blue}), (std::vector<int>{0, 0, 4}));
  EXPECT_EQ((std::vector<int>{white.Red, white.Green, white.Blue}),
            (std::vector<int>{0xFC, 0xFF, 0xA4}));
  EXPECT_TRUE(loops_forever(gif));
  gs::FrameReader reader(h5);
  for (int i = 0; i < gif->ImageCount; ++i) {
    GraphicsControlBlock control{};
    ASSERT_EQ(DGifSavedExtensionToGCB(const_cast<GifFileType*>(gif), i, &control), GIF_OK);
    EXPECT_EQ(control.DelayTime, 7) << "70 ms in GIF's hundredths of a second";
    const SavedImage& image = gif->SavedImages[i];
    ASSERT_EQ(image.ImageDesc.Width, 40);
    ASSERT_EQ(image.ImageDesc.Height, 30);
    const std::vector<float> v = reader.read_frame(i);
    int wrong = 0;
    for (std::size_t cell = 0; cell < v.size(); ++cell) {
      const long expected = std::lround(std::clamp(v[cell] / 0.5, 0.0, 1.0) * 255.0);
      if (std::abs(image.RasterBits[cell] - expected) > 1) ++wrong;
    }
    EXPECT_EQ(wrong, 0) << "pixels of frame " << i << " that are not v's level";
  }
}

TEST(Render, GifShrinksLargeFramesByAWholeFactor) {
  const std::string dir = fresh_directory("render_gif_small");
  const std::string h5 = small_output(dir);  // 30 x 40
  const std::string gif_path = dir + "/small.gif";
  const Outcome outcome = run(kRender + " " + h5 + " --no-png --gif " + gif_path +
                              " --gif-max-size 20 --vmin 0 --vmax 0.5 --first 5");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  DecodedGif decoded(gif_path);
  ASSERT_NE(decoded.gif, nullptr);
  EXPECT_EQ(decoded.gif->SWidth, 20);
  EXPECT_EQ(decoded.gif->SHeight, 15);
  ASSERT_EQ(decoded.gif->ImageCount, 1);
  const std::vector<float> v = gs::FrameReader(h5).read_frame(5);
  // Pixel (row 7, column 9) is the mean of cells (14..15, 18..19).
  const double mean = (v[14 * 40 + 18] + v[14 * 40 + 19] + v[15 * 40 + 18] + v[15 * 40 + 19]) / 4;
  const long expected = std::lround(std::clamp(mean / 0.5, 0.0, 1.0) * 255.0);
  EXPECT_NEAR(decoded.gif->SavedImages[0].RasterBits[7 * 20 + 9], expected, 1);
}

#else  // built without giflib: gs_render refuses --gif, and the tests that decode GIFs skip

constexpr const char* kNoGiflib = "built without giflib (libgif-dev): gs_render writes no GIF";

TEST(Render, GifHasEveryFrameThePaletteTheDelayAndTheValues) {
  GTEST_SKIP() << kNoGiflib;
}
TEST(Render, GifShrinksLargeFramesByAWholeFactor) {
  GTEST_SKIP() << kNoGiflib;
}

TEST(Render, GifWithoutGiflibIsRefusedBeforeAnyWork) {
  const std::string dir = fresh_directory("render_no_gif");
  const std::string h5 = small_output(dir);
  const Outcome outcome =
      run(kRender + " " + h5 + " -d " + dir + "/frames --gif " + dir + "/run.gif");
  EXPECT_EQ(outcome.exit_code, 2) << outcome.output;
  EXPECT_NE(outcome.output.find("without giflib"), std::string::npos) << outcome.output;
  EXPECT_NE(outcome.output.find("libgif-dev"), std::string::npos) << outcome.output;
  EXPECT_FALSE(fs::exists(dir + "/run.gif"));
  EXPECT_FALSE(fs::exists(dir + "/frames")) << "refused before any work";
}

#endif  // GS_HAVE_GIF

TEST(Render, VideoRunsFfmpegWithAnArgumentVectorNeverAShell) {
  const std::string dir = fresh_directory("render_video");
  const std::string h5 = small_output(dir);
  const std::string bin = stand_in_ffmpeg(dir);
  const std::string log = dir + "/ffmpeg_arguments.txt";
  const std::string hostile = "x'; touch PWNED; echo '.mp4";
  const std::string frames = "Bob's frames";
  const Outcome outcome =
      run("cd " + shell_quoted(dir) + " && PATH=" + shell_quoted(bin) + ":\"$PATH\" " + kRender +
          " " + h5 + " -d " + shell_quoted(frames) + " --video " + shell_quoted(hostile));
  EXPECT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_FALSE(fs::exists(dir + "/PWNED")) << "a file name was run as a command";
  std::ifstream arguments(log);
  std::vector<std::string> lines;
  for (std::string line; std::getline(arguments, line);) lines.push_back(line);
  ASSERT_FALSE(lines.empty()) << "ffmpeg was not run";
  EXPECT_EQ(lines.back(), "file:" + hostile) << "the name reached ffmpeg as one argument";
  const auto input = std::find(lines.begin(), lines.end(), "-i");
  ASSERT_NE(input, lines.end());
  EXPECT_EQ(*(input + 1), frames + "/frame_%05d.png");
  EXPECT_TRUE(is_png(fs::path(dir) / frames / "frame_00000.png"));
}

TEST(Render, VideoWithoutFfmpegIsRefusedBeforeAnyWork) {
  const std::string dir = fresh_directory("render_no_ffmpeg");
  const std::string h5 = small_output(dir);
  const Outcome outcome =
      run("PATH=" + dir + "/empty " + kRender + " " + h5 + " -d " + dir + "/f --video a.mp4");
  EXPECT_EQ(outcome.exit_code, 2) << outcome.output;
  EXPECT_NE(outcome.output.find("needs ffmpeg"), std::string::npos) << outcome.output;
  EXPECT_FALSE(fs::exists(dir + "/f"));
}

// A file whose dataset has no frames and whose killrate is an array of 100 doubles.
std::string malformed_file(const std::string& dir) {
  const std::string path = dir + "/malformed.h5";
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  const hsize_t dims[3] = {0, 3, 4};
  const hid_t space = H5Screate_simple(3, dims, nullptr);
  const hid_t dataset =
      H5Dcreate2(file, "matrix", H5T_IEEE_F32LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  const hsize_t hundred = 100;
  const hid_t array_space = H5Screate_simple(1, &hundred, nullptr);
  const std::vector<double> values(100, 0.05);
  const hid_t attribute =
      H5Acreate2(dataset, "killrate", H5T_IEEE_F64LE, array_space, H5P_DEFAULT, H5P_DEFAULT);
  EXPECT_GE(H5Awrite(attribute, H5T_NATIVE_DOUBLE, values.data()), 0);
  H5Aclose(attribute);
  H5Sclose(array_space);
  H5Dclose(dataset);
  H5Sclose(space);
  H5Fclose(file);
  return path;
}

TEST(Render, RefusesMalformedInputWithAMessage) {
  const std::string dir = fresh_directory("render_malformed");
  const Outcome outcome = run(kRender + " " + malformed_file(dir) + " -d " + dir + "/f");
  EXPECT_EQ(outcome.exit_code, 1) << outcome.output;
  EXPECT_NE(outcome.output.find("has no frames"), std::string::npos) << outcome.output;
  EXPECT_FALSE(fs::exists(dir + "/f"));
  const std::string text = dir + "/text.h5";
  std::ofstream(text) << "not an HDF5 file";
  const Outcome not_hdf5 = run(kRender + " " + text + " -d " + dir + "/f");
  EXPECT_EQ(not_hdf5.exit_code, 1) << not_hdf5.output;
  EXPECT_NE(not_hdf5.output.find("cannot open"), std::string::npos) << not_hdf5.output;
  const Outcome missing = run(kRender + " " + dir + "/missing.h5");
  EXPECT_EQ(missing.exit_code, 1) << missing.output;
}

TEST(Render, AFullDiskLeavesNoTruncatedPictureAndSaysWhy) {
  // A file-size limit makes write() fail with EFBIG, as a full disk does with ENOSPC. gs_render
  // ignores SIGXFSZ itself, so the failed write is an error, not a kill.
  const std::string dir = fresh_directory("render_full");
  const std::string h5 = small_output(dir);
  const Outcome png =
      run("sh -c 'ulimit -f 0; exec " + kRender + " " + h5 + " -d " + dir + "/frames'");
  EXPECT_EQ(png.exit_code, 1) << png.output;
  EXPECT_NE(png.output.find("File too large"), std::string::npos) << png.output;
  EXPECT_FALSE(fs::exists(dir + "/frames/frame_00000.png")) << "a truncated PNG was left";
  if (!GS_HAVE_GIF) return;  // the GIF half needs a gs_render with giflib
  const Outcome gif = run("sh -c 'ulimit -f 2; exec " + kRender + " " + h5 + " --no-png --gif " +
                          dir + "/run.gif'");
  EXPECT_EQ(gif.exit_code, 1) << gif.output;
  EXPECT_NE(gif.output.find("File too large"), std::string::npos) << gif.output;
  EXPECT_FALSE(fs::exists(dir + "/run.gif")) << "a truncated GIF was left";
}

// ---------------------------------------------------------------------------------------------
// The pictures follow common/'s output rules (gs/output_file.hpp)

std::string read_all(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

// The temporary files (`<name>.partial-...`) left in @p dir.
std::vector<std::string> partials_in(const std::string& dir) {
  std::vector<std::string> partials;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().filename().string().find(".partial-") != std::string::npos) {
      partials.push_back(entry.path().string());
    }
  }
  return partials;
}

mode_t mode_of(const std::string& path) {
  struct stat status {};
  EXPECT_EQ(::stat(path.c_str(), &status), 0) << path;
  return status.st_mode & 07777;
}

// Found by an attacker: `gs_render --gif FIFO` waited for a reader forever; so did a FIFO where a
// PNG frame goes.
TEST(RenderOutput, AFifoIsRefusedWithoutHanging) {
  const std::string dir = fresh_directory("render_fifo");
  const std::string h5 = small_output(dir);
  fs::create_directories(dir + "/frames");
  const std::string frame_fifo = dir + "/frames/frame_00000.png";
  ASSERT_EQ(::mkfifo(frame_fifo.c_str(), 0644), 0);
  const Outcome frames = run("timeout 60 " + kRender + " " + h5 + " -d " + dir + "/frames");
  EXPECT_EQ(frames.exit_code, 1) << frames.output;
  EXPECT_NE(frames.output.find("refusing to write -d '" + frame_fifo + "': it is a FIFO"),
            std::string::npos)
      << frames.output;
  EXPECT_FALSE(fs::exists(dir + "/frames/frame_00001.png")) << "refused before any picture";
  if (!GS_HAVE_GIF) return;  // the GIF half needs a gs_render with giflib
  const std::string gif_fifo = dir + "/run.gif";
  ASSERT_EQ(::mkfifo(gif_fifo.c_str(), 0644), 0);
  const Outcome gif = run("timeout 60 " + kRender + " " + h5 + " --no-png --gif " + gif_fifo);
  EXPECT_EQ(gif.exit_code, 1) << gif.output;
  EXPECT_NE(gif.output.find("refusing to write --gif '" + gif_fifo + "': it is a FIFO"),
            std::string::npos)
      << gif.output;
}

// Case 7: the GIF was written in place, so a full disk or a Ctrl-C lost the previous one.
TEST(RenderOutput, AFullDiskOrACtrlCKeepsThePreviousPictures) {
  const std::string dir = fresh_directory("render_previous");
  const std::string h5 = small_output(dir);
  const std::string gif = dir + "/run.gif";
  const std::string gif_flag = GS_HAVE_GIF ? " --gif " + gif : std::string();
  ASSERT_EQ(run(kRender + " " + h5 + " -d " + dir + "/frames" + gif_flag).exit_code, 0);
  const std::string old_frame = read_all(dir + "/frames/frame_00000.png");
  const std::string old_gif = read_all(gif);
  const Outcome full = run("sh -c 'ulimit -f 0; exec " + kRender + " " + h5 + " -d " + dir +
                           "/frames --vmax 0.3" + gif_flag + "'");
  EXPECT_EQ(full.exit_code, 1) << full.output;
  EXPECT_NE(full.output.find("File too large"), std::string::npos) << full.output;
  EXPECT_EQ(read_all(dir + "/frames/frame_00000.png"), old_frame) << "the previous PNG was lost";
  EXPECT_EQ(read_all(gif), old_gif) << "the previous GIF was lost";
  EXPECT_TRUE(partials_in(dir).empty());
  EXPECT_TRUE(partials_in(dir + "/frames").empty());
  if (!GS_HAVE_GIF) return;
  // Ctrl-C in the middle of a GIF of 1000 frames, sent as soon as the GIF is being written.
  const std::string long_h5 = dir + "/long.h5";
  ASSERT_EQ(
      run(kGrayScott + " -r 128 -c 128 -n 1000 -e 1 --impl reference --no-fsync -o " + long_h5)
          .exit_code,
      0);
  // With PNG frames too: the run lasts longer, and two pictures are in progress at once.
  Background render(kRender + " " + long_h5 + " -d " + dir + "/long_frames" +
                    " --vmax 0.5 --gif-max-size 0 --gif " + gif);
  ASSERT_TRUE(Background::wait_until(
      [&] { return !partials_in(dir).empty() || read_all(gif) != old_gif; }, 20.0))
      << render.output();
  render.signal(SIGINT);
  EXPECT_EQ(render.wait(20.0), 130) << render.output();
  EXPECT_EQ(read_all(gif), old_gif) << "the previous GIF was lost";
  EXPECT_TRUE(partials_in(dir).empty());
  EXPECT_TRUE(partials_in(dir + "/long_frames").empty());
  fs::remove(long_h5);
  fs::remove_all(dir + "/long_frames");
}

TEST(RenderOutput, LinksModesTheSameFileTwiceAndLeftoversOfKilledRuns) {
  const std::string dir = fresh_directory("render_rules");
  const std::string h5 = small_output(dir);
  // A frame that is a link to a private picture elsewhere: written through, link and mode kept.
  fs::create_directories(dir + "/frames");
  std::ofstream(dir + "/kept.png") << "old picture";
  ASSERT_EQ(::chmod((dir + "/kept.png").c_str(), 0600), 0);
  fs::create_symlink("../kept.png", dir + "/frames/frame_00000.png");
  Outcome outcome = run(kRender + " " + h5 + " -d " + dir + "/frames --last 0");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_TRUE(fs::is_symlink(dir + "/frames/frame_00000.png"));
  EXPECT_TRUE(is_png(dir + "/kept.png")) << "the link's target was not written";
  EXPECT_EQ(mode_of(dir + "/kept.png"), 0600u);
  // --gif naming a frame: refused before any work, naming both flags; the directory the run
  // would have made is not left behind.
  outcome = run(kRender + " " + h5 + " -d " + dir + "/new_frames --gif " + dir +
                "/new_frames/../new_frames/frame_00002.png");
  if (GS_HAVE_GIF) {
    EXPECT_EQ(outcome.exit_code, 1) << outcome.output;
    EXPECT_NE(outcome.output.find("-d '" + dir + "/new_frames/frame_00002.png' and --gif"),
              std::string::npos)
        << outcome.output;
    EXPECT_NE(outcome.output.find("name the same file"), std::string::npos) << outcome.output;
    EXPECT_FALSE(fs::exists(dir + "/new_frames"));
  }
  // The temporary file of a killed run (a process that has exited) is listed, never deleted.
  std::string host_part;  // this host as temporary names spell it: read off a probe's name
  {
    gs::OutputFile probe(dir + "/probe", gs::OutputOptions("-o", nullptr));
    const std::string rest = fs::path(probe.temporary_path()).filename().string().substr(14);
    host_part = rest.substr(0, rest.rfind('-'));
    host_part = host_part.substr(0, host_part.rfind('-'));
  }
  const pid_t killed = ::fork();
  if (killed == 0) ::_exit(0);
  int status = 0;
  ASSERT_EQ(::waitpid(killed, &status, 0), killed);
  const std::string left = dir + "/frames/frame_00001.png.partial-" + host_part + "-" +
                           std::to_string(killed) + "-0badc0de";
  std::ofstream(left) << "half a picture";
  outcome = run(kRender + " " + h5 + " -d " + dir + "/frames --last 2");
  EXPECT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_NE(outcome.output.find("rm -- '" + left + "'"), std::string::npos) << outcome.output;
  EXPECT_TRUE(fs::exists(left));
  if (!GS_HAVE_GIF) return;
  // The GIF through a link, its mode kept.
  std::ofstream(dir + "/private.gif") << "old animation";
  ASSERT_EQ(::chmod((dir + "/private.gif").c_str(), 0600), 0);
  fs::create_symlink("private.gif", dir + "/latest.gif");
  outcome = run(kRender + " " + h5 + " --no-png --gif " + dir + "/latest.gif");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_TRUE(fs::is_symlink(dir + "/latest.gif"));
  EXPECT_EQ(read_all(dir + "/private.gif").substr(0, 6), "GIF89a");
  EXPECT_EQ(mode_of(dir + "/private.gif"), 0600u);
}

TEST(Render, AHugeStrideRendersTheFirstFrameOnly) {
  const std::string dir = fresh_directory("render_stride");
  const std::string h5 = small_output(dir);
  const Outcome outcome = run(kRender + " " + h5 + " -d " + dir + "/f --stride 2147483647");
  EXPECT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_TRUE(is_png(dir + "/f/frame_00000.png"));
  EXPECT_FALSE(fs::exists(dir + "/f/frame_00001.png"));
}

TEST(Render, ExitCodesForBadFlagsAndALostStdout) {
  const std::string dir = fresh_directory("render_codes");
  const std::string h5 = small_output(dir);
  for (const char* flags : {"--first 9", "--first -100", "--last 6", "--first 4 --last 2",
                            "--stride 0", "--gif-delay 0", "--no-png"}) {
    const Outcome outcome = run(kRender + " " + h5 + " -d " + dir + "/f " + flags);
    EXPECT_EQ(outcome.exit_code, 2) << flags << ": " << outcome.output;
  }
  // stdout appended to a file already over the file-size limit: the report cannot be written
  // while the pictures (a few hundred bytes each) can.
  const std::string report = dir + "/report.txt";
  std::ofstream(report) << std::string(64 * 1024, 'x');
  const Outcome lost = run("sh -c 'ulimit -f 32; exec " + kRender + " " + h5 + " -d " + dir +
                           "/f --last 0 >> " + report + "'");
  EXPECT_EQ(lost.exit_code, 1) << lost.output;
  EXPECT_NE(lost.output.find("cannot write to standard output"), std::string::npos) << lost.output;
}

// Found by an attacker: an empty --gif or --video ran as if the flag were not given, and
// `--last 0x5` was read as hexadecimal. Every value follows the programs' rules
// (gs::apply_value_rules()): a usage error naming the flag, nothing made.
TEST(Render, EmptyValuesAndIntegersNotInBase10AreUsageErrors) {
  const std::string dir = fresh_directory("render_value_rules");
  const std::string h5 = small_output(dir);
  for (const auto& [flags, message] : std::vector<std::pair<std::string, std::string>>{
           {"--gif ''", "--gif: must not be empty"},
           {"--video ''", "--video: must not be empty"},
           {"--last 0x5", "0x5 is not a whole number written in base 10"},
           {"--stride 1e1", "1e1 is not a whole number written in base 10"}}) {
    const Outcome outcome = run(kRender + " " + h5 + " -d " + dir + "/f " + flags);
    EXPECT_EQ(outcome.exit_code, 2) << flags << ": " << outcome.output;
    EXPECT_NE(outcome.output.find(message), std::string::npos) << flags << ": " << outcome.output;
    EXPECT_FALSE(fs::exists(dir + "/f")) << flags << ": made before the check";
  }
  const Outcome input = run(kRender + " '' -d " + dir + "/f");
  EXPECT_EQ(input.exit_code, 2) << input.output;
  EXPECT_NE(input.output.find("input: must not be empty"), std::string::npos) << input.output;
  // Leading zeros are base 10: --last 05 is frame 5, --stride 02 every other frame.
  const Outcome zeros =
      run(kRender + " " + h5 + " -d " + dir + "/z --first 01 --last 05 --stride 02");
  EXPECT_EQ(zeros.exit_code, 0) << zeros.output;
  EXPECT_NE(zeros.output.find("(frames 1..5 step 2"), std::string::npos) << zeros.output;
}

// Found by an attacker: a shorter render into the directory of a longer one left the older
// frames beyond it without a word, and --video assembled them after the new ones. They are named
// in a warning and left as they were (a render deletes no picture it did not write), and the video
// takes this render's frames only.
TEST(Render, OlderFramesBeyondTheOnesWrittenAreNamedAndKeptOutOfTheVideo) {
  const std::string dir = fresh_directory("render_stale_frames");
  const std::string h5 = small_output(dir);
  const std::string frames = dir + "/frames";
  const Outcome all = run(kRender + " " + h5 + " -d " + frames);
  ASSERT_EQ(all.exit_code, 0) << all.output;
  EXPECT_EQ(all.output.find("warning"), std::string::npos) << all.output;
  const std::string bin = stand_in_ffmpeg(dir);
  const std::string log = dir + "/ffmpeg_arguments.txt";
  const Outcome shorter = run("PATH=" + shell_quoted(bin) + ":\"$PATH\" " + kRender + " " + h5 +
                              " -d " + frames + " --stride 2 --video " + dir + "/run.mp4");
  ASSERT_EQ(shorter.exit_code, 0) << shorter.output;
  EXPECT_NE(shorter.output.find("warning: -d '" + frames +
                                "' also holds 3 older frame(s) beyond the 3 just written, from an "
                                "earlier, longer render: frame_00003.png to frame_00005.png"),
            std::string::npos)
      << shorter.output;
  for (const char* name : {"frame_00003.png", "frame_00004.png", "frame_00005.png"}) {
    EXPECT_TRUE(is_png(fs::path(frames) / name)) << name << " was not left as it was";
  }
  std::ifstream arguments(log);
  std::vector<std::string> lines;
  for (std::string line; std::getline(arguments, line);) lines.push_back(line);
  const auto limit = std::find(lines.begin(), lines.end(), "-frames:v");
  ASSERT_NE(limit, lines.end()) << "ffmpeg was not told how many frames are this render's";
  ASSERT_NE(limit + 1, lines.end());
  EXPECT_EQ(*(limit + 1), "3");
}

// Found by an attacker: `-d ''` failed with a filesystem error naming no flag; `--gif g.gif -d
// g.gif` made the directory g.gif, then blamed --gif for being one. Every path is checked before
// anything is made.
TEST(Render, TheFramesDirectoryIsCheckedBeforeItIsMade) {
  const std::string dir = fresh_directory("render_frames_directory");
  const std::string h5 = small_output(dir);
  const Outcome empty = run(kRender + " " + h5 + " -d ''");
  EXPECT_EQ(empty.exit_code, 2) << empty.output;
  EXPECT_NE(empty.output.find("--out-dir: must not be empty"), std::string::npos) << empty.output;
  for (const std::string& flags : {"--gif " + dir + "/g.gif -d " + dir + "/g.gif",
                                   "--gif " + dir + "/g.gif -d " + dir + "/sub/../g.gif"}) {
    const Outcome outcome = run(kRender + " " + h5 + " " + flags);
    // Without giflib --gif itself is refused first (a usage error): nothing is made either.
    EXPECT_EQ(outcome.exit_code, GS_HAVE_GIF ? 1 : 2) << flags << ": " << outcome.output;
    EXPECT_NE(outcome.output.find(GS_HAVE_GIF ? "' name the same path" : "built without giflib"),
              std::string::npos)
        << outcome.output;
    EXPECT_FALSE(fs::exists(dir + "/g.gif")) << flags << ": made before the check";
    EXPECT_FALSE(fs::exists(dir + "/sub")) << flags << ": made before the check";
  }
  std::ofstream(dir + "/a_file") << "text";
  const Outcome file = run(kRender + " " + h5 + " -d " + dir + "/a_file");
  EXPECT_EQ(file.exit_code, 1) << file.output;
  EXPECT_NE(file.output.find("-d '" + dir + "/a_file' is not a directory"), std::string::npos)
      << file.output;
}

// ---------------------------------------------------------------------------------------------
// Files that are not a simulation, built with the HDF5 C API

// A file in the course's layout: dataset `matrix`, [frames, rows, cols] of @p values (frame by
// frame), one chunk per frame, with the attributes the course's programs write. @p set_up, when
// given, lays the dataset out its own way instead, and no value is written.
std::string course_file(const std::string& path, int frames, int rows, int cols,
                        const std::vector<float>& values, const std::string& implementation,
                        const std::function<void(hid_t create)>& set_up = {}) {
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  EXPECT_GE(file, 0) << path;
  const hsize_t dims[3] = {static_cast<hsize_t>(frames), static_cast<hsize_t>(rows),
                           static_cast<hsize_t>(cols)};
  const hsize_t chunk[3] = {1, dims[1], dims[2]};
  const hid_t space = H5Screate_simple(3, dims, nullptr);
  const hid_t create = H5Pcreate(H5P_DATASET_CREATE);
  if (set_up) {
    set_up(create);
  } else {
    EXPECT_GE(H5Pset_chunk(create, 3, chunk), 0);
  }
  const hid_t dataset =
      H5Dcreate2(file, "matrix", H5T_IEEE_F32LE, space, H5P_DEFAULT, create, H5P_DEFAULT);
  EXPECT_GE(dataset, 0);
  const hid_t scalar = H5Screate(H5S_SCALAR);
  const auto attribute = [&](const char* name, hid_t type, const void* value) {
    const hid_t created = H5Acreate2(dataset, name, type, scalar, H5P_DEFAULT, H5P_DEFAULT);
    EXPECT_GE(H5Awrite(created, type, value), 0) << name;
    H5Aclose(created);
  };
  for (const auto& [name, value] : {std::pair{"nbrow", rows}, std::pair{"nbcol", cols},
                                    std::pair{"nbimage", frames}, std::pair{"nbextrastep", 10}}) {
    attribute(name, H5T_NATIVE_INT, &value);
  }
  for (const auto& [name, value] :
       {std::pair{"killrate", 0.054f}, std::pair{"feedrate", 0.014f}, std::pair{"deltat", 1.0f},
        std::pair{"diffusion_u", 0.1f}, std::pair{"diffusion_v", 0.05f}}) {
    attribute(name, H5T_NATIVE_FLOAT, &value);
  }
  const hid_t text = H5Tcopy(H5T_C_S1);
  H5Tset_size(text, implementation.size());
  attribute("implementation", text, implementation.data());
  H5Tclose(text);
  if (!set_up) {
    EXPECT_GE(H5Dwrite(dataset, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), 0);
  }
  H5Sclose(scalar);
  H5Dclose(dataset);
  H5Pclose(create);
  H5Sclose(space);
  H5Fclose(file);
  return path;
}

// Three frames of 5 x 6 cells, v between 0 and 0.5.
std::vector<float> ramp(int frames = 3, int rows = 5, int cols = 6) {
  std::vector<float> v(static_cast<std::size_t>(frames) * rows * cols);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = 0.5f * static_cast<float>(i) / v.size();
  return v;
}

// gs_render refused @p h5 with exit code 1, a message holding @p message, and wrote nothing.
void expect_refused(const std::string& h5, const std::string& dir, const std::string& message) {
  const Outcome outcome = run(kRender + " " + h5 + " -d " + dir + "/frames");
  EXPECT_EQ(outcome.exit_code, 1) << outcome.output;
  EXPECT_NE(outcome.output.find(message), std::string::npos) << outcome.output;
  EXPECT_FALSE(fs::exists(dir + "/frames")) << "refused before any picture was written";
}

TEST(RenderRefuses, ValuesKeptInAnotherFile) {
  const std::string dir = fresh_directory("render_external");
  // Any file of the system, sized as two frames of 5 x 6 float32 want (/etc/hostname would do).
  const std::string elsewhere = dir + "/hostname";
  std::ofstream(elsewhere) << std::string(3 * 5 * 6 * 4, 'h');
  expect_refused(course_file(dir + "/external.h5", 3, 5, 6, {}, "hand-made",
                             [&elsewhere](hid_t create) {
                               EXPECT_GE(H5Pset_external(create, elsewhere.c_str(), 0, 360), 0);
                             }),
                 dir, "(HDF5 external storage): a simulation's file holds its own values");
  // Shorter than declared: refused the same way, before HDF5 reads past its end.
  std::ofstream(dir + "/short", std::ios::trunc) << "tiny";
  expect_refused(course_file(dir + "/external_short.h5", 3, 5, 6, {}, "hand-made",
                             [&dir](hid_t create) {
                               EXPECT_GE(H5Pset_external(create, (dir + "/short").c_str(), 0, 360),
                                         0);
                             }),
                 dir, "external storage");
}

TEST(RenderRefuses, AVirtualDatasetWithAMissingSource) {
  const std::string dir = fresh_directory("render_virtual");
  const std::string source = dir + "/gone.h5";
  expect_refused(
      course_file(dir + "/virtual.h5", 3, 5, 6, {}, "hand-made",
                  [&source](hid_t create) {
                    const hsize_t dims[3] = {3, 5, 6};
                    const hid_t space = H5Screate_simple(3, dims, nullptr);
                    EXPECT_GE(H5Pset_virtual(create, space, source.c_str(), "matrix", space), 0);
                    H5Sclose(space);
                  }),
      dir, "is a virtual dataset");
}

// A file whose 'matrix' is an external link to @p target ("file:/object"), padded with zeros so
// that a chunk of the other file seems to lie inside it.
std::string linking_file(const std::string& path, const std::string& other_file) {
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  EXPECT_GE(file, 0) << path;
  EXPECT_GE(
      H5Lcreate_external(other_file.c_str(), "/matrix", file, "matrix", H5P_DEFAULT, H5P_DEFAULT),
      0);
  H5Fclose(file);
  std::ofstream(path, std::ios::binary | std::ios::app) << std::string(1 << 16, '\0');
  return path;
}

TEST(RenderRefuses, AnExternalLinkWithoutOpeningTheOtherFile) {
  const std::string dir = fs::absolute(fresh_directory("render_external_link")).string();
  // Another simulation's file: drawn as if it were this one's before.
  const std::string good = course_file(dir + "/good.h5", 3, 5, 6, ramp(), "hand-made");
  expect_refused(linking_file(dir + "/link.h5", good), dir,
                 "is an external link to '" + good + ":/matrix'");
  // A FIFO at the other end: opening it would block forever (and ignore the first Ctrl-C).
  ASSERT_EQ(::mkfifo((dir + "/fifo").c_str(), 0600), 0);
  const std::string fifo_link = linking_file(dir + "/fifo_link.h5", dir + "/fifo");
  const Outcome outcome =
      run("timeout -s KILL 20 " + kRender + " " + fifo_link + " -d " + dir + "/frames");
  EXPECT_EQ(outcome.exit_code, 1) << "hung on the FIFO? " << outcome.output;
  EXPECT_NE(outcome.output.find("is an external link"), std::string::npos) << outcome.output;
  EXPECT_FALSE(fs::exists(dir + "/frames"));
}

TEST(RenderRefuses, AFileCutShort) {
  const std::string dir = fresh_directory("render_truncated");
  const std::string h5 = course_file(dir + "/cut.h5", 3, 5, 6, ramp(), "hand-made");
  fs::resize_file(h5, fs::file_size(h5) / 2);
  expect_refused(h5, dir, "it is truncated");
}

TEST(RenderRefuses, NanAndInfiniteValuesSayingWhereBeforeDrawing) {
  const std::string dir = fresh_directory("render_nan");
  std::vector<float> v = ramp();
  v[30 + 2 * 6 + 3] = std::numeric_limits<float>::quiet_NaN();  // frame 1, row 2, column 3
  v[30 + 4 * 6 + 5] = std::numeric_limits<float>::infinity();   // frame 1, row 4, column 5
  v[60 + 0] = -std::numeric_limits<float>::infinity();          // frame 2, row 0, column 0
  const std::string h5 = course_file(dir + "/diverged.h5", 3, 5, 6, v, "hand-made");
  for (const char* flags : {"", " --vmax 0.5", " --no-png --gif " /* + path below */}) {
    std::string command = kRender + " " + h5 + " -d " + dir + "/frames" + flags;
    if (std::string(flags).find("--gif") != std::string::npos) {
      if (!GS_HAVE_GIF) continue;
      command += dir + "/run.gif";
    }
    const Outcome outcome = run(command);
    EXPECT_EQ(outcome.exit_code, 1) << flags << ": " << outcome.output;
    EXPECT_NE(outcome.output.find("v is not finite (NaN or infinite) in 2 of the 3 frame(s) to "
                                  "draw; the first, frame 1, has 2 such cell(s), the first at row "
                                  "2, column 3 (v = nan)"),
              std::string::npos)
        << flags << ": " << outcome.output;
    EXPECT_FALSE(fs::exists(dir + "/frames")) << flags << ": nothing is drawn";
    EXPECT_FALSE(fs::exists(dir + "/run.gif")) << flags;
  }
  // The frames before the first bad one are still a simulation's, and are drawn.
  const Outcome first = run(kRender + " " + h5 + " -d " + dir + "/frames --last 0");
  EXPECT_EQ(first.exit_code, 0) << first.output;
  EXPECT_TRUE(is_png(dir + "/frames/frame_00000.png"));
}

TEST(Render, PrintsTheFilesTextWithoutItsEscapeSequences) {
  const std::string dir = fresh_directory("render_escape");
  // Clears the screen, sets the terminal's title, and moves the cursor back to hide itself.
  const std::string hostile =
      "l06\x1b[2J\x1b]0;owned\x07\x1b[1A\r\xc2\x9b"
      "31mX";
  const std::string h5 = course_file(dir + "/escape.h5", 3, 5, 6, ramp(), hostile);
  const Outcome outcome = run(kRender + " " + h5 + " -d " + dir + "/frames");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_EQ(outcome.output.find('\x1b'), std::string::npos) << "an escape reached the terminal";
  EXPECT_EQ(outcome.output.find('\x07'), std::string::npos);
  EXPECT_EQ(outcome.output.find('\r'), std::string::npos);
  EXPECT_EQ(outcome.output.find("\xc2\x9b"), std::string::npos) << "a C1 CSI reached it";
  EXPECT_NE(
      outcome.output.find("written by l06\\x1b[2J\\x1b]0;owned\\x07\\x1b[1A\\r\\u{009B}31mX)"),
      std::string::npos)
      << outcome.output;
}

TEST(Render, RefusesAScaleThatIsNotAFiniteFloat32OrNotInOrder) {
  const std::string dir = fresh_directory("render_scale");
  const std::string h5 = course_file(dir + "/run.h5", 3, 5, 6, ramp(), "hand-made");
  const struct {
    const char* flags;
    const char* message;
  } cases[] = {{"--vmax nan", "--vmax: nan is not a finite number"},
               {"--vmax inf", "--vmax: inf is not a finite number"},
               {"--vmin -1e39", "--vmin: -1e39 is too large for float32"},
               {"--vmax 1e-46", "--vmax: 1e-46 is too small for float32"},
               {"--vmin 0.5 --vmax 0.5", "--vmax (0.5) must be greater than --vmin (0.5)"},
               {"--vmin 0.5 --vmax 0.1", "must be greater than --vmin"}};
  for (const auto& c : cases) {
    const Outcome outcome = run(kRender + " " + h5 + " -d " + dir + "/f " + c.flags);
    EXPECT_EQ(outcome.exit_code, 2) << c.flags << ": " << outcome.output;
    EXPECT_NE(outcome.output.find(c.message), std::string::npos)
        << c.flags << ": " << outcome.output;
    EXPECT_FALSE(fs::exists(dir + "/f")) << c.flags;
  }
}

}  // namespace
