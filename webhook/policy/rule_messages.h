// The words of the rules that `profiles export --admission-policies` exports
// too (AIA006, AIA011, AIA014, AIA015): the validators write them, and the
// exported policies write the same words, with what only the request tells
// put in by CEL. Each function takes those values as text, so that the
// export can pass kMessageHole for them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "webhook/policy/profile.h"

namespace aiadmit {

// Stands for a value a policy's CEL puts in the text.
inline constexpr std::string_view kMessageHole = "\x1f";

// What is wrong and what it leads to, how to fix it, and both in a few words
// for the warning line (Violation's problem, fix and brief).
struct RuleMessage {
  std::string problem;
  std::string fix;
  std::string brief;
};

// AIA006: `wanted` GPUs, `what` they are ("nvidia.com/gpu" in quotes, or
// GPUs by claim), `briefWhat` as the warning line names them.
RuleMessage gpusPerNodeMessage(std::string_view wanted, std::string_view what,
                               std::string_view briefWhat, int64_t perNode);

// AIA011: the priority classes `profile` allows, its own first.
std::vector<std::string_view> allowedPriorityClasses(const Profile& profile);
// AIA011: `priorityClass` named in `namespaceName`, which `profile` does not allow.
RuleMessage priorityClassMessage(std::string_view priorityClass, const Profile& profile,
                                 std::string_view namespaceName);

// AIA014: a `workloadClass` Pod restarting Always, `defaulted` when the
// manifest left restartPolicy out.
RuleMessage restartPolicyMessage(std::string_view workloadClass, bool defaulted);

// AIA015: `server` ("GPU server \"vllm\"", "the GPU server") without a
// memory limit.
RuleMessage memoryLimitMessage(std::string_view server);

}  // namespace aiadmit
