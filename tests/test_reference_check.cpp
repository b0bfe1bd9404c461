// The exercise programs' check before any work (gs/reference_check.hpp): a stub is named first,
// in the report and in the benchmark; a right implementation and the programs that do not check
// print nothing new.
#include <gtest/gtest.h>

#include <functional>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "captured.hpp"
#include "gs/benchmark.hpp"
#include "gs/program.hpp"
#include "gs/reference_check.hpp"

namespace {

// A stub as a learner receives it: load() keeps the state, advance() computes nothing.
class StubStepper final : public gs::Stepper {
 public:
  void load(const gs::State& state, const gs::Rates&) override { state_ = state; }
  void advance(int) override {}
  void fetch(gs::State& state) override { state = state_; }

 private:
  gs::State state_;
};

// The reference's steps with one value wrong in what it hands back: an off-by-one that a glance
// at the speed would never show.
class OneCellOffStepper final : public gs::Stepper {
 public:
  void load(const gs::State& state, const gs::Rates& rates) override {
    reference_->load(state, rates);
  }
  void advance(int steps) override { reference_->advance(steps); }
  void fetch(gs::State& state) override {
    reference_->fetch(state);
    state.v[state.index(9, 18)] += 0.01f;
  }

 private:
  std::unique_ptr<gs::Stepper> reference_ = gs::reference_implementation().create();
};

gs::Implementation implementation_of(const std::string& name,
                                     std::function<std::unique_ptr<gs::Stepper>()> create) {
  gs::Implementation implementation = gs::reference_implementation();
  implementation.name = name;
  implementation.lesson = "01_profiling";
  implementation.create = std::move(create);
  return implementation;
}

gs::Implementation stub() {
  return implementation_of("stub", [] { return std::make_unique<StubStepper>(); });
}

constexpr const char* kDisagrees = "disagrees with the reference";
constexpr const char* kWrongResults = "The figures below time wrong results";

}  // namespace

TEST(ReferenceCheck, TheReferenceAgreesAndNothingIsSaid) {
  const gs::Implementation reference = gs::reference_implementation();
  const gs::Agreement agreement = gs::check_against_reference(reference, gs::Rates());
  EXPECT_TRUE(agreement.checked) << agreement.why_not;
  EXPECT_TRUE(agreement.agrees) << agreement.worst;
  EXPECT_EQ(agreement.values_total, 2 * 19 * 37);
  EXPECT_EQ(gs::disagreement_warning(agreement, reference), "");
}

TEST(ReferenceCheck, AStubDisagreesAndTheWarningSaysTheFiguresTimeWrongResults) {
  const gs::Agreement agreement = gs::check_against_reference(stub(), gs::Rates());
  ASSERT_TRUE(agreement.checked) << agreement.why_not;
  EXPECT_FALSE(agreement.agrees);
  const std::string warning = gs::disagreement_warning(agreement, stub());
  EXPECT_NE(warning.find("your implementation stub " + std::string(kDisagrees)), std::string::npos)
      << warning;
  EXPECT_NE(warning.find(kWrongResults), std::string::npos) << warning;
  EXPECT_NE(warning.find("ctest --test-dir build -L lesson01 -L exercise"), std::string::npos)
      << warning;
}

TEST(ReferenceCheck, OneWrongCellIsFoundAndNamed) {
  const gs::Implementation off =
      implementation_of("off", [] { return std::make_unique<OneCellOffStepper>(); });
  const gs::Agreement agreement = gs::check_against_reference(off, gs::Rates());
  ASSERT_TRUE(agreement.checked) << agreement.why_not;
  EXPECT_FALSE(agreement.agrees);
  EXPECT_EQ(agreement.values_off, 1);
  EXPECT_EQ(agreement.worst.rfind("v at row 9, column 18: ", 0), 0u) << agreement.worst;
}

TEST(ReferenceCheck, AnImplementationThatRefusesTheSmallGridIsNotCheckedAndNotBlamed) {
  gs::Implementation refusing = stub();
  refusing.refuses_grid = [](int, int) { return std::string("only large grids"); };
  const gs::Agreement agreement = gs::check_against_reference(refusing, gs::Rates());
  EXPECT_FALSE(agreement.checked);
  EXPECT_EQ(agreement.why_not, "only large grids");
  EXPECT_EQ(gs::disagreement_warning(agreement, refusing), "");
}

TEST(ReferenceCheck, AnExerciseProgramSaysSoFirstInItsReportAndOnStderr) {
  const std::vector<gs::Implementation> all = {stub()};
  const char* arguments[] = {"program", "-r", "9", "-c", "10", "-n", "2", "-e", "1", "--no-output"};
  const gs::test::Captured out(std::cout), err(std::cerr);
  const int code = gs::run_program(10, const_cast<char**>(arguments), all, "program", "test",
                                   gs::synchronous_frame_loop(), gs::ReferenceCheck::before_work);
  EXPECT_EQ(code, 0) << err.str();
  EXPECT_EQ(out.str().rfind("WARNING: your implementation stub " + std::string(kDisagrees), 0), 0u)
      << out.str();
  EXPECT_NE(err.str().find(kWrongResults), std::string::npos) << err.str();
}

TEST(ReferenceCheck, ProgramsThatDoNotCheckAndRightImplementationsSayNothing) {
  const char* arguments[] = {"program", "-r", "9", "-c", "10", "-n", "2", "-e", "1", "--no-output"};
  for (const bool checking : {false, true}) {
    const std::vector<gs::Implementation> all = {checking ? gs::reference_implementation()
                                                          : stub()};
    const gs::test::Captured out(std::cout), err(std::cerr);
    const int code = gs::run_program(
        10, const_cast<char**>(arguments), all, "program", "test", gs::synchronous_frame_loop(),
        checking ? gs::ReferenceCheck::before_work : gs::ReferenceCheck::off);
    EXPECT_EQ(code, 0) << err.str();
    EXPECT_EQ(out.str().rfind("implementation  ", 0), 0u) << out.str();
    EXPECT_EQ(out.str().find("WARNING"), std::string::npos) << out.str();
    EXPECT_EQ(err.str().find("WARNING"), std::string::npos) << err.str();
  }
}

TEST(ReferenceCheck, TheBenchmarkNamesTheWrongOneAboveTheTableAndMarksItsRow) {
  const std::vector<gs::Implementation> all = {stub(), gs::reference_implementation()};
  const char* arguments[] = {"benchmark", "-r", "9", "-c", "10", "-n", "1", "-e", "1"};
  const gs::test::Captured out(std::cout), err(std::cerr);
  const int code = gs::run_benchmark(9, const_cast<char**>(arguments), all, "benchmark", "test",
                                     gs::synchronous_frame_loop(), gs::ReferenceCheck::before_work);
  EXPECT_EQ(code, 0) << err.str();
  const std::string text = out.str();
  const std::size_t warning = text.find("your implementation stub " + std::string(kDisagrees));
  const std::size_t table = text.find("| implementation |");
  ASSERT_NE(warning, std::string::npos) << text;
  ASSERT_NE(table, std::string::npos) << text;
  EXPECT_LT(warning, table) << text;
  EXPECT_NE(text.find("| stub (WRONG RESULTS, see above) |"), std::string::npos) << text;
  EXPECT_NE(text.find("| reference |"), std::string::npos) << text;
  EXPECT_EQ(text.find("your implementation reference"), std::string::npos) << text;
}

TEST(ReferenceCheck, TheBenchmarksDefaultBaselineIsOneTheProgramHas) {
  // No l01-naive here (lesson 02's program): the speed-up is relative to the first row, not n/a.
  gs::Implementation slow = gs::reference_implementation();
  slow.name = "slow";
  const std::vector<gs::Implementation> all = {gs::reference_implementation(), slow};
  const char* arguments[] = {"benchmark", "-r", "9", "-c", "10", "-n", "1", "-e", "1"};
  const gs::test::Captured out(std::cout), err(std::cerr);
  const int code = gs::run_benchmark(9, const_cast<char**>(arguments), all, "benchmark", "test");
  EXPECT_EQ(code, 0) << err.str();
  EXPECT_NE(out.str().find("speed-up vs slow |"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find("n/a"), std::string::npos) << out.str();
}
