// PNG through libpng into an OutputFile: libpng's bytes go to OutputFile::write_noexcept() (a C
// library cannot let an exception through), its errors come back by longjmp and become an
// OutputError, so a picture is written like every other output of the course.
#include "gs/png_file.hpp"

#include <png.h>

#include <csetjmp>
#include <cstdio>
#include <memory>
#include <vector>

namespace gs {
namespace {

static_assert(kMaxPngSide == PNG_USER_WIDTH_MAX && kMaxPngSide == PNG_USER_HEIGHT_MAX,
              "kMaxPngSide must be libpng's user limit");

struct PngContext {
  OutputFile* file = nullptr;
  int write_error = 0;  // the first failed write's error number
  char message[256] = {};
};

extern "C" void png_write_to_output(png_structp png, png_bytep data, size_t length) {
  auto* context = static_cast<PngContext*>(png_get_io_ptr(png));
  const int error = context->file->write_noexcept(data, length);
  if (error != 0) {
    context->write_error = error;
    png_error(png, "write failed");
  }
}

extern "C" void png_flush_nothing(png_structp) {}

extern "C" void png_on_error(png_structp png, png_const_charp message) {
  auto* context = static_cast<PngContext*>(png_get_error_ptr(png));
  std::snprintf(context->message, sizeof context->message, "%s", message);
  png_longjmp(png, 1);
}

extern "C" void png_on_warning(png_structp, png_const_charp) {}

// The libpng calls, apart so that no C++ object lives between setjmp and longjmp (the row
// filler returns before libpng is called with its row). Returns false after a libpng error.
bool encode(png_structp png, png_infop info, int width, int height, const PngRowFiller& fill_row,
            unsigned char* row) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_set_IHDR(png, info, static_cast<png_uint_32>(width), static_cast<png_uint_32>(height), 8,
               PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (int y = 0; y < height; ++y) {
    fill_row(y, row);
    png_write_row(png, row);
  }
  png_write_end(png, nullptr);
  return true;
}

}  // namespace

void check_png_size(int width, int height, const std::string& path, const std::string& flag) {
  if (width >= 1 && height >= 1 && width <= kMaxPngSide && height <= kMaxPngSide) return;
  throw OutputError("cannot write " + flag + " '" + path + "': a PNG of " + std::to_string(width) +
                    " x " + std::to_string(height) + " pixels; libpng writes from 1 to " +
                    std::to_string(kMaxPngSide) + " pixels a side (PNG_USER_WIDTH_MAX)");
}

void write_rgb_png(OutputFile& file, int width, int height, const PngRowFiller& fill_row) {
  check_png_size(width, height, file.path(), file.flag());
  PngContext context;
  context.file = &file;
  png_structp png =
      png_create_write_struct(PNG_LIBPNG_VER_STRING, &context, png_on_error, png_on_warning);
  png_infop info = png != nullptr ? png_create_info_struct(png) : nullptr;
  // Destroys libpng's state however this function is left (an error, an exception of fill_row).
  const auto destroy = [&png, &info](void*) { png_destroy_write_struct(&png, &info); };
  const std::unique_ptr<void, decltype(destroy)> guard(&context, destroy);
  if (png == nullptr || info == nullptr) {
    throw OutputError("libpng could not start writing " + file.flag() + " '" + file.path() +
                      "' (out of memory?)");
  }
  png_set_write_fn(png, &context, png_write_to_output, png_flush_nothing);
  std::vector<unsigned char> row(static_cast<std::size_t>(width) * 3);
  if (!encode(png, info, width, height, fill_row, row.data())) {
    if (context.write_error != 0) file.throw_write_error(context.write_error);
    throw OutputError("libpng failed while writing " + file.flag() + " '" + file.path() +
                      "': " + context.message);
  }
}

}  // namespace gs
