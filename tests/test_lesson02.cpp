#include "gs/lessons.hpp"
#include "lesson_suite.hpp"
GS_LESSON_SUITE(lesson02::implementations());
