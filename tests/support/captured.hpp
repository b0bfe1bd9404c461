/// @file captured.hpp
/// @brief What a program writes to std::cout or std::cerr, caught by the tests of common/ that
///        call its functions directly (not through a process).
#pragma once

#include <ostream>
#include <sstream>
#include <streambuf>
#include <string>

namespace gs::test {

/// @brief What a stream (std::cout, std::cerr) receives while this object lives, given back at
///        its end.
class Captured {
 public:
  /// @brief Redirects @p stream into this object.
  explicit Captured(std::ostream& stream)
      : stream_(stream), previous_(stream.rdbuf(text_.rdbuf())) {}
  /// @brief Gives @p stream its own buffer back.
  ~Captured() { stream_.rdbuf(previous_); }
  Captured(const Captured&) = delete;             ///< Owns a redirection: not copyable.
  Captured& operator=(const Captured&) = delete;  ///< Owns a redirection: not copyable.
  /// @brief What the stream received so far.
  std::string str() const { return text_.str(); }

 private:
  std::ostringstream text_;
  std::ostream& stream_;
  std::streambuf* previous_;
};

}  // namespace gs::test
