// What one review's violations may cost: each kept once, found in a hash set
// rather than by comparing every pair (a Pod of 40,000 containers repeats a
// rule's violation 40,000 times), and at most kMaxViolationsPerRule listed
// per rule, with one line that says how many more there are.
#pragma once

#include <cstddef>
#include <vector>

#include "validators/validator.h"

namespace aiadmit {

// A denial message of this many violations of one rule still says all a
// developer needs; the API server keeps a message of a few KiB at most.
inline constexpr size_t kMaxViolationsPerRule = 20;

// Erases the violations that equal one before them, keeping the first of
// each in its order; linear in the violations.
void eraseRepeatedViolations(std::vector<Violation>& violations);

// Erases the violations that are also in `existing`; linear in both.
void eraseViolationsIn(std::vector<Violation>& violations, const std::vector<Violation>& existing);

// Keeps the first kMaxViolationsPerRule violations of each rule, in their
// order, and puts in place of the rest one violation of the rule that says
// how many were left out. What it stands for may rest on the cluster's
// answers, or all of it on a guessed class: then it warns at most, as they
// would.
void capViolationsPerRule(std::vector<Violation>& violations);

}  // namespace aiadmit
