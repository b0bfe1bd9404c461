# Sourced by the course's scripts: run_gtest EXE [ARGS...] runs a GoogleTest binary with an XML
# report and sets GT_RC (exit code), GT_TOTAL, GT_FAILED, GT_SKIPPED, GT_PASSED and GT_SECONDS.
run_gtest() {
  local exe=$1
  shift
  local xml
  xml=$(mktemp --suffix=.xml)
  local start=$SECONDS
  "$exe" --gtest_brief=1 --gtest_output="xml:$xml" "$@" > "${GT_LOG:-/dev/null}" 2>&1
  GT_RC=$?
  GT_SECONDS=$((SECONDS - start))
  local root
  root=$(grep -m1 '<testsuites ' "$xml" 2>/dev/null || true)
  GT_TOTAL=$(printf '%s' "$root" | sed -n 's/.* tests="\([0-9]*\)".*/\1/p')
  GT_FAILED=$(printf '%s' "$root" | sed -n 's/.* failures="\([0-9]*\)".*/\1/p')
  GT_SKIPPED=$(grep -c 'result="skipped"' "$xml" 2>/dev/null || true)
  GT_TOTAL=${GT_TOTAL:-0} GT_FAILED=${GT_FAILED:-0} GT_SKIPPED=${GT_SKIPPED:-0}
  if [ -z "$root" ] && [ "$GT_RC" -ne 0 ]; then GT_FAILED=1; fi  # crashed before its report
  GT_PASSED=$((GT_TOTAL - GT_FAILED - GT_SKIPPED))
  rm -f "$xml"
}
