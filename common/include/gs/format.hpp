/// @file format.hpp
/// @brief The ground floor's text helpers, which the output files, the reports and the programs
///        all use: numbers with an SI prefix, and text from a file made safe for a terminal.
#pragma once

#include <string>

namespace gs {

/// @brief Formats a count with an SI prefix and @p unit, e.g. "2.07 G" + "cell-updates/s".
std::string si(double value, const std::string& unit);

/// @brief @p text made safe to print on a terminal: what a file says (an attribute, a name, an
///        HDF5 message quoting them) can hold escape sequences that move the cursor, rewrite the
///        screen or set the window's title. Printable ASCII and well-formed UTF-8 are kept; a
///        control character becomes `\n`, `\t`, `\r` or `\xNN` (ESC is `\x1b`), a byte that is
///        not UTF-8 `\xNN`, a C1 control or a character that reorders or breaks lines (U+0080 to
///        U+009F, U+200E/F, U+202A to U+202E, U+2066 to U+2069, U+2028/9) `\u{XXXX}`, and a
///        backslash `\\`, so that the result reads back unambiguously. Use it wherever a file's
///        text reaches the terminal.
std::string printable(const std::string& text);

}  // namespace gs
