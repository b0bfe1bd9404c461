// The wrong answer lesson 07's point test must catch, for the right reason:
// tests/fixtures/07_async_output/waits_while_the_writer_writes/frame_ring.hpp keeps the one rule
// and hands every frame over in order, but its acquire() waits while the writer holds a frame,
// free slots or not. The point test must name the wait for the writer with a slot free.
#include <gtest/gtest.h>

#include <iostream>
#include <string>

#include "lesson07_point.hpp"

TEST(Lesson07PointFixture, WaitingWhileTheWriterWritesFailsThePointTest) {
  const std::string problem = lesson07_point::check_ring_waits_only_when_full();
  std::cout << "the point test says: " << (problem.empty() ? "nothing (it passed)" : problem)
            << "\n";
  EXPECT_NE(problem.find("waited in acquire() though its frame's slot was free"), std::string::npos)
      << "the point test should fail the fixture whose acquire() waits while the writer holds a "
         "frame, naming the wait with a slot free; it said: "
      << (problem.empty() ? std::string("nothing (it passed)") : problem);
}
