#!/usr/bin/env bash
# Prints the repository (owner/name) of the course this repository was made from, or nothing
# when this is the course itself. The workflows decide with it: grade.yml grades only where there
# is an upstream (a learner's fork or copy), ci.yml tests only where there is none (the course,
# whose shipped exercises must fail their tests: in a learner's repository they get solved).
# In order:
#   1. the variable GS_UPSTREAM (repository or organisation variable, e.g. a class's template
#      repository; set to the repository's own name, it marks a teacher's copy as the course);
#   2. the repository a fork was made from (GitHub's API, through the GitHub CLI);
#   3. the template repository a copy was made from.
# Needs GITHUB_REPOSITORY and GH_TOKEN (the workflow's token can read this metadata).
set -euo pipefail
repository=${GITHUB_REPOSITORY:?"GITHUB_REPOSITORY is not set"}
upstream=${GS_UPSTREAM:-}
if [ -z "$upstream" ]; then
  upstream=$(gh api "repos/$repository" \
    --jq '.parent.full_name // .template_repository.full_name // ""')
fi
if [ "$upstream" = "$repository" ]; then upstream=""; fi
echo "$upstream"
