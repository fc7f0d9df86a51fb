// Copyright attune authors.
//
// Name suggestions for error messages ("unknown step 'benchmrk' (did you mean 'benchmark'?)").
//
// Pure functions; thread-safe.
#ifndef ATTUNE_SUPPORT_NAMES_H_
#define ATTUNE_SUPPORT_NAMES_H_

#include <cstddef>
#include <string>
#include <vector>

namespace attune::support {

// Levenshtein distance (insertions, deletions, substitutions each cost 1), in bytes.
size_t EditDistance(const std::string& a, const std::string& b);

// The nearest of `candidates` to `word` by edit distance, or "" when none is close enough to be a
// plausible typo (distance at most max(2, |word|/3)). Ties go to the earlier candidate.
std::string NearestName(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace attune::support

#endif  // ATTUNE_SUPPORT_NAMES_H_
