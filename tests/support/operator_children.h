// The objects AI operators create from their custom resources, built as each
// operator's controller builds them (recorded from its source and documented
// behaviour): names, ownerReferences, the labels and annotations it adds, the
// fields it copies from the parent's templates, and what the API server
// defaults before the child reaches a webhook. Children of children follow
// where the operator's chain goes on (RayJob -> RayCluster -> Pods, JobSet ->
// Jobs -> Pods, LeaderWorkerSet -> leader StatefulSet -> leader Pod -> worker
// StatefulSet -> worker Pod), so that a test can send each of them through
// the webhooks as the API server would.
#pragma once

#include <string>
#include <vector>

#include "webhook/codec/json.h"

namespace aiadmit::testing {

struct OperatorChild {
  // The role in the operator's chain, readable in a test name: "head",
  // "worker-small-group", "launcher-job", "leader-statefulset".
  std::string role;
  std::string json;  // the object as the API server hands it to the webhook
};

// Every child (and grandchild) the operator of `parent` creates, parents
// before their children; empty for a kind no builder knows. `runtime` is the
// ClusterTrainingRuntime or TrainingRuntime a TrainJob names (Trainer builds
// its JobSet from both); ignored for other kinds.
std::vector<OperatorChild> operatorChildren(const JsonValue& parent,
                                            const JsonValue* runtime = nullptr);

// Whether a builder knows the kind of `parent` (its apiVersion's group and kind).
bool hasOperatorChildren(const JsonValue& parent);

// One builder per operator. Each returns the children of its own level and
// those of the chain below it.
std::vector<OperatorChild> trainingOperatorChildren(const JsonValue& job);  // PyTorch/TF/Paddle
std::vector<OperatorChild> mpiJobChildren(const JsonValue& mpiJob);
std::vector<OperatorChild> trainJobChildren(const JsonValue& trainJob, const JsonValue& runtime);
std::vector<OperatorChild> rayClusterChildren(const JsonValue& rayCluster);
std::vector<OperatorChild> rayJobChildren(const JsonValue& rayJob);
std::vector<OperatorChild> rayServiceChildren(const JsonValue& rayService);
std::vector<OperatorChild> leaderWorkerSetChildren(const JsonValue& lws);
std::vector<OperatorChild> jobSetChildren(const JsonValue& jobSet);
std::vector<OperatorChild> jobPods(const JsonValue& job);  // the Job controller's Pods
std::vector<OperatorChild> volcanoJobChildren(const JsonValue& job);
std::vector<OperatorChild> inferenceServiceChildren(const JsonValue& isvc);  // RawDeployment
std::vector<OperatorChild> llmInferenceServiceChildren(const JsonValue& llmisvc);

}  // namespace aiadmit::testing
