// Lesson 04: every kernel and launch shape against the reference on the course's sizes, and (as
// every generic implementation of the course) with weights that are not all ones against the
// reference in double: the unit weights cannot tell a transposed or mis-indexed weight matrix
// apart. The block-size sweep's shapes differ in blocks and cells per thread, so the weights test
// covers every launch path (lesson_suite.hpp).
#include "lesson_suite.hpp"

GS_LESSON_SUITE(GS_LESSON_NAMESPACE::implementations());
