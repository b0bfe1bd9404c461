// The ground floor's text helpers (format.hpp).
#include "gs/format.hpp"

#include <cstdio>
#include <iomanip>
#include <sstream>

namespace gs {

std::string si(double value, const std::string& unit) {
  const char* prefixes[] = {"", "k", "M", "G", "T", "P"};
  int prefix = 0;
  while (value >= 1000.0 && prefix < 5) {
    value /= 1000.0;
    ++prefix;
  }
  std::ostringstream text;
  text << std::fixed << std::setprecision(value < 10.0 ? 2 : (value < 100.0 ? 1 : 0)) << value
       << " " << prefixes[prefix] << unit;
  return text.str();
}

namespace {

// The length of the well-formed UTF-8 sequence at @p at (2 to 4 bytes) and its code point, or 0
// when the bytes there are not one (a stray continuation byte, an overlong form, a surrogate,
// beyond U+10FFFF, cut short).
std::size_t utf8_sequence(const std::string& text, std::size_t at, char32_t& code_point) {
  const auto byte = [&text](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(at);
  std::size_t length = 0;
  char32_t minimum = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2, minimum = 0x80, code_point = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3, minimum = 0x800, code_point = lead & 0x0F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4, minimum = 0x10000, code_point = lead & 0x07;
  } else {
    return 0;
  }
  if (at + length > text.size()) return 0;
  for (std::size_t i = 1; i < length; ++i) {
    if ((byte(at + i) & 0xC0) != 0x80) return 0;
    code_point = (code_point << 6) | (byte(at + i) & 0x3F);
  }
  if (code_point < minimum || code_point > 0x10FFFF ||
      (code_point >= 0xD800 && code_point <= 0xDFFF)) {
    return 0;
  }
  return length;
}

// C1 controls, and the characters that reorder text or break lines where the terminal shows it.
bool hidden_control(char32_t c) {
  return (c >= 0x80 && c <= 0x9F) || c == 0x200E || c == 0x200F || (c >= 0x202A && c <= 0x202E) ||
         (c >= 0x2066 && c <= 0x2069) || c == 0x2028 || c == 0x2029;
}

}  // namespace

std::string printable(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  char escape[16];
  for (std::size_t at = 0; at < text.size();) {
    const auto byte = static_cast<unsigned char>(text[at]);
    if (byte == '\\') {
      out += "\\\\";
    } else if (byte == '\n') {
      out += "\\n";
    } else if (byte == '\t') {
      out += "\\t";
    } else if (byte == '\r') {
      out += "\\r";
    } else if (byte >= 0x20 && byte < 0x7F) {
      out += static_cast<char>(byte);
    } else if (byte < 0x80) {  // C0 controls and DEL
      std::snprintf(escape, sizeof escape, "\\x%02x", byte);
      out += escape;
    } else {
      char32_t code_point = 0;
      const std::size_t length = utf8_sequence(text, at, code_point);
      if (length == 0) {
        std::snprintf(escape, sizeof escape, "\\x%02x", byte);
        out += escape;
      } else {
        if (hidden_control(code_point)) {
          std::snprintf(escape, sizeof escape, "\\u{%04X}", static_cast<unsigned>(code_point));
          out += escape;
        } else {
          out.append(text, at, length);
        }
        at += length;
        continue;
      }
    }
    ++at;
  }
  return out;
}

}  // namespace gs
